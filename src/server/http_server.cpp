#include "server/http_server.h"

#include <fmt/format.h>

#include <ctime>
#include <map>
#include <stdexcept>

#include "server/conn_server.h"
#include "server/errors.h"
#include "server/server_routes.h"
#include "util/log.h"

namespace baton::server {

namespace {

using RouteFn = void (*)(const ServeContext&, const httplib::Request&, httplib::Response&);

// Every path the server answers and its method; anything else is 404, a known path with the
// wrong method 405.
const std::map<std::string, std::string>& route_methods() {
  static const std::map<std::string, std::string> routes = {{"/health", "GET"},
                                                            {"/v1/health", "GET"},
                                                            {"/v1/models", "GET"},
                                                            {"/models", "GET"},
                                                            {"/metrics", "GET"},
                                                            {"/status", "GET"},
                                                            {"/v1/chat/completions", "POST"},
                                                            {"/chat/completions", "POST"},
                                                            {"/v1/completions", "POST"},
                                                            {"/completions", "POST"},
                                                            {"/tokenize", "POST"},
                                                            {"/detokenize", "POST"}};
  return routes;
}

bool key_matches(const httplib::Request& req, const std::string& key) {
  std::string auth = req.get_header_value("Authorization");
  const std::string bearer = "Bearer ";
  if (auth.size() > bearer.size() && auth.compare(0, bearer.size(), bearer) == 0 &&
      auth.substr(bearer.size()) == key) {
    return true;
  }
  return req.has_header("x-api-key") && req.get_header_value("x-api-key") == key;
}

}  // namespace

class HttpServer::Impl {
 public:
  explicit Impl(ServerOptions o) : opts(std::move(o)), svr(opts.max_connections) {}

  ServerOptions opts;
  ConnServer svr;
  std::thread listener;
  std::unique_ptr<ServeContext> ctx_owner;
  std::atomic<const ServeContext*> ctx{nullptr};
  mutable std::mutex mu;
  std::map<int, uint64_t> responses;

  void setup();
  httplib::Server::Handler wrap(RouteFn fn);
  void health(const httplib::Request& req, httplib::Response& res);
  void fill_error(const httplib::Request& req, httplib::Response& res);
  ServerCounters counters() const {
    ServerCounters c;
    {
      std::lock_guard<std::mutex> lock(mu);
      c.http_responses = responses;
    }
    c.open_connections = svr.open_connections();
    c.rejected_connections = svr.rejected_connections();
    return c;
  }
};

httplib::Server::Handler HttpServer::Impl::wrap(RouteFn fn) {
  return [this, fn](const httplib::Request& req, httplib::Response& res) {
    try {
      if (!opts.api_key.empty() && !key_matches(req, opts.api_key)) {
        throw ApiError(401,
                       "missing or wrong API key: send 'Authorization: Bearer <key>' "
                       "(the key given by --api-key or BATON_API_KEY)",
                       "", "", "invalid_api_key");
      }
      const ServeContext* c = ctx.load();
      if (!c) {
        ApiError e(503, "the model is still loading; retry shortly", "", "", "loading");
        e.retry_after_s = 1;
        throw e;
      }
      fn(*c, req, res);
    } catch (const ApiError& e) {
      send_error(res, e);
    } catch (const std::exception& e) {
      log::error("{} {}: internal error: {}", req.method, req.path, e.what());
      send_error(res, ApiError(500, std::string("internal error: ") + e.what()));
    }
  };
}

void HttpServer::Impl::health(const httplib::Request&, httplib::Response& res) {
  if (ctx.load()) {
    res.set_content(R"({"status":"ok"})", "application/json");
    return;
  }
  ApiError e(503, "the model is still loading", "", "", "loading");
  e.retry_after_s = 1;
  send_error(res, e);
}

// Gives httplib's own error responses (404, 413, 414, 400 from the parser, ...) an OpenAI body,
// and turns "no route" into 405 when the path exists under another method.
void HttpServer::Impl::fill_error(const httplib::Request& req, httplib::Response& res) {
  if (!res.body.empty()) return;
  if (res.status == 404) {
    auto it = route_methods().find(req.path);
    if (it != route_methods().end() && it->second != req.method) {
      res.set_header("Allow", it->second);
      send_error(res, ApiError(405,
                               fmt::format("{} does not accept {}; use {}", req.path, req.method,
                                           it->second),
                               "", "invalid_request_error", "method_not_allowed"));
      return;
    }
    send_error(res, ApiError(404,
                             fmt::format("no route {} {}; see /v1/models, "
                                         "/v1/chat/completions, /v1/completions",
                                         req.method, req.path),
                             "", "", "not_found"));
    return;
  }
  if (res.status == 413) {
    send_error(
        res,
        ApiError(413, fmt::format("request body is over {} MB (--max-body-mb)", opts.max_body_mb),
                 "", "", "body_too_large"));
    return;
  }
  send_error(res, ApiError(res.status, fmt::format("HTTP error {}", res.status)));
}

void HttpServer::Impl::setup() {
  svr.set_payload_max_length(static_cast<size_t>(opts.max_body_mb) << 20);
  svr.set_read_timeout(opts.read_timeout_s);
  svr.set_write_timeout(opts.write_timeout_s);
  svr.set_keep_alive_timeout(5);
  svr.set_keep_alive_max_count(1000);
  svr.set_tcp_nodelay(true);
  svr.Get("/health", [this](const auto& req, auto& res) { health(req, res); });
  svr.Get("/v1/health", [this](const auto& req, auto& res) { health(req, res); });
  svr.Get("/v1/models", wrap(handle_models));
  svr.Get("/models", wrap(handle_models));
  svr.Get("/metrics", wrap(handle_metrics));
  svr.Get("/status", wrap(handle_status));
  svr.Post("/v1/chat/completions", wrap(handle_chat));
  svr.Post("/chat/completions", wrap(handle_chat));
  svr.Post("/v1/completions", wrap(handle_completion));
  svr.Post("/completions", wrap(handle_completion));
  svr.Post("/tokenize", wrap(handle_tokenize));
  svr.Post("/detokenize", wrap(handle_detokenize));
  svr.set_error_handler(
      [this](const httplib::Request& req, httplib::Response& res) { fill_error(req, res); });
  svr.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown";
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        log::error("{} {}: internal error: {}", req.method, req.path, what);
        send_error(res, ApiError(500, "internal error: " + what));
      });
  // Counted before the response is written (httplib calls the logger only after it is sent), so
  // a client that has read a response sees it in /metrics.
  svr.set_post_routing_handler([this](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mu);
    ++responses[res.status];
  });
  svr.set_logger([](const httplib::Request& req, const httplib::Response& res) {
    log::debug("{} {} -> {}", req.method, req.path, res.status);
  });
}

HttpServer::HttpServer(ServerOptions opts) : impl_(std::make_unique<Impl>(std::move(opts))) {
  impl_->setup();
}

HttpServer::~HttpServer() {
  stop();
}

int HttpServer::start() {
  auto& o = impl_->opts;
  int port = o.port;
  if (port == 0) {
    port = impl_->svr.bind_to_any_port(o.host);
  } else if (!impl_->svr.bind_to_port(o.host, port)) {
    port = -1;
  }
  if (port <= 0) {
    throw std::runtime_error(
        fmt::format("cannot listen on {}:{} (address in use or not "
                    "available); pick another --port or --host",
                    o.host, o.port));
  }
  port_ = port;
  impl_->listener = std::thread([this] { impl_->svr.listen_after_bind(); });
  return port;
}

void HttpServer::attach(Backend& backend, const TextCodec& codec) {
  ChatStyle style = codec.has_token("<|im_start|>") ? ChatStyle::ChatML : ChatStyle::Plain;
  auto c = std::make_unique<ServeContext>(
      ServeContext{impl_->opts, backend, codec, style, backend.config().ctx,
                   static_cast<int64_t>(std::time(nullptr)), [this] { return impl_->counters(); }});
  impl_->ctx_owner = std::move(c);
  impl_->ctx.store(impl_->ctx_owner.get());
}

void HttpServer::stop() {
  if (!impl_) return;
  impl_->svr.stop();
  if (impl_->listener.joinable()) impl_->listener.join();
}

ServerCounters HttpServer::counters() const {
  return impl_->counters();
}

}  // namespace baton::server
