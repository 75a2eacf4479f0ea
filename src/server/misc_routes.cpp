// GET /v1/models, /metrics, /status; POST /tokenize, /detokenize.
#include <fmt/format.h>

#include "server/errors.h"
#include "server/json_fields.h"
#include "server/server_routes.h"
#include "server/status_json.h"

namespace baton::server {

using nlohmann::json;

namespace {

void send_json(httplib::Response& res, const json& j) {
  res.set_content(j.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

}  // namespace

void send_error(httplib::Response& res, const ApiError& e) {
  res.status = e.status;
  if (e.retry_after_s > 0) res.set_header("Retry-After", std::to_string(e.retry_after_s));
  res.set_content(error_body(e), "application/json");
}

void handle_models(const ServeContext& c, const httplib::Request&, httplib::Response& res) {
  json model = {{"id", c.opts.model_id},
                {"object", "model"},
                {"created", c.created},
                {"owned_by", "baton"},
                {"meta", {{"n_ctx", c.ctx}, {"n_vocab", c.codec.n_vocab()}}}};
  send_json(res, {{"object", "list"}, {"data", json::array({model})}});
}

void handle_tokenize(const ServeContext& c, const httplib::Request& req, httplib::Response& res) {
  json body = parse_json_object(req.body);
  auto content = fields::string(body, "content");
  if (!content) throw bad_request("'content' (a string) is required", "content");
  bool add_special = fields::boolean(body, "add_special").value_or(false);
  bool parse_special = fields::boolean(body, "parse_special").value_or(true);
  bool with_pieces = fields::boolean(body, "with_pieces").value_or(false);
  auto ids = c.codec.encode(*content, add_special && c.codec.default_add_bos(), parse_special);
  json tokens = json::array();
  for (int32_t id : ids) {
    if (with_pieces) {
      tokens.push_back({{"id", id}, {"piece", c.codec.piece(id)}});
    } else {
      tokens.push_back(id);
    }
  }
  send_json(res, {{"tokens", tokens}});
}

void handle_detokenize(const ServeContext& c, const httplib::Request& req, httplib::Response& res) {
  json body = parse_json_object(req.body);
  auto it = body.find("tokens");
  if (it == body.end() || !it->is_array()) {
    throw bad_request("'tokens' (an array of token ids) is required", "tokens");
  }
  std::vector<int32_t> ids;
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

void handle_metrics(const ServeContext& c, const httplib::Request&, httplib::Response& res) {
  res.set_content(render_metrics(c.backend.metrics(), c.counters()),
                  "text/plain; version=0.0.4; charset=utf-8");
}

void handle_status(const ServeContext& c, const httplib::Request&, httplib::Response& res) {
  send_json(res, status_json(c.backend.status(), c.opts.model_id));
}

}  // namespace baton::server
