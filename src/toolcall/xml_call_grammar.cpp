// The call grammar of the XML-like families: the markup of XmlCallSpec around each parameter's
// text, written so that the parser reads it back as a valid call. A parameter whose schema type
// makes the parser read JSON (numbers, booleans, objects, arrays) is held to its schema as
// JSON; a string parameter is its raw text, held to its enum / const where it has one.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "toolcall/markup_scan.h"
#include "toolcall/xml_call_format.h"

namespace baton::toolcall {

namespace {

using ojson = nlohmann::ordered_json;

// Whether a function name or parameter key can be written so that the parser reads it back.
bool writable_name(std::string_view s) {
  if (s.empty() || s.size() > 256) return false;
  for (char c : s)
    if (c == '<' || c == '>' || c == '\n' || c == '"' || c == ' ' || c == '\t') return false;
  return true;
}

class XmlGrammar {
 public:
  XmlGrammar(const XmlCallSpec& spec, const nlohmann::ordered_json& tools, GrammarSink& sink)
      : spec_(spec), kinds_(tools), sink_(sink), ws_(call_grammar::ws(sink)) {}

  // One call to one of the tools; "" when none can be written.
  std::string call(const nlohmann::ordered_json& tools) {
    std::string body;
    for (const auto& t : tools) {
      const auto& fn = t.contains("function") ? t["function"] : t;
      if (!fn.is_object() || !fn.contains("name") || !fn["name"].is_string()) continue;
      const std::string name = fn["name"].get<std::string>();
      if (!writable_name(name) || (!spec_.name_end.empty() && contains(name, spec_.name_end)))
        continue;
      if (!body.empty()) body += " | ";
      body += one_call(name, fn.value("parameters", ojson::object()));
    }
    return body.empty() ? "" : sink_.rule("call", body);
  }

 private:
  static bool contains(std::string_view s, std::string_view part) {
    return !part.empty() && s.find(part) != std::string_view::npos;
  }

  // Pieces the parser reads with whitespace allowed before each.
  std::string pieces(const std::vector<std::string>& lits, bool ws_first) {
    std::string out;
    for (size_t i = 0; i < lits.size(); ++i) {
      if (i > 0 || ws_first) out += ws_ + " ";
      out += call_grammar::literal(lits[i]) + " ";
    }
    return out;
  }

  std::string one_call(const std::string& name, const ojson& params) {
    const std::string name_end =
        spec_.name_end.empty() ? "" : call_grammar::literal(spec_.name_end);
    return sink_.rule(
        name + "-call",
        fmt::format("{}{} {} {} {}", pieces(spec_.call_open, false), call_grammar::literal(name),
                    name_end, parameters(name, params), pieces(spec_.call_close, true)));
  }

  // The declared parameters in the schema's order, the required ones always written; keys the
  // parser cannot read back are left out (a required one then makes no call).
  std::string parameters(const std::string& tool, const ojson& params) {
    std::string out;
    for (const auto& p : call_grammar::properties(params)) {
      if (!writable_name(p.key) || contains(p.key, spec_.key_end)) continue;
      const std::string one = ws_ + " " + parameter(tool, p.key, p.schema);
      out += p.required ? one + " " : "(" + one + ")? ";
    }
    return out;
  }

  std::string parameter(const std::string& tool, const std::string& key, const ojson& schema) {
    std::string end = spec_.value_end;
    if (auto at = end.find("{key}"); at != std::string::npos) end.replace(at, 5, key);
    std::string out = pieces(spec_.param_open, false) + call_grammar::literal(key) + " " +
                      call_grammar::literal(spec_.key_end) + " ";
    if (!spec_.value_open.empty()) out += pieces(spec_.value_open, true);
    // The parser drops one newline after the key and one before the close, when present.
    const std::string nl = spec_.trim_newlines ? "\"\\n\"? " : "";
    out += nl + value(tool, key, schema, end) + " " + nl + call_grammar::literal(end);
    return sink_.rule(tool + "-" + key, out);
  }

  std::string value(const std::string& tool, const std::string& key, const ojson& schema,
                    const std::string& end) {
    const ParamKind kind = kinds_.kind(tool, key);
    if (kind == ParamKind::json) return sink_.json_value(schema, tool + "-" + key);
    // The parser keeps text as a string (unknown kind: unless it reads as an object or array).
    std::string choices;
    for (const auto& v : call_grammar::string_choices(schema)) {
      if (contains(v, end) || (spec_.cdata && v.find_first_of("<&") != std::string::npos)) continue;
      if (spec_.trim_newlines && (v.front() == '\n' || v.back() == '\n')) continue;
      if (kind == ParamKind::unknown && (v.front() == '{' || v.front() == '[')) continue;
      choices += (choices.empty() ? "" : " | ") + call_grammar::literal(v);
    }
    if (!choices.empty()) return "(" + choices + ")";
    return free_text(end);
  }

  // Any text the parser reads up to `end`: MiniCPM's plain text has no '<' (a value that needs
  // one goes in CDATA, whose inside cannot hold "]]>").
  std::string free_text(const std::string& end) {
    auto& cached = text_[end];
    if (!cached.empty()) return cached;
    if (spec_.cdata) {
      const std::string inside =
          sink_.rule("cdata-text", R"(([^\]] | "]" [^\]] | "]" "]"+ [^\]>])*)");
      cached = sink_.rule("param-text", "[^<]* | \"<![CDATA[\" " + inside + " \"]]>\"");
    } else {
      cached = call_grammar::text_before(end, sink_);
    }
    return cached;
  }

  const XmlCallSpec& spec_;
  ParamSchemas kinds_;
  GrammarSink& sink_;
  std::string ws_;
  std::map<std::string, std::string> text_;
};

}  // namespace

std::string XmlCallFormat::call_trigger() const {
  return markup::block_opener(spec_.section_open, spec_.call_open);
}

std::string XmlCallFormat::call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const {
  namespace cg = toolcall::call_grammar;
  XmlGrammar g(spec_, req.tools, sink);
  const std::string call = g.call(req.tools);
  if (call.empty()) return "";
  // Calls stand one per line; a section wraps them all.
  if (spec_.section_open.empty()) return cg::one_or_more(call, "\"\\n\"", req.parallel);
  const std::string ws = cg::ws(sink);
  std::string open, close;
  for (const auto& s : spec_.section_open) open += cg::literal(s) + " " + ws + " ";
  for (const auto& s : spec_.section_close) close += " " + ws + " " + cg::literal(s);
  return open + cg::one_or_more(call, ws, req.parallel) + close;
}

}  // namespace baton::toolcall
