#pragma once
// Where a JSON value ends in text that may stop anywhere: the formats stream a tool call's
// arguments while the model writes them, so they must tell "not finished yet" (partial) from
// "can never be JSON" (invalid) without a full parser. Strings, escapes and nesting are checked
// exactly; numbers only by their characters (a final parse validates them).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace baton::toolcall::json {

enum class Status { complete, partial, invalid };

struct Scan {
  Status status = Status::partial;
  // complete: one past the value's last character; partial: text.size(); invalid: where the
  // text stopped being JSON.
  size_t end = 0;
};

// Skips JSON whitespace (space, tab, CR, LF) from `pos`.
size_t skip_ws(std::string_view text, size_t pos);

// Scans one value starting at `pos` (leading whitespace skipped). A number that reaches the end
// of the text is partial, since more digits may follow.
Scan scan_value(std::string_view text, size_t pos);

// Scans a string token whose opening quote is at `pos`.
Scan scan_string(std::string_view text, size_t pos);

// The value of the complete string token text[pos, end) (escapes decoded); nullopt if invalid.
std::optional<std::string> decode_string(std::string_view token);

// Whether `text` is exactly one JSON object (surrounding whitespace allowed), numbers included.
bool is_object(std::string_view text);

}  // namespace baton::toolcall::json
