#pragma once
// One client connection and the registry of all of them (internal to http_transport.cpp).
// A connection is a small state machine on its own strand:
//   Idle (waiting for a first byte) → Head (deadline from that byte) → Body → Handling (route
//   runs) → Responding (writing; async bodies pumped on engine events) → Idle or closed.
// Every read and write has a deadline; a framing error answers and closes.
#include <atomic>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "server/http/http_transport.h"
#include "server/http/request_steps.h"

namespace baton::server {

enum class Phase : int { Idle, Head, Body, Handling, Responding, Closed };

class Connection;

// Shared by the acceptor and every connection: options, the application, the worker pool,
// counters and the list of open connections (for eviction and shutdown).
class Hub : public std::enable_shared_from_this<Hub> {
 public:
  Hub(const TransportOptions& o, HttpApp& a, boost::asio::io_context& io,
      boost::asio::thread_pool& w)
      : opts(o), app(a), ioc(io), workers(w), acceptor(boost::asio::make_strand(io)) {}

  const TransportOptions& opts;
  HttpApp& app;
  boost::asio::io_context& ioc;
  boost::asio::thread_pool& workers;
  boost::asio::ip::tcp::acceptor acceptor;
  std::atomic<bool> stopping{false};
  std::atomic<uint64_t> rejected{0}, evicted{0}, timed_out{0};

  void accept_next();
  // Registry; the returned iterator is the connection's handle for leaving.
  using Entry = std::list<std::weak_ptr<Connection>>::iterator;
  Entry join(const std::shared_ptr<Connection>& c);
  void leave(Entry e);
  int64_t open() const;
  std::vector<std::shared_ptr<Connection>> snapshot() const;

 private:
  void on_accept(boost::beast::error_code ec, boost::asio::ip::tcp::socket sock);
  // Closes the connection that has waited longest in Idle or Head; false when none does.
  bool evict_one();

  mutable std::mutex mu_;
  std::list<std::weak_ptr<Connection>> conns_;
  int64_t open_ = 0;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(boost::asio::ip::tcp::socket sock, std::shared_ptr<Hub> hub);
  ~Connection();
  void start();
  // Instead of start(): answers 503 (every slot is busy) and closes.
  void reject();
  Phase phase() const { return phase_.load(); }
  std::chrono::steady_clock::time_point phase_since() const;
  // From any thread: close now if not serving a request (eviction, shutdown).
  void close_if_waiting();
  // From any thread: server stopping; finish the response in progress, then close.
  void begin_shutdown();
  // From any thread: close now whatever the state.
  void force_close();

 private:
  using Clock = std::chrono::steady_clock;
  struct WakeLink;
  static constexpr size_t kReadBufferMax = 1 << 20;  // head limit + body read-ahead
  // Pipelined bytes read while a response is pending; then the peer is polled for a close. A
  // close is seen only once what the peer sent before it fits here and in the kernel's receive
  // window, so this is well above a pipelined head and a usual body, and below kReadBufferMax.
  static constexpr size_t kPipelinedReadAhead = 256 << 10;

  void join();
  void set_phase(Phase p);
  void wait_request();
  void read_head();
  void on_head(boost::beast::error_code ec);
  void read_body();
  void arm_deadline(std::chrono::milliseconds d);
  // Ends the deadline of the phase that just completed; true when it had passed.
  bool disarm_deadline();
  void on_body(boost::beast::error_code ec);
  void handle(Dispatch d);
  void respond(HttpResponse res);
  void write_whole(HttpResponse res);
  void start_async(std::shared_ptr<AsyncBody> body);
  void pump(bool keepalive_due);
  void write_chunk(std::string bytes, bool last);
  void watch_peer();
  bool watching(uint64_t seq) const;
  void on_peer_readable();
  void poll_peer_later();
  void peer_gone();
  void arm_keepalive();
  // Cuts the engine loop's wake-up link: nothing more is posted to this connection.
  void stop_wakeups();
  void after_response(bool keep_alive);
  void fail(const ApiError& e);
  void on_io_error(boost::beast::error_code ec, const char* during);
  void linger_close();
  void linger_read(std::shared_ptr<std::vector<char>> buf, size_t drained);
  void close();

  boost::beast::tcp_stream stream_;
  std::shared_ptr<Hub> hub_;
  Hub::Entry entry_;
  bool joined_ = false;
  boost::beast::flat_buffer buffer_;
  std::optional<RequestParser> parser_;
  boost::asio::steady_timer keepalive_timer_;
  // Head and body deadlines. Not the stream's own expiry: that closes the socket, and a client
  // past its deadline still gets a 408.
  boost::asio::steady_timer deadline_timer_;
  uint64_t deadline_seq_ = 0;
  // The peer watch of the response in progress (watch_peer); a callback of an earlier one sees
  // another number and ends.
  boost::asio::steady_timer peer_timer_;
  uint64_t watch_seq_ = 0;
  bool deadline_hit_ = false;
  std::atomic<Phase> phase_{Phase::Idle};
  std::atomic<int64_t> phase_since_ns_{0};
  bool closing_ = false;  // the response in progress is the last on this connection

  // Response in progress.
  unsigned version_ = 11;
  bool keep_alive_ = true;
  std::shared_ptr<AsyncBody> body_;
  bool streaming_ = false;
  bool chunked_ = false;
  bool writing_ = false;
  bool body_done_ = false;
  bool pump_again_ = false;
  Clock::time_point last_write_;
  std::shared_ptr<WakeLink> wake_;
  std::shared_ptr<void> write_hold_;  // keeps the message being written alive
  std::optional<Dispatch> pending_;   // the route of a request whose body is being read
};

}  // namespace baton::server
