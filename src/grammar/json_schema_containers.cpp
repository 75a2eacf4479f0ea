// JSON Schema → GBNF: objects (properties in the schema's order, required ones first-class,
// additionalProperties as keys that avoid the named ones) and arrays (prefixItems, items and
// counts).
#include <fmt/format.h>

#include "grammar/json_schema_impl.h"
#include "grammar/json_schema_keys.h"

namespace baton::grammar {
namespace {

constexpr int kMaxExtraKey = 64;  // characters in a key that additionalProperties allows

}  // namespace

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

}  // namespace baton::grammar
