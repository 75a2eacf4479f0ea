#include "toolcall/xml_families.h"

// GCC 12 reports a -Wrestrict overlap inside std::string's inlined copy when these specs assign
// string lists (GCC bug 105329, a false positive fixed in GCC 13); nothing here aliases.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace baton::toolcall {

namespace {

// Qwen3-Coder (and Nemotron 3, Step 3.5 that copied it):
//   <tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n</function>\n</tool_call>
XmlCallSpec qwen3_coder() {
  XmlCallSpec s;
  s.name = "qwen3-coder";
  s.call_open = {"<tool_call>", "<function="};
  s.name_end = ">";
  s.param_open = {"<parameter="};
  s.key_end = ">";
  s.value_end = "</parameter>";
  s.trim_newlines = true;
  s.call_close = {"</function>", "</tool_call>"};
  s.markers = {"<tool_call>", "</tool_call>"};
  return s;
}

// ByteDance Seed-OSS: the same inside <seed:tool_call>, values without the newlines.
XmlCallSpec seed_oss() {
  XmlCallSpec s = qwen3_coder();
  s.name = "seed-oss";
  s.call_open = {"<seed:tool_call>", "<function="};
  s.call_close = {"</function>", "</seed:tool_call>"};
  s.markers = {"<seed:tool_call>", "</seed:tool_call>"};
  return s;
}

// GLM's layout, its tags' names ending in `suffix`:
//   <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call>
// Values are written as they are, so no newline is trimmed.
XmlCallSpec arg_key_spec(std::string name, const std::string& suffix) {
  auto tag = [&](std::string_view t) { return "<" + std::string(t) + suffix + ">"; };
  XmlCallSpec s;
  s.name = std::move(name);
  s.call_open = {tag("tool_call")};
  s.param_open = {tag("arg_key")};
  s.key_end = tag("/arg_key");
  s.value_open = {tag("arg_value")};
  s.value_end = tag("/arg_value");
  s.call_close = {tag("/tool_call")};
  s.markers = {s.call_open[0], s.call_close[0], s.param_open[0],
               s.key_end,      s.value_open[0], s.value_end};
  return s;
}

// GLM 4.5-4.7 (and Poolside Laguna).
XmlCallSpec glm() {
  return arg_key_spec("glm", "");
}

// Tencent Hunyuan 3: GLM's layout with ":opensource" tags, a separator after the name and a
// section around the calls.
XmlCallSpec hy3() {
  XmlCallSpec s = arg_key_spec("hy3", ":opensource");
  s.section_open = {"<tool_calls:opensource>"};
  s.section_close = {"</tool_calls:opensource>"};
  s.name_end = "<tool_sep:opensource>";
  s.markers.insert(s.markers.begin() + 2, s.name_end);
  s.markers.insert(s.markers.begin(), {s.section_open[0], s.section_close[0]});
  return s;
}

// MiniMax M2: <minimax:tool_call>\n<invoke name="NAME">\n<parameter name="K">V</parameter>\n
// </invoke>\n</minimax:tool_call>
XmlCallSpec minimax() {
  XmlCallSpec s = name_attr_spec("minimax", "invoke", "parameter");
  s.section_open = {"<minimax:tool_call>"};
  s.section_close = {"</minimax:tool_call>"};
  s.markers = {"<minimax:tool_call>", "</minimax:tool_call>"};
  return s;
}

// MiniMax M3: every tag is prefixed with the "]<]minimax[>[" token and a parameter is an element
// named after its key: ]<]minimax[>[<city>Paris]<]minimax[>[</city>.
XmlCallSpec minimax_m3() {
  const std::string ns = "]<]minimax[>[";
  XmlCallSpec s;
  s.name = "minimax-m3";
  s.section_open = {ns + "<tool_call>"};
  s.section_close = {ns + "</tool_call>"};
  s.call_open = {ns + "<invoke name=\""};
  s.name_end = "\">";
  s.param_open = {ns + "<"};
  s.key_end = ">";
  s.value_end = ns + "</{key}>";
  s.call_close = {ns + "</invoke>"};
  s.markers = {ns};
  return s;
}

// MiniCPM 5: <function name="NAME"><param name="K">V</param></function>, calls one per line,
// a value holding '<', '&' or a newline wrapped in CDATA.
XmlCallSpec minicpm5() {
  XmlCallSpec s = name_attr_spec("minicpm5", "function", "param");
  s.cdata = true;
  return s;
}

}  // namespace

XmlCallSpec name_attr_spec(std::string name, std::string_view call_tag,
                           std::string_view param_tag) {
  XmlCallSpec s;
  s.name = std::move(name);
  s.call_open = {"<" + std::string(call_tag) + " name=\""};
  s.name_end = "\">";
  s.param_open = {"<" + std::string(param_tag) + " name=\""};
  s.key_end = "\">";
  s.value_end = "</" + std::string(param_tag) + ">";
  s.call_close = {"</" + std::string(call_tag) + ">"};
  return s;
}

std::optional<XmlCallSpec> xml_family_spec(std::string_view name) {
  for (auto make : {qwen3_coder, seed_oss, glm, hy3, minimax, minimax_m3, minicpm5}) {
    XmlCallSpec s = make();
    if (s.name == name) return s;
  }
  return std::nullopt;
}

std::vector<std::string> xml_family_names() {
  return {"qwen3-coder", "seed-oss", "glm", "hy3", "minimax", "minimax-m3", "minicpm5"};
}

}  // namespace baton::toolcall
