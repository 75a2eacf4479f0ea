// Gemma 4's forced calls: <|tool_call>call:NAME{key:VALUE,…}<tool_call|>, in the dialect its
// template writes (bare keys, strings between <|"|> tokens as they are, numbers and words as
// JSON). Values follow the schema where the dialect can say it: strings (their enum), numbers,
// booleans, objects with their properties, arrays of their items; anything else (anyOf, $ref,
// mixed types) is any value of the dialect.
#include <fmt/format.h>

#include "toolcall/loose_formats.h"

namespace baton::toolcall {

namespace {

using ojson = nlohmann::ordered_json;
namespace cg = call_grammar;

constexpr std::string_view kQuote = "<|\"|>";
constexpr int kMaxDepth = 16;  // deeper schemas take any value

bool word(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.')
      return false;
  return true;
}

class LooseGrammar {
 public:
  explicit LooseGrammar(GrammarSink& sink) : sink_(sink) {}

  std::string value(const ojson& s, int depth) {
    if (!s.is_object() || depth > kMaxDepth) return any();
    const std::string type = s.contains("type") && s["type"].is_string() ? s["type"] : "";
    if (s.contains("enum") || s.contains("const")) return choices(s);
    if (type == "string") return quoted(text());
    if (type == "integer" || type == "number" || type == "boolean" || type == "null")
      return sink_.json_value(s, "value");
    if (type == "object") return object(s, depth);
    if (type == "array") return array(s, depth);
    return any();
  }

  std::string object(const ojson& s, int depth) {
    if (!s.contains("properties")) return any_object();
    std::vector<std::pair<std::string, bool>> items;
    for (const auto& p : cg::properties(s)) {
      const std::string key = word(p.key) ? cg::literal(p.key) : quoted(cg::literal(p.key));
      items.emplace_back(key + " \":\" " + value(p.schema, depth + 1), p.required);
    }
    return "\"{\" " + cg::members(items, "\",\"", sink_) + " \"}\"";
  }

 private:
  std::string quoted(const std::string& inside) {
    return cg::literal(kQuote) + " " + inside + " " + cg::literal(kQuote);
  }

  std::string text() {
    if (text_.empty()) text_ = cg::text_before(kQuote, sink_);
    return text_;
  }

  // enum / const: strings quoted, other scalars as JSON; objects and arrays are left out.
  std::string choices(const ojson& s) {
    std::vector<ojson> values;
    if (s.contains("const")) values.push_back(s["const"]);
    if (s.contains("enum") && s["enum"].is_array())
      for (const auto& v : s["enum"]) values.push_back(v);
    std::string out;
    for (const auto& v : values) {
      if (v.is_object() || v.is_array()) continue;
      if (v.is_string() && v.get<std::string>().find(kQuote) != std::string::npos) continue;
      out += out.empty() ? "" : " | ";
      out += v.is_string()
                 ? cg::literal(std::string(kQuote) + v.get<std::string>() + std::string(kQuote))
                 : cg::literal(v.dump());
    }
    return out.empty() ? any() : "(" + out + ")";
  }

  std::string array(const ojson& s, int depth) {
    const std::string item = value(s.value("items", ojson::object()), depth + 1);
    const int64_t lo = s.value("minItems", int64_t{0});
    const int64_t hi = s.value("maxItems", int64_t{-1});
    if (hi == 0) return "\"[\" \"]\"";
    const std::string more = fmt::format("(\",\" {}){{{},{}}}", item, std::max<int64_t>(lo - 1, 0),
                                         hi < 0 ? std::string() : std::to_string(hi - 1));
    const std::string some = item + " " + more;
    return "\"[\" " + (lo > 0 ? some : "(" + some + ")?") + " \"]\"";
  }

  std::string any() {
    if (!any_.empty()) return any_;
    any_ = "any-value";
    const std::string num = sink_.json_value({{"type", "number"}}, "number");
    const std::string key = sink_.rule("any-key", "[a-zA-Z_] [a-zA-Z0-9_]{0,63}");
    const std::string body = fmt::format(
        "{} | {} | \"true\" | \"false\" | \"null\" | \"{{\" ({} \":\" any-value (\",\" {} \":\" "
        "any-value)*)? \"}}\" | \"[\" (any-value (\",\" any-value)*)? \"]\"",
        quoted(text()), num, key, key);
    any_ = sink_.rule("any-value", body);
    return any_;
  }

  std::string any_object() {
    const std::string v = any();
    return fmt::format(
        "\"{{\" ([a-zA-Z_] [a-zA-Z0-9_]{{0,63}} \":\" {} (\",\" [a-zA-Z_] "
        "[a-zA-Z0-9_]{{0,63}} \":\" {})*)? \"}}\"",
        v, v);
  }

  GrammarSink& sink_;
  std::string text_, any_;
};

}  // namespace

std::string Gemma4Format::call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const {
  LooseGrammar g(sink);
  std::string calls;
  for (const auto& [name, params] : cg::tool_schemas(req)) {
    if (!word(name)) continue;
    ojson args = params.is_object() ? params : ojson::object();
    args["type"] = "object";
    const std::string call = cg::literal("<|tool_call>call:" + name) + " " + g.object(args, 0) +
                             " " + cg::literal("<tool_call|>");
    calls += (calls.empty() ? "" : " | ") + sink.rule(name + "-call", call);
  }
  if (calls.empty()) return "";
  const std::string call = sink.rule("call", calls);
  // A thinking model opens its thought channel first.
  const std::string thought = "(" + cg::literal("<|channel>") + " " +
                              cg::text_before("<channel|>", sink) + " " +
                              cg::literal("<channel|>") + ")? ";
  return thought + cg::one_or_more(call, "", req.parallel);
}

}  // namespace baton::toolcall
