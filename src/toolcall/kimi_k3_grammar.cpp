// Kimi K3's forced calls, as its template renders an assistant's calls:
//   <|open|>tools<|sep|><|open|>call tool="NAME" index="1"<|sep|>
//   <|open|>argument key="K" type="string"<|sep|>V<|close|>argument<|sep|>…<|close|>call<|sep|>
//   <|close|>tools<|sep|>
// A string parameter is its raw text (type="string"); any other is JSON text held to its schema,
// with its schema's type (or "json") as the type attribute, which makes the parser read JSON.
#include <fmt/format.h>

#include "toolcall/kimi_k3_format.h"

namespace baton::toolcall {

namespace {

using ojson = nlohmann::ordered_json;
namespace cg = call_grammar;

constexpr std::string_view kArgEnd = "<|close|>argument<|sep|>";

// Whether text can stand in an attribute as it is (no entity needed, no tag inside).
bool plain_attr(std::string_view s) {
  return !s.empty() && s.find_first_of("\"&<>") == std::string_view::npos;
}

std::string argument(const cg::Property& p, const std::string& tool, GrammarSink& sink,
                     std::string& raw_text) {
  const auto& s = p.schema;
  const bool text = s.is_object() && s.contains("type") && s["type"] == "string";
  std::string type = "json", value;
  if (text) {
    type = "string";
    for (const auto& v : cg::string_choices(s))
      if (v.find(kArgEnd) == std::string::npos)
        value += (value.empty() ? "" : " | ") + cg::literal(v);
    if (value.empty()) {
      if (raw_text.empty()) raw_text = cg::text_before(kArgEnd, sink);
      value = raw_text;
    }
  } else {
    if (s.is_object() && s.contains("type") && s["type"].is_string()) type = s["type"];
    value = sink.json_value(s, tool + "-" + p.key);
  }
  const std::string open =
      fmt::format("<|open|>argument key=\"{}\" type=\"{}\"<|sep|>", p.key, type);
  return sink.rule(tool + "-" + p.key,
                   fmt::format("{} ({}) {}", cg::literal(open), value, cg::literal(kArgEnd)));
}

}  // namespace

std::string KimiK3Format::call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const {
  std::string calls, raw_text;
  for (const auto& [name, params] : cg::tool_schemas(req)) {
    if (!plain_attr(name)) continue;
    std::string body = cg::literal(fmt::format("<|open|>call tool=\"{}\" index=\"", name)) +
                       " [1-9] " + cg::literal("\"<|sep|>");
    for (const auto& p : cg::properties(params)) {
      if (!plain_attr(p.key)) continue;
      const std::string one = argument(p, name, sink, raw_text);
      body += p.required ? " " + one : " " + one + "?";
    }
    body += " " + cg::literal("<|close|>call<|sep|>");
    calls += (calls.empty() ? "" : " | ") + sink.rule(name + "-call", body);
  }
  if (calls.empty()) return "";
  const std::string call = sink.rule("call", calls);
  const std::string tools = cg::literal("<|open|>tools<|sep|>") + " " +
                            cg::one_or_more(call, "", req.parallel) + " " +
                            cg::literal("<|close|>tools<|sep|>");
  // The response channel the template writes (empty) before the tools.
  const std::string response = "(" + cg::literal("<|close|>response<|sep|>") + ")? ";
  if (starts_in_response_) return response + tools;
  // Reasoning holds no special token ("<|").
  const std::string think = sink.rule("think-text", R"(([^<] | "<" [^|])*)");
  return think + " " + cg::literal("<|close|>think<|sep|>") + " (" +
         cg::literal("<|open|>response<|sep|>") + " " + response + ")? " + tools;
}

}  // namespace baton::toolcall
