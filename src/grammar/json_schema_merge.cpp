#include "grammar/json_schema_merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <unordered_map>
#include <utility>
#include <vector>

#include "grammar/grammar.h"

namespace baton::grammar::schema_detail {
namespace {

const std::set<std::string> kAllTypes = {"null",   "boolean", "object", "array",
                                         "string", "integer", "number"};

bool has_any(const ojson& s, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    if (s.contains(k)) return true;
  }
  return false;
}

std::set<std::string> type_set(const ojson& type) {
  std::set<std::string> out;
  if (type.is_string()) out.insert(type.get<std::string>());
  if (type.is_array()) {
    for (const auto& t : type) {
      if (t.is_string()) out.insert(t.get<std::string>());
    }
  }
  return out;
}

ojson type_json(const std::set<std::string>& types) {
  if (types.size() == 1) return *types.begin();
  ojson out = ojson::array();
  for (const auto& t : types) out.push_back(t);
  return out;
}

// integer is a subtype of number: their intersection is integer.
std::set<std::string> intersect_types(const std::set<std::string>& a,
                                      const std::set<std::string>& b) {
  std::set<std::string> out;
  for (const auto& t : a) {
    if (b.count(t) || (t == "integer" && b.count("number"))) out.insert(t);
    if (t == "number" && b.count("integer")) out.insert("integer");
  }
  return out;
}

bool is_lower_bound(const std::string& k) {
  return k == "minimum" || k == "minLength" || k == "minItems" || k == "exclusiveMinimum";
}
bool is_upper_bound(const std::string& k) {
  return k == "maximum" || k == "maxLength" || k == "maxItems" || k == "exclusiveMaximum";
}

// Values a property is pinned to by const / enum; empty when it is not pinned.
std::vector<ojson> pinned_values(const ojson& s) {
  if (!s.is_object()) return {};
  if (auto c = s.find("const"); c != s.end()) return {*c};
  if (auto e = s.find("enum"); e != s.end() && e->is_array()) return {e->begin(), e->end()};
  return {};
}

// Sorted, so that comparing two long enums costs n log n, not n * m.
std::set<ojson> value_set(const ojson& array) {
  return {array.begin(), array.end()};
}

bool values_disjoint(const std::vector<ojson>& a, const std::vector<ojson>& b) {
  if (a.empty() || b.empty()) return false;
  if (a.size() * b.size() <= 64) {  // the usual const against const: no set to build
    for (const auto& x : a) {
      if (std::find(b.begin(), b.end(), x) != b.end()) return false;
    }
    return true;
  }
  const std::set<ojson> in_b(b.begin(), b.end());
  for (const auto& x : a) {
    if (in_b.count(x)) return false;
  }
  return true;
}

// cur becomes the allOf of cur and b. A cur that is already a bare allOf takes b as one more
// part: merging many schemas then makes a list, not a nest as deep as their number (which
// copying and comparing would walk recursively).
void conjoin(ojson& cur, const ojson& b) {
  if (cur.is_object() && cur.size() == 1 && cur.contains("allOf") && cur["allOf"].is_array()) {
    cur["allOf"].push_back(b);
  } else {
    cur = ojson{{"allOf", ojson::array({std::move(cur), b})}};
  }
}

// Adds b's properties to a's (`a` an object), a property in both becoming the allOf of the
// two. ordered_json finds a key by a linear scan, so the names are indexed first.
void merge_properties(ojson& a, const ojson& b) {
  auto& obj = a.get_ref<ojson::object_t&>();
  std::unordered_map<std::string, size_t> at;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    at.emplace(it->first, static_cast<size_t>(it - obj.begin()));
  }
  for (const auto& [p, ps] : b.items()) {
    if (auto it = at.find(p); it != at.end()) {
      conjoin((obj.begin() + static_cast<std::ptrdiff_t>(it->second))->second, ps);
    } else {
      at.emplace(p, obj.size());
      obj.emplace_back(p, ps);  // the vector's own append: p is known to be new
    }
  }
}

bool requires_property(const ojson& s, const std::string& name) {
  auto r = s.find("required");
  if (r == s.end() || !r->is_array()) return false;
  return std::find(r->begin(), r->end(), ojson(name)) != r->end();
}

// Objects that both require a property pinned to different values, or where one requires a
// property that the other's additionalProperties: false forbids.
bool objects_disjoint(const ojson& a, const ojson& b) {
  const ojson empty = ojson::object();
  const ojson& pa =
      a.contains("properties") && a["properties"].is_object() ? a["properties"] : empty;
  const ojson& pb =
      b.contains("properties") && b["properties"].is_object() ? b["properties"] : empty;
  for (const auto& [name, sa] : pa.items()) {
    if (!requires_property(a, name)) continue;
    if (requires_property(b, name) && pb.contains(name) &&
        values_disjoint(pinned_values(sa), pinned_values(pb[name]))) {
      return true;
    }
    if (b.value("additionalProperties", ojson(true)) == ojson(false) && !pb.contains(name)) {
      return true;
    }
  }
  return false;
}

std::set<std::string> json_kinds(const std::set<std::string>& types) {
  std::set<std::string> out;
  for (const auto& t : types) out.insert(t == "integer" ? "number" : t);
  return out;
}

}  // namespace

bool is_annotation(const std::string& key) {
  static const std::set<std::string> kAnnotations = {"title",
                                                     "description",
                                                     "default",
                                                     "examples",
                                                     "$schema",
                                                     "$id",
                                                     "$comment",
                                                     "deprecated",
                                                     "readOnly",
                                                     "writeOnly",
                                                     "$defs",
                                                     "definitions",
                                                     "discriminator",
                                                     "propertyOrdering",
                                                     "markdownDescription",
                                                     "contentMediaType",
                                                     "contentEncoding",
                                                     "example",
                                                     "strict",
                                                     "name"};
  return kAnnotations.count(key) > 0 || key.rfind("x-", 0) == 0;
}

std::set<std::string> schema_types(const ojson& s) {
  if (!s.is_object()) return kAllTypes;
  std::set<std::string> out;
  if (auto t = s.find("type"); t != s.end()) {
    out = type_set(*t);
  } else {
    if (has_any(s, {"properties", "required", "additionalProperties"})) out.insert("object");
    if (has_any(s, {"items", "prefixItems", "minItems", "maxItems", "additionalItems"})) {
      out.insert("array");
    }
    if (has_any(s, {"minLength", "maxLength", "pattern", "format"})) out.insert("string");
    if (has_any(s, {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})) {
      out.insert("number");
    }
    if (out.empty()) out = kAllTypes;
  }
  if (s.contains("nullable") && s["nullable"] == true) out.insert("null");
  return out;
}

bool has_type(const ojson& v, const std::set<std::string>& types) {
  switch (v.type()) {
    case ojson::value_t::null:
      return types.count("null") > 0;
    case ojson::value_t::boolean:
      return types.count("boolean") > 0;
    case ojson::value_t::object:
      return types.count("object") > 0;
    case ojson::value_t::array:
      return types.count("array") > 0;
    case ojson::value_t::string:
      return types.count("string") > 0;
    case ojson::value_t::number_integer:
    case ojson::value_t::number_unsigned:
      return types.count("integer") > 0 || types.count("number") > 0;
    case ojson::value_t::number_float: {
      const double d = v.get<double>();
      return types.count("number") > 0 ||
             (types.count("integer") > 0 && d == static_cast<int64_t>(d));
    }
    default:
      return false;
  }
}

ojson merge_schemas(ojson a, const ojson& b, const std::string& where) {
  if (a.is_boolean() || b.is_boolean()) {
    if (a == ojson(false) || b == ojson(false)) {
      throw GrammarError(
          fmt::format("no value satisfies the schema at {} (allOf with false)", where));
    }
    return a.is_boolean() ? b : a;
  }
  if (!a.is_object() || !b.is_object()) {
    throw GrammarError(
        fmt::format("the JSON Schemas that allOf merges at {} must be objects", where));
  }
  ojson out = std::move(a);
  for (const auto& [k, v] : b.items()) {
    if (!out.contains(k)) {
      out[k] = v;
      continue;
    }
    ojson& cur = out[k];
    if (cur == v || is_annotation(k)) continue;
    if (k == "properties" && cur.is_object() && v.is_object()) {
      merge_properties(cur, v);
    } else if (k == "required" && cur.is_array() && v.is_array()) {
      std::set<ojson> seen = value_set(cur);
      for (const auto& r : v) {
        if (seen.insert(r).second) cur.push_back(r);
      }
    } else if ((is_lower_bound(k) || is_upper_bound(k)) && cur.is_number() && v.is_number()) {
      const bool take_v = is_lower_bound(k) ? v.get<double>() > cur.get<double>()
                                            : v.get<double>() < cur.get<double>();
      if (take_v) cur = v;
    } else if (k == "type") {
      auto t = intersect_types(type_set(cur), type_set(v));
      if (t.empty()) {
        throw GrammarError(
            fmt::format("no value satisfies the schema at {}: allOf of types {} "
                        "and {}",
                        where, cur.dump(), v.dump()));
      }
      cur = type_json(t);
    } else if (k == "enum" && cur.is_array() && v.is_array()) {
      const std::set<ojson> in_v = value_set(v);
      ojson both = ojson::array();
      for (const auto& x : cur) {
        if (in_v.count(x)) both.push_back(x);
      }
      cur = both;
    } else if (k == "additionalProperties" || k == "items") {
      if (cur == ojson(false) || v == ojson(false)) {
        cur = false;
      } else {
        conjoin(cur, v);
      }
    } else if (k == "nullable") {
      cur = cur == true && v == true;
    } else {
      throw GrammarError(fmt::format(
          "allOf at {}: cannot merge two different '{}' into one grammar; state it once", where,
          k));
    }
  }
  return out;
}

// A key for a $ref's sibling keywords that does not depend on their order (nor on annotations).
std::string siblings_key(const ojson& s) {
  std::vector<std::pair<std::string, std::string>> kv;
  for (const auto& [k, v] : s.items()) {
    if (k != "$ref" && !is_annotation(k)) kv.emplace_back(k, v.dump());
  }
  std::sort(kv.begin(), kv.end());
  std::string out;
  for (const auto& [k, v] : kv) {
    out += k;
    out += '\0';
    out += v;
    out += '\0';
  }
  return out;
}

// The JSON pointer that a "#..." reference stands for (URI fragments may percent-encode).
std::string ref_pointer(const std::string& ref, const std::string& where) {
  if (ref.empty() || ref[0] != '#') {
    throw GrammarError(
        fmt::format("'$ref' {} at {}: only references inside the schema (\"#/...\") "
                    "are supported",
                    ref, where));
  }
  std::string pointer;
  for (size_t i = 1; i < ref.size(); ++i) {
    if (ref[i] == '%' && i + 2 < ref.size() &&
        std::isxdigit(static_cast<unsigned char>(ref[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(ref[i + 2]))) {
      pointer += static_cast<char>(std::stoi(ref.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      pointer += ref[i];
    }
  }
  return pointer;
}

bool disjoint(const ojson& a, const ojson& b) {
  const auto va = pinned_values(a), vb = pinned_values(b);
  if (values_disjoint(va, vb)) return true;
  const auto ka = json_kinds(schema_types(a)), kb = json_kinds(schema_types(b));
  bool common = false;
  for (const auto& k : ka) common = common || kb.count(k) > 0;
  if (!common) return true;
  if (ka == std::set<std::string>{"object"} && kb == ka) {
    return objects_disjoint(a, b) || objects_disjoint(b, a);
  }
  return false;
}

}  // namespace baton::grammar::schema_detail
