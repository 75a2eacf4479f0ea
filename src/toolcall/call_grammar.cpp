#include "toolcall/call_grammar.h"

#include <fmt/format.h>

namespace baton::toolcall::call_grammar {

std::vector<Tool> tools(const CallGrammarRequest& req, GrammarSink& sink) {
  std::vector<Tool> out;
  for (const auto& t : req.tools) {
    const auto& fn = t.contains("function") ? t["function"] : t;
    if (!fn.is_object() || !fn.contains("name") || !fn["name"].is_string()) continue;
    Tool tool;
    tool.name = fn["name"].get<std::string>();
    nlohmann::ordered_json params = fn.value("parameters", nlohmann::ordered_json());
    if (!params.is_object() || params.empty()) params = {{"type", "object"}};
    tool.arguments = sink.json_value(params, tool.name + "-args");
    out.push_back(std::move(tool));
  }
  return out;
}

std::string literal(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string ws(GrammarSink& sink) {
  return sink.rule("call-ws", R"([ \t\n]{0,4})");
}

std::string json_call(const std::vector<Tool>& tools, GrammarSink& sink, std::string_view name_key,
                      std::string_view args_key, std::string_view id_rule) {
  const std::string w = ws(sink);
  // "key" : value, as GBNF, with whitespace where JSON writers put it.
  auto member = [&](std::string_view key, std::string_view value) {
    return fmt::format("{} {} \":\" {} {}", literal(fmt::format("\"{}\"", key)), w, w, value);
  };
  std::string body;
  for (const auto& t : tools) {
    if (!body.empty()) body += " | ";
    body += fmt::format("\"{{\" {} {} {} \",\" {} {}", w,
                        member(name_key, literal(nlohmann::ordered_json(t.name).dump())), w, w,
                        member(args_key, t.arguments));
    if (!id_rule.empty()) body += fmt::format(" {} \",\" {} {}", w, w, member("id", id_rule));
    body += fmt::format(" {} \"}}\"", w);
  }
  return sink.rule("call", body);
}

std::string one_or_more(const std::string& call, const std::string& sep, bool parallel) {
  if (!parallel) return call;
  return fmt::format("{} ({} {}){{0,{}}}", call, sep, call, kMaxParallelCalls - 1);
}

}  // namespace baton::toolcall::call_grammar
