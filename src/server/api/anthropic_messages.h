#pragma once
// The messages of an Anthropic Messages body as chat-completions messages: system blocks, user
// and assistant turns of content blocks (text, documents, search results, tool_use,
// tool_result, thinking), consecutive turns of one role merged. Internal to the Anthropic front
// end (anthropic_request.cpp).
#include <map>
#include <set>
#include <string>

#include "server/api/request_json.h"

namespace baton::server::anthropic {

using ojson = RequestJson;

// What the translation collects besides the messages.
struct Translation {
  ojson messages = ojson::array();
  std::map<std::string, std::string> tool_names;  // tool_use id → name, for the tool messages
  std::set<std::string> dropped;                  // left-out block and tool types, logged once
};

// A block's type, or "" when it has none (the block's reader then names the problem).
std::string type_of(const ojson& block);
// Fills t.messages from the body's system and messages; throws ApiError(400) naming the field.
void translate_messages(const ojson& body, Translation& t);

}  // namespace baton::server::anthropic
