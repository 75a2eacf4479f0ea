// Detection asks P2's half first: its families (XML-like calls) are told apart by markers that
// are specific to them, while the JSON families' cues are generic (a "<tool_call>" tag also
// opens Qwen3-Coder's XML calls), so the specific test must win.
#include "toolcall/registry_a.h"
#include "toolcall/registry_b.h"

namespace baton::toolcall {

std::unique_ptr<OutputFormat> make_format(std::string_view name, const FormatContext& ctx) {
  if (auto f = make_format_a(name, ctx)) return f;
  return make_format_b(name, ctx);
}

std::vector<std::string> format_names() {
  std::vector<std::string> names = format_names_a();
  for (auto& n : format_names_b()) names.push_back(std::move(n));
  return names;
}

std::string detect_format(std::string_view template_source) {
  if (auto b = detect_format_b(template_source); !b.empty()) return b;
  if (auto a = detect_format_a(template_source); !a.empty()) return a;
  return "hermes";
}

}  // namespace baton::toolcall
