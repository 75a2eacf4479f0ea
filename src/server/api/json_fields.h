#pragma once
// Typed, range-checked reads of optional JSON request fields. A missing field or null gives
// nullopt; a wrong type or an out-of-range value throws ApiError(400) naming the field.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace baton::server {

// A request body as the server reads it (request_json.h): key order kept.
using RequestJson = nlohmann::ordered_json;

}  // namespace baton::server

namespace baton::server::fields {

// The member `key` of `obj`, or nullptr when it is missing or null.
const RequestJson* find(const RequestJson& obj, const char* key);
// The string member `key` of `obj` (at `where`, for messages): 400 naming 'where.key' when it is
// missing or not a string.
std::string required_string(const RequestJson& obj, const char* key, const std::string& where);

std::optional<double> number(const RequestJson& obj, const char* key, double lo, double hi);
std::optional<int64_t> integer(const RequestJson& obj, const char* key, int64_t lo, int64_t hi);
std::optional<bool> boolean(const RequestJson& obj, const char* key);
std::optional<std::string> string(const RequestJson& obj, const char* key);
// The JSON type name used in messages ("a string", "an integer", ...).
std::string type_name(const RequestJson& v);
std::string type_name(RequestJson::value_t t);

// JSON text a client sent inside a string field (a tool call's arguments), parsed under the
// request body's nesting bound: deeper → ApiError(400) naming `param` and the bound; not JSON
// → a discarded value, for the caller to say what it expected.
RequestJson json_text(std::string_view text, const std::string& param);

}  // namespace baton::server::fields
