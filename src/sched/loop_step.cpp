// LoopCore::step: one iteration of the engine loop. Admission (prefix reuse) and request
// endings are in loop_requests.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "sched/loop_core.h"
#include "util/log.h"

namespace baton::sched {

bool LoopCore::step() {
  const auto now = Clock::now();
  apply_disk_done(now);
  reap_waiting();
  reap_running(now);
  ensure_decode_blocks();
  const StepPlan plan = plan_step(build_input());
  for (const auto& p : plan.park) {
    Request* r = find_running(p.id);
    if (!r) continue;
    park(*r, p.why, p.keep_blocks, now);
    std::lock_guard<std::mutex> lock(mu_);
    ++metrics_.prefill_preemptions_total;
  }
  move_parked();
  admit(plan.admit, now);
  const engine::StepBatch batch = build_batch(plan);
  if (batch.seqs.empty()) {
    flush_notes();
    publish(now);
    return false;
  }
  run_batch(batch, Clock::now());
  publish(Clock::now());
  return true;
}

void LoopCore::reap_running(Clock::time_point now) {
  const auto stall_limit = static_cast<double>(config_.send_stall_timeout_ms);
  // A request parked while its client was not reading waits for room in its channel before it
  // resumes (build_input: its resume samples a token), so the stall limit applies to it too.
  for (const auto* list : {&running_, &parked_}) {
    for (const auto& r : *list) {
      if (r->channel->cancel_requested()) {
        finish(*r, FinishReason::Cancelled, "", now);
        continue;
      }
      const bool waits_on_client = r->decoding() || r->state == RequestState::Parked;
      if (!waits_on_client || !r->channel->full()) {
        r->paused_since.reset();
        continue;
      }
      // The client is not reading: pause this stream only; fail it if that lasts too long.
      if (!r->paused_since) r->paused_since = now;
      double stalled = ms_between(*r->paused_since, now);
      if (stalled >= stall_limit) {
        finish(*r, FinishReason::Failed,
               fmt::format("client did not read for {:.0f} ms with {} events buffered "
                           "(--send-stall-timeout-ms {})",
                           stalled, config_.channel_capacity, config_.send_stall_timeout_ms),
               now);
      }
    }
  }
  drop_finished();
}

void LoopCore::ensure_decode_blocks() {
  const int32_t bs = pool_.block_size();
  const auto now = Clock::now();
  // Oldest first, so under pressure the requests admitted last give way (vLLM-style).
  for (size_t i = 0; i < running_.size(); ++i) {
    Request& r = *running_[i];
    if (!r.decoding() || r.paused_since) continue;
    if (r.n_kv < static_cast<int32_t>(r.block_table.size()) * bs) continue;
    make_room_for_decode(r, now);
  }
  move_parked();
  drop_finished();
}

bool LoopCore::make_room_for_decode(Request& r, Clock::time_point now) {
  while (!grow_table(r, r.n_kv + 1)) {
    if (drop_parked_blocks()) continue;  // parked requests' pinned blocks go first
    // Then the blocks queued saves pin (a victim's own blocks among them): no request has to
    // give way, or wait, for a write that has not started.
    if (withdraw_disk_save()) continue;
    Request* victim = kv_victim();
    const bool alone =
        victim == &r && std::count_if(running_.begin(), running_.end(), [](const ReqPtr& q) {
                          return q->decoding() || q->state == RequestState::Prefilling;
                        }) == 1;
    // Alone, with the disk tier's write or loads under way pinning blocks that come back when
    // they finish, the request waits for them parked (as its own victim) rather than fail.
    if ((alone && disk_pins_ == 0) || !victim) {
      // Submission refuses what cannot fit alone, so only a pool shared oddly gets here.
      finish(r, FinishReason::Failed,
             fmt::format("KV pool exhausted ({} blocks, all pinned) while decoding: raise "
                         "--kv-ram-mb or lower --parallel",
                         pool_.n_blocks()),
             now);
      return false;
    }
    park(*victim, "kv_pressure", /*keep_blocks=*/false, now);
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++metrics_.kv_preemptions_total;
    }
    if (victim == &r) return false;
  }
  return true;
}

Request* LoopCore::kv_victim() {
  for (auto it = running_.rbegin(); it != running_.rend(); ++it) {
    Request& r = **it;
    if (r.state == RequestState::Prefilling || r.state == RequestState::Decoding) return &r;
  }
  return nullptr;
}

bool LoopCore::grow_table(Request& r, int32_t n_positions) {
  const int32_t bs = pool_.block_size();
  while (static_cast<int32_t>(r.block_table.size()) * bs < n_positions) {
    auto b = pool_.allocate();
    if (!b) return false;
    r.block_table.push_back(*b);
  }
  return true;
}

PolicyInput LoopCore::build_input() {
  PolicyInput in;
  in.block_size = pool_.block_size();
  in.prefill_chunk = config_.prefill_chunk;
  in.mixed_prefill_chunk = config_.mixed_prefill_chunk;
  in.itl_target_ms = config_.itl_target_ms;
  in.max_step_ms = config_.max_step_ms;
  in.aging_steps = config_.aging_steps;
  in.costs = costs_.model();
  in.prefill_preempt = config_.prefill_preempt;
  in.preempt_min_tokens = config_.preempt_min_tokens;
  in.preempt_max_wait_ms = config_.preempt_max_wait_s * 1000.0;
  const auto now = Clock::now();
  int32_t committed = 0, kept = 0;
  for (const auto& r : parked_) kept += static_cast<int32_t>(r->block_table.size());
  for (const auto& r : running_) {
    const auto held = static_cast<int32_t>(r->block_table.size());
    const int32_t mine = std::max(held, blocks_needed_now(*r));
    committed += mine;
    in.admission_order.push_back(r->id);
    if (r->decoding()) {
      in.decoders.push_back(
          {r->id, r->paused_since.has_value(), r->seq, held, mine, may_park(*r), r->n_kv});
    } else if (r->state == RequestState::Prefilling) {
      in.prefilling.push_back({r->id, r->seq, r->remaining_prompt(), r->n_kv, held,
                               r->starved_steps, may_park(*r), mine});
    }
  }
  const uint64_t bytes = info_.kv_bytes_per_block > 0 ? info_.kv_bytes_per_block : 1;
  const auto budget =
      static_cast<int64_t>((static_cast<uint64_t>(config_.park_ram_mb) << 20) / bytes);
  in.park_budget_blocks = static_cast<int32_t>(std::clamp<int64_t>(budget - kept, 0, 1 << 30));
  in.free_slots = std::max(0, config_.parallel - static_cast<int32_t>(running_.size()));
  in.free_blocks = pool_.available();
  in.unreserved_blocks = pool_.n_blocks() - committed - kept;
  // Parked requests come back ahead of new arrivals. With no slot free the head is still shown:
  // preemption may make room for it.
  const size_t n_heads = static_cast<size_t>(std::max(1, in.free_slots));
  std::vector<ReqPtr> heads;
  for (const auto& r : parked_) {
    // Parked while its client was not reading, and still unread: the token its resume samples
    // would have nowhere to go (the push would fail the request), so it stays parked.
    if (heads.size() < n_heads && !r->channel->full()) heads.push_back(r);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < waiting_.size() && heads.size() < n_heads; ++i) {
      heads.push_back(waiting_[i]);
    }
  }
  for (const auto& w : heads) {
    std::span<const int32_t> seq(w->tokens.data(), static_cast<size_t>(w->n_fill));
    int32_t reusable = config_.prefix_cache ? pool_.peek(seq, resumable()) : 0;
    const auto own = static_cast<int32_t>(w->block_table.size());
    const double parked_ms =
        w->parked_ms_total + (w->parked_since ? ms_between(*w->parked_since, now) : 0);
    in.waiting.push_back({w->id, w->seq, w->n_fill, std::max(reusable, w->n_kv),
                          std::max(0, blocks_needed_now(*w) - own), w->parked_since.has_value(),
                          parked_ms});
  }
  return in;
}

// The per-request preemption gates: --preempt-max-per-request and, in total, --preempt-max-wait-s.
bool LoopCore::may_park(const Request& r) const {
  if (r.parks >= config_.preempt_max_per_request) return false;
  return config_.preempt_max_wait_s <= 0 || r.parked_ms_total < config_.preempt_max_wait_s * 1000.0;
}

// What a request needs to make progress now: its prompt (or, resumed, its sequence so far) and
// a block of decode headroom, not its worst case (prompt + max_tokens). Running short later is
// met by parking, not by failing.
int32_t LoopCore::blocks_needed_now(const Request& r) const {
  const int32_t bs = pool_.block_size();
  const int32_t headroom = std::clamp(r.params.max_tokens - r.generated, 0, bs);
  return (r.n_fill + headroom + bs - 1) / bs;
}

engine::StepBatch LoopCore::build_batch(const StepPlan& plan) {
  engine::StepBatch batch;
  for (uint64_t id : plan.decode) {
    Request* r = find_running(id);
    if (!r) continue;
    engine::SeqChunk c;
    c.request_id = id;
    c.start_pos = r->n_kv;
    c.tokens = {r->tokens[static_cast<size_t>(r->n_kv)]};
    c.block_table = r->block_table;
    c.want_logits = true;
    plan_checkpoints(*r, c);
    batch.seqs.push_back(std::move(c));
  }
  std::vector<uint64_t> served;
  for (const auto& p : plan.prefill) {
    Request* r = find_running(p.id);
    if (!r || r->state != RequestState::Prefilling) continue;
    int32_t n = std::min(p.n_tokens, r->remaining_prompt());
    if (!grow_table(*r, r->n_kv + n)) {
      n = static_cast<int32_t>(r->block_table.size()) * pool_.block_size() - r->n_kv;
    }
    if (n <= 0) continue;
    engine::SeqChunk c;
    c.request_id = p.id;
    c.start_pos = r->n_kv;
    c.tokens.assign(r->tokens.begin() + r->n_kv, r->tokens.begin() + r->n_kv + n);
    c.block_table = r->block_table;
    c.want_logits = r->n_kv + n == r->n_fill;
    plan_checkpoints(*r, c);
    batch.seqs.push_back(std::move(c));
    served.push_back(p.id);
  }
  for (auto& r : running_) {
    if (r->state != RequestState::Prefilling) continue;
    bool got = std::find(served.begin(), served.end(), r->id) != served.end();
    r->starved_steps = got ? 0 : r->starved_steps + 1;
  }
  if (may_speculate(plan)) add_drafts(batch);
  return batch;
}

// The work of a batch as the cost model counts it; prefill chunks are those of requests still
// prefilling (a decode row is one token of a generating request).
StepShape LoopCore::shape_of(const engine::StepBatch& batch) {
  StepShape shape;
  for (const auto& c : batch.seqs) {
    const Request* r = find_running(c.request_id);
    if (r && r->state == RequestState::Prefilling) {
      shape.add_prefill(c.start_pos, static_cast<int32_t>(c.tokens.size()));
    } else {
      // A decode row and the tokens drafted after it, each a row at its own position.
      for (int32_t i = 0; i < static_cast<int32_t>(c.tokens.size()); ++i) {
        shape.add_decode(c.start_pos + i);
      }
    }
  }
  return shape;
}

void LoopCore::run_batch(const engine::StepBatch& batch, Clock::time_point start) {
  const StepShape shape = shape_of(batch);
  const double predicted_ms = costs_.model().measured() ? costs_.model().predict_ms(shape) : 0;
  engine::StepOutput out;
  try {
    engine_.forward(batch, out);
  } catch (const std::exception& e) {
    settle_checkpoints(/*step_ok=*/false);
    const auto now = Clock::now();
    log::error("engine step failed ({} sequences): {}", batch.seqs.size(), e.what());
    for (const auto& c : batch.seqs) {
      if (Request* r = find_running(c.request_id)) {
        finish(*r, FinishReason::Failed, fmt::format("engine failed: {}", e.what()), now);
      }
    }
    drop_finished();
    return;
  }
  settle_checkpoints(/*step_ok=*/true);
  const auto end = Clock::now();
  costs_.observe(shape, ms_between(start, end));
  apply_outputs(batch, out, start, end, predicted_ms);
}

void LoopCore::apply_outputs(const engine::StepBatch& batch, const engine::StepOutput& out,
                             Clock::time_point start, Clock::time_point end, double predicted_ms) {
  std::unordered_map<uint64_t, size_t> logits_of;
  // A request's first entry: a chunk that carried drafts has one per row after it.
  for (size_t i = 0; i < out.request_ids.size() && i < out.logits.size(); ++i) {
    logits_of.try_emplace(out.request_ids[i], i);
  }
  int32_t decode_rows = 0, prefill_tokens = 0;
  const double step_ms = ms_between(start, end);
  std::vector<LiveRow> rows;
  rows.reserve(batch.seqs.size());
  for (const auto& c : batch.seqs) {
    Request* r = find_running(c.request_id);
    if (!r) continue;
    const bool prefill = r->state == RequestState::Prefilling;
    const auto n = static_cast<int32_t>(c.tokens.size());
    // Drafted tokens join the KV only as verify_drafts keeps them.
    const bool drafted = !prefill && c.want_logits && c.logit_rows > 1;
    r->n_kv += drafted ? 1 : n;
    rows.push_back({r->id, prefill ? 0 : n, prefill ? n : 0, r->n_kv});
    (prefill ? prefill_tokens : decode_rows) += n;  // a decode chunk: 1 row, or 1 + its drafts
    if (prefill) {
      r->prefill_chunks.push_back({n, step_ms});
      // The step's time beside what the cost model predicted for it: the log shows how well
      // the latency target is kept, and bench/fairness.py reads the error by depth.
      log::info("req={} prefill {}/{} ({}%) {:.0f} tok/s, step {:.1f} ms (predicted {:.1f})", r->id,
                r->n_kv, r->n_fill, 100 * static_cast<int64_t>(r->n_kv) / std::max(1, r->n_fill),
                step_ms > 0 ? n * 1000.0 / step_ms : 0.0, step_ms, predicted_ms);
    }
    if (c.want_logits) {
      auto it = logits_of.find(c.request_id);
      const auto rows = static_cast<size_t>(std::max(1, c.logit_rows));
      bool complete = it != logits_of.end() && it->second + rows <= out.logits.size();
      for (size_t k = 0; complete && k < rows; ++k) {
        complete = out.logits[it->second + k].size() >= static_cast<size_t>(info_.n_vocab);
      }
      if (!complete) {
        finish(*r, FinishReason::Failed, "engine returned no logits for this request", end);
      } else if (drafted) {
        verify_drafts(*r, c, out.logits, it->second, end);
      } else {
        emit_token(*r, out.logits[it->second].data(), end);
      }
    }
    commit_full_blocks(*r);
    save_to_disk(*r, /*everything=*/false);
  }
  count_step(decode_rows, prefill_tokens, step_ms);
  record_step(start, end, predicted_ms, std::move(rows));
  drop_finished();
}

// Samples the request's next token, within its constraint when it has one. False (the request
// failed) when the constraint throws or leaves no token of the vocabulary.
bool LoopCore::sample_token(Request& r, const float* logits, engine::SampledToken& s,
                            Clock::time_point now) {
  TokenConstraint* c = r.params.constraint.get();
  try {
    s = r.sampler->sample(logits, info_.n_vocab, r.tokens, c ? c->allowed() : nullptr);
    if (s.id >= 0 && c) c->accept(s.id);
  } catch (const engine::ConstraintBudgetExceeded& e) {
    r.failed_by_request = true;
    finish(r, FinishReason::Failed, std::string("output constraint failed: ") + e.what(), now);
    return false;
  } catch (const std::exception& e) {
    finish(r, FinishReason::Failed, std::string("output constraint failed: ") + e.what(), now);
    return false;
  }
  if (s.id < 0) {
    finish(r, FinishReason::Failed,
           "the output constraint allows no token of this model's vocabulary here (the grammar "
           "needs text that no token spells)",
           now);
    return false;
  }
  return true;
}

void LoopCore::emit_token(Request& r, const float* logits, Clock::time_point now) {
  engine::SampledToken s;
  if (!sample_token(r, logits, s, now)) return;
  // A request resumed from a park mid-decode is Prefilling again but has had its first token.
  const bool first = r.first_token.time_since_epoch().count() == 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (first) {
      metrics_.time_to_first_token.observe(ms_between(r.arrival, now) / 1000.0);
    } else {
      double gap = ms_between(r.last_token, now) / 1000.0;
      metrics_.inter_token_latency.observe(gap);
      metrics_.max_decode_gap_seconds = std::max(metrics_.max_decode_gap_seconds, gap);
    }
  }
  if (!first) note_gap(r, ms_between(r.last_token, now));
  if (r.state == RequestState::Prefilling) {
    r.state = RequestState::Decoding;
    r.channel->set_state(RequestState::Decoding);
  }
  if (first) {
    r.first_token = now;
    log::info("req={} first token after {:.1f} ms (prompt {} tokens, {} cached)", r.id,
              ms_between(r.arrival, now), r.n_prompt, r.cached_tokens);
    note(r, "first_token", fmt::format("after {:.0f} ms", ms_between(r.arrival, now)));
  }
  r.last_token = now;
  r.last_token_step = live_->next_seq();  // the record of this step will have this seq
  const auto& eog = info_.eog_ids;
  if (!r.params.ignore_eos && std::find(eog.begin(), eog.end(), s.id) != eog.end()) {
    finish(r, FinishReason::Stop, "", now);
    return;
  }
  r.tokens.push_back(s.id);
  ++r.generated;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++metrics_.generation_tokens_total;
  }
  TokenEvent ev{s.id, s.logprob, std::move(s.top), {}};
  std::string condition_error;
  const bool stop = stop_condition_met(r, ev, condition_error);
  if (!r.channel->try_push_token(std::move(ev))) {
    finish(r, FinishReason::Failed, "output channel full (client not reading)", now);
    return;
  }
  if (!condition_error.empty()) {
    finish(r, FinishReason::Failed, fmt::format("stop condition failed: {}", condition_error), now);
    return;
  }
  if (stop) {
    finish(r, FinishReason::Stop, "", now);
    return;
  }
  if (r.params.constraint && r.params.constraint->complete()) {
    finish(r, FinishReason::Stop, "", now);  // only an end could follow: skip sampling it
  } else if (r.generated >= r.params.max_tokens) {
    finish(r, FinishReason::Length, "", now);
  } else if (static_cast<int32_t>(r.tokens.size()) >= config_.ctx) {
    finish(r, FinishReason::Length, "", now);
  }
}

// Asked before the token's event is queued, to give the event its text; the request ends
// after the event, so the deciding token still reaches the client, and before the length
// checks, so a stop string that completes on the last allowed token still reads as a stop. The
// condition is server code running on this thread: an exception from it (in `error`) fails only
// its own request.
bool LoopCore::stop_condition_met(Request& r, TokenEvent& ev, std::string& error) {
  if (!r.params.stop) return false;
  try {
    return r.params.stop->on_token(ev.token, ev.text);
  } catch (const std::exception& e) {
    error = *e.what() != '\0' ? e.what() : "an exception without a message";
    return false;
  }
}

}  // namespace baton::sched
