#include "server/api/json_fields.h"

#include <fmt/format.h>

#include <cmath>

#include "server/errors.h"
#include "util/json_depth.h"

namespace baton::server::fields {

using json = RequestJson;

std::string type_name(const json& v) {
  return type_name(v.type());
}

std::string type_name(json::value_t t) {
  switch (t) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    case json::value_t::number_float:
      return "a number";
    default:
      return "an integer";
  }
}

const json* find(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<double> number(const json& obj, const char* key, double lo, double hi) {
  const json* v = find(obj, key);
  if (!v) return std::nullopt;
  if (!v->is_number()) {
    throw bad_request(fmt::format("'{}' must be a number, got {}", key, type_name(*v)), key);
  }
  double d = v->get<double>();
  if (!std::isfinite(d) || d < lo || d > hi) {
    throw bad_request(fmt::format("'{}' must be between {} and {}, got {}", key, lo, hi, d), key);
  }
  return d;
}

std::optional<int64_t> integer(const json& obj, const char* key, int64_t lo, int64_t hi) {
  const json* v = find(obj, key);
  if (!v) return std::nullopt;
  bool integral_float = v->is_number_float() && std::isfinite(v->get<double>()) &&
                        std::floor(v->get<double>()) == v->get<double>() &&
                        std::fabs(v->get<double>()) < 9e15;
  if (!v->is_number_integer() && !integral_float) {
    throw bad_request(fmt::format("'{}' must be an integer, got {}", key, type_name(*v)), key);
  }
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    throw bad_request(fmt::format("'{}' must be between {} and {}", key, lo, hi), key);
  }
  int64_t i = integral_float ? static_cast<int64_t>(v->get<double>()) : v->get<int64_t>();
  if (i < lo || i > hi) {
    throw bad_request(fmt::format("'{}' must be between {} and {}, got {}", key, lo, hi, i), key);
  }
  return i;
}

std::optional<bool> boolean(const json& obj, const char* key) {
  const json* v = find(obj, key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) {
    throw bad_request(fmt::format("'{}' must be a boolean, got {}", key, type_name(*v)), key);
  }
  return v->get<bool>();
}

std::optional<std::string> string(const json& obj, const char* key) {
  const json* v = find(obj, key);
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    throw bad_request(fmt::format("'{}' must be a string, got {}", key, type_name(*v)), key);
  }
  return v->get<std::string>();
}

std::string required_string(const json& obj, const char* key, const std::string& where) {
  const json* v = find(obj, key);
  const std::string param = where + "." + key;
  if (v == nullptr) throw bad_request(fmt::format("'{}' is required", param), param);
  if (!v->is_string()) {
    throw bad_request(fmt::format("'{}' must be a string, got {}", param, type_name(*v)), param);
  }
  return v->get<std::string>();
}

json json_text(std::string_view text, const std::string& param) {
  json out;
  if (util::parse_json_text(text, out) == util::JsonText::too_deep) {
    throw bad_request(fmt::format("{} nests arrays and objects deeper than {} levels, the most "
                                  "JSON in a request may; send it less deeply nested",
                                  param, util::kMaxJsonDepth),
                      param);
  }
  return out;
}

}  // namespace baton::server::fields
