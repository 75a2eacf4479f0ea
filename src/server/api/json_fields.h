#pragma once
// Typed, range-checked reads of optional JSON request fields. A missing field or null gives
// nullopt; a wrong type or an out-of-range value throws ApiError(400) naming the field.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace baton::server::fields {

std::optional<double> number(const nlohmann::json& obj, const char* key, double lo, double hi);
std::optional<int64_t> integer(const nlohmann::json& obj, const char* key, int64_t lo, int64_t hi);
std::optional<bool> boolean(const nlohmann::json& obj, const char* key);
std::optional<std::string> string(const nlohmann::json& obj, const char* key);
// The JSON type name used in messages ("a string", "an integer", ...).
std::string type_name(const nlohmann::json& v);
// The same for any nlohmann document type (ordered_json shares the value_t enum).
std::string type_name(nlohmann::json::value_t t);

// JSON text a client sent inside a string field (a tool call's arguments), parsed under the
// request body's nesting bound: deeper → ApiError(400) naming `param` and the bound; not JSON
// → a discarded value, for the caller to say what it expected.
nlohmann::ordered_json json_text(std::string_view text, const std::string& param);

}  // namespace baton::server::fields
