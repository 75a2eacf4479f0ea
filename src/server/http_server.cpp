#include "server/http_server.h"

#include <fmt/format.h>

#include <ctime>
#include <map>
#include <stdexcept>

#include "server/errors.h"
#include "server/http/http_transport.h"
#include "server/ops/status_json.h"
#include "server/server_routes.h"
#include "util/log.h"

namespace baton::server {

namespace http = boost::beast::http;

namespace {

using RouteFn = void (*)(const ServeContext&, const HttpRequest&, HttpResponse&);

struct Route {
  const char* method;
  RouteFn fn;
  bool heavy;                             // parses a body or tokenizes: runs on the handler threads
  bool needs_key = true;                  // false: answered without the API key (health checks)
  ErrorStyle style = ErrorStyle::OpenAI;  // the shape of this route's error bodies
  // A page a browser opens (and its event stream): a 401 asks for the key as a Basic password,
  // which the browser then sends with the page's later requests too.
  bool browser = false;
};

// Every exact path the server answers; GET /v1/models/{id} is matched by prefix.
const std::map<std::string, Route, std::less<>>& routes() {
  static const std::map<std::string, Route, std::less<>> r = {
      {"/health", {"GET", handle_health, false, false}},
      {"/v1/health", {"GET", handle_health, false, false}},
      {"/v1/models", {"GET", handle_models, false}},
      {"/models", {"GET", handle_models, false}},
      {"/metrics", {"GET", handle_metrics, false}},
      {"/status", {"GET", handle_status, false}},
      {"/dashboard", {"GET", handle_dashboard, false, true, ErrorStyle::OpenAI, true}},
      {"/events", {"GET", handle_events, false, true, ErrorStyle::OpenAI, true}},
      {"/v1/chat/completions", {"POST", handle_chat, true}},
      {"/chat/completions", {"POST", handle_chat, true}},
      {"/v1/completions", {"POST", handle_completion, true}},
      {"/completions", {"POST", handle_completion, true}},
      {"/v1/responses", {"POST", handle_responses, true}},
      {"/responses", {"POST", handle_responses, true}},
      {"/v1/messages", {"POST", handle_messages, true, true, ErrorStyle::Anthropic}},
      {"/v1/messages/count_tokens",
       {"POST", handle_count_tokens, true, true, ErrorStyle::Anthropic}},
      {"/tokenize", {"POST", handle_tokenize, true}},
      {"/detokenize", {"POST", handle_detokenize, true}}};
  return r;
}

std::optional<Route> find_route(std::string_view path) {
  auto it = routes().find(path);
  if (it != routes().end()) return it->second;
  for (std::string_view prefix : {"/v1/models/", "/models/"}) {
    if (path.size() > prefix.size() && path.substr(0, prefix.size()) == prefix) {
      return Route{"GET", handle_model, false};
    }
  }
  return std::nullopt;
}

HttpResponse response_for(const ApiError& e, ErrorStyle style = ErrorStyle::OpenAI) {
  HttpResponse res;
  send_error(res, e, style);
  return res;
}

ApiError loading_error() {
  ApiError e(503, "the model is still loading; retry shortly", "", "", "loading");
  e.retry_after_s = 1;
  return e;
}

}  // namespace

class HttpServer::Impl : public HttpApp {
 public:
  explicit Impl(ServerOptions o) : opts(std::move(o)), transport(transport_options(), *this) {}

  ServerOptions opts;
  HttpTransport transport;
  std::unique_ptr<ServeContext> ctx_owner;
  std::atomic<const ServeContext*> ctx{nullptr};
  mutable std::mutex mu;
  std::map<int, uint64_t> responses;

  TransportOptions transport_options() const;
  Dispatch dispatch(const RequestHead& head) override;
  void on_response(int status) override {
    std::lock_guard<std::mutex> lock(mu);
    ++responses[status];
  }
  HttpResponse error_response(const ApiError& e) override { return response_for(e); }
  Dispatch wrap(Route r) const;
  ServerCounters counters() const {
    ServerCounters c;
    {
      std::lock_guard<std::mutex> lock(mu);
      c.http_responses = responses;
    }
    auto t = transport.counters();
    c.open_connections = t.open;
    c.rejected_connections = t.rejected;
    c.evicted_connections = t.evicted;
    c.timed_out_connections = t.timed_out;
    return c;
  }
};

TransportOptions HttpServer::Impl::transport_options() const {
  using std::chrono::milliseconds;
  auto ms = [](double s) { return milliseconds(static_cast<int64_t>(s * 1000)); };
  TransportOptions t;
  t.limits.max_body_bytes = static_cast<uint64_t>(opts.max_body_mb) << 20;
  t.idle_timeout = ms(opts.idle_timeout_s);
  t.header_timeout = ms(opts.header_timeout_s);
  t.body_timeout = ms(opts.body_timeout_s);
  t.send_timeout = milliseconds(opts.send_stall_ms);
  t.keepalive = ms(opts.keepalive_s);
  t.max_connections = opts.max_connections;
  t.evict_min_age = ms(opts.evict_min_age_s);
  t.io_threads = opts.http_threads;
  t.worker_threads = opts.handler_threads;
  return t;
}

Dispatch HttpServer::Impl::wrap(Route r) const {
  Dispatch d;
  d.heavy = r.heavy;
  d.handle = [this, fn = r.fn, style = r.style](const HttpRequest& req) {
    HttpResponse res;
    try {
      const ServeContext* c = ctx.load();
      if (!c) throw loading_error();
      fn(*c, req, res);
    } catch (const ApiError& e) {
      return response_for(e, style);
    } catch (const std::exception& e) {
      log::error("{} {}: internal error: {}", req.method, req.path, e.what());
      return response_for(ApiError(500, std::string("internal error: ") + e.what()), style);
    }
    return res;
  };
  return d;
}

Dispatch HttpServer::Impl::dispatch(const RequestHead& head) {
  std::string_view path = target_path(head.target());
  std::string_view method = head.method_string();
  Dispatch d;
  auto route = find_route(path);
  if (!route) {
    // Anthropic clients read errors in their own shape, under their own prefix too.
    const ErrorStyle style =
        path.starts_with("/v1/messages") ? ErrorStyle::Anthropic : ErrorStyle::OpenAI;
    d.early = response_for(ApiError(404,
                                    fmt::format("no route {} {}; see /v1/models, "
                                                "/v1/chat/completions, /v1/completions, "
                                                "/v1/responses, /v1/messages",
                                                method, path),
                                    "", "", "not_found"),
                           style);
    return d;
  }
  if (method != route->method) {
    auto e =
        ApiError(405, fmt::format("{} does not accept {}; use {}", path, method, route->method), "",
                 "invalid_request_error", "method_not_allowed");
    d.early = response_for(e, route->style);
    d.early->set_header("Allow", route->method);
    return d;
  }
  if (route->needs_key && !opts.api_key.empty() && !api_key_matches(head, opts.api_key)) {
    d.early =
        response_for(ApiError(401,
                              "missing or wrong API key: send 'Authorization: Bearer <key>' or "
                              "'x-api-key: <key>' (the key given by --api-key or "
                              "BATON_API_KEY)",
                              "", "", "invalid_api_key"),
                     route->style);
    if (route->browser) {
      d.early->set_header("WWW-Authenticate", R"(Basic realm="baton", charset="UTF-8")");
    }
    return d;
  }
  // While the model loads, a request with a body is refused before the body is read; the
  // others (health checks poll here) get the same 503 from wrap() on a connection kept open.
  if (route->heavy && !ctx.load()) {
    d.early = response_for(loading_error(), route->style);
    return d;
  }
  return wrap(*route);
}

void send_error(HttpResponse& res, const ApiError& e, ErrorStyle style) {
  res.status = e.status;
  res.content_type = "application/json";
  if (e.retry_after_s > 0) res.set_header("Retry-After", std::to_string(e.retry_after_s));
  res.body = error_body(e, style);
  res.async.reset();
}

HttpServer::HttpServer(ServerOptions opts) : impl_(std::make_unique<Impl>(std::move(opts))) {}

HttpServer::~HttpServer() {
  stop(std::chrono::milliseconds(0));
}

int HttpServer::start() {
  port_ = impl_->transport.start(impl_->opts.host, impl_->opts.port);
  return port_;
}

void HttpServer::attach(Backend& backend, const tokenizer::TextCodec& codec,
                        int32_t max_tokens_limit, const ModelTemplates& model_templates) {
  auto chat = make_chat_setup(impl_->opts.chat, model_templates, codec);
  log::info("chat template: {}; tool calls: {}; reasoning: {}", chat->origin, chat->tool_format,
            chat->reasoning ? "split into reasoning_content" : "inline");
  // Handlers read the options only once the context below is published.
  impl_->opts.max_tokens_limit = max_tokens_limit > 0 ? max_tokens_limit : backend.config().ctx;
  auto c = std::make_unique<ServeContext>(
      ServeContext{impl_->opts, backend, codec, std::move(chat), backend.config().ctx,
                   static_cast<int64_t>(std::time(nullptr)), [this] { return impl_->counters(); },
                   std::make_shared<constraint::ConstraintCompiler>(codec), nullptr});
  if (auto feed = backend.live()) {
    c->live = std::make_shared<LiveHub>(
        feed,
        [&backend, feed, model = impl_->opts.model_id](int viewers) {
          auto j = status_json(backend.status(), model);
          j["now_ms"] = feed->now_ms();
          j["viewers"] = viewers;
          return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        },
        [&backend] { return backend.draining(); });
  }
  impl_->ctx_owner = std::move(c);
  impl_->ctx.store(impl_->ctx_owner.get());
}

void HttpServer::stop(std::chrono::milliseconds drain) {
  if (!impl_) return;
  impl_->transport.stop(drain);
  // The hub reads the backend, which may go before this server does.
  if (impl_->ctx_owner && impl_->ctx_owner->live) impl_->ctx_owner->live->stop();
}

ServerCounters HttpServer::counters() const {
  return impl_->counters();
}

HttpApp& HttpServer::app() {
  return *impl_;
}

}  // namespace baton::server
