#include "server/http/http_connection.h"

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "util/log.h"

namespace baton::server {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

constexpr size_t kLingerBytes = 1 << 20;  // leftovers read (and dropped) before a close

bool is_disconnect(const beast::error_code& ec) {
  return ec == net::error::eof || ec == net::error::connection_reset ||
         ec == net::error::broken_pipe || ec == http::error::end_of_stream ||
         ec == net::error::operation_aborted || ec == net::error::bad_descriptor;
}

}  // namespace

Connection::Connection(tcp::socket sock, std::shared_ptr<Hub> hub)
    : stream_(std::move(sock)),
      hub_(std::move(hub)),
      buffer_(kReadBufferMax),
      keepalive_timer_(stream_.get_executor()),
      deadline_timer_(stream_.get_executor()),
      peer_timer_(stream_.get_executor()) {
  set_phase(Phase::Idle);
}

Connection::~Connection() {
  stop_wakeups();
  if (body_) body_->abandon("connection closed");
  if (joined_) hub_->leave(entry_);
}

std::chrono::steady_clock::time_point Connection::phase_since() const {
  return Clock::time_point(Clock::duration(phase_since_ns_.load()));
}

void Connection::set_phase(Phase p) {
  phase_since_ns_.store(Clock::now().time_since_epoch().count());
  phase_.store(p);
}

void Connection::start() {
  join();
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->wait_request(); });
}

void Connection::join() {
  entry_ = hub_->join(shared_from_this());
  joined_ = true;
  beast::error_code ec;
  stream_.socket().set_option(tcp::no_delay(true), ec);
}

// Never reads a request: the 503 is the only thing this connection does.
void Connection::reject() {
  join();
  hub_->rejected++;
  HttpResponse res = hub_->app.error_response([] {
    ApiError e(503, "too many open connections (--max-connections); retry shortly", "",
               "overloaded_error", "too_many_connections");
    e.retry_after_s = 1;
    return e;
  }());
  closing_ = true;
  net::dispatch(stream_.get_executor(),
                [self = shared_from_this(), res = std::move(res)]() mutable {
                  self->set_phase(Phase::Responding);
                  self->write_whole(std::move(res));
                });
}

void Connection::close_if_waiting() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    Phase p = self->phase();
    if (p == Phase::Idle || p == Phase::Head) self->close();
  });
}

void Connection::begin_shutdown() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    self->closing_ = true;
    Phase p = self->phase();
    if (p == Phase::Idle || p == Phase::Head || p == Phase::Body) self->close();
  });
}

void Connection::force_close() {
  net::post(stream_.get_executor(), [self = shared_from_this()] { self->close(); });
}

// Idle: wait for the first byte of the next request (keep-alive), then start the head deadline.
void Connection::wait_request() {
  if (closing_ || hub_->stopping) return close();
  set_phase(Phase::Idle);
  if (buffer_.size() > 0) return read_head();
  stream_.expires_after(hub_->opts.idle_timeout);
  auto buf = buffer_.prepare(4096);
  stream_.async_read_some(buf, [self = shared_from_this()](beast::error_code ec, size_t n) {
    if (ec) {
      if (ec == beast::error::timeout) return self->close();  // an idle keep-alive ends quietly
      return self->on_io_error(ec, "waiting for a request");
    }
    self->buffer_.commit(n);
    self->read_head();
  });
}

void Connection::read_head() {
  set_phase(Phase::Head);
  start_request(parser_, hub_->opts.limits);
  stream_.expires_never();
  arm_deadline(hub_->opts.header_timeout);
  http::async_read_header(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](beast::error_code ec, size_t) { self->on_head(ec); });
}

void Connection::arm_deadline(std::chrono::milliseconds d) {
  deadline_hit_ = false;
  uint64_t seq = ++deadline_seq_;
  deadline_timer_.expires_after(d);
  deadline_timer_.async_wait([self = shared_from_this(), seq](beast::error_code ec) {
    if (ec || seq != self->deadline_seq_) return;
    self->deadline_hit_ = true;
    beast::error_code cec;
    self->stream_.socket().cancel(cec);
  });
}

bool Connection::disarm_deadline() {
  ++deadline_seq_;
  deadline_timer_.cancel();
  return deadline_hit_;
}

void Connection::on_head(beast::error_code ec) {
  if (disarm_deadline()) {
    hub_->timed_out++;
    return fail(ApiError(408, "the request head did not arrive in time (--header-timeout-s)", "",
                         "invalid_request_error", "request_timeout"));
  }
  if (ec && is_disconnect(ec)) return close();
  if (ec) return fail(framing_error(ec, *parser_, hub_->opts.limits));
  HeadStep step = on_head_parsed(*parser_, hub_->opts.limits, hub_->app);
  version_ = step.version;
  keep_alive_ = step.keep_alive;
  if (step.refusal) return fail(*step.refusal);
  if (step.early) {
    closing_ = true;
    return respond(std::move(*step.early));
  }
  Dispatch d = std::move(*step.route);
  if (parser_->is_done()) return handle(std::move(d));
  pending_ = std::move(d);
  auto expect = parser_->get()[http::field::expect];
  if (beast::iequals(expect, "100-continue") && version_ == 11) {
    static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    stream_.expires_after(hub_->opts.send_timeout);
    net::async_write(stream_, net::buffer(kContinue),
                     [self = shared_from_this()](beast::error_code wec, size_t) {
                       if (wec) return self->on_io_error(wec, "writing 100 Continue");
                       self->read_body();
                     });
    return;
  }
  read_body();
}

void Connection::read_body() {
  set_phase(Phase::Body);
  stream_.expires_never();
  arm_deadline(hub_->opts.body_timeout);
  http::async_read(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](beast::error_code ec, size_t) { self->on_body(ec); });
}

void Connection::on_body(beast::error_code ec) {
  Dispatch d = std::move(*pending_);
  pending_.reset();
  if (disarm_deadline()) {
    hub_->timed_out++;
    return fail(ApiError(408, "the request body did not arrive in time (--body-timeout-s)", "",
                         "invalid_request_error", "request_timeout"));
  }
  if (ec && is_disconnect(ec) && ec != http::error::end_of_stream) return close();
  if (ec) return fail(framing_error(ec, *parser_, hub_->opts.limits));
  handle(std::move(d));
}

void Connection::handle(Dispatch d) {
  set_phase(Phase::Handling);
  stream_.expires_never();
  HttpRequest req = take_request(*parser_);
  parser_.reset();
  if (!d.heavy) return respond(d.handle(req));
  net::post(hub_->workers, [self = shared_from_this(), d = std::move(d), req = std::move(req)] {
    HttpResponse res = d.handle(req);
    net::post(self->stream_.get_executor(),
              [self, res = std::move(res)]() mutable { self->respond(std::move(res)); });
  });
}

void Connection::respond(HttpResponse res) {
  if (phase() == Phase::Closed) {
    if (res.async) res.async->abandon("connection closed");
    return;
  }
  set_phase(Phase::Responding);
  if (!keeps_connection(res, version_, keep_alive_)) closing_ = true;
  if (!res.async) return write_whole(std::move(res));
  start_async(std::move(res.async));
}

void Connection::write_whole(HttpResponse res) {
  hub_->app.on_response(res.status);
  auto msg = std::make_shared<http::response<http::string_body>>(
      static_cast<http::status>(res.status), version_ == 10 ? 10 : 11);
  msg->set(http::field::server, "baton");
  msg->set(http::field::content_type, res.content_type);
  for (auto& [k, v] : res.headers) msg->set(k, v);
  msg->body() = std::move(res.body);
  bool keep = keep_alive_ && !closing_ && !hub_->stopping;
  msg->keep_alive(keep);
  msg->prepare_payload();
  write_hold_ = msg;
  stream_.expires_after(hub_->opts.send_timeout);
  http::async_write(stream_, *msg, [self = shared_from_this(), keep](beast::error_code ec, size_t) {
    self->write_hold_.reset();
    if (ec) return self->on_io_error(ec, "writing the response");
    self->after_response(keep);
  });
}

void Connection::after_response(bool keep_alive) {
  body_.reset();
  if (!keep_alive || closing_ || hub_->stopping) return linger_close();
  wait_request();
}

void Connection::fail(const ApiError& e) {
  closing_ = true;
  set_phase(Phase::Responding);
  write_whole(hub_->app.error_response(e));
}

void Connection::on_io_error(beast::error_code ec, const char* during) {
  if (ec == beast::error::timeout) {
    hub_->timed_out++;
    log::info("closing a connection: {} took past its deadline", during);
  } else if (!is_disconnect(ec)) {
    log::debug("closing a connection: {} failed: {}", during, ec.message());
  }
  close();
}

// After an error answer the client may still be sending: read and drop a bounded amount for a
// short while so the close does not become a reset that destroys the answer in flight.
void Connection::linger_close() {
  set_phase(Phase::Closed);
  stop_wakeups();
  keepalive_timer_.cancel();
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  if (ec) return close();
  stream_.expires_after(hub_->opts.linger);
  linger_read(std::make_shared<std::vector<char>>(16384), 0);
}

void Connection::linger_read(std::shared_ptr<std::vector<char>> buf, size_t drained) {
  auto b = net::buffer(*buf);
  stream_.async_read_some(b, [self = shared_from_this(), buf = std::move(buf), drained](
                                 beast::error_code ec, size_t n) mutable {
    if (ec || drained + n > kLingerBytes) return self->close();
    self->linger_read(std::move(buf), drained + n);
  });
}

void Connection::close() {
  if (body_) {
    body_->abandon("the connection closed");
    body_.reset();
  }
  stop_wakeups();
  set_phase(Phase::Closed);
  beast::error_code ec;
  keepalive_timer_.cancel();
  deadline_timer_.cancel();
  peer_timer_.cancel();
  stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
  stream_.socket().close(ec);
}

}  // namespace baton::server
