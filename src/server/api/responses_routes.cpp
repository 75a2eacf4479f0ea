// POST /v1/responses: the Responses API over the chat pipeline (parse → run_chat → the
// Responses events or object).
#include <ctime>
#include <memory>

#include "server/answer/chat_job.h"
#include "server/api/responses_request.h"
#include "server/api/responses_writer.h"
#include "server/server_routes.h"

namespace baton::server {

namespace {

// The chat pipeline names chat-completions fields in what it refuses (messages, max_tokens);
// a Responses client sent input and max_output_tokens.
ApiError in_responses_terms(const ApiError& e) {
  std::string message = e.what();
  std::string param = e.param;
  if (param == "messages") param = "input";
  if (param == "max_tokens") param = "max_output_tokens";
  for (size_t at = message.find("max_tokens"); at != std::string::npos;
       at = message.find("max_tokens", at + 17)) {
    message.replace(at, 10, "max_output_tokens");
  }
  ApiError out(e.status, message, param, e.type, e.code);
  out.retry_after_s = e.retry_after_s;
  return out;
}

}  // namespace

void handle_responses(const ServeContext& c, const HttpRequest& req, HttpResponse& res) {
  ResponsesRequest r = parse_responses_request(req.body, request_limits(c));
  take_session(req, r.chat.common);
  ResponseMeta meta{make_response_id("resp_"), static_cast<int64_t>(std::time(nullptr)),
                    c.opts.model_id};
  try {
    run_chat(c, std::move(r.chat),
             std::make_unique<ResponsesWriter>(std::move(meta), std::move(r.echo)), res);
  } catch (const ApiError& e) {
    throw in_responses_terms(e);
  }
}

}  // namespace baton::server
