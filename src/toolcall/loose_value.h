#pragma once
// Values that are almost JSON: Gemma 4 writes arguments as {city:<|"|>Paris<|"|>,days:3} (bare
// keys, strings between <|"|> tokens), LFM2 as Python literals ('Paris', True, None). Each
// format describes its dialect; the converter turns one value into JSON text as far as the
// (possibly cut) text allows, so a call's arguments stream while the model writes them.
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "toolcall/json_scan.h"

namespace baton::toolcall::loose {

enum class Escapes {
  none,    // the text up to the close is the value (Gemma's <|"|> strings)
  quotes,  // only \\, \' and \" are escapes; any other backslash is itself (Python repr of a
           // template that does not escape, e.g. LFM2's '…')
  json,    // JSON's escapes, \' included ("…" strings)
};

struct Quote {
  std::string open, close;
  Escapes escapes = Escapes::json;
};

struct Dialect {
  std::vector<Quote> quotes;
  bool bare_keys = false;  // object keys may be unquoted words
  // Words and the JSON they stand for; true, false and null are always known.
  std::vector<std::pair<std::string, std::string>> words;
};

struct Result {
  json::Status status = json::Status::partial;
  size_t end = 0;  // complete: one past the value; otherwise where reading stopped
};

// Reads the value at `pos` (leading whitespace skipped) and appends its JSON text to `out`.
// Partial: `out` got a prefix of the value's JSON text that more text only extends (a string
// streams up to what may still be its close; numbers, words and keys wait until they end).
// Invalid: `out` holds whatever was appended before the problem.
Result to_json(std::string_view text, size_t pos, const Dialect& dialect, std::string& out);

// The end of the word (a key, a name) that starts at `pos`: letters, digits, '_', '-', '.'.
size_t word_end(std::string_view text, size_t pos);

}  // namespace baton::toolcall::loose
