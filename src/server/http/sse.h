#pragma once
// Server-sent events framing as OpenAI clients expect it: one `data: {json}\n\n` event per chunk,
// `data: [DONE]\n\n` at the end, and `: comment\n\n` lines (ignored by clients) as keepalives.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace baton::server {

std::string sse_data(const nlohmann::json& chunk);
// A named event, `event: <name>\ndata: {json}\n\n`, as the Responses and Anthropic APIs send.
std::string sse_event(std::string_view name, const nlohmann::json& data);
std::string sse_done();
// A comment event; newlines in `text` are replaced so it stays one line.
std::string sse_comment(std::string_view text);

}  // namespace baton::server
