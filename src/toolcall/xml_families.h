#pragma once
// The XML-like families that XmlCallFormat reads, one spec each.
#include <optional>
#include <string>
#include <string_view>

#include "toolcall/xml_call_format.h"

namespace baton::toolcall {

// The spec for a format name ("qwen3-coder", "glm", ...); nullopt when not one of these.
std::optional<XmlCallSpec> xml_family_spec(std::string_view name);
// Every name xml_family_spec() knows.
std::vector<std::string> xml_family_names();

// The layout several families share (MiniMax M2, MiniCPM 5, Muse):
//   <CALL name="NAME"><PARAM name="KEY">VALUE</PARAM></CALL>
// with CALL and PARAM the tags' names. No section, no markers: the caller adds those.
XmlCallSpec name_attr_spec(std::string name, std::string_view call_tag, std::string_view param_tag);

}  // namespace baton::toolcall
