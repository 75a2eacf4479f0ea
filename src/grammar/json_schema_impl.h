#pragma once
// What the JSON Schema → GBNF builder's parts share: the builder's state (rules, names, budgets,
// the document being compiled) and the small helpers every visitor uses. json_schema.cpp holds
// the visitors of scalars and the public API, json_schema_refs.cpp $ref, allOf/anyOf/oneOf and
// their merging, json_schema_containers.cpp objects and arrays. Internal to grammar/.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "grammar/json_schema.h"
#include "grammar/json_schema_merge.h"

namespace baton::grammar {
namespace schema_detail {

// Nesting of subschemas and of $ref chains followed while inlining.
constexpr int kMaxDepth = 64;

[[noreturn]] void unsatisfiable(const std::string& where, const std::string& why);
// The JSON pointer of `key` below `where`.
std::string child(const std::string& where, const std::string& key);
// A rule-name-safe form of a hint (letters, digits, dashes; at most 40 characters).
std::string sanitize(std::string_view hint);
// The hint for a part of a schema, already in its final (short) form: hints of nested
// properties do not grow with the depth or with the length of the names.
std::string sub_hint(const std::string& hint, std::string_view part);
// A non-negative integer keyword (minLength, maxItems, ...), or fallback when absent.
int64_t count_keyword(const ojson& s, const char* key, int64_t fallback, const std::string& where);
std::string ref_text(const ojson& s, const std::string& where);
// x repeated min..max times (max < 0: unbounded) in GBNF.
std::string repeat(const std::string& x, int64_t min, int64_t max);

}  // namespace schema_detail

using namespace schema_detail;

struct SchemaGrammarBuilder::Impl {
  using Clock = std::chrono::steady_clock;

  explicit Impl(const SchemaLimits& l) : limits(l), deadline(Clock::now() + l.max_time) {}

  // A $ref with sibling keywords, compiled once per (target, siblings).
  struct Combo {
    bool done = false;
    std::string expr;  // when done: what each use writes
    std::string name;  // the rule a recursive use refers to, named when first needed
  };

  SchemaLimits limits;
  Clock::time_point deadline;
  size_t subschemas = 0;  // compiled so far, failed schemas included
  size_t bytes = 0;       // of the rules

  std::vector<std::pair<std::string, std::string>> rules;
  std::unordered_set<std::string> names{"root"};
  std::unordered_map<std::string, int> next_suffix;  // base name → the next suffix to try
  std::unordered_map<std::string, std::string> by_body;
  std::map<std::string, std::string> helpers;
  // Per document:
  const ojson* doc = nullptr;
  std::map<std::string, std::string> refs;                // JSON pointer → rule name
  std::unordered_map<std::string, const ojson*> targets;  // JSON pointer → what it points at
  std::unordered_map<std::string, Combo> combos;          // pointer and siblings → Combo
  int depth = 0;

  std::string unique_name(std::string_view hint) {
    const std::string base = sanitize(hint);
    std::string name = base;
    if (names.count(name)) {
      // Every suffix below the stored one is taken, so this finds the least free one without
      // trying them all again.
      int& i = next_suffix[base];
      i = std::max(i, 1);
      do {
        name = fmt::format("{}-{}", base, i++);
      } while (names.count(name));
    }
    names.insert(name);
    return name;
  }

  std::string define(const std::string& name, const std::string& body) {
    if (rules.size() >= limits.max_rules) {
      throw GrammarError(fmt::format(
          "the JSON Schema needs more than {} grammar rules; make it smaller (fewer properties, "
          "or fewer distinct combinations of '$ref' with sibling keywords: each compiles to "
          "rules of its own)",
          limits.max_rules));
    }
    bytes += name.size() + body.size() + 6;  // " ::= " and the newline
    if (bytes > limits.max_bytes) {
      throw GrammarError(fmt::format(
          "the JSON Schema's grammar grows past {} bytes; make the schema smaller (fewer or "
          "shorter property names and enum values, or fewer distinct combinations of '$ref' "
          "with sibling keywords)",
          limits.max_bytes));
    }
    rules.emplace_back(name, body);
    return name;
  }

  // A rule for the body, shared with any earlier rule of the same body.
  std::string rule(std::string_view hint, const std::string& body) {
    if (auto it = by_body.find(body); it != by_body.end()) return it->second;
    const std::string name = define(unique_name(hint), body);
    by_body.emplace(body, name);
    return name;
  }

  void check_time() const {
    if (Clock::now() >= deadline) {
      throw GrammarError(fmt::format(
          "compiling the JSON Schema took longer than {} ms; make it smaller, or share "
          "subschemas through '$ref' without sibling keywords (a '$ref' with siblings is "
          "compiled anew for each distinct combination)",
          limits.max_time.count()));
    }
  }

  // Called once per subschema compiled: the work a schema causes is bounded even where it
  // expands into many distinct merged schemas whose grammars coincide.
  void check_budget() {
    if (++subschemas > limits.max_subschemas) {
      throw GrammarError(fmt::format(
          "the JSON Schema expands to more than {} subschemas to compile (each '$ref' with "
          "sibling keywords, 'allOf' merge and 'anyOf' alternative merged with its siblings "
          "counts anew); share subschemas through '$ref' without sibling keywords, or make the "
          "schema smaller",
          limits.max_subschemas));
    }
    check_time();
  }

  std::string helper(const std::string& which);
  std::string visit(const ojson& s, const std::string& where, const std::string& hint);
  std::string visit_object(const ojson& s, const std::string& where, const std::string& hint);
  std::string visit_array(const ojson& s, const std::string& where, const std::string& hint);
  std::string visit_string(const ojson& s, const std::string& where);
  std::string visit_numeric(const ojson& s, bool integer, const std::string& where);
  std::string visit_ref(const ojson& s, const std::string& where, const std::string& hint);
  std::string visit_combo(const ojson& s, const std::string& key, const std::string& where,
                          const std::string& hint);
  std::string visit_union(const ojson& s, const std::string& where, const std::string& hint);
  std::string visit_enum(const ojson& s, const std::string& where);
  std::string visit_types(const ojson& s, const std::string& where, const std::string& hint);
  std::string extra_key(const std::vector<std::string>& avoid);
  const ojson& target(const std::string& pointer, const std::string& ref, const std::string& where);
  ojson inline_refs(ojson s, const std::string& where);
  void check_keywords(const ojson& s, const std::string& where) const;
};

}  // namespace baton::grammar
