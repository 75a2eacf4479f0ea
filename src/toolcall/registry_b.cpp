#include "toolcall/registry_b.h"

#include "toolcall/xml_families.h"

namespace baton::toolcall {

std::unique_ptr<OutputFormat> make_format_b(std::string_view name, const FormatContext& ctx) {
  if (auto spec = xml_family_spec(name)) return std::make_unique<XmlCallFormat>(*spec, ctx);
  return nullptr;
}

std::vector<std::string> format_names_b() {
  return xml_family_names();
}

std::string detect_format_b(std::string_view) {
  return "";
}

}  // namespace baton::toolcall
