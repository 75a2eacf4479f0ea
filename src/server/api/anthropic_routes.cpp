// POST /v1/messages and /v1/messages/count_tokens: Anthropic's Messages API on the chat
// pipeline. Errors of these routes go out in Anthropic's shape (the routes' ErrorStyle).
#include <memory>

#include "server/answer/chat_job.h"
#include "server/api/anthropic_request.h"
#include "server/api/anthropic_writer.h"
#include "server/server_routes.h"

namespace baton::server {

void handle_messages(const ServeContext& c, const HttpRequest& req, HttpResponse& res) {
  MessagesRequest m = parse_messages_request(req.body, request_limits(c));
  take_session(req, m.chat.common);
  auto writer =
      std::make_unique<AnthropicWriter>(AnthropicAnswer{make_response_id("msg_"), m.model});
  run_chat(c, std::move(m.chat), std::move(writer), res);
}

void handle_count_tokens(const ServeContext& c, const HttpRequest& req, HttpResponse& res) {
  MessagesRequest m = parse_count_tokens_request(req.body, request_limits(c));
  const nlohmann::json body = {{"input_tokens", count_chat_prompt_tokens(c, m.chat.chat)}};
  res.content_type = "application/json";
  res.body = body.dump();
}

}  // namespace baton::server
