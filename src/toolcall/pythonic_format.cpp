#include "toolcall/loose_formats.h"
#include "toolcall/loose_value.h"
#include "toolcall/markup_scan.h"

namespace baton::toolcall {

using markup::Block;
using markup::BlockResult;
using markup::Cursor;
using markup::Match;

namespace {

constexpr std::string_view kOpen = "<|tool_call_start|>";
constexpr std::string_view kClose = "<|tool_call_end|>";

// Python literals as LFM2's template prints them: strings in single quotes exactly as they are
// (the template does not escape them, so only quotes and backslashes can be escaped), strings
// in double quotes and dicts as JSON (tojson), True/False/None.
const loose::Dialect& dialect() {
  static const loose::Dialect d{
      {{"'", "'", loose::Escapes::quotes}, {"\"", "\"", loose::Escapes::json}},
      false,
      {{"True", "true"}, {"False", "false"}, {"None", "null"}}};
  return d;
}

class ListReader {
 public:
  ListReader(std::string_view text, size_t start, ParsedOutput& out)
      : c_{text, start + kOpen.size()}, out_(out) {}

  // <|tool_call_start|>[call, call, ...]<|tool_call_end|>
  BlockResult read() {
    if (Match m = c_.literal("["); m != Match::yes) return {markup::broken(m)};
    for (bool first = true;; first = false) {
      Match m = c_.literal("]");
      if (m == Match::partial) return {Block::incomplete};
      if (m == Match::yes) break;
      if (!first && (m = c_.literal(",")) != Match::yes) return {markup::broken(m)};
      if (Block b = call(); b != Block::done) return {b};
    }
    Match m = c_.literal(kClose);
    if (m == Match::yes) return {Block::done, c_.pos};
    return {markup::broken(m)};
  }

 private:
  // NAME(key=value, ...): the call appears at its '('; each argument is appended once its key
  // is whole, and its value streams.
  Block call() {
    c_.pos = markup::skip_space(c_.text, c_.pos);
    size_t name_end = loose::word_end(c_.text, c_.pos);
    if (name_end == c_.text.size()) return Block::incomplete;
    if (name_end == c_.pos || c_.text[name_end] != '(') return Block::malformed;
    out_.calls.push_back({"", std::string(c_.text.substr(c_.pos, name_end - c_.pos)), "{"});
    out_.last_call_open = true;
    c_.pos = name_end + 1;
    std::string& args = out_.calls.back().arguments;
    for (bool first = true;; first = false) {
      Match m = c_.literal(")");
      if (m == Match::partial) return Block::incomplete;
      if (m == Match::yes) break;
      if (!first && (m = c_.literal(",")) != Match::yes) return markup::broken(m);
      if (Block b = argument(args, first); b != Block::done) return b;
    }
    args += '}';
    out_.last_call_open = false;
    return Block::done;
  }

  Block argument(std::string& args, bool first) {
    c_.pos = markup::skip_space(c_.text, c_.pos);
    if (c_.literal(")") == Match::yes) {  // a trailing comma
      --c_.pos;
      return Block::done;
    }
    size_t key_end = loose::word_end(c_.text, c_.pos);
    if (key_end == c_.text.size()) return Block::incomplete;
    std::string_view key = c_.text.substr(c_.pos, key_end - c_.pos);
    c_.pos = key_end;
    if (key.empty()) return Block::malformed;  // positional arguments have no name to give
    if (Match m = c_.literal("="); m != Match::yes) return markup::broken(m);
    args += (first ? "" : ", ") + markup::json_quote(key) + ": ";
    loose::Result r = loose::to_json(c_.text, c_.pos, dialect(), args);
    if (r.status != json::Status::complete)
      return r.status == json::Status::partial ? Block::incomplete : Block::malformed;
    c_.pos = r.end;
    return Block::done;
  }

  Cursor c_;
  ParsedOutput& out_;
};

}  // namespace

ParsedOutput PythonicFormat::parse(std::string_view text, bool final) const {
  return markup::scan_blocks(text, final, {std::string(kOpen)},
                             [](std::string_view t, size_t start, bool, ParsedOutput& out) {
                               return ListReader(t, start, out).read();
                             });
}

std::vector<std::string> PythonicFormat::markers() const {
  return {std::string(kOpen), std::string(kClose)};
}

// <|tool_call_start|>[NAME(key=VALUE, …), …]<|tool_call_end|>: each value JSON held to its
// schema (the dialect reads JSON strings, numbers, words and dicts), or a plain string
// parameter in single quotes as the template prints it.
std::string PythonicFormat::call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const {
  namespace cg = call_grammar;
  auto is_word = [](std::string_view s) { return !s.empty() && loose::word_end(s, 0) == s.size(); };
  std::string calls;
  for (const auto& [name, params] : cg::tool_schemas(req)) {
    if (!is_word(name)) continue;
    std::vector<std::pair<std::string, bool>> args;
    for (const auto& p : cg::properties(params)) {
      if (!is_word(p.key)) continue;
      std::string v = sink.json_value(p.schema, name + "-" + p.key);
      const bool plain = p.schema.is_object() && p.schema.value("type", "") == "string" &&
                         !p.schema.contains("enum") && !p.schema.contains("const") &&
                         !p.schema.contains("pattern") && !p.schema.contains("format") &&
                         !p.schema.contains("minLength") && !p.schema.contains("maxLength");
      if (plain) v = "(" + v + R"( | "'" [^'\\]* "'")" + ")";
      args.emplace_back(cg::literal(p.key + "=") + " " + v, p.required);
    }
    const std::string list = cg::members(args, "\",\" \" \"?", sink);
    calls += (calls.empty() ? "" : " | ") +
             sink.rule(name + "-call", cg::literal(name + "(") + " " + list + " \")\"");
  }
  if (calls.empty()) return "";
  const std::string call = sink.rule("call", calls);
  return cg::literal(kOpen) + " \"[\" " + cg::one_or_more(call, "\",\" \" \"?", req.parallel) +
         " \"]\" " + cg::literal(kClose);
}

}  // namespace baton::toolcall
