#include "bench/conn_pool.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "bench/response_reader.h"

namespace baton::bench {

struct ConnPool::Conn {
  int fd = -1;
  bool connected = false;
  bool send_failed = false;  // the server may have answered (503) and closed before reading
  std::size_t sent = 0;
  bool server_closed = false;
  ResponseReader reader;
  std::string error;
};

namespace {

std::string errno_text(int e) {
  return std::strerror(e);
}

}  // namespace

ConnPool::ConnPool(const Endpoint& ep) {
  if (ep.host_port.rfind("http://", 0) != 0) {
    throw BenchError("the connections scenario opens raw sockets and speaks plain http only, not " +
                     ep.url);
  }
  host_header_ = ep.host_port.substr(7);
  std::string host = host_header_, port = "80";
  if (auto colon = host.rfind(':'); colon != std::string::npos && host.back() != ']') {
    port = host.substr(colon + 1);
    host.resize(colon);
  }
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0 || !res) {
    throw BenchError("cannot resolve " + host + ": " + gai_strerror(rc));
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(res->ai_addr);
  addr_.assign(bytes, bytes + res->ai_addrlen);
  addr_len_ = res->ai_addrlen;
  family_ = res->ai_family;
  freeaddrinfo(res);
}

ConnPool::~ConnPool() {
  close_all();
}

void ConnPool::open(std::size_t n, const std::string& request) {
  request_ = request;
  for (std::size_t i = 0; i < n; ++i) {
    auto c = std::make_unique<Conn>();
    c->fd = ::socket(family_, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0) {
      c->error = "socket: " + errno_text(errno);
    } else if (::connect(c->fd, reinterpret_cast<const sockaddr*>(addr_.data()), addr_len_) == 0) {
      c->connected = true;
    } else if (errno != EINPROGRESS) {
      finish(*c, "connect: " + errno_text(errno));
    }
    conns_.push_back(std::move(c));
  }
}

void ConnPool::finish(Conn& c, const std::string& error) {
  if (c.error.empty() && !error.empty()) c.error = error;
  if (c.fd >= 0) ::close(c.fd);
  c.fd = -1;
}

void ConnPool::pump(int timeout_ms) {
  std::vector<pollfd> fds;
  std::vector<Conn*> owners;
  for (auto& c : conns_) {
    if (c->fd < 0) continue;
    bool want_write = !c->connected || (!c->send_failed && c->sent < request_.size());
    fds.push_back({c->fd, static_cast<short>(POLLIN | (want_write ? POLLOUT : 0)), 0});
    owners.push_back(c.get());
  }
  if (fds.empty()) return;
  if (::poll(fds.data(), fds.size(), timeout_ms) <= 0) return;
  for (std::size_t i = 0; i < fds.size(); ++i) {
    if (fds[i].revents != 0) on_ready(*owners[i], fds[i].revents);
  }
}

void ConnPool::on_ready(Conn& c, short revents) {
  if (!c.connected) {
    int err = 0;
    socklen_t len = sizeof(err);
    ::getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return finish(c, "connect: " + errno_text(err));
    c.connected = true;
  }
  if ((revents & POLLOUT) && !c.send_failed && c.sent < request_.size()) {
    ssize_t n = ::send(c.fd, request_.data() + c.sent, request_.size() - c.sent, MSG_NOSIGNAL);
    if (n > 0) c.sent += static_cast<std::size_t>(n);
    // A refused connection may carry a 503 written before our request: read it first.
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) c.send_failed = true;
  }
  if (revents & (POLLIN | POLLHUP | POLLERR)) read_all(c);
}

void ConnPool::read_all(Conn& c) {
  char buf[16384];
  while (c.fd >= 0) {
    ssize_t n = ::recv(c.fd, buf, sizeof(buf), 0);
    if (n > 0) {
      if (!c.reader.feed(std::string_view(buf, static_cast<std::size_t>(n)))) {
        return finish(c, c.reader.error());
      }
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    c.server_closed = true;
    std::string why = n == 0 ? "" : "recv: " + errno_text(errno);
    c.reader.eof();
    if (!c.reader.complete() && why.empty()) why = "the server closed the connection";
    return finish(c, c.reader.complete() ? "" : why);
  }
}

PoolCounts ConnPool::counts() const {
  PoolCounts k;
  k.opened = conns_.size();
  for (const auto& c : conns_) {
    int st = c->reader.status();
    k.open += c->fd >= 0;
    k.headed += st != 0;
    k.ok += st == 200;
    k.rejected += st == 503;
    k.other_status += st != 0 && st != 200 && st != 503;
    k.complete += c->reader.complete();
    k.settled += c->reader.complete() || c->fd < 0;
    k.failed += st == 0 && c->fd < 0;
    k.server_closed += c->server_closed;
    k.done_events += c->reader.done_events() > 0;
    k.saw_keepalive += c->reader.keepalives() > 0;
    if (k.first_error.empty() && !c->error.empty()) k.first_error = c->error;
  }
  return k;
}

void ConnPool::close_all() {
  for (auto& c : conns_) finish(*c, "");
}

std::size_t raise_fd_limit(std::size_t need, std::size_t* hard) {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return need;  // unknown: let open() report errors
  if (hard) *hard = rl.rlim_max == RLIM_INFINITY ? need : rl.rlim_max;
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
    rlimit want = rl;
    want.rlim_cur = rl.rlim_max == RLIM_INFINITY ? need : std::min<rlim_t>(need, rl.rlim_max);
    if (::setrlimit(RLIMIT_NOFILE, &want) == 0) rl = want;
  }
  return rl.rlim_cur == RLIM_INFINITY ? need : rl.rlim_cur;
}

}  // namespace baton::bench
