#pragma once
// Route handlers, called by HttpServer once the model is attached. They throw ApiError for
// every client-visible failure; HttpServer turns it into the response.
#include <cstdint>
#include <functional>
#include <string>

#include "constraint/constraint_compiler.h"
#include "server/answer/backend.h"
#include "server/api/chat_prompt.h"
#include "server/errors.h"
#include "server/http/http_types.h"
#include "server/http_server.h"
#include "server/live/live_hub.h"
#include "tokenizer/text_codec.h"

namespace baton::server {

struct ServeContext {
  const ServerOptions& opts;
  Backend& backend;
  const tokenizer::TextCodec& codec;
  std::shared_ptr<const ChatSetup> chat;
  int32_t ctx = 0;      // most tokens one request may hold (prompt + generated)
  int64_t created = 0;  // unix time the model was attached (for /v1/models)
  std::function<ServerCounters()> counters;
  std::shared_ptr<constraint::ConstraintCompiler> constraints;  // response_format, grammar, regex
  std::shared_ptr<LiveHub> live;  // the live view's stream; null without an engine loop
};

void handle_chat(const ServeContext& c, const HttpRequest& req, HttpResponse& res);
void handle_completion(const ServeContext& c, const HttpRequest& req, HttpResponse& res);
// GET /health once the model is attached (before, the server answers 503 "loading").
void handle_health(const ServeContext& c, const HttpRequest& req, HttpResponse& res);
void handle_models(const ServeContext& c, const HttpRequest& req, HttpResponse& res);
// GET /v1/models/{id}: the served model, or 404 for any other id.
void handle_model(const ServeContext& c, const HttpRequest& req, HttpResponse& res);
void handle_tokenize(const ServeContext& c, const HttpRequest& req, HttpResponse& res);
void handle_detokenize(const ServeContext& c, const HttpRequest& req, HttpResponse& res);
void handle_metrics(const ServeContext& c, const HttpRequest& req, HttpResponse& res);
void handle_status(const ServeContext& c, const HttpRequest& req, HttpResponse& res);
// GET /dashboard and GET /events: the live view (server/live).
void handle_dashboard(const ServeContext& c, const HttpRequest& req, HttpResponse& res);
void handle_events(const ServeContext& c, const HttpRequest& req, HttpResponse& res);

// POST /v1/responses (responses_routes.cpp).
void handle_responses(const ServeContext& c, const HttpRequest& req, HttpResponse& res);
// POST /v1/messages and /v1/messages/count_tokens (anthropic_routes.cpp).
void handle_messages(const ServeContext& c, const HttpRequest& req, HttpResponse& res);
void handle_count_tokens(const ServeContext& c, const HttpRequest& req, HttpResponse& res);

// Writes an ApiError as the response, in the route's API's error shape.
void send_error(HttpResponse& res, const ApiError& e, ErrorStyle style = ErrorStyle::OpenAI);

}  // namespace baton::server
