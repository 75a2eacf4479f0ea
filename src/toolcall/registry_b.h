#pragma once
// The second half of the format registry (format_registry.cpp asks it for names it does not
// know): the families whose calls are XML-like or have their own channel syntax.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "toolcall/output_format.h"

namespace baton::toolcall {

std::unique_ptr<OutputFormat> make_format_b(std::string_view name, const FormatContext& ctx);
std::vector<std::string> format_names_b();
// "" when the template is not one of these families.
std::string detect_format_b(std::string_view template_source);

}  // namespace baton::toolcall
