#pragma once
// The one bound on how deeply JSON the server reads may nest: the request body, text inside it
// that is parsed again (a tool call's arguments), and text the model wrote that is parsed as
// JSON (its tool calls). nlohmann's parser is iterative, but copying, dumping and walking a
// parsed value recurse once per level, as do the chat template's conversions; 25,000 nested
// '[' in a string would overflow the stack there. Text over the bound is refused before it is
// parsed, so nothing downstream ever holds a deeper value.
#include <string_view>

#include "util/json_builder.h"

namespace baton::util {

// Arrays and objects nested in one another, at most, in any JSON text read from a client or
// a model. The body and each text inside it are bounded alike, so a value built from both
// (arguments placed back at messages[i].tool_calls[j].function) is at most a few levels
// deeper than this.
inline constexpr int kMaxJsonDepth = 64;

// Whether no array or object in `text` opens more than `max_depth` levels deep. A flat scan,
// brackets inside strings skipped: exact for valid JSON and an upper bound for any prefix a
// parser accepts, so a text that passes cannot take a parser deeper than `max_depth`.
bool json_nesting_within(std::string_view text, int max_depth = kMaxJsonDepth);

enum class JsonText { ok, invalid, too_deep };

// Parses `text` as one JSON value (nlohmann::json or ordered_json) into `out` unless it nests
// deeper than kMaxJsonDepth. On invalid or too_deep, `out` is a discarded value.
template <class Json>
JsonText parse_json_text(std::string_view text, Json& out) {
  if (!json_nesting_within(text)) {
    out = Json(Json::value_t::discarded);
    return JsonText::too_deep;
  }
  return build_json(text, out) ? JsonText::ok : JsonText::invalid;
}

// The same, for callers to whom too deep is just another text that is not JSON (a model's
// output): a discarded value then.
template <class Json>
Json parse_json_bounded(std::string_view text) {
  Json out;
  parse_json_text(text, out);
  return out;
}

}  // namespace baton::util
