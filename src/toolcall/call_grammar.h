#pragma once
// What a format needs to write the grammar of a forced tool call (tool_choice "required" or a
// named function): a sink that turns JSON Schemas into grammar rules, and helpers for the
// pieces most families share (the call as a JSON object, a tool name, the choice among tools).
// The sink hides the grammar module, so toolcall does not depend on it.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "util/gbnf_literal.h"

namespace baton::toolcall {

class GrammarSink {
 public:
  virtual ~GrammarSink() = default;
  // A GBNF expression for the JSON values valid against schema (a tool's parameters).
  virtual std::string json_value(const nlohmann::ordered_json& schema, std::string_view hint) = 0;
  // A named rule with the GBNF body; returns its name.
  virtual std::string rule(std::string_view hint, std::string_view body) = 0;
};

struct CallGrammarRequest {
  nlohmann::ordered_json tools = nlohmann::ordered_json::array();  // the tools a call may use
  bool parallel = true;                                            // more than one call may follow
};

namespace call_grammar {

struct Tool {
  std::string name;
  std::string arguments;  // the rule for its arguments object
};

// The tools of the request with a rule for each one's arguments (a tool without parameters
// takes the empty object).
std::vector<Tool> tools(const CallGrammarRequest& req, GrammarSink& sink);
// A declared parameter of a tool, for formats that write each one on its own: its schema carries
// the root's $defs / definitions so that its $refs resolve alone.
struct Property {
  std::string key;
  nlohmann::ordered_json schema;
  bool required = false;
};
// The properties of a tool's parameters, in the schema's order.
std::vector<Property> properties(const nlohmann::ordered_json& parameters);
// The non-empty strings an enum or const allows (none when it has neither).
std::vector<std::string> string_choices(const nlohmann::ordered_json& schema);
// The tools of the request as (name, parameters) pairs.
std::vector<std::pair<std::string, nlohmann::ordered_json>> tool_schemas(
    const CallGrammarRequest& req);
// Members written in order, `sep` between those present: items are (expression, required).
// "" when there are none.
std::string members(const std::vector<std::pair<std::string, bool>>& items, const std::string& sep,
                    GrammarSink& sink);
// A GBNF literal of the text (util/gbnf_literal.h).
inline std::string literal(std::string_view text) {
  return util::gbnf_literal(text);
}
// Optional whitespace as JSON writers put it between tokens (bounded).
std::string ws(GrammarSink& sink);
// One call as a JSON object {"<name_key>": "NAME", "<args_key>": ARGS[, "id": ID]} for each
// tool; the alternatives as one rule.
std::string json_call(const std::vector<Tool>& tools, GrammarSink& sink, std::string_view name_key,
                      std::string_view args_key, std::string_view id_rule = {});
// More calls in one forced answer than anyone asks for: a model that keeps adding calls stops
// here instead of at max_tokens.
constexpr int kMaxParallelCalls = 16;
// Text (as a rule) after which `end` first occurs where the text ends: the raw text of a value
// that the parser reads up to `end`. It avoids the longest start of `end` in which end's first
// character occurs once (all of `end` for "</parameter>"), which keeps the rule a plain loop; a
// value can then not hold that start (for an end such as "]]>" only the "]" is barred).
std::string text_before(std::string_view end, GrammarSink& sink);
// A GBNF class of any one character but those listed (UTF-8 characters).
std::string class_except(const std::vector<std::string>& chars);
// One call, or (parallel) one to kMaxParallelCalls separated by sep.
std::string one_or_more(const std::string& call, const std::string& sep, bool parallel);

}  // namespace call_grammar
}  // namespace baton::toolcall
