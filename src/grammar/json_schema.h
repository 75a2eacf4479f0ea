#pragma once
// JSON Schema → GBNF, for response_format json_schema / json_object and for tool arguments.
// The grammar generates only JSON that validates against the schema; a schema keyword that a
// grammar cannot enforce is refused with GrammarError naming it (never ignored). The supported
// subset is stated in docs/GRAMMAR.md.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "grammar/grammar.h"

namespace baton::grammar {

// Collects GBNF rules for several schemas into one grammar (a tool-call grammar embeds one
// arguments rule per tool). Rule names are made unique; shared helper rules (ws, string, ...)
// are emitted once.
class SchemaGrammarBuilder {
 public:
  SchemaGrammarBuilder();
  ~SchemaGrammarBuilder();
  // Adds rules that generate exactly the JSON texts valid for `schema` (properties in the
  // schema's order, so pass the document with its key order kept); returns the rule name.
  // name_hint seeds the rule names. Throws GrammarError (invalid or unsupported schema, or one
  // that no value satisfies).
  std::string add_schema(const nlohmann::ordered_json& schema, std::string_view name_hint);
  // Adds a hand-written rule (body in GBNF); returns its unique name.
  std::string add_rule(std::string_view name_hint, std::string_view body);
  // All rules, with `root ::= <root_body>` first.
  std::string gbnf(std::string_view root_body) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The whole grammar for one schema (root rule "root").
std::string json_schema_to_gbnf(const nlohmann::ordered_json& schema);
// Any JSON object (response_format json_object).
std::string json_object_gbnf();

}  // namespace baton::grammar
