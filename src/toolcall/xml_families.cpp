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

// GLM 4.5-4.7 (and Poolside Laguna):
//   <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call>
// Values are written as they are, so no newline is trimmed.
XmlCallSpec glm() {
  XmlCallSpec s;
  s.name = "glm";
  s.call_open = {"<tool_call>"};
  s.param_open = {"<arg_key>"};
  s.key_end = "</arg_key>";
  s.value_open = {"<arg_value>"};
  s.value_end = "</arg_value>";
  s.call_close = {"</tool_call>"};
  s.markers = {"<tool_call>", "</tool_call>", "<arg_key>",
               "</arg_key>",  "<arg_value>",  "</arg_value>"};
  return s;
}

// Tencent Hunyuan 3: GLM's layout with ":opensource" tags, a separator after the name and a
// section around the calls.
XmlCallSpec hy3() {
  XmlCallSpec s;
  s.name = "hy3";
  s.section_open = {"<tool_calls:opensource>"};
  s.section_close = {"</tool_calls:opensource>"};
  s.call_open = {"<tool_call:opensource>"};
  s.name_end = "<tool_sep:opensource>";
  s.param_open = {"<arg_key:opensource>"};
  s.key_end = "</arg_key:opensource>";
  s.value_open = {"<arg_value:opensource>"};
  s.value_end = "</arg_value:opensource>";
  s.call_close = {"</tool_call:opensource>"};
  s.markers = {"<tool_calls:opensource>", "</tool_calls:opensource>", "<tool_call:opensource>",
               "</tool_call:opensource>", "<tool_sep:opensource>",    "<arg_key:opensource>",
               "</arg_key:opensource>",   "<arg_value:opensource>",   "</arg_value:opensource>"};
  return s;
}

// MiniMax M2: <minimax:tool_call>\n<invoke name="NAME">\n<parameter name="K">V</parameter>\n
// </invoke>\n</minimax:tool_call>
XmlCallSpec minimax() {
  XmlCallSpec s;
  s.name = "minimax";
  s.section_open = {"<minimax:tool_call>"};
  s.section_close = {"</minimax:tool_call>"};
  s.call_open = {"<invoke name=\""};
  s.name_end = "\">";
  s.param_open = {"<parameter name=\""};
  s.key_end = "\">";
  s.value_end = "</parameter>";
  s.call_close = {"</invoke>"};
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
  XmlCallSpec s;
  s.name = "minicpm5";
  s.call_open = {"<function name=\""};
  s.name_end = "\">";
  s.param_open = {"<param name=\""};
  s.key_end = "\">";
  s.value_end = "</param>";
  s.cdata = true;
  s.call_close = {"</function>"};
  return s;
}

}  // namespace

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
