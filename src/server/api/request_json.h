#pragma once
// The request body as one document, parsed once and bounded while it is parsed. Every front end
// (chat/completions, completions, Responses, Anthropic) reads its fields from it, and it keeps
// the client's key order, which templates show (a tool's parameters) and schemas compile in.
#include <cstddef>
#include <cstdint>
#include <string>

#include "server/api/json_fields.h"

namespace baton::server {

// Parse the body as a JSON object (400 when it is not one, or nests deeper than
// util::kMaxJsonDepth). `max_array_items` > 0: a longer array anywhere is refused while parsing
// (400 context_length_exceeded), so an 8 MB array of token ids never becomes 8 MB of JSON values.
RequestJson parse_json_object(const std::string& body, size_t max_array_items = 0, int32_t ctx = 0);

}  // namespace baton::server
