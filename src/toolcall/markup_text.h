#pragma once
// Small text helpers shared by the tool-call formats of registry_b: finding markup literals in a
// text that may end in the middle of one, holding back what more text could still change, and
// writing JSON text piece by piece.
#include <cstddef>
#include <string>
#include <string_view>

namespace baton::toolcall::markup {

inline constexpr size_t npos = std::string_view::npos;

// Length of the longest proper prefix of `literal` that `text` ends with (0 when none): the
// part of a streamed text that may still become `literal`.
size_t partial_suffix(std::string_view text, std::string_view literal);

// Bytes at the end of `text` that are an incomplete UTF-8 sequence (0 when it ends cleanly).
// Streamed text stops before them so that no delta splits a character.
size_t incomplete_utf8_suffix(std::string_view text);

bool is_space(char c);
std::string_view trim(std::string_view s);
std::string_view trim_right(std::string_view s);
std::string_view trim_left(std::string_view s);
// First position at or after `pos` that is not whitespace (text.size() when none).
size_t skip_space(std::string_view text, size_t pos);

// Appends `s` as the inside of a JSON string (no quotes). Escaping works byte by byte, so the
// escape of a concatenation is the concatenation of the escapes: a streamed prefix of a value
// escapes to a prefix of the whole value's escape.
void append_json_escaped(std::string& out, std::string_view s);
// `s` as a JSON string literal, quotes included.
std::string json_quote(std::string_view s);

}  // namespace baton::toolcall::markup
