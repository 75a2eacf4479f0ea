#pragma once
// httplib::Server with two additions httplib 0.11 lacks: a bound on concurrent connections
// (beyond it a connection gets a 503 with Retry-After and is closed) and access to the socket of
// the request being handled, so a handler can notice that its client hung up even while it is
// not writing (non-streaming requests, queued streams).
#include <httplib.h>

#include <atomic>
#include <cstdint>

namespace baton::server {

class ConnServer : public httplib::Server {
 public:
  explicit ConnServer(int max_connections);
  int64_t open_connections() const { return open_; }
  uint64_t rejected_connections() const { return rejected_; }

 private:
  bool process_and_close_socket(socket_t sock) override;
  bool wait_for_request(socket_t sock, class FdStream& strm);
  void reject(socket_t sock);

  int max_connections_;
  std::atomic<int64_t> open_{0};
  std::atomic<uint64_t> rejected_{0};
};

// The socket of the connection this thread is serving, or -1 outside a request.
int current_socket();
// True when the peer of `fd` has closed or reset the connection. Never blocks.
bool peer_closed(int fd);

}  // namespace baton::server
