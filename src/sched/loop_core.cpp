// LoopCore: construction, submission, status and metrics. The step itself is in loop_step.cpp.
#include "sched/loop_core.h"

#include <fmt/format.h>

#include <algorithm>

#include "util/log.h"

namespace baton::sched {

namespace {

int32_t blocks_for(int64_t tokens, int32_t block_size) {
  return static_cast<int32_t>((tokens + block_size - 1) / block_size);
}

SchedConfig resolved(SchedConfig c, const engine::EngineInfo& info) {
  c.kv_blocks = resolve_kv_blocks(c, info);
  if (c.kv_ram_mb <= 0 && info.kv_bytes_per_block > 0) {
    c.kv_ram_mb = static_cast<int64_t>(
        (static_cast<uint64_t>(c.kv_blocks) * info.kv_bytes_per_block + (1u << 20) - 1) >> 20);
  }
  return c;
}

}  // namespace

int32_t resolve_kv_blocks(const SchedConfig& config, const engine::EngineInfo& info) {
  const int32_t bs = std::max(1, info.block_size);
  if (config.kv_blocks > 0) return config.kv_blocks;  // planned at start (sched/memory_plan.h)
  if (config.kv_ram_mb > 0 && info.kv_bytes_per_block > 0) {
    uint64_t bytes = static_cast<uint64_t>(config.kv_ram_mb) << 20;
    return static_cast<int32_t>(std::max<uint64_t>(1, bytes / info.kv_bytes_per_block));
  }
  return auto_kv_blocks(config, bs);
}

LoopCore::LoopCore(engine::Engine& engine, SchedConfig config)
    : engine_(engine),
      info_(engine.info()),
      config_(resolved(config, info_)),
      pool_(config_.kv_blocks, std::max(1, info_.block_size), info_.fingerprint) {
  if (config_.parallel < 1) config_.parallel = 1;
  if (config_.channel_capacity < 1) config_.channel_capacity = 1;
  engine_.allocate_kv(config_.kv_blocks);
  metrics_.kv_blocks_total = config_.kv_blocks;
  metrics_.kv_block_tokens = pool_.block_size();
  if (info_.state_bytes_per_seq > 0) open_state_store();
  open_disk_tier();
  for (const char* k : {"ok", "cancelled", "failed", "rejected"}) metrics_.requests_total[k] = 0;
  for (const char* k : {"decode", "prefill", "mixed"}) {
    metrics_.steps_total[k] = 0;
    metrics_.max_step_seconds[k] = 0;
  }
  if (config_.itl_target_ms <= 0 && config_.itl_target_decode_steps > 0) calibrate_itl_target();
}

LoopCore::~LoopCore() {
  disk_.reset();
}

void LoopCore::reject(SubmitError::Code code, const std::string& msg) {
  ++metrics_.requests_total["rejected"];  // caller holds mu_
  throw SubmitError(code, msg);
}

std::shared_ptr<RequestHandle> LoopCore::submit(GenerateRequest req) {
  auto r = std::make_shared<Request>();
  r->arrival = Clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  if (!admitting_) reject(SubmitError::Code::ShuttingDown, "server is shutting down");
  const auto n_prompt = static_cast<int64_t>(req.prompt.size());
  if (n_prompt == 0) reject(SubmitError::Code::Invalid, "prompt is empty: send at least one token");
  if (req.max_tokens < 1) {
    reject(SubmitError::Code::Invalid,
           fmt::format("max_tokens must be at least 1, got {}", req.max_tokens));
  }
  for (int32_t t : req.prompt) {
    if (t < 0 || t >= info_.n_vocab) {
      reject(
          SubmitError::Code::Invalid,
          fmt::format("prompt token {} is outside the vocabulary (0..{})", t, info_.n_vocab - 1));
    }
  }
  const int64_t total = n_prompt + req.max_tokens;
  if (total > config_.ctx) {
    reject(SubmitError::Code::TooLong,
           fmt::format("prompt ({} tokens) + max_tokens ({}) = {} exceeds the context of {} "
                       "tokens (--ctx)",
                       n_prompt, req.max_tokens, total, config_.ctx));
  }
  // Admission reserves only what a request needs now, but one that could not finish even alone
  // in the pool would be parked and resumed forever: refuse it here.
  const int32_t reserve = blocks_for(total, pool_.block_size());
  if (reserve > pool_.n_blocks()) {
    reject(SubmitError::Code::TooLong,
           fmt::format("prompt ({} tokens) + max_tokens ({}) needs {} KV blocks but the pool has "
                       "{}: raise --kv-ram-mb",
                       n_prompt, req.max_tokens, reserve, pool_.n_blocks()));
  }
  if (static_cast<int64_t>(waiting_.size()) >= config_.max_queue) {
    reject(SubmitError::Code::QueueFull,
           fmt::format("queue full: {} requests waiting (--max-queue {})", waiting_.size(),
                       config_.max_queue));
  }
  r->id = next_id_++;
  r->seq = next_seq_++;
  r->n_prompt = static_cast<int32_t>(n_prompt);
  r->n_fill = r->n_prompt;
  r->tokens = req.prompt;
  r->chain_hash = pool_.root_hash();
  r->disk_checked_hash = r->chain_hash;
  r->sampler = std::make_unique<engine::Sampler>(req.sampling);
  r->params = std::move(req);
  r->channel = std::make_shared<Channel>(r->id, static_cast<size_t>(config_.channel_capacity));
  auto handle = r->channel;
  waiting_.push_back(std::move(r));
  work_pending_ = true;
  lock.unlock();
  cv_.notify_all();
  return handle;
}

void LoopCore::wait_for_work(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return work_pending_; });
  work_pending_ = false;
}

void LoopCore::wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    work_pending_ = true;
  }
  cv_.notify_all();
}

void LoopCore::stop_admitting() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    admitting_ = false;
    work_pending_ = true;
  }
  cv_.notify_all();
}

bool LoopCore::has_requests() const {
  if (!running_.empty() || !parked_.empty()) return true;
  std::lock_guard<std::mutex> lock(mu_);
  return !waiting_.empty();
}

void LoopCore::finish_all(FinishReason why) {
  const auto now = Clock::now();
  std::deque<ReqPtr> waiting;
  {
    std::lock_guard<std::mutex> lock(mu_);
    waiting.swap(waiting_);
  }
  for (auto& r : waiting) finish(*r, why, "", now);
  auto running = std::move(running_);
  running_.clear();
  for (auto& r : running) finish(*r, why, "", now);
  auto parked = std::move(parked_);
  parked_.clear();
  for (auto& r : parked) finish(*r, why, "", now);
  flush_notes();
  publish(now);
}

bool LoopCore::draining() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !admitting_;
}

Metrics LoopCore::metrics() const {
  std::lock_guard<std::mutex> lock(mu_);
  Metrics m = metrics_;
  m.draining = !admitting_;
  m.affinity = sessions_.totals();
  return m;
}

// Enough to see a proxy's work at a glance; the totals in /metrics cover every session.
constexpr size_t kStatusSessions = 64;

StatusSnapshot LoopCore::status() const {
  StatusSnapshot s;
  s.config = config_;
  const auto now = Clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  s.metrics = metrics_;
  s.metrics.draining = !admitting_;
  s.metrics.affinity = sessions_.totals();
  s.sessions = sessions_.recent(kStatusSessions, now);
  s.requests = running_status_;
  for (const auto& r : waiting_) {
    RequestStatus st;
    st.id = r->id;
    st.state = RequestState::Queued;
    st.prompt_tokens = r->n_prompt;
    st.ms_waited = ms_between(r->arrival, now);
    s.requests.push_back(st);
  }
  return s;
}

void LoopCore::publish(Clock::time_point now) {
  std::vector<RequestStatus> rs;
  rs.reserve(running_.size() + parked_.size());
  for (const auto* list : {&running_, &parked_}) {
    for (const auto& r : *list) {
      RequestStatus st;
      st.id = r->id;
      st.state = r->state;
      st.prompt_tokens = r->n_prompt;
      st.prompt_done = std::min(r->n_kv, r->n_prompt);
      st.cached_tokens = r->cached_tokens;
      st.generated = r->generated;
      st.drafted_tokens = r->drafted_tokens;
      st.accepted_tokens = r->accepted_tokens;
      st.ms_waited = ms_between(r->arrival, now);
      if (r->first_token.time_since_epoch().count() != 0) {
        st.ttft_ms = ms_between(r->arrival, r->first_token);
        const double decoding_s = ms_between(r->first_token, r->last_token) / 1000.0;
        if (decoding_s > 0) st.tokens_per_s = (r->generated - 1) / decoding_s;
      }
      st.max_gap_ms = r->max_gap_ms;
      st.disk_tokens = r->disk_tokens;
      if (r->parked_since) {
        st.parked_why = r->park_why;
        st.ms_parked = ms_between(*r->parked_since, now);
        st.position = r->parked_position;
        st.blocks_kept = static_cast<int32_t>(r->block_table.size());
        st.parks = r->parks;
      }
      rs.push_back(st);
    }
  }
  std::sort(rs.begin(), rs.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  std::lock_guard<std::mutex> lock(mu_);
  running_status_ = std::move(rs);
  metrics_.requests_running = static_cast<int64_t>(running_.size());
  metrics_.parked_requests = static_cast<int64_t>(parked_.size());
  metrics_.requests_waiting = static_cast<int64_t>(waiting_.size());
  metrics_.kv_blocks_used = pool_.used();
  metrics_.kv_blocks_cached = pool_.cached_unreferenced();
  metrics_.kv_usage_ratio = static_cast<double>(pool_.used()) / pool_.n_blocks();
  const auto& ps = pool_.stats();
  metrics_.prefix_cache_queries_total = ps.queries;
  metrics_.prefix_cache_hits_total = ps.hits;
  metrics_.prefix_cache_reused_tokens_total = ps.reused_tokens;
  metrics_.kv_evictions_total = ps.evictions;
  if (states_) {
    const auto& ss = states_->stats();
    metrics_.state_checkpoint_slots = states_->n_slots();
    metrics_.state_checkpoints = states_->n_held();
    metrics_.state_checkpoint_bytes =
        static_cast<int64_t>(states_->n_held() * info_.state_bytes_per_seq);
    metrics_.state_checkpoints_taken_total = ss.taken;
    metrics_.state_restores_total = ss.restored;
    metrics_.state_checkpoint_evictions_total = ss.evictions;
  }
  metrics_.loading_requests = std::count_if(running_.begin(), running_.end(), [](const ReqPtr& r) {
    return r->state == RequestState::Loading;
  });
  metrics_.step_io_wait_seconds = io_seconds_;
  if (disk_) {
    const auto ds = disk_->stats();
    metrics_.kv_disk_bytes = static_cast<int64_t>(ds.bytes);
    metrics_.kv_disk_budget_bytes = static_cast<int64_t>(ds.budget);
    metrics_.kv_disk_files = static_cast<int64_t>(ds.files);
    metrics_.kv_disk_foreign_files = static_cast<int64_t>(ds.foreign_files);
    metrics_.kv_disk_blocks = static_cast<int64_t>(ds.blocks);
    metrics_.kv_disk_saved_blocks_total = ds.saved_blocks;
    metrics_.kv_disk_evicted_files_total = ds.evicted_files;
    metrics_.kv_disk_errors_total = ds.errors;
  }
  for (const auto& r : waiting_) {
    metrics_.max_queue_wait_ms = std::max(metrics_.max_queue_wait_ms, ms_between(r->arrival, now));
  }
}

void LoopCore::count_step(int32_t decode_rows, int32_t prefill_tokens, double step_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  const char* kind = prefill_tokens == 0 ? "decode" : decode_rows == 0 ? "prefill" : "mixed";
  ++metrics_.steps_total[kind];
  double& longest = metrics_.max_step_seconds[kind];
  longest = std::max(longest, step_ms / 1000.0);
  metrics_.step_duration.observe(step_ms / 1000.0);
  metrics_.decode_rows_total += static_cast<uint64_t>(decode_rows);
  metrics_.prefill_tokens_total += static_cast<uint64_t>(prefill_tokens);
}

int64_t LoopCore::table_refs() const {
  int64_t n = disk_pins_;
  for (const auto* list : {&running_, &parked_}) {
    for (const auto& r : *list) n += static_cast<int64_t>(r->block_table.size());
  }
  return n;
}

Request* LoopCore::find_running(uint64_t id) {
  for (auto& r : running_) {
    if (r->id == id) return r.get();
  }
  return nullptr;
}

}  // namespace baton::sched
