#include "toolcall/call_grammar.h"

#include <fmt/format.h>

#include <algorithm>

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

std::vector<Property> properties(const nlohmann::ordered_json& params) {
  std::vector<Property> out;
  if (!params.is_object() || !params.contains("properties") || !params["properties"].is_object())
    return out;
  std::vector<std::string> required;
  if (auto r = params.find("required"); r != params.end() && r->is_array())
    for (const auto& k : *r)
      if (k.is_string()) required.push_back(k.get<std::string>());
  for (const auto& [key, schema] : params["properties"].items()) {
    Property p{key, schema, std::find(required.begin(), required.end(), key) != required.end()};
    if (p.schema.is_object())
      for (const char* defs : {"$defs", "definitions"})
        if (params.contains(defs) && !p.schema.contains(defs)) p.schema[defs] = params[defs];
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<std::string> string_choices(const nlohmann::ordered_json& schema) {
  std::vector<std::string> out;
  if (!schema.is_object()) return out;
  if (auto c = schema.find("const"); c != schema.end() && c->is_string())
    out.push_back(c->get<std::string>());
  if (auto e = schema.find("enum"); e != schema.end() && e->is_array())
    for (const auto& v : *e)
      if (v.is_string() && !v.get<std::string>().empty()) out.push_back(v.get<std::string>());
  return out;
}

std::vector<std::pair<std::string, nlohmann::ordered_json>> tool_schemas(
    const CallGrammarRequest& req) {
  std::vector<std::pair<std::string, nlohmann::ordered_json>> out;
  for (const auto& t : req.tools) {
    const auto& fn = t.contains("function") ? t["function"] : t;
    if (!fn.is_object() || !fn.contains("name") || !fn["name"].is_string()) continue;
    out.emplace_back(fn["name"].get<std::string>(),
                     fn.value("parameters", nlohmann::ordered_json::object()));
  }
  return out;
}

std::string members(const std::vector<std::pair<std::string, bool>>& items, const std::string& sep,
                    GrammarSink& sink) {
  // Built from the last one back: after_i when an earlier member was written (each present one
  // then starts with sep), first_i when none was yet; one rule each keeps the text linear.
  std::string after, first;
  for (size_t i = items.size(); i-- > 0;) {
    const auto& [item, required] = items[i];
    const std::string with_sep = sep + " " + item;
    const std::string a =
        sink.rule("member-rest", (required ? with_sep : "(" + with_sep + ")?") + " " + after);
    std::string f = item + " " + after;
    if (!required) f = first.empty() ? "(" + f + ")?" : f + " | " + first;
    first = sink.rule("members", f);
    after = a;
  }
  return first;
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

namespace {

// The UTF-8 characters of s, each as its bytes.
std::vector<std::string> characters(std::string_view s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    const auto lead = static_cast<unsigned char>(s[i]);
    size_t n = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    n = std::min(n, s.size() - i);
    out.emplace_back(s.substr(i, n));
    i += n;
  }
  return out;
}

}  // namespace

std::string class_except(const std::vector<std::string>& chars) {
  std::string out = "[^";
  for (const auto& c : chars) {
    if (c == "\\" || c == "]" || c == "-" || c == "^") {
      out += '\\';
      out += c;
    } else if (c == "\n") {
      out += "\\n";
    } else if (c == "\t") {
      out += "\\t";
    } else {
      out += c;
    }
  }
  return out + "]";
}

std::string text_before(std::string_view end, GrammarSink& sink) {
  // W: the start of `end` whose first character a occurs in it once. Text that avoids W is
  // followed by `end` (which starts with W) with no earlier occurrence of it, since W has no
  // border. A text avoiding W is a loop over: a character other than a; or starts of W
  // (each followed by another a) ending in a character that breaks the last one.
  std::vector<std::string> w = characters(end);
  if (w.empty()) return sink.rule("raw-text", "[^\\x00]*");
  for (size_t i = 1; i < w.size(); ++i) {
    if (w[i] == w[0]) {
      w.resize(i);
      break;
    }
  }
  const std::string other = class_except({w[0]});
  if (w.size() == 1) return sink.rule("raw-text", other + "*");
  std::string starts, breaks, prefix;
  for (size_t k = 1; k < w.size(); ++k) {
    prefix += w[k - 1];
    if (!starts.empty()) starts += " | ";
    starts += literal(prefix);
    if (!breaks.empty()) breaks += " | ";
    breaks += literal(prefix) + " " + class_except({w[0], w[k]});
  }
  const std::string start = sink.rule("raw-start", starts);
  const std::string brk = sink.rule("raw-break", breaks);
  return sink.rule("raw-text", fmt::format("({} | {}* {})* {}*", other, start, brk, start));
}

std::string one_or_more(const std::string& call, const std::string& sep, bool parallel) {
  if (!parallel) return call;
  return fmt::format("{} ({} {}){{0,{}}}", call, sep, call, kMaxParallelCalls - 1);
}

}  // namespace baton::toolcall::call_grammar
