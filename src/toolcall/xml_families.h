#pragma once
// The XML-like families that XmlCallFormat reads, one spec each.
#include <optional>
#include <string_view>

#include "toolcall/xml_call_format.h"

namespace baton::toolcall {

// The spec for a format name ("qwen3-coder", "glm", ...); nullopt when not one of these.
std::optional<XmlCallSpec> xml_family_spec(std::string_view name);
// Every name xml_family_spec() knows.
std::vector<std::string> xml_family_names();

}  // namespace baton::toolcall
