#pragma once
// JSON Schema → GBNF, for response_format json_schema / json_object and for tool arguments.
// The grammar generates only JSON that validates against the schema; a schema keyword that a
// grammar cannot enforce is refused with GrammarError naming it (never ignored). The supported
// subset is stated in docs/GRAMMAR.md.
#include <chrono>
#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "grammar/grammar.h"

namespace baton::grammar {

// What one builder may spend on all its schemas together. A schema past a limit is refused with
// GrammarError naming the limit: a client's schema cannot hold a server thread for minutes or
// fill its memory ($ref with sibling keywords compiles once per distinct combination of target
// and siblings, so a chain of them can still multiply).
struct SchemaLimits {
  size_t max_rules = 20000;                  // grammar rules
  size_t max_bytes = size_t{4} << 20;        // GBNF text
  size_t max_subschemas = 50000;             // subschemas compiled (after $ref and allOf merging)
  std::chrono::milliseconds max_time{2000};  // wall clock from the builder's construction
};

// Collects GBNF rules for several schemas into one grammar (a tool-call grammar embeds one
// arguments rule per tool). Rule names are made unique; shared helper rules (ws, string, ...)
// are emitted once.
class SchemaGrammarBuilder {
 public:
  explicit SchemaGrammarBuilder(const SchemaLimits& limits = {});
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
std::string json_schema_to_gbnf(const nlohmann::ordered_json& schema,
                                const SchemaLimits& limits = {});
// Any JSON object (response_format json_object).
std::string json_object_gbnf();

}  // namespace baton::grammar
