// JSON Schema → GBNF. Each schema node becomes an expression over a few shared helper rules;
// object and array nodes, and every $ref target, become named rules (a $ref target is named
// before its body is built, which is how recursive schemas terminate). This file: the shared
// helpers, the dispatch over a node's keywords, enums, strings and numbers, and the public API;
// json_schema_refs.cpp and json_schema_containers.cpp hold the rest of the visitors.
#include "grammar/json_schema.h"

#include <fmt/format.h>

#include <optional>
#include <set>

#include "grammar/json_schema_impl.h"
#include "grammar/json_schema_keys.h"
#include "grammar/json_schema_scalars.h"
#include "grammar/regex_gbnf.h"

namespace baton::grammar {
namespace {

constexpr int64_t kMaxCount = 10000;  // the GBNF repetition limit

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

}  // namespace

namespace schema_detail {

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

std::string sub_hint(const std::string& hint, std::string_view part) {
  std::string h = hint;
  h += '-';
  h += part;
  return sanitize(h);
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

}  // namespace schema_detail

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
