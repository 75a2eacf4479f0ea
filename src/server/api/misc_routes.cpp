// GET /health, /v1/models, /metrics, /status; POST /tokenize, /detokenize.
#include <fmt/format.h>

#include "server/answer/answer_job.h"
#include "server/api/json_fields.h"
#include "server/api/openai_request.h"
#include "server/errors.h"
#include "server/http/request_head.h"
#include "server/ops/status_json.h"
#include "server/server_routes.h"

namespace baton::server {

using nlohmann::json;

namespace {

void send_json(HttpResponse& res, const json& j) {
  res.content_type = "application/json";
  res.body = j.dump(-1, ' ', false, json::error_handler_t::replace);
}

json model_json(const ServeContext& c) {
  return {{"id", c.opts.model_id},
          {"object", "model"},
          {"created", c.created},
          {"owned_by", "baton"},
          {"meta", {{"n_ctx", c.ctx}, {"n_vocab", c.codec.n_vocab()}}}};
}

}  // namespace

void handle_health(const ServeContext& c, const HttpRequest&, HttpResponse& res) {
  // A load balancer's health check takes this replica out of rotation while its running
  // requests finish.
  if (c.backend.draining()) throw shutting_down_error();
  res.body = R"({"status":"ok"})";
}

void handle_models(const ServeContext& c, const HttpRequest&, HttpResponse& res) {
  send_json(res, {{"object", "list"}, {"data", json::array({model_json(c)})}});
}

void handle_model(const ServeContext& c, const HttpRequest& req, HttpResponse& res) {
  std::string_view path = req.path;
  auto id = percent_decode(path.substr(path.find("/models/") + 8));
  if (!id || *id != c.opts.model_id) {
    throw ApiError(404,
                   fmt::format("model '{}' is not served here; this server serves '{}'",
                               id ? *id : std::string(path.substr(path.find("/models/") + 8)),
                               c.opts.model_id),
                   "model", "invalid_request_error", "model_not_found");
  }
  send_json(res, model_json(c));
}

// The bounds of the completion routes: text longer than --ctx tokens could cover is refused
// before it is tokenized, and an answer never lists more than --ctx tokens, so neither the
// tokenizer's work nor the answer grows with what a client sends.
void handle_tokenize(const ServeContext& c, const HttpRequest& req, HttpResponse& res) {
  const RequestLimits limits = request_limits(c);
  json body = parse_json_object(req.body, limits.max_array_items, limits.ctx);
  auto it = body.find("content");
  if (it == body.end() || !it->is_string()) {
    throw bad_request("'content' (a string) is required", "content");
  }
  const std::string& content = it->get_ref<const std::string&>();
  if (limits.max_prompt_bytes > 0 && content.size() > limits.max_prompt_bytes) {
    throw ApiError(400,
                   fmt::format("'content' is {} bytes, more than the context (--ctx) of {} tokens "
                               "can hold ({} bytes at most); send it in parts",
                               content.size(), limits.ctx, limits.max_prompt_bytes),
                   "content", "invalid_request_error", "context_length_exceeded");
  }
  bool add_special = fields::boolean(body, "add_special").value_or(false);
  bool parse_special = fields::boolean(body, "parse_special").value_or(true);
  bool with_pieces = fields::boolean(body, "with_pieces").value_or(false);
  auto ids = c.codec.encode(content, add_special && c.codec.default_add_bos(), parse_special);
  if (limits.ctx > 0 && ids.size() > static_cast<size_t>(limits.ctx)) {
    throw ApiError(400,
                   fmt::format("'content' is {} tokens, more than the context (--ctx) of {}; "
                               "send it in parts",
                               ids.size(), limits.ctx),
                   "content", "invalid_request_error", "context_length_exceeded");
  }
  // Written as text: a JSON document of one object per token costs many times the answer.
  std::string out = R"({"tokens":[)";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += ',';
    if (!with_pieces) {
      out += std::to_string(ids[i]);
      continue;
    }
    out += R"({"id":)" + std::to_string(ids[i]) + R"(,"piece":)" +
           json(c.codec.piece(ids[i])).dump(-1, ' ', false, json::error_handler_t::replace) + "}";
  }
  out += "]}";
  res.content_type = "application/json";
  res.body = std::move(out);
}

// At most --ctx ids (refused while the JSON is parsed), so the text stays bounded too.
void handle_detokenize(const ServeContext& c, const HttpRequest& req, HttpResponse& res) {
  const RequestLimits limits = request_limits(c);
  json body = parse_json_object(req.body, limits.max_array_items, limits.ctx);
  auto it = body.find("tokens");
  if (it == body.end() || !it->is_array()) {
    throw bad_request("'tokens' (an array of token ids) is required", "tokens");
  }
  std::vector<int32_t> ids;
  ids.reserve(it->size());
  for (const auto& t : *it) {
    if (!t.is_number_integer()) throw bad_request("'tokens' entries must be integers", "tokens");
    int64_t id = t.get<int64_t>();
    if (id < 0 || id >= c.codec.n_vocab()) {
      throw bad_request(
          fmt::format("token id {} is outside the vocabulary [0, {})", id, c.codec.n_vocab()),
          "tokens");
    }
    ids.push_back(static_cast<int32_t>(id));
  }
  send_json(res, {{"content", c.codec.decode(ids)}});
}

void handle_metrics(const ServeContext& c, const HttpRequest&, HttpResponse& res) {
  res.content_type = "text/plain; version=0.0.4; charset=utf-8";
  res.body = render_metrics(c.backend.metrics(), c.counters());
}

void handle_status(const ServeContext& c, const HttpRequest&, HttpResponse& res) {
  send_json(res, status_json(c.backend.status(), c.opts.model_id));
}

}  // namespace baton::server
