#include "support/fake_engine.h"

#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

namespace baton::engine {

FakeEngine::FakeEngine(FakeEngineConfig config) : cfg_(config) {
  if (cfg_.n_vocab < 4 || cfg_.block_size < 1) {
    throw std::invalid_argument("fake engine: need n_vocab >= 4 and block_size >= 1");
  }
}

EngineInfo FakeEngine::info() const {
  EngineInfo i;
  i.model_name = "fake";
  i.n_vocab = cfg_.n_vocab;
  i.n_ctx_train = cfg_.n_ctx_train;
  i.block_size = cfg_.block_size;
  i.kv_bytes_per_block = cfg_.kv_bytes_per_block;
  i.fingerprint = cfg_.fingerprint;
  i.kv_layout = "fake block=" + std::to_string(cfg_.block_size);
  i.bos_id = 1;
  i.eog_ids = {cfg_.eog_id};
  if (cfg_.recurrent) i.state_bytes_per_seq = cfg_.state_bytes;
  return i;
}

void FakeEngine::allocate_kv(int32_t n_blocks) {
  std::lock_guard<std::mutex> lock(mu_);
  kv_.assign(static_cast<size_t>(n_blocks), std::vector<int32_t>(cfg_.block_size, -1));
}

std::span<uint8_t> FakeEngine::kv_block(int32_t block) {
  std::lock_guard<std::mutex> lock(mu_);
  if (block < 0 || block >= static_cast<int32_t>(kv_.size())) return {};
  auto& b = kv_[static_cast<size_t>(block)];
  return {reinterpret_cast<uint8_t*>(b.data()), b.size() * sizeof(int32_t)};
}

int32_t FakeEngine::n_blocks() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int32_t>(kv_.size());
}

int32_t FakeEngine::expected_next(const std::vector<int32_t>& seq, int32_t n_vocab,
                                  int32_t copy_period) {
  uint64_t h = XXH3_64bits(seq.data(), seq.size() * sizeof(int32_t));
  // Three times in four it copies; otherwise (and before a period has passed) the hash decides.
  if (copy_period > 0 && seq.size() >= static_cast<size_t>(copy_period) && h % 4 != 0) {
    return seq[seq.size() - static_cast<size_t>(copy_period)];
  }
  return static_cast<int32_t>(h % static_cast<uint64_t>(n_vocab));
}

std::vector<int32_t> FakeEngine::reference(std::vector<int32_t> prompt, int32_t n,
                                           bool ignore_eos) const {
  std::vector<int32_t> out;
  for (int32_t i = 0; i < n; ++i) {
    int32_t t = expected_next(prompt, cfg_.n_vocab, cfg_.copy_period);
    out.push_back(t);
    if (t == cfg_.eog_id && !ignore_eos) break;
    prompt.push_back(t);
  }
  return out;
}

void FakeEngine::check_chunk(const SeqChunk& c) const {
  const int64_t end = static_cast<int64_t>(c.start_pos) + static_cast<int64_t>(c.tokens.size());
  if (c.tokens.empty() || c.start_pos < 0) {
    throw std::logic_error("fake engine: empty chunk or negative start_pos for request " +
                           std::to_string(c.request_id));
  }
  if (static_cast<int64_t>(c.block_table.size()) * cfg_.block_size < end) {
    throw std::logic_error("fake engine: block_table of request " + std::to_string(c.request_id) +
                           " does not cover position " + std::to_string(end - 1));
  }
  for (int32_t b : c.block_table) {
    if (b < 0 || b >= static_cast<int32_t>(kv_.size())) {
      throw std::logic_error("fake engine: block id " + std::to_string(b) + " out of range");
    }
  }
}

void FakeEngine::run_state(const SeqChunk& c) {
  auto& st = states_[c.request_id];
  if (c.start_pos == 0) st.clear();
  if (static_cast<int64_t>(st.size()) != c.start_pos) {
    throw std::logic_error("fake engine: request " + std::to_string(c.request_id) +
                           " continues at position " + std::to_string(c.start_pos) +
                           " but its recurrent state holds " + std::to_string(st.size()));
  }
  st.insert(st.end(), c.tokens.begin(), c.tokens.end());
  for (const auto& cp : c.checkpoints) {
    if (cp.slot < 0 || cp.slot >= static_cast<int32_t>(slots_.size()) || cp.pos <= c.start_pos ||
        cp.pos > static_cast<int32_t>(st.size())) {
      throw std::logic_error("fake engine: request " + std::to_string(c.request_id) +
                             " asks for a checkpoint at position " + std::to_string(cp.pos) +
                             " in slot " + std::to_string(cp.slot) + ", outside its step or the " +
                             std::to_string(slots_.size()) + " slots");
    }
    slots_[cp.slot].assign(st.begin(), st.begin() + cp.pos);
    slot_used_[cp.slot] = true;
    checkpoints_.fetch_add(1);
  }
}

void FakeEngine::allocate_state_slots(int32_t n_slots) {
  std::lock_guard<std::mutex> lock(mu_);
  slots_.assign(static_cast<size_t>(std::max(0, n_slots)), {});
  slot_used_.assign(slots_.size(), false);
  slot_bytes_.assign(slots_.size(), {});
}

std::span<uint8_t> FakeEngine::state_slot(int32_t slot) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!cfg_.recurrent || slot < 0 || slot >= static_cast<int32_t>(slots_.size())) return {};
  auto& bytes = slot_bytes_[static_cast<size_t>(slot)];
  bytes.assign(cfg_.state_bytes, 0);
  const auto& st = slots_[static_cast<size_t>(slot)];
  int32_t n = -1;
  if (slot_used_[slot] && (st.size() + 1) * sizeof(int32_t) <= bytes.size()) {
    n = static_cast<int32_t>(st.size());
    std::memcpy(bytes.data() + sizeof(int32_t), st.data(), st.size() * sizeof(int32_t));
  }
  std::memcpy(bytes.data(), &n, sizeof(n));
  return bytes;
}

void FakeEngine::set_state_slot(int32_t slot, int32_t n_pos) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!cfg_.recurrent || slot < 0 || slot >= static_cast<int32_t>(slots_.size())) {
    throw std::runtime_error("fake engine: no state slot " + std::to_string(slot));
  }
  auto& st = slots_[static_cast<size_t>(slot)];
  slot_used_[slot] = false;
  st.clear();
  if (n_pos <= 0) return;
  const auto& bytes = slot_bytes_[static_cast<size_t>(slot)];
  int32_t n = -1;
  if (bytes.size() >= sizeof(n)) std::memcpy(&n, bytes.data(), sizeof(n));
  if (n != n_pos || (static_cast<size_t>(n) + 1) * sizeof(int32_t) > bytes.size()) {
    throw std::runtime_error("fake engine: slot " + std::to_string(slot) + " holds no state of " +
                             std::to_string(n_pos) + " positions");
  }
  st.resize(static_cast<size_t>(n));
  std::memcpy(st.data(), bytes.data() + sizeof(int32_t), st.size() * sizeof(int32_t));
  slot_used_[slot] = true;
}

void FakeEngine::restore_state(uint64_t request_id, int32_t slot, int32_t n_pos) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!cfg_.recurrent) throw std::runtime_error("fake engine: not recurrent, nothing to restore");
  if (slot < 0 || slot >= static_cast<int32_t>(slots_.size()) || !slot_used_[slot] ||
      static_cast<int32_t>(slots_[slot].size()) != n_pos) {
    throw std::runtime_error("fake engine: slot " + std::to_string(slot) + " holds no state of " +
                             std::to_string(n_pos) + " positions");
  }
  states_[request_id] = slots_[slot];
  restores_.fetch_add(1);
}

int32_t FakeEngine::n_state_slots() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int32_t>(slots_.size());
}

void FakeEngine::release_sequence(uint64_t request_id) {
  std::lock_guard<std::mutex> lock(mu_);
  states_.erase(request_id);
}

size_t FakeEngine::live_states() const {
  std::lock_guard<std::mutex> lock(mu_);
  return states_.size();
}

std::vector<float> FakeEngine::logits_for(const SeqChunk& c, int32_t row) const {
  // Read the whole sequence back from the KV blocks, as attention would.
  const int32_t last = c.start_pos + row;
  std::vector<int32_t> seq(static_cast<size_t>(last) + 1);
  for (int32_t p = 0; p <= last; ++p) {
    int32_t t = kv_[c.block_table[p / cfg_.block_size]][p % cfg_.block_size];
    if (t < 0) {
      throw std::logic_error("fake engine: request " + std::to_string(c.request_id) +
                             " reads position " + std::to_string(p) + " that holds no KV");
    }
    seq[p] = t;
  }
  if (cfg_.recurrent && row + 1 == static_cast<int32_t>(c.tokens.size()) &&
      states_.at(c.request_id) != seq) {
    throw std::logic_error("fake engine: request " + std::to_string(c.request_id) +
                           "'s recurrent state differs from its KV");
  }
  int32_t next = expected_next(seq, cfg_.n_vocab, cfg_.copy_period);
  std::vector<float> logits(static_cast<size_t>(cfg_.n_vocab), -2.0f);
  logits[next] = 6.0f;
  logits[(next + 1) % cfg_.n_vocab] = 3.0f;  // a runner-up for top-logprob reports
  return logits;
}

void FakeEngine::forward(const StepBatch& batch, StepOutput& out) {
  std::function<void(const StepBatch&)> hook;
  {
    std::lock_guard<std::mutex> lock(mu_);
    hook = on_step_;
  }
  if (hook) hook(batch);
  std::lock_guard<std::mutex> lock(mu_);
  steps_.push_back(batch);
  n_steps_.fetch_add(1);
  virtual_us_.fetch_add(cfg_.cost_us_per_step +
                        cfg_.cost_us_per_token * static_cast<int64_t>(batch.total_tokens()));
  for (const auto& c : batch.seqs) {
    if (fail_ids_.erase(c.request_id)) {
      throw std::runtime_error("fake engine: injected failure for request " +
                               std::to_string(c.request_id));
    }
  }
  int64_t sleep_us =
      cfg_.sleep_us_per_step + cfg_.sleep_us_per_token * static_cast<int64_t>(batch.total_tokens());
  if (sleep_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
  out.request_ids.clear();
  out.logits.clear();
  for (const auto& c : batch.seqs) check_chunk(c);
  if (cfg_.recurrent) {
    for (const auto& c : batch.seqs) run_state(c);
  }
  for (const auto& c : batch.seqs) {
    for (size_t i = 0; i < c.tokens.size(); ++i) {
      int32_t p = c.start_pos + static_cast<int32_t>(i);
      kv_[c.block_table[p / cfg_.block_size]][p % cfg_.block_size] = c.tokens[i];
    }
  }
  for (const auto& c : batch.seqs) {
    if (!c.want_logits) continue;
    const auto n = static_cast<int32_t>(c.tokens.size());
    if (c.logit_rows < 1 || c.logit_rows > n) {
      throw std::logic_error("fake engine: logits of " + std::to_string(c.logit_rows) +
                             " rows of a " + std::to_string(n) + "-token chunk");
    }
    for (int32_t row = n - c.logit_rows; row < n; ++row) {
      out.request_ids.push_back(c.request_id);
      out.logits.push_back(logits_for(c, row));
    }
  }
}

void FakeEngine::copy_block(int32_t src, int32_t dst, int32_t n_tokens) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto n = static_cast<int32_t>(kv_.size());
  if (src < 0 || src >= n || dst < 0 || dst >= n || n_tokens < 0 || n_tokens > cfg_.block_size) {
    throw std::logic_error("fake engine: bad copy_block(" + std::to_string(src) + ", " +
                           std::to_string(dst) + ", " + std::to_string(n_tokens) + ")");
  }
  for (int32_t i = 0; i < n_tokens; ++i) kv_[dst][i] = kv_[src][i];
  copies_.fetch_add(1);
}

std::vector<StepBatch> FakeEngine::steps() const {
  std::lock_guard<std::mutex> lock(mu_);
  return steps_;
}

void FakeEngine::fail_on(uint64_t request_id) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_ids_.insert(request_id);
}

void FakeEngine::set_on_step(std::function<void(const StepBatch&)> hook) {
  std::lock_guard<std::mutex> lock(mu_);
  on_step_ = std::move(hook);
}

}  // namespace baton::engine
