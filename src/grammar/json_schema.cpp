// JSON Schema → GBNF. Each schema node becomes an expression over a few shared helper rules;
// object and array nodes, and every $ref target, become named rules (a $ref target is named
// before its body is built, which is how recursive schemas terminate).
#include "grammar/json_schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "grammar/json_schema_keys.h"
#include "grammar/json_schema_merge.h"
#include "grammar/json_schema_scalars.h"
#include "grammar/regex_gbnf.h"

namespace baton::grammar {

using namespace schema_detail;

namespace {

constexpr int kMaxDepth = 64;
constexpr int64_t kMaxCount = 10000;  // the GBNF repetition limit
constexpr int kMaxExtraKey = 64;      // characters in a key that additionalProperties allows
// oneOf compares every two alternatives; more than this many would take seconds.
constexpr size_t kMaxOneOf = 1000;

const std::set<std::string> kKeywords = {"type",
                                         "properties",
                                         "required",
                                         "additionalProperties",
                                         "items",
                                         "prefixItems",
                                         "additionalItems",
                                         "minItems",
                                         "maxItems",
                                         "uniqueItems",
                                         "enum",
                                         "const",
                                         "anyOf",
                                         "oneOf",
                                         "allOf",
                                         "$ref",
                                         "minLength",
                                         "maxLength",
                                         "pattern",
                                         "format",
                                         "minimum",
                                         "maximum",
                                         "exclusiveMinimum",
                                         "exclusiveMaximum",
                                         "nullable",
                                         "multipleOf"};

const char* const kQuote = R"("\"")";  // the GBNF literal of one double quote

[[noreturn]] void unsatisfiable(const std::string& where, const std::string& why) {
  throw GrammarError(fmt::format("no value satisfies the JSON Schema at {}: {}", where, why));
}

std::string child(const std::string& where, const std::string& key) {
  std::string esc;
  for (char c : key) {
    if (c == '~') {
      esc += "~0";
    } else if (c == '/') {
      esc += "~1";
    } else {
      esc += c;
    }
  }
  return (where == "/" ? "" : where) + "/" + esc;
}

std::string sanitize(std::string_view hint) {
  std::string out;
  for (char c : hint) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (ok) {
      out += c;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
    if (out.size() >= 40) break;
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "v" : out;
}

// The hint for a part of a schema, already in its final (short) form: hints of nested
// properties do not grow with the depth or with the length of the names.
std::string sub_hint(const std::string& hint, std::string_view part) {
  std::string h = hint;
  h += '-';
  h += part;
  return sanitize(h);
}

std::optional<Bound> lower_bound(const ojson& s) {
  std::optional<Bound> b;
  if (auto m = s.find("minimum"); m != s.end() && m->is_number())
    b = Bound{m->get<double>(), false};
  auto ex = s.find("exclusiveMinimum");
  if (ex != s.end() && ex->is_boolean() && ex->get<bool>() && b) b->exclusive = true;  // draft 4
  if (ex != s.end() && ex->is_number()) {
    const double v = ex->get<double>();
    if (!b || v >= b->value) b = Bound{v, true};
  }
  return b;
}

std::optional<Bound> upper_bound(const ojson& s) {
  std::optional<Bound> b;
  if (auto m = s.find("maximum"); m != s.end() && m->is_number())
    b = Bound{m->get<double>(), false};
  auto ex = s.find("exclusiveMaximum");
  if (ex != s.end() && ex->is_boolean() && ex->get<bool>() && b) b->exclusive = true;
  if (ex != s.end() && ex->is_number()) {
    const double v = ex->get<double>();
    if (!b || v <= b->value) b = Bound{v, true};
  }
  return b;
}

int64_t count_keyword(const ojson& s, const char* key, int64_t fallback, const std::string& where) {
  auto it = s.find(key);
  if (it == s.end()) return fallback;
  if (!it->is_number_integer() || it->get<int64_t>() < 0) {
    throw GrammarError(fmt::format("'{}' at {} must be a non-negative integer", key, where));
  }
  const int64_t v = it->get<int64_t>();
  if (v > kMaxCount) {
    throw GrammarError(
        fmt::format("'{}' at {} is {}; grammars count up to {}", key, where, v, kMaxCount));
  }
  return v;
}

std::string ref_text(const ojson& s, const std::string& where) {
  const ojson& ref = s["$ref"];
  if (!ref.is_string()) throw GrammarError(fmt::format("'$ref' at {} must be a string", where));
  return ref.get<std::string>();
}

std::string repeat(const std::string& x, int64_t min, int64_t max) {
  if (max == 0) return "";
  if (min == 0 && max < 0) return "(" + x + ")*";
  if (min == 1 && max < 0) return "(" + x + ")+";
  if (min == 0 && max == 1) return "(" + x + ")?";
  if (max < 0) return fmt::format("({}){{{},}}", x, min);
  if (min == max) return fmt::format("({}){{{}}}", x, min);
  return fmt::format("({}){{{},{}}}", x, min, max);
}

}  // namespace

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

std::string SchemaGrammarBuilder::Impl::helper(const std::string& which) {
  if (auto it = helpers.find(which); it != helpers.end()) return it->second;
  std::string body;
  if (which == "ws") {
    // Bounded: a model that keeps emitting whitespace cannot run the answer to max_tokens.
    body = R"(([ \t] | "\n" [ \t]{0,20})?)";
  } else if (which == "char") {
    // \u escapes stop short of surrogates, so every escape is one code point (minLength counts
    // code points).
    body = R"([^"\\\x00-\x1F] | "\\" ([\"\\/bfnrt] | "u" ([0-9a-cA-Ce-fE-F] [0-9a-fA-F]{3} | )"
           R"([dD] [0-7] [0-9a-fA-F]{2})))";
  } else if (which == "string") {
    body = fmt::format("{} {}* {}", kQuote, helper("char"), kQuote);
  } else if (which == "number") {
    body = bounded_number(std::nullopt, std::nullopt);
  } else if (which == "value") {
    const std::string name = unique_name("value");
    helpers[which] = name;  // object-any and array-any refer back to it
    const std::string ws = helper("ws"), str = helper("string");
    const std::string pair = fmt::format("{} {} \":\" {} {}", str, ws, ws, name);
    const std::string obj =
        rule("object-any",
             fmt::format("\"{{\" {} ({} (\",\" {} {})*)? {} \"}}\"", ws, pair, ws, pair, ws));
    const std::string arr = rule(
        "array-any", fmt::format("\"[\" {} ({} (\",\" {} {})*)? {} \"]\"", ws, name, ws, name, ws));
    define(name, fmt::format("{} | {} | {} | {} | \"true\" | \"false\" | \"null\"", obj, arr, str,
                             helper("number")));
    return name;
  } else {
    throw std::logic_error("unknown helper " + which);
  }
  const std::string name = define(unique_name(which), body);
  helpers[which] = name;
  return name;
}

void SchemaGrammarBuilder::Impl::check_keywords(const ojson& s, const std::string& where) const {
  for (const auto& [k, v] : s.items()) {
    if (kKeywords.count(k) || is_annotation(k)) continue;
    throw GrammarError(fmt::format(
        "unsupported JSON Schema keyword '{}' at {}: a grammar cannot enforce it; remove it or "
        "see docs/GRAMMAR.md for the supported subset",
        k, where));
  }
  if (s.contains("uniqueItems") && s["uniqueItems"] == true) {
    throw GrammarError(
        fmt::format("unsupported JSON Schema keyword 'uniqueItems' at {}: a "
                    "grammar cannot keep array items distinct",
                    where));
  }
  if (auto m = s.find("multipleOf");
      m != s.end() && !(m->is_number() && m->get<double>() == 1.0 &&
                        schema_types(s) == std::set<std::string>{"integer"})) {
    throw GrammarError(fmt::format("unsupported JSON Schema keyword 'multipleOf' at {}", where));
  }
}

std::string SchemaGrammarBuilder::Impl::visit(const ojson& s, const std::string& where,
                                              const std::string& hint) {
  if (s.is_boolean()) {
    if (!s.get<bool>()) unsatisfiable(where, "the schema is false");
    return helper("value");
  }
  if (!s.is_object()) {
    throw GrammarError(fmt::format("the JSON Schema at {} must be an object or a boolean", where));
  }
  if (++depth > kMaxDepth) {
    throw GrammarError(fmt::format(
        "the JSON Schema nests deeper than {} levels at {} (properties, items, anyOf and the "
        "targets of '$ref' each count a level); flatten it",
        kMaxDepth, where));
  }
  check_budget();
  check_keywords(s, where);
  std::string out;
  if (s.contains("$ref")) {
    out = visit_ref(s, where, hint);
  } else if (s.contains("allOf")) {
    const ojson& parts = s["allOf"];
    if (!parts.is_array() || parts.empty()) {
      throw GrammarError(fmt::format("'allOf' at {} must be a non-empty array", where));
    }
    ojson merged = s;
    merged.erase("allOf");
    for (size_t i = 0; i < parts.size(); ++i) {
      check_time();  // each merge costs up to the size of what is merged so far
      const std::string at = child(child(where, "allOf"), std::to_string(i));
      merged = merge_schemas(std::move(merged), inline_refs(parts[i], at), at);
    }
    out = visit(merged, where, hint);
  } else if (s.contains("anyOf") || s.contains("oneOf")) {
    out = visit_union(s, where, hint);
  } else if (s.contains("enum") || s.contains("const")) {
    out = visit_enum(s, where);
  } else {
    out = visit_types(s, where, hint);
  }
  --depth;
  return out;
}

std::string SchemaGrammarBuilder::Impl::visit_types(const ojson& s, const std::string& where,
                                                    const std::string& hint) {
  std::vector<std::string> alts;
  for (const auto& t : schema_types(s)) {
    if (t == "null") {
      alts.push_back("\"null\"");
    } else if (t == "boolean") {
      alts.push_back("(\"true\" | \"false\")");
    } else if (t == "object") {
      alts.push_back(visit_object(s, where, hint));
    } else if (t == "array") {
      alts.push_back(visit_array(s, where, hint));
    } else if (t == "string") {
      alts.push_back(visit_string(s, where));
    } else if (t == "integer" || t == "number") {
      if (t == "integer" && schema_types(s).count("number")) continue;  // number covers it
      alts.push_back(visit_numeric(s, t == "integer", where));
    } else {
      throw GrammarError(fmt::format("unknown JSON Schema type '{}' at {}", t, where));
    }
  }
  if (alts.empty()) unsatisfiable(where, "'type' lists no type");
  if (alts.size() == 1) return alts[0];
  std::string body;
  for (size_t i = 0; i < alts.size(); ++i) body += (i ? " | " : "") + alts[i];
  return rule(hint, body);
}

std::string SchemaGrammarBuilder::Impl::visit_enum(const ojson& s, const std::string& where) {
  std::vector<ojson> values;
  if (auto e = s.find("enum"); e != s.end()) {
    if (!e->is_array()) throw GrammarError(fmt::format("'enum' at {} must be an array", where));
    values.assign(e->begin(), e->end());
  }
  if (auto c = s.find("const"); c != s.end()) {
    if (s.contains("enum") && std::find(values.begin(), values.end(), *c) == values.end()) {
      unsatisfiable(where, "'const' is not one of 'enum'");
    }
    values = {*c};
  }
  const auto types = s.contains("type") ? schema_types(s) : std::set<std::string>{};
  std::string body;
  for (const auto& v : values) {
    if (!types.empty() && !has_type(v, types)) continue;
    body += (body.empty() ? "" : " | ") + gbnf_literal(v.dump());
  }
  if (body.empty()) unsatisfiable(where, "no 'enum' / 'const' value has the schema's type");
  return "(" + body + ")";
}

std::string SchemaGrammarBuilder::Impl::visit_string(const ojson& s, const std::string& where) {
  const bool lengths = s.contains("minLength") || s.contains("maxLength");
  if (auto f = s.find("format"); f != s.end()) {
    if (s.contains("pattern")) {
      throw GrammarError(
          fmt::format("'format' together with 'pattern' at {} is not supported; "
                      "keep one of them",
                      where));
    }
    if (!f->is_string()) throw GrammarError(fmt::format("'format' at {} must be a string", where));
    return format_string(f->get<std::string>(), where, count_keyword(s, "minLength", 0, where),
                         count_keyword(s, "maxLength", -1, where));
  }
  if (auto p = s.find("pattern"); p != s.end()) {
    if (!p->is_string()) throw GrammarError(fmt::format("'pattern' at {} must be a string", where));
    RegexOptions opts;
    opts.search = true;
    opts.json_string_body = true;
    // Lengths count characters: the pattern's automaton is combined with a counter.
    opts.min_length = count_keyword(s, "minLength", 0, where);
    opts.max_length = count_keyword(s, "maxLength", -1, where);
    opts.add_rule = [this](const std::string& h, const std::string& b) { return rule(h, b); };
    return fmt::format("{} {} {}", kQuote, regex_to_gbnf(p->get<std::string>(), opts), kQuote);
  }
  if (!lengths) return helper("string");
  const int64_t min = count_keyword(s, "minLength", 0, where);
  const int64_t max = count_keyword(s, "maxLength", -1, where);
  if (max >= 0 && min > max) unsatisfiable(where, "minLength is above maxLength");
  if (max == 0) return fmt::format("{} {}", kQuote, kQuote);
  return fmt::format("{} {} {}", kQuote, repeat(helper("char"), min, max), kQuote);
}

std::string SchemaGrammarBuilder::Impl::visit_numeric(const ojson& s, bool integer,
                                                      const std::string& where) {
  const auto lo = lower_bound(s), hi = upper_bound(s);
  if (!integer && !lo && !hi) return helper("number");
  std::string out = integer ? bounded_integer(lo, hi) : bounded_number(lo, hi);
  if (out.empty()) unsatisfiable(where, "no number lies between its bounds");
  // A long expression (an unbounded integer is hundreds of bytes) becomes a rule that every
  // property with the same bounds shares, instead of being repeated in each.
  return out.size() > 64 ? rule(integer ? "integer" : "number", out) : out;
}

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

std::string SchemaGrammarBuilder::Impl::extra_key(const std::vector<std::string>& avoid) {
  if (!helpers.count("key-char")) {
    helpers["key-char"] = define(unique_name("key-char"), R"([^"\\\x00-\x1F])");
  }
  ExtraKeyRules r;
  r.max_len = kMaxExtraKey;
  r.key_char = helpers["key-char"];
  r.hint = "extra-key";
  r.rule = [this](const std::string& h, const std::string& b) {
    check_time();
    return rule(h, b);
  };
  return extra_key_rest(avoid, r);
}

std::string SchemaGrammarBuilder::Impl::visit_object(const ojson& s, const std::string& where,
                                                     const std::string& hint) {
  const ojson empty = ojson::object();
  const ojson& props = s.contains("properties") ? s["properties"] : empty;
  if (!props.is_object()) {
    throw GrammarError(fmt::format("'properties' at {} must be an object", where));
  }
  std::set<std::string> required;
  if (auto r = s.find("required"); r != s.end()) {
    if (!r->is_array()) throw GrammarError(fmt::format("'required' at {} must be an array", where));
    for (const auto& n : *r) {
      if (n.is_string()) required.insert(n.get<std::string>());
    }
  }
  const ojson extra = s.value("additionalProperties", ojson(false));
  struct Prop {
    std::string kv;
    bool required;
  };
  std::vector<Prop> list;
  std::vector<std::string> names;
  const std::string ws = helper("ws");
  auto add = [&](const std::string& name, const ojson& schema, const std::string& at) {
    const std::string value = visit(schema, at, sub_hint(hint, name));
    list.push_back(
        {fmt::format("{} {} \":\" {} {}", gbnf_literal(ojson(name).dump()), ws, ws, value),
         required.count(name) > 0});
    names.push_back(name);
  };
  std::unordered_set<std::string> declared;  // ordered_json looks names up one by one
  for (const auto& [name, schema] : props.items()) {
    add(name, schema, child(child(where, "properties"), name));
    declared.insert(name);
  }
  for (const auto& name : required) {
    if (declared.count(name)) continue;
    if (extra == ojson(false)) {
      unsatisfiable(where, fmt::format("'{}' is required but additionalProperties is false", name));
    }
    add(name, extra, child(where, "additionalProperties"));
  }
  std::string extra_kv;
  if (extra != ojson(false)) {
    extra_kv = fmt::format("{} {} \":\" {} {}", extra_key(names), ws, ws,
                           visit(extra, child(where, "additionalProperties"), hint + "-extra"));
  }
  // rest[i]: properties i.. after something was written (each one comma-led);
  // first: the properties from the first one written on.
  std::string rest =
      extra_kv.empty() ? "" : rule(hint + "-extra", fmt::format("(\",\" {} {})*", ws, extra_kv));
  std::string first = extra_kv.empty() ? "" : fmt::format("({} {})?", extra_kv, rest);
  for (size_t i = list.size(); i-- > 0;) {
    const std::string tail = rest.empty() ? "" : " " + rest;
    const std::string led = fmt::format("\",\" {} {}", ws, list[i].kv);
    const std::string here = list[i].kv + tail;
    if (list[i].required) {
      first = here;
    } else {
      first = first.empty() ? "(" + here + ")?" : "(" + here + " | " + first + ")";
      first = rule(hint + "-from", first);
    }
    rest = rule(hint + "-rest", (list[i].required ? led : "(" + led + ")?") + tail);
  }
  return rule(hint, fmt::format("\"{{\" {} {}{} \"}}\"", ws, first.empty() ? "" : first + " ", ws));
}

std::string SchemaGrammarBuilder::Impl::visit_array(const ojson& s, const std::string& where,
                                                    const std::string& hint) {
  std::vector<std::string> prefix;
  std::optional<std::string> item;  // empty: no item after the prefix
  const ojson* tuple = s.contains("prefixItems") ? &s["prefixItems"] : nullptr;
  const ojson* rest = s.contains("items") ? &s["items"] : nullptr;
  if (rest && rest->is_array()) {  // draft 4-7 tuples
    tuple = rest;
    rest = s.contains("additionalItems") ? &s["additionalItems"] : nullptr;
  }
  if (tuple) {
    if (!tuple->is_array())
      throw GrammarError(fmt::format("'prefixItems' at {} must be an array", where));
    for (size_t i = 0; i < tuple->size(); ++i) {
      prefix.push_back(visit((*tuple)[i], child(child(where, "prefixItems"), std::to_string(i)),
                             hint + "-" + std::to_string(i)));
    }
  }
  if (!rest) {
    item = helper("value");
  } else if (*rest != ojson(false)) {
    item = visit(*rest, child(where, "items"), hint + "-item");
  }
  const int64_t k = static_cast<int64_t>(prefix.size());
  const int64_t min = count_keyword(s, "minItems", 0, where);
  int64_t max = count_keyword(s, "maxItems", -1, where);
  if (!item) max = max < 0 ? k : std::min(max, k);
  if (max >= 0 && min > max) unsatisfiable(where, "minItems is above what the array may hold");
  const std::string ws = helper("ws");
  if (max == 0) return fmt::format("\"[\" {} \"]\"", ws);
  // Positions after the first, each comma-led; the prefix positions one by one, then the items.
  std::string tail;
  if (item) {
    const int64_t at = std::max<int64_t>(k, 1);
    tail = repeat(fmt::format("\",\" {} {}", ws, *item), std::max<int64_t>(0, min - at),
                  max < 0 ? -1 : std::max<int64_t>(0, max - at));
  }
  for (int64_t i = k - 1; i >= 1; --i) {
    if (max >= 0 && i >= max) continue;
    std::string part = fmt::format("\",\" {} {}{}", ws, prefix[i], tail.empty() ? "" : " " + tail);
    tail = i < min ? part : "(" + part + ")?";
  }
  std::string elements = (k > 0 ? prefix[0] : *item) + (tail.empty() ? "" : " " + tail);
  if (min == 0) elements = "(" + elements + ")?";
  return rule(hint, fmt::format("\"[\" {} {} {} \"]\"", ws, elements, ws));
}

SchemaGrammarBuilder::SchemaGrammarBuilder(const SchemaLimits& limits)
    : impl_(std::make_unique<Impl>(limits)) {}
SchemaGrammarBuilder::~SchemaGrammarBuilder() = default;

std::string SchemaGrammarBuilder::add_schema(const ojson& schema, std::string_view name_hint) {
  // A schema that fails leaves no half-built rules behind (the caller may go on without it).
  const size_t n_rules = impl_->rules.size();
  const size_t bytes = impl_->bytes;
  const auto names = impl_->names;
  const auto next_suffix = impl_->next_suffix;
  const auto by_body = impl_->by_body;
  const auto helpers = impl_->helpers;
  impl_->doc = &schema;
  impl_->refs.clear();  // pointers are per document
  impl_->targets.clear();
  impl_->combos.clear();
  impl_->depth = 0;
  const std::string hint = sanitize(name_hint);
  std::string expr;
  try {
    expr = impl_->visit(schema, "/", hint);
  } catch (...) {
    impl_->rules.resize(n_rules);
    impl_->bytes = bytes;
    impl_->names = names;
    impl_->next_suffix = next_suffix;
    impl_->by_body = by_body;
    impl_->helpers = helpers;
    throw;
  }
  // A rule name stays a rule name; an expression gets a rule of its own.
  if (impl_->names.count(expr)) return expr;
  return impl_->define(impl_->unique_name(hint), expr);
}

std::string SchemaGrammarBuilder::add_rule(std::string_view name_hint, std::string_view body) {
  return impl_->define(impl_->unique_name(name_hint), std::string(body));
}

std::string SchemaGrammarBuilder::gbnf(std::string_view root_body) const {
  std::string out = fmt::format("root ::= {}\n", root_body);
  for (const auto& [name, body] : impl_->rules) out += fmt::format("{} ::= {}\n", name, body);
  return out;
}

std::string json_schema_to_gbnf(const ojson& schema, const SchemaLimits& limits) {
  SchemaGrammarBuilder b(limits);
  return b.gbnf(b.add_schema(schema, "value"));
}

std::string json_object_gbnf() {
  return json_schema_to_gbnf(ojson{{"type", "object"}, {"additionalProperties", true}});
}

}  // namespace baton::grammar
