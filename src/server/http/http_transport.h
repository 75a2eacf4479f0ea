#pragma once
// The HTTP/1.1 transport on Boost.Beast/Asio: a fixed set of I/O threads serves every connection
// asynchronously (no thread per connection), each phase of a request has a deadline (head from
// its first byte, body, each write), and connection slots are shared so that slow or idle
// clients cannot lock out new ones (see docs/ARCHITECTURE.md, "HTTP transport").
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "server/http/http_types.h"
#include "server/http/request_head.h"

namespace baton::server {

struct TransportOptions {
  HeadLimits limits;
  std::chrono::milliseconds idle_timeout{5000};     // keep-alive wait for a next request
  std::chrono::milliseconds header_timeout{10000};  // head complete, from its first byte
  std::chrono::milliseconds body_timeout{30000};    // body complete, from the end of the head
  std::chrono::milliseconds send_timeout{30000};    // one write may stall this long
  std::chrono::milliseconds keepalive{5000};        // SSE comment period while idle
  std::chrono::milliseconds linger{1000};           // reading leftovers before closing on error
  int max_connections = 1024;
  // At the connection limit only a connection that has waited this long idle or in its head is
  // closed to make room: a client that has just connected is about to send its request.
  std::chrono::milliseconds evict_min_age{250};
  int io_threads = 2;
  int worker_threads = 2;  // route handlers that parse and tokenize
};

// What the application decides from a request head alone.
struct Dispatch {
  std::optional<HttpResponse> early;  // answer now, without reading the body (then close)
  bool heavy = false;                 // run the handler on the worker pool, not the I/O thread
  std::function<HttpResponse(const HttpRequest&)> handle;  // must not throw
};

class HttpApp {
 public:
  virtual ~HttpApp() = default;
  virtual Dispatch dispatch(const RequestHead& head) = 0;
  // Called with each response status just before it is written.
  virtual void on_response(int status) = 0;
  // An error the transport produces itself (framing, limits, deadlines) as a response.
  virtual HttpResponse error_response(const ApiError& e) = 0;
};

struct TransportCounters {
  int64_t open = 0;
  uint64_t rejected = 0;   // refused with 503: every slot busy with a request in progress
  uint64_t evicted = 0;    // closed while idle or sending its head, to make room
  uint64_t timed_out = 0;  // a head, body or write deadline passed
};

class Hub;

class HttpTransport {
 public:
  HttpTransport(TransportOptions opts, HttpApp& app);
  ~HttpTransport();
  // Binds (port 0: any free port) and starts the I/O threads; returns the port.
  int start(const std::string& host, int port);
  // Stops accepting, closes idle connections, lets responses in progress finish for up to
  // `drain`, then closes the rest and joins every thread. Idempotent.
  void stop(std::chrono::milliseconds drain);
  TransportCounters counters() const;

 private:
  TransportOptions opts_;
  HttpApp& app_;
  std::unique_ptr<boost::asio::io_context> ioc_;
  std::unique_ptr<boost::asio::thread_pool> workers_;
  std::shared_ptr<Hub> hub_;
  std::vector<std::thread> threads_;
  bool stopped_ = false;
};

}  // namespace baton::server
