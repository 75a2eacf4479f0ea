#pragma once
// Small text helpers shared by the XML-like and channel tool-call formats: finding markup literals
// in a text that may end in the middle of one, holding back what more text could still change, and
// writing JSON text piece by piece.
#include <cstddef>
#include <span>
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

// The word `s` starts with: up to whitespace or the next special token ("<|").
std::string_view first_word(std::string_view s);

// For the formats whose messages are bodies ended by special tokens (Harmony, Muse). An end
// equal to `kept` opens the next message, so it ends the body without being consumed (a model
// may start the next message directly).
struct BodyEnd {
  size_t at = npos;     // where the earliest end starts, npos when none
  size_t consumed = 0;  // its bytes that belong to this body's markup
};
BodyEnd find_body_end(std::string_view text, size_t pos, std::span<const std::string_view> ends,
                      std::string_view kept);
// find_body_end for a call's body, where an end marker the model spelt inside the call (a
// control token sampled inside an argument) is argument text, not an end: for a JSON body, an
// end inside the JSON value does not count (none does while the value is still open; a body
// that is not JSON ends at its first end); for a body that opens `section_open`, an end before
// its `section_close` does not count (and none does while it is open).
BodyEnd find_json_body_end(std::string_view text, size_t pos,
                           std::span<const std::string_view> ends, std::string_view kept);
BodyEnd find_section_body_end(std::string_view text, size_t pos,
                              std::span<const std::string_view> ends, std::string_view kept,
                              std::string_view section_open, std::string_view section_close);
// Bytes at the end of an unfinished body that may still be one of `ends` or a split character.
size_t body_held_back(std::string_view body, std::span<const std::string_view> ends);

// Appends `s` as the inside of a JSON string (no quotes). Escaping works byte by byte, so the
// escape of a concatenation is the concatenation of the escapes: a streamed prefix of a value
// escapes to a prefix of the whole value's escape.
void append_json_escaped(std::string& out, std::string_view s);
// `s` as a JSON string literal, quotes included.
std::string json_quote(std::string_view s);

}  // namespace baton::toolcall::markup
