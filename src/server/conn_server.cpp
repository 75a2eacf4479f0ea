#include "server/conn_server.h"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

namespace baton::server {

namespace {

thread_local int t_current_socket = -1;
constexpr size_t kHeaderBudget = 64 * 1024;  // request line + all header lines

int poll_fd(int fd, short events, int timeout_ms) {
  pollfd p{fd, events, 0};
  int r;
  do {
    r = ::poll(&p, 1, timeout_ms);
  } while (r < 0 && errno == EINTR);
  return r > 0 ? p.revents : (r < 0 ? POLLERR : 0);
}

void address_of(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  int r = peer ? getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len)
               : getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  if (r != 0) return;
  char buf[INET6_ADDRSTRLEN] = {0};
  if (addr.ss_family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &a->sin_addr, buf, sizeof(buf));
    port = ntohs(a->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof(buf));
    port = ntohs(a->sin6_port);
  }
  ip = buf;
}

}  // namespace

// A buffered socket stream (httplib reads request lines byte by byte).
class FdStream : public httplib::Stream {
 public:
  FdStream(int fd, int read_timeout_ms, int write_timeout_ms)
      : fd_(fd), read_ms_(read_timeout_ms), write_ms_(write_timeout_ms) {}

  bool is_readable() const override {
    return pos_ < len_ || (poll_fd(fd_, POLLIN, read_ms_) & POLLIN) != 0;
  }
  bool is_writable() const override { return (poll_fd(fd_, POLLOUT, write_ms_) & POLLOUT) != 0; }
  bool has_buffered() const { return pos_ < len_; }
  // Bounds what one request may consume: `header_budget` bytes up to the blank line ending the
  // headers, `body_budget` after it. Past it reads fail and the connection is dropped (httplib
  // bounds each header line but not how many there are).
  void start_request(size_t header_budget, size_t body_budget) {
    budget_ = header_budget;
    body_budget_ = body_budget;
    consumed_ = 0;
    in_headers_ = true;
    tail_ = 0;
  }

  ssize_t read(char* ptr, size_t size) override {
    if (pos_ == len_) {
      if (!(poll_fd(fd_, POLLIN, read_ms_) & POLLIN)) return -1;
      ssize_t n;
      do {
        n = ::recv(fd_, buf_, sizeof(buf_), 0);
      } while (n < 0 && errno == EINTR);
      if (n <= 0) return n;
      pos_ = 0;
      len_ = static_cast<size_t>(n);
    }
    size_t k = std::min(size, len_ - pos_);
    if (consumed_ + k > budget_) return -1;
    std::memcpy(ptr, buf_ + pos_, k);
    pos_ += k;
    consumed_ += k;
    if (in_headers_) watch_header_end(ptr, k);
    return static_cast<ssize_t>(k);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    ssize_t n;
    do {
      n = ::send(fd_, ptr, size, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    address_of(fd_, true, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    address_of(fd_, false, ip, port);
  }
  socket_t socket() const override { return fd_; }

 private:
  int fd_;
  int read_ms_;
  int write_ms_;
  char buf_[4096];
  size_t pos_ = 0;
  size_t len_ = 0;
  void watch_header_end(const char* p, size_t n) {
    for (size_t i = 0; i < n && in_headers_; ++i) {
      tail_ = (tail_ << 8) | static_cast<unsigned char>(p[i]);
      if ((tail_ & 0xFFFFFFFF) == 0x0D0A0D0A || (tail_ & 0xFFFF) == 0x0A0A) {
        in_headers_ = false;
        budget_ = consumed_ + body_budget_;
      }
    }
  }

  size_t budget_ = SIZE_MAX;
  size_t body_budget_ = SIZE_MAX;
  size_t consumed_ = 0;
  bool in_headers_ = false;
  uint64_t tail_ = 0;
};

int current_socket() {
  return t_current_socket;
}

bool peer_closed(int fd) {
  if (fd < 0) return false;
  int ev = poll_fd(fd, POLLIN, 0);
  if (ev & (POLLERR | POLLNVAL)) return true;
  if (!(ev & (POLLIN | POLLHUP))) return false;
  char c;
  ssize_t n = ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0) return true;
  return n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
}

ConnServer::ConnServer(int max_connections) : max_connections_(max_connections) {
  // Enough workers that connections past the limit still get a prompt 503 instead of waiting
  // in the pool's queue.
  size_t workers = static_cast<size_t>(max_connections) + 8;
  new_task_queue = [workers] { return new httplib::ThreadPool(workers); };
}

bool ConnServer::wait_for_request(socket_t sock, FdStream& strm) {
  if (strm.has_buffered()) return true;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(keep_alive_timeout_sec_);
  // Short slices so stop() is noticed quickly.
  while (svr_sock_ != INVALID_SOCKET && std::chrono::steady_clock::now() < deadline) {
    int ev = poll_fd(sock, POLLIN, 50);
    if (ev & (POLLIN | POLLHUP | POLLERR)) return (ev & POLLIN) != 0 && !peer_closed(sock);
  }
  return false;
}

void ConnServer::reject(socket_t sock) {
  ++rejected_;
  char buf[8192];
  if (poll_fd(sock, POLLIN, 200) & POLLIN) (void)::recv(sock, buf, sizeof(buf), MSG_DONTWAIT);
  static const std::string body =
      R"({"error":{"message":"too many open connections (--max-connections); retry shortly",)"
      R"("type":"overloaded_error","param":null,"code":"too_many_connections"}})";
  std::string resp =
      "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n"
      "Content-Type: application/json\r\nConnection: close\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  (void)::send(sock, resp.data(), resp.size(), MSG_NOSIGNAL);
  ::shutdown(sock, SHUT_WR);
  // Drain what the client still sends so close() does not turn into a reset that eats the reply.
  while ((poll_fd(sock, POLLIN, 100) & POLLIN) && ::recv(sock, buf, sizeof(buf), 0) > 0) {
  }
}

bool ConnServer::process_and_close_socket(socket_t sock) {
  bool ret = false;
  if (++open_ > max_connections_) {
    reject(sock);
  } else {
    FdStream strm(sock, static_cast<int>(read_timeout_sec_ * 1000 + read_timeout_usec_ / 1000),
                  static_cast<int>(write_timeout_sec_ * 1000 + write_timeout_usec_ / 1000));
    t_current_socket = sock;
    for (size_t left = keep_alive_max_count_; left > 0 && wait_for_request(sock, strm); --left) {
      bool closed = false;
      strm.start_request(kHeaderBudget, payload_max_length_ + kHeaderBudget);
      ret = process_request(strm, left == 1, closed, [](httplib::Request&) {});
      if (!ret || closed) break;
    }
    t_current_socket = -1;
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  --open_;
  return ret;
}

}  // namespace baton::server
