#include "toolcall/registry_b.h"

#include "toolcall/format_command_r.h"
#include "toolcall/json_args_families.h"
#include "toolcall/xml_families.h"

namespace baton::toolcall {

std::unique_ptr<OutputFormat> make_format_b(std::string_view name, const FormatContext& ctx) {
  if (auto spec = xml_family_spec(name)) return std::make_unique<XmlCallFormat>(*spec, ctx);
  if (auto spec = json_args_family_spec(name)) return std::make_unique<JsonArgsFormat>(*spec);
  if (name == "command-r") return std::make_unique<CommandRFormat>();
  return nullptr;
}

std::vector<std::string> format_names_b() {
  std::vector<std::string> names = xml_family_names();
  for (auto& n : json_args_family_names()) names.push_back(n);
  names.push_back("command-r");
  return names;
}

std::string detect_format_b(std::string_view) {
  return "";
}

}  // namespace baton::toolcall
