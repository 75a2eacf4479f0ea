#pragma once
// Many client connections driven by one thread with poll(), for the connections scenario: each
// connection sends one request and reads its response, discarding the body but counting its
// SSE events. No thread per connection, so the client scales like the server it measures.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "bench/openai_client.h"

namespace baton::bench {

struct PoolCounts {
  std::size_t opened = 0;         // connections started
  std::size_t open = 0;           // still open on our side
  std::size_t headed = 0;         // got a response head
  std::size_t ok = 0;             // HTTP 200
  std::size_t rejected = 0;       // HTTP 503
  std::size_t other_status = 0;   // any other status
  std::size_t complete = 0;       // whole response read
  std::size_t settled = 0;        // whole response read, or closed
  std::size_t failed = 0;         // ended without a response head (connect error, reset)
  std::size_t server_closed = 0;  // the server closed before we did
  std::size_t done_events = 0;    // connections whose body carried `data: [DONE]`
  std::size_t saw_keepalive = 0;  // connections whose body carried a `: keepalive` comment
  std::string first_error;
};

class ConnPool {
 public:
  // Resolves the endpoint's host once; throws BenchError for https (raw sockets speak plain
  // HTTP only) or a host that does not resolve.
  explicit ConnPool(const Endpoint& ep);
  ~ConnPool();
  ConnPool(const ConnPool&) = delete;
  ConnPool& operator=(const ConnPool&) = delete;

  // Starts `n` non-blocking connections that each send `request` once connected.
  void open(std::size_t n, const std::string& request);
  // One poll() round of at most `timeout_ms`: connects, sends, reads whatever is ready.
  void pump(int timeout_ms);
  PoolCounts counts() const;
  void close_all();

  // "host:port" for the Host header.
  const std::string& host_header() const { return host_header_; }

 private:
  struct Conn;
  void on_ready(Conn& c, short revents);
  void read_all(Conn& c);
  void finish(Conn& c, const std::string& error);

  std::string host_header_;
  std::vector<unsigned char> addr_;  // a sockaddr_storage's bytes, its length in addr_len_
  unsigned addr_len_ = 0;
  int family_ = 0;
  std::string request_;
  std::vector<std::unique_ptr<Conn>> conns_;
};

// Raises this process's RLIMIT_NOFILE soft limit toward `need` (up to the hard limit) and
// returns the soft limit in force afterwards.
std::size_t raise_fd_limit(std::size_t need, std::size_t* hard = nullptr);

}  // namespace baton::bench
