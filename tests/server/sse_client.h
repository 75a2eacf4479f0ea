#pragma once
// Test helpers: SSE parsing and raw sockets (for disconnects and connection limits).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace baton::server::testing {

// Splits an SSE body into its events (without the trailing blank line).
inline std::vector<std::string> sse_events(const std::string& body) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find("\n\n", pos);
    if (end == std::string::npos) {
      out.push_back(body.substr(pos));
      break;
    }
    out.push_back(body.substr(pos, end - pos));
    pos = end + 2;
  }
  return out;
}

// The JSON payloads of the data events, excluding [DONE].
inline std::vector<nlohmann::json> sse_json(const std::string& body) {
  std::vector<nlohmann::json> out;
  for (const auto& e : sse_events(body)) {
    if (e.rfind("data: ", 0) == 0 && e != "data: [DONE]") {
      out.push_back(nlohmann::json::parse(e.substr(6), nullptr, false));
    }
  }
  return out;
}

class RawSocket {
 public:
  // `receive_buffer` > 0: a small receive window, so that a client that never reads makes the
  // server's writes block after a few KB (set before connect, as the window is negotiated then).
  explicit RawSocket(int port, int receive_buffer = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (receive_buffer > 0) {
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof(receive_buffer));
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) close();
  }
  ~RawSocket() { close(); }
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;
  bool ok() const { return fd_ >= 0; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  bool send_all(const std::string& s) {
    size_t off = 0;
    while (off < s.size()) {
      ssize_t n = ::send(fd_, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }
  void post(const std::string& path, const std::string& body) {
    send_all("POST " + path +
             " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             "Content-Length: " +
             std::to_string(body.size()) + "\r\n\r\n" + body);
  }
  // Reads until `needle` shows up in everything read so far, the peer closes, or timeout.
  bool read_until(const std::string& needle, int timeout_ms = 10000) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (received_.find(needle) == std::string::npos) {
      Read r = read_some(deadline);
      if (r == Read::Timeout) return false;
      if (r == Read::Closed) return received_.find(needle) != std::string::npos;
    }
    return true;
  }
  const std::string& received() const { return received_; }
  // Reads until the peer closes (true) or the timeout passes (false).
  bool wait_closed(int timeout_ms = 10000) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      Read r = read_some(deadline);
      if (r != Read::Data) return r == Read::Closed;
    }
  }
  int fd() const { return fd_; }
  void clear() { received_.clear(); }

 private:
  enum class Read { Data, Closed, Timeout };
  // Appends what arrives before the deadline (at most one recv).
  Read read_some(std::chrono::steady_clock::time_point deadline) {
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      deadline - std::chrono::steady_clock::now())
                      .count();
      if (left <= 0) return Read::Timeout;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char buf[4096];
      ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) return Read::Closed;
      received_.append(buf, static_cast<size_t>(n));
      return Read::Data;
    }
  }

  int fd_ = -1;
  std::string received_;
};

}  // namespace baton::server::testing
