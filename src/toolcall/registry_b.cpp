#include "toolcall/registry_b.h"

namespace baton::toolcall {

std::unique_ptr<OutputFormat> make_format_b(std::string_view, const FormatContext&) {
  return nullptr;
}

std::vector<std::string> format_names_b() {
  return {};
}

std::string detect_format_b(std::string_view) {
  return "";
}

}  // namespace baton::toolcall
