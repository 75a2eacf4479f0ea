#include "server/http/http_transport.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <boost/asio/post.hpp>
#include <stdexcept>

#include "server/http/http_connection.h"
#include "util/log.h"

namespace baton::server {

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;

namespace {

// Every connection is a file descriptor; the usual soft limit of 1024 would cap the server far
// below --max-connections.
void raise_fd_limit(int want) {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  rlim_t need = static_cast<rlim_t>(want) * 2 + 256;
  if (rl.rlim_cur >= need) return;
  rlim_t target = rl.rlim_max == RLIM_INFINITY ? need : std::min(need, rl.rlim_max);
  if (target <= rl.rlim_cur) {
    log::warn("open-file limit {} is below what --max-connections {} needs; raise 'ulimit -n'",
              rl.rlim_cur, want);
    return;
  }
  rl.rlim_cur = target;
  setrlimit(RLIMIT_NOFILE, &rl);
}

}  // namespace

void Hub::accept_next() {
  acceptor.async_accept(net::make_strand(ioc),
                        [self = shared_from_this()](beast::error_code ec, tcp::socket sock) {
                          self->on_accept(ec, std::move(sock));
                        });
}

void Hub::on_accept(beast::error_code ec, tcp::socket sock) {
  if (stopping) return;
  if (ec) {
    if (ec == net::error::operation_aborted) return;
    // Out of descriptors (EMFILE) and the like: back off briefly instead of spinning.
    log::warn("accept failed: {}", ec.message());
    auto t = std::make_shared<net::steady_timer>(acceptor.get_executor());
    t->expires_after(std::chrono::milliseconds(50));
    t->async_wait([self = shared_from_this(), t](beast::error_code) { self->accept_next(); });
    return;
  }
  auto conn = std::make_shared<Connection>(std::move(sock), shared_from_this());
  if (open() >= opts.max_connections && !evict_one()) {
    conn->reject();
  } else {
    conn->start();
  }
  accept_next();
}

bool Hub::evict_one() {
  // A normal client sends its whole head within milliseconds of connecting; only connections
  // that have waited longer than evict_min_age are taken, so a flood of new connections (each
  // evicting one) cannot push out a client that is about to send its request.
  const auto young = std::chrono::steady_clock::now() - opts.evict_min_age;
  // Candidates are judged outside the lock: a reference taken here may be the last one when
  // its I/O thread lets go, and ~Connection takes the same lock (Hub::leave).
  std::shared_ptr<Connection> victim;
  for (auto& c : snapshot()) {
    Phase p = c->phase();
    if ((p != Phase::Idle && p != Phase::Head) || c->phase_since() > young) continue;
    if (!victim || c->phase_since() < victim->phase_since()) victim = c;
  }
  if (!victim) return false;
  log::debug("connection limit reached: closing the connection idle longest ({} s in {})",
             std::chrono::duration<double>(std::chrono::steady_clock::now() - victim->phase_since())
                 .count(),
             victim->phase() == Phase::Idle ? "idle" : "its request head");
  evicted++;
  victim->close_if_waiting();
  return true;
}

Hub::Entry Hub::join(const std::shared_ptr<Connection>& c) {
  std::lock_guard<std::mutex> lock(mu_);
  ++open_;
  return conns_.insert(conns_.end(), c);
}

void Hub::leave(Entry e) {
  std::lock_guard<std::mutex> lock(mu_);
  --open_;
  conns_.erase(e);
}

int64_t Hub::open() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_;
}

std::vector<std::shared_ptr<Connection>> Hub::snapshot() const {
  std::vector<std::shared_ptr<Connection>> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& w : conns_) {
    if (auto c = w.lock()) out.push_back(std::move(c));
  }
  return out;
}

HttpTransport::HttpTransport(TransportOptions opts, HttpApp& app)
    : opts_(std::move(opts)), app_(app) {}

HttpTransport::~HttpTransport() {
  stop(std::chrono::milliseconds(0));
}

int HttpTransport::start(const std::string& host, int port) {
  raise_fd_limit(opts_.max_connections);
  ioc_ = std::make_unique<net::io_context>(opts_.io_threads);
  workers_ = std::make_unique<net::thread_pool>(static_cast<size_t>(opts_.worker_threads));
  hub_ = std::make_shared<Hub>(opts_, app_, *ioc_, *workers_);
  beast::error_code ec;
  auto addr = net::ip::make_address(host, ec);
  if (ec) {
    throw std::runtime_error(fmt::format(
        "cannot listen on '{}': not an IP address; pass --host 127.0.0.1 or 0.0.0.0", host));
  }
  tcp::endpoint ep(addr, static_cast<unsigned short>(port));
  auto& acc = hub_->acceptor;
  acc.open(ep.protocol(), ec);
  if (!ec) acc.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acc.bind(ep, ec);
  if (!ec) acc.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    throw std::runtime_error(fmt::format(
        "cannot listen on {}:{} ({}); pick another --port or --host", host, port, ec.message()));
  }
  int bound = acc.local_endpoint().port();
  hub_->accept_next();
  for (int i = 0; i < opts_.io_threads; ++i) {
    threads_.emplace_back([this] { ioc_->run(); });
  }
  return bound;
}

void HttpTransport::stop(std::chrono::milliseconds drain) {
  if (stopped_ || !hub_) return;
  stopped_ = true;
  hub_->stopping = true;
  net::post(hub_->acceptor.get_executor(), [hub = hub_] {
    beast::error_code ec;
    hub->acceptor.close(ec);
  });
  // Waits until every connection is gone or `limit` has passed.
  auto wait_all_closed = [this](std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (hub_->open() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  };
  for (auto& c : hub_->snapshot()) c->begin_shutdown();
  wait_all_closed(drain);
  for (auto& c : hub_->snapshot()) c->force_close();
  // Closed sockets complete their pending operations with operation_aborted; give the I/O
  // threads a moment to run those handlers so the connections are destroyed in order.
  wait_all_closed(std::chrono::milliseconds(500));
  workers_->join();
  ioc_->stop();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

TransportCounters HttpTransport::counters() const {
  TransportCounters c;
  if (!hub_) return c;
  c.open = hub_->open();
  c.rejected = hub_->rejected;
  c.evicted = hub_->evicted;
  c.timed_out = hub_->timed_out;
  return c;
}

}  // namespace baton::server
