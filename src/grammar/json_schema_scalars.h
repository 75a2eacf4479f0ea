#pragma once
// GBNF expressions for JSON scalars under JSON Schema bounds: integers and numbers in a range,
// strings of bounded length, and the string formats. Used by json_schema.cpp; each function
// returns an expression (no rule name) that generates only valid JSON texts for the bounds.
#include <cstdint>
#include <optional>
#include <string>

namespace baton::grammar::schema_detail {

// Unbounded integers get at most this many digits: every value stays exact in a double, which
// is what JSON parsers of clients hold numbers in.
constexpr int64_t kMaxUnboundedInt = 9'999'999'999'999'999;  // 16 digits

// Integers in [lo, hi]; "" when the range is empty.
std::string integer_range(int64_t lo, int64_t hi);

// One side of a numeric bound as JSON Schema states it.
struct Bound {
  double value = 0;
  bool exclusive = false;
};

// Integers within the bounds (absent: ±kMaxUnboundedInt); "" when none is.
std::string bounded_integer(const std::optional<Bound>& min, const std::optional<Bound>& max);
// Numbers within the bounds: the integers in range, and decimals k.f whose whole interval
// (k, k+1) lies in range. Unbounded on both sides: any JSON number. "" when none fits.
std::string bounded_number(const std::optional<Bound>& min, const std::optional<Bound>& max);

// A character class body ([...] contents) that matches the code point cp literally.
std::string class_char(uint32_t cp);

// A JSON string value for the `format` keyword (date, time, date-time, uuid, email) whose
// length lies in [min_len, max_len] (max_len < 0: unbounded); the expression includes the
// quotes. Throws GrammarError for other formats, or lengths the format cannot meet.
std::string format_string(const std::string& format, const std::string& where, int64_t min_len,
                          int64_t max_len);

}  // namespace baton::grammar::schema_detail
