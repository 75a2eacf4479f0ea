// An async answer on a connection: the stream's head, the body's events pulled and written one
// write at a time, keepalives, the engine loop's wake-ups, and the watch for a client that hangs
// up while its answer is being generated.
#include <poll.h>
#include <sys/socket.h>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>

#include "server/http/http_connection.h"

namespace baton::server {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

constexpr std::chrono::milliseconds kPeerPollInterval{200};

}  // namespace

// The engine loop wakes a connection through this link; close() cuts it so that no wake-up is
// posted to a connection (or an I/O context) that is gone.
struct Connection::WakeLink {
  std::mutex mu;
  bool alive = true;
  bool pending = false;
  std::weak_ptr<Connection> conn;
  net::any_io_executor exec;

  void wake() {
    std::lock_guard<std::mutex> lock(mu);
    if (!alive || pending) return;
    pending = true;
    net::post(exec, [self = conn] {
      if (auto c = self.lock()) {
        {
          std::lock_guard<std::mutex> l(c->wake_->mu);
          c->wake_->pending = false;
        }
        c->pump(false);
      }
    });
  }
  void cut() {
    std::lock_guard<std::mutex> lock(mu);
    alive = false;
  }
};

void Connection::stop_wakeups() {
  if (wake_) wake_->cut();
}

void Connection::start_async(std::shared_ptr<AsyncBody> body) {
  body_ = std::move(body);
  streaming_ = body_->streams();
  body_done_ = false;
  wake_ = std::make_shared<WakeLink>();
  wake_->conn = weak_from_this();
  wake_->exec = stream_.get_executor();
  body_->set_wakeup([link = wake_] { link->wake(); });
  ++watch_seq_;  // a watch left from an earlier response on this connection ends
  watch_peer();
  last_write_ = Clock::now();
  if (streaming_) {
    hub_->app.on_response(200);
    chunked_ = version_ == 11;
    auto head = std::make_shared<http::response<http::empty_body>>(http::status::ok,
                                                                   version_ == 10 ? 10 : 11);
    head->set(http::field::server, "baton");
    head->set(http::field::content_type, "text/event-stream");
    head->set(http::field::cache_control, "no-cache");
    head->set("X-Accel-Buffering", "no");
    // HTTP/1.0 has no chunked coding: the body ends when the connection closes.
    if (chunked_) head->chunked(true);
    head->keep_alive(chunked_ && keep_alive_ && !closing_);
    if (!chunked_) closing_ = true;
    auto sr = std::make_shared<http::response_serializer<http::empty_body>>(*head);
    write_hold_ = std::make_shared<std::pair<decltype(head), decltype(sr)>>(head, sr);
    writing_ = true;
    stream_.expires_after(hub_->opts.send_timeout);
    http::async_write_header(stream_, *sr,
                             [self = shared_from_this()](beast::error_code ec, size_t) {
                               self->writing_ = false;
                               self->write_hold_.reset();
                               if (ec) return self->on_io_error(ec, "writing the stream head");
                               self->pump(false);
                             });
  } else {
    pump(false);
  }
  arm_keepalive();
}

// Pulls what the body has and writes it; one write in flight at a time, so a client that does
// not read stops the pulling, its request's channel fills, and the engine loop pauses it.
void Connection::pump(bool keepalive_due) {
  if (!body_ || phase() != Phase::Responding) return;
  if (writing_) {
    pump_again_ = true;
    return;
  }
  std::string chunk;
  HttpResponse final;
  bool done = body_->pull(keepalive_due, chunk, final);
  if (!streaming_) {
    if (!done) return;
    auto body = std::move(body_);
    body_.reset();
    stop_wakeups();
    keepalive_timer_.cancel();
    write_whole(std::move(final));
    return;
  }
  if (chunk.empty() && !done) return;
  write_chunk(std::move(chunk), done);
}

void Connection::write_chunk(std::string bytes, bool last) {
  auto data = std::make_shared<std::string>(std::move(bytes));
  writing_ = true;
  body_done_ = last;
  last_write_ = Clock::now();
  stream_.expires_after(hub_->opts.send_timeout);
  auto done = [self = shared_from_this(), data](beast::error_code ec, size_t) {
    self->writing_ = false;
    if (ec) return self->on_io_error(ec, "writing the stream");
    if (self->body_done_) {
      self->body_.reset();
      self->stop_wakeups();
      self->keepalive_timer_.cancel();
      return self->after_response(self->chunked_ && self->keep_alive_ && !self->closing_);
    }
    if (self->pump_again_) {
      self->pump_again_ = false;
      self->pump(false);
    }
  };
  if (!chunked_) {
    net::async_write(stream_, net::buffer(*data), std::move(done));
    return;
  }
  if (last) {
    // The final data chunk and the terminating zero-length chunk in one write.
    if (!data->empty()) {
      char size_hex[20];
      int n = std::snprintf(size_hex, sizeof(size_hex), "%zx\r\n", data->size());
      data->insert(0, size_hex, static_cast<size_t>(n));
      *data += "\r\n";
    }
    *data += "0\r\n\r\n";
    net::async_write(stream_, net::buffer(*data), std::move(done));
    return;
  }
  net::async_write(stream_, http::make_chunk(net::buffer(*data)), std::move(done));
}

// Notices a client that hangs up while its answer is still being generated. Bytes it pipelines
// meanwhile are read into buffer_, where the next request's head is parsed from, so the close
// that may follow them is still seen; past kPipelinedReadAhead the socket is polled instead.
void Connection::watch_peer() {
  stream_.socket().async_wait(tcp::socket::wait_read,
                              [self = shared_from_this(), seq = watch_seq_](beast::error_code ec) {
                                if (ec || !self->watching(seq)) return;
                                self->on_peer_readable();
                              });
}

bool Connection::watching(uint64_t seq) const {
  return seq == watch_seq_ && body_ && phase() == Phase::Responding;
}

void Connection::on_peer_readable() {
  if (buffer_.size() >= kPipelinedReadAhead) return poll_peer_later();
  // A raw non-blocking read: Asio's own receive() would block this I/O thread when the
  // readiness was stale (the bytes already taken by a read).
  auto room = buffer_.prepare(std::min<size_t>(4096, kPipelinedReadAhead - buffer_.size()));
  ssize_t n = ::recv(stream_.socket().native_handle(), room.data(), room.size(), MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return watch_peer();
  if (n <= 0) return peer_gone();
  // A pipelined request: kept for when this response is done.
  buffer_.commit(static_cast<size_t>(n));
  watch_peer();
}

// The read-ahead is full, so readiness would report the same unread bytes again and again:
// ask the kernel now and then whether the peer has shut its side instead.
void Connection::poll_peer_later() {
  peer_timer_.expires_after(kPeerPollInterval);
  peer_timer_.async_wait([self = shared_from_this(), seq = watch_seq_](beast::error_code ec) {
    if (ec || !self->watching(seq)) return;
    pollfd p{self->stream_.socket().native_handle(), POLLRDHUP, 0};
    if (::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0) {
      return self->peer_gone();
    }
    self->poll_peer_later();
  });
}

void Connection::peer_gone() {
  body_->abandon("client closed the connection");
  close();
}

void Connection::arm_keepalive() {
  keepalive_timer_.expires_after(hub_->opts.keepalive);
  keepalive_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec || !self->body_) return;
    bool due = Clock::now() - self->last_write_ >= self->hub_->opts.keepalive;
    self->pump(due);
    self->arm_keepalive();
  });
}

}  // namespace baton::server
