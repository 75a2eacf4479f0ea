#include "server/live/live_hub.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>

#include "server/http/sse.h"
#include "server/live/live_event_text.h"
#include "util/log.h"

namespace baton::server {

using Clock = std::chrono::steady_clock;
// A prefill of a few seconds shows its progress in the request table several times.
constexpr auto kStatusPeriod = std::chrono::milliseconds(250);

class LiveViewer;

// What the hub thread and the viewers share; the viewers hold it, not the hub, so a viewer
// whose connection outlives the hub (a slow close) still has what it reads.
struct LiveShared {
  std::shared_ptr<const sched::LiveFeed> feed;
  std::function<std::string(int viewers)> status_text;
  std::function<bool()> closing;
  mutable std::mutex mu;
  std::condition_variable cv;
  bool stop = false;                          // the hub is going: streams end
  std::shared_ptr<const std::string> status;  // the latest snapshot's event text
  uint64_t status_version = 0;
  std::vector<std::weak_ptr<LiveViewer>> viewers;
};

class LiveViewer : public AsyncBody {
 public:
  explicit LiveViewer(std::shared_ptr<LiveShared> s) : s_(std::move(s)) {}
  bool streams() const override { return true; }
  void set_wakeup(std::function<void()> wake) override {
    std::lock_guard<std::mutex> lock(wake_mu_);
    wake_ = std::move(wake);
  }
  bool pull(bool keepalive_due, std::string& chunk, HttpResponse&) override;
  void abandon(const char*) override { gone_.store(true); }

  // The hub thread: whether this viewer has something to read.
  bool behind(uint64_t next_seq, uint64_t status_version) const {
    return cursor_.load() < next_seq || sent_status_.load() < status_version;
  }
  bool gone() const { return gone_.load(); }
  void wake() {
    std::lock_guard<std::mutex> lock(wake_mu_);
    if (wake_) wake_();
  }

 private:
  std::shared_ptr<LiveShared> s_;
  bool hello_sent_ = false;
  // The next record to send, written by pull() on the connection's strand and read by the hub.
  // 0 on connect: the whole ring, so the page draws the last minutes at once.
  std::atomic<uint64_t> cursor_{0};
  std::atomic<uint64_t> sent_status_{0};
  std::atomic<bool> gone_{false};
  std::mutex wake_mu_;
  std::function<void()> wake_;
};

// Its connection is open: the viewer exists and has not been abandoned.
static bool watching(const std::weak_ptr<LiveViewer>& w) {
  auto v = w.lock();
  return v && !v->gone();
}

bool LiveViewer::pull(bool keepalive_due, std::string& chunk, HttpResponse&) {
  std::shared_ptr<const std::string> status;
  uint64_t version = 0;
  bool stop = false;
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    stop = s_->stop;
    if (s_->status_version > sent_status_.load()) {
      status = s_->status;
      version = s_->status_version;
    }
  }
  if (!hello_sent_) {
    hello_sent_ = true;
    // EventSource waits this long before it reconnects after a dropped stream.
    chunk += "retry: 2000\n\n";
    chunk += sse_event("hello", {{"capacity", s_->feed->capacity()},
                                 {"now_ms", s_->feed->now_ms()},
                                 {"max_steps_per_write", LiveHub::kMaxStepsPerWrite}});
  }
  if (status) {
    chunk += *status;
    sent_status_.store(version);
  }
  auto slice = s_->feed->read(cursor_.load(), LiveHub::kMaxStepsPerWrite);
  if (slice.lost > 0) chunk += lost_event_text(slice.lost, slice.next - slice.records.size());
  for (const auto& r : slice.records) chunk += step_event_text(*r);
  cursor_.store(slice.next);
  if (stop) {
    chunk += sse_event("bye", {{"why", "the server is shutting down"}});
    return true;
  }
  if (chunk.empty() && keepalive_due) chunk = sse_comment("keepalive");
  // More than one write's worth waiting: ask for another pull once this write is out.
  if (slice.records.size() == LiveHub::kMaxStepsPerWrite) wake();
  return false;
}

LiveHub::LiveHub(std::shared_ptr<const sched::LiveFeed> feed,
                 std::function<std::string(int viewers)> status_text, std::function<bool()> closing)
    : shared_(std::make_shared<LiveShared>()) {
  shared_->feed = std::move(feed);
  shared_->status_text = std::move(status_text);
  shared_->closing = std::move(closing);
  thread_ = std::thread([this] { run(); });
}

LiveHub::~LiveHub() {
  stop();
}

void LiveHub::stop() {
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    shared_->stop = true;
  }
  shared_->cv.notify_all();
  if (!thread_.joinable()) return;
  thread_.join();
  std::vector<std::weak_ptr<LiveViewer>> viewers;
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    viewers = shared_->viewers;
  }
  for (auto& w : viewers) {
    if (auto v = w.lock()) v->wake();  // their next pull ends the stream
  }
}

std::shared_ptr<AsyncBody> LiveHub::open_viewer() {
  auto v = std::make_shared<LiveViewer>(shared_);
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    std::erase_if(shared_->viewers, [](const auto& w) { return !watching(w); });
    if (static_cast<int>(shared_->viewers.size()) >= kMaxViewers) return nullptr;
    shared_->viewers.push_back(v);
  }
  shared_->cv.notify_all();  // the first viewer gets a status snapshot now, not in a second
  return v;
}

int LiveHub::viewers() const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  return static_cast<int>(
      std::count_if(shared_->viewers.begin(), shared_->viewers.end(), watching));
}

// Every 100 ms: wakes the viewers that are behind; every 250 ms (and at once when viewers come
// or go), one status snapshot for all of them. Idle without viewers.
void LiveHub::run() {
  using namespace std::chrono_literals;
  LiveShared& s = *shared_;
  Clock::time_point last_status{};
  size_t last_count = 0;
  std::unique_lock<std::mutex> lock(s.mu);
  while (!s.stop) {
    s.cv.wait_for(lock, s.viewers.empty() ? 1000ms : 100ms);
    if (s.stop) break;
    std::erase_if(s.viewers, [](const auto& w) { return !watching(w); });
    if (s.viewers.empty()) continue;
    const bool closing = s.closing && s.closing();
    const auto now = Clock::now();
    if (now - last_status >= kStatusPeriod || s.viewers.size() != last_count || closing) {
      const auto n_viewers = static_cast<int>(s.viewers.size());
      lock.unlock();
      std::string text;
      try {
        text = s.status_text ? s.status_text(n_viewers) : std::string("{}");
      } catch (const std::exception& e) {
        log::warn("live view: status snapshot failed: {}", e.what());
      }
      lock.lock();
      if (!text.empty()) {
        s.status =
            std::make_shared<const std::string>(fmt::format("event: status\ndata: {}\n\n", text));
        ++s.status_version;
      }
      last_status = now;
    }
    last_count = s.viewers.size();
    if (closing) s.stop = true;
    std::vector<std::shared_ptr<LiveViewer>> wake;
    const uint64_t next = s.feed->next_seq();
    for (const auto& w : s.viewers) {
      auto v = w.lock();
      if (v && (s.stop || v->behind(next, s.status_version))) wake.push_back(std::move(v));
    }
    lock.unlock();
    for (const auto& v : wake) v->wake();
    wake.clear();  // the last reference may go here, outside the lock
    lock.lock();
  }
}

}  // namespace baton::server
