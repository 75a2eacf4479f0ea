#include "toolcall/registry_a.h"

namespace baton::toolcall {

std::unique_ptr<OutputFormat> make_format_a(std::string_view name, const FormatContext&) {
  if (name == "hermes") return make_hermes_format();
  return nullptr;
}

std::vector<std::string> format_names_a() {
  return {"hermes"};
}

std::string detect_format_a(std::string_view source) {
  if (source.find("<tool_call>") != std::string_view::npos) return "hermes";
  return "";
}

}  // namespace baton::toolcall
