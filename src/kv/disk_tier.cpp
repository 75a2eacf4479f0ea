#include "kv/disk_tier.h"

#include <algorithm>

namespace baton::kv {
namespace {

// Segments of about 16 MB: big enough for sequential disk writes and few files, small enough
// that a budget holds many and an eviction drops little.
constexpr uint64_t kSegmentTargetBytes = 16u << 20;
constexpr auto kRefreshPeriod = std::chrono::seconds(1);

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

DiskTier::DiskTier(DiskStoreOptions options, std::function<void()> on_done)
    : store_(std::move(options)), on_done_(std::move(on_done)) {
  const uint64_t bb = std::max<uint64_t>(1, store_.options().layout.block_bytes);
  blocks_per_segment_ =
      static_cast<size_t>(std::clamp<uint64_t>(kSegmentTargetBytes / bb, 1, kMaxSegmentBlocks));
  thread_ = std::thread([this] { run(); });
}

DiskTier::~DiskTier() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

bool DiskTier::known(uint64_t hash) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pending_.count(hash)) return true;
  }
  return store_.contains(hash);
}

void DiskTier::save(DiskSave job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& b : job.blocks) pending_.insert(b.hash);
    saves_.push_back(std::move(job));
  }
  cv_.notify_all();
}

void DiskTier::load(DiskLoad job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    loads_.push_back(std::move(job));
  }
  cv_.notify_all();
}

std::optional<std::vector<int32_t>> DiskTier::withdraw_save(
    const std::function<bool(const std::vector<int32_t>&)>& frees) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = saves_.rbegin(); it != saves_.rend(); ++it) {
    if (!frees(it->pool_blocks)) continue;
    DiskSave job = std::move(*it);
    saves_.erase(std::next(it).base());
    for (const auto& b : job.blocks) pending_.erase(b.hash);  // a hash is queued at most once
    return std::move(job.pool_blocks);
  }
  return std::nullopt;
}

std::vector<DiskDone> DiskTier::take_done() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<DiskDone> out;
  out.swap(done_);
  return out;
}

void DiskTier::set_load_delay(DelayHook hook) {
  std::lock_guard<std::mutex> lock(mu_);
  load_delay_ = std::move(hook);
}

void DiskTier::set_save_delay(DelayHook hook) {
  std::lock_guard<std::mutex> lock(mu_);
  save_delay_ = std::move(hook);
}

void DiskTier::set_load_delay(std::chrono::milliseconds d) {
  set_load_delay([d] { return std::chrono::microseconds(d); });
}

void DiskTier::set_save_delay(std::chrono::milliseconds d) {
  set_save_delay([d] { return std::chrono::microseconds(d); });
}

size_t DiskTier::jobs_in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return saves_.size() + loads_.size() + (busy_ ? 1 : 0);
}

void DiskTier::push_done(DiskDone d) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_.push_back(std::move(d));
    busy_ = false;  // with the completion queued: a test that sees it idle can step and collect
  }
  if (on_done_) on_done_();
}

void DiskTier::run() {
  std::unique_lock<std::mutex> lock(mu_);
  auto looked = std::chrono::steady_clock::now();
  for (;;) {
    // Other processes sharing the directory publish and evict segments: a look about once a
    // second (a stat of the directory when nothing changed) keeps the index within that of it.
    const auto has_work = [&] { return stopping_ || !saves_.empty() || !loads_.empty(); };
    cv_.wait_for(lock, kRefreshPeriod, has_work);
    if (!stopping_ && std::chrono::steady_clock::now() - looked >= kRefreshPeriod) {
      lock.unlock();
      store_.refresh_if_changed();
      looked = std::chrono::steady_clock::now();
      lock.lock();
    }
    if (!has_work()) continue;  // asked again: a save may have been withdrawn meanwhile
    // Queued loads are dropped when stopping: their requests are gone.
    if (stopping_ && saves_.empty()) return;
    DelayHook hook;
    if (!stopping_) hook = loads_.empty() ? save_delay_ : load_delay_;
    if (hook) {
      lock.unlock();
      const auto delay = hook();
      if (delay.count() > 0) std::this_thread::sleep_for(delay);
      lock.lock();
      if (stopping_ && saves_.empty()) return;
      if (loads_.empty() && saves_.empty()) continue;  // the job was withdrawn meanwhile
    }
    busy_ = true;
    if (!loads_.empty() && !stopping_) {
      DiskLoad job = std::move(loads_.front());
      loads_.pop_front();
      lock.unlock();
      do_load(job);
    } else {
      DiskSave job = std::move(saves_.front());
      saves_.pop_front();
      lock.unlock();
      do_save(job);
    }
    lock.lock();
  }
}

void DiskTier::do_save(DiskSave& job) {
  const auto start = std::chrono::steady_clock::now();
  const size_t n = job.blocks.size();
  std::vector<uint64_t> hashes;
  for (const auto& b : job.blocks) hashes.push_back(b.hash);
  const bool ok = store_.save(std::move(job.blocks), job.data, job.states);
  job.states.clear();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (uint64_t h : hashes) pending_.erase(h);
  }
  DiskDone d;
  d.kind = DiskDone::Kind::Save;
  d.pool_blocks = std::move(job.pool_blocks);
  d.n_ok = ok ? n : 0;
  d.seconds = seconds_since(start);
  push_done(std::move(d));
}

void DiskTier::do_load(DiskLoad& job) {
  const auto start = std::chrono::steady_clock::now();
  DiskDone d;
  d.kind = DiskDone::Kind::Load;
  d.request_id = job.request_id;
  d.n_ok = store_.load(job.expected, job.dst, job.state_dst, &d.state_ok);
  d.state_slot = job.state_slot;
  d.pool_blocks = std::move(job.pool_blocks);
  d.seconds = seconds_since(start);
  push_done(std::move(d));
}

}  // namespace baton::kv
