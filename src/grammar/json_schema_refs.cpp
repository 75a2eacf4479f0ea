// JSON Schema → GBNF: the visitors that combine schemas. anyOf/oneOf become alternations (oneOf
// only where its alternatives are disjoint), $ref targets become named rules, and a $ref with
// sibling keywords or an allOf is merged into one schema first (json_schema_merge.h).
#include <fmt/format.h>

#include "grammar/json_schema_impl.h"
#include "grammar/json_schema_keys.h"

namespace baton::grammar {
namespace {

// oneOf compares every two alternatives; more than this many would take seconds.
constexpr size_t kMaxOneOf = 1000;

}  // namespace

std::string SchemaGrammarBuilder::Impl::visit_union(const ojson& s, const std::string& where,
                                                    const std::string& hint) {
  if (s.contains("anyOf") && s.contains("oneOf")) {
    throw GrammarError(fmt::format("'anyOf' and 'oneOf' together at {} are not supported", where));
  }
  const bool one_of = s.contains("oneOf");
  const char* key = one_of ? "oneOf" : "anyOf";
  const ojson& alts = s[key];
  if (!alts.is_array() || alts.empty()) {
    throw GrammarError(fmt::format("'{}' at {} must be a non-empty array", key, where));
  }
  ojson base = ojson::object();
  for (const auto& [k, v] : s.items()) {
    if (k != key && !is_annotation(k) && k != "nullable") base[k] = v;
  }
  if (one_of && alts.size() > kMaxOneOf) {
    throw GrammarError(fmt::format(
        "'oneOf' at {} has {} alternatives; a grammar checks that no two overlap for at most {}: "
        "use 'anyOf' if a value may match either, or fewer alternatives",
        where, alts.size(), kMaxOneOf));
  }
  std::vector<ojson> resolved;  // alternatives with the base merged in, for the oneOf check
  std::string body;
  for (size_t i = 0; i < alts.size(); ++i) {
    const std::string at = child(child(where, key), std::to_string(i));
    // The base joins a $ref as sibling keywords, so that the target compiles once per
    // combination (inlining it here would compile a chain of such unions exponentially often).
    ojson alt = alts[i];
    if (!base.empty() && alt.is_object() && alt.contains("$ref")) {
      ojson rest = alt;
      rest.erase("$ref");
      ojson merged = merge_schemas(base, rest, at);
      merged["$ref"] = alt["$ref"];
      alt = std::move(merged);
    } else if (!base.empty()) {
      alt = merge_schemas(base, alt, at);
    }
    if (one_of) {
      ojson flat = inline_refs(alt, at);
      for (size_t j = 0; j < resolved.size(); ++j) {
        check_time();
        if (!disjoint(resolved[j], flat)) {
          throw GrammarError(fmt::format(
              "'oneOf' at {}: alternatives {} and {} may both match one value, which a grammar "
              "cannot rule out; use 'anyOf' if a value may match either",
              where, j, i));
        }
      }
      resolved.push_back(std::move(flat));
    }
    body += (i ? " | " : "") + visit(alt, at, hint);
  }
  if (s.contains("nullable") && s["nullable"] == true) body += " | \"null\"";
  return rule(hint, body);
}

const ojson& SchemaGrammarBuilder::Impl::target(const std::string& pointer, const std::string& ref,
                                                const std::string& where) {
  if (auto it = targets.find(pointer); it != targets.end()) return *it->second;
  const ojson* t = nullptr;
  try {
    t = &doc->at(ojson::json_pointer(pointer));
  } catch (const std::exception&) {
    throw GrammarError(fmt::format("'$ref' {} at {} does not point into the schema", ref, where));
  }
  targets.emplace(pointer, t);
  return *t;
}

// The schema with its top-level $ref replaced by what it points at (siblings merged in), for
// allOf and unions, which need the schema itself rather than a rule. A chain that loops back on
// itself is refused instead of followed forever.
ojson SchemaGrammarBuilder::Impl::inline_refs(ojson s, const std::string& where) {
  for (int hops = 0; s.is_object() && s.contains("$ref"); ++hops) {
    if (hops == kMaxDepth) {
      throw GrammarError(
          fmt::format("'$ref' at {} leads through more than {} references in a "
                      "row; a reference that points back at itself never ends",
                      where, kMaxDepth));
    }
    const std::string ref = ref_text(s, where);
    s.erase("$ref");
    s = merge_schemas(std::move(s), target(ref_pointer(ref, where), ref, where), where);
  }
  return s;
}

std::string SchemaGrammarBuilder::Impl::visit_ref(const ojson& s, const std::string& where,
                                                  const std::string& hint) {
  const std::string ref = ref_text(s, where);
  const std::string pointer = ref_pointer(ref, where);
  if (std::string siblings = siblings_key(s); !siblings.empty()) {
    return visit_combo(s, pointer + '\0' + siblings, where, hint);
  }
  if (auto it = refs.find(pointer); it != refs.end()) return it->second;
  const ojson& t = target(pointer, ref, where);
  const size_t slash = pointer.rfind('/');
  const std::string name = unique_name(
      slash == std::string::npos || pointer.size() == 1 ? "root-ref" : pointer.substr(slash + 1));
  refs.emplace(pointer, name);
  define(name, visit(t, pointer.empty() ? "/" : pointer, name));
  return name;
}

// A $ref with sibling keywords means the target merged with the siblings. Each distinct
// combination compiles once; a use inside its own compilation (a recursive schema) refers to
// a rule named on the spot.
std::string SchemaGrammarBuilder::Impl::visit_combo(const ojson& s, const std::string& key,
                                                    const std::string& where,
                                                    const std::string& hint) {
  auto [it, fresh] = combos.try_emplace(key);
  Combo& c = it->second;  // stays valid: unordered_map never moves its elements
  if (!fresh) {
    if (c.done) return c.expr;
    if (c.name.empty()) c.name = unique_name(hint);
    return c.name;
  }
  std::string expr = visit(inline_refs(s, where), where, hint);
  if (!c.name.empty()) {
    expr = define(c.name, expr);
  } else if (expr.size() > 64 && !names.count(expr)) {
    expr = rule(hint, expr);  // written once, however many uses share it
  }
  c.expr = expr;
  c.done = true;
  return expr;
}

}  // namespace baton::grammar
