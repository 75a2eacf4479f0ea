// LoopCore: admitting requests (prefix reuse), committing their KV to the prefix cache, and
// ending them (events, metrics, logs, blocks released).
#include <fmt/format.h>

#include <algorithm>

#include "sched/loop_core.h"
#include "util/log.h"

namespace baton::sched {

namespace {

const char* status_label(FinishReason why) {
  switch (why) {
    case FinishReason::Stop:
    case FinishReason::Length:
      return "ok";
    case FinishReason::Cancelled:
    case FinishReason::Shutdown:
      return "cancelled";
    case FinishReason::Failed:
      return "failed";
  }
  return "failed";
}

}  // namespace

void LoopCore::drop_finished() {
  std::erase_if(running_, [](const ReqPtr& r) { return ended(r->state); });
  std::erase_if(parked_, [](const ReqPtr& r) { return ended(r->state); });
}

void LoopCore::reap_waiting() {
  std::vector<std::pair<ReqPtr, FinishReason>> gone;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      if ((*it)->channel->cancel_requested() || !admitting_) {
        gone.emplace_back(*it, admitting_ ? FinishReason::Cancelled : FinishReason::Shutdown);
        it = waiting_.erase(it);
      } else {
        ++it;
      }
    }
  }
  const auto now = Clock::now();
  for (auto& [r, why] : gone) finish(*r, why, "", now);
}

void LoopCore::admit(const std::vector<uint64_t>& ids, Clock::time_point now) {
  for (uint64_t id : ids) {
    auto p =
        std::find_if(parked_.begin(), parked_.end(), [id](const ReqPtr& q) { return q->id == id; });
    if (p != parked_.end()) {
      ReqPtr r = *p;
      parked_.erase(p);
      resume(r, now);
      continue;
    }
    ReqPtr r;
    {
      std::lock_guard<std::mutex> lock(mu_);
      // The plan admits a prefix of the queue, and only this thread pops it.
      if (waiting_.empty() || waiting_.front()->id != id) break;
      r = waiting_.front();
      waiting_.pop_front();
    }
    r->state = RequestState::Prefilling;
    r->channel->set_state(RequestState::Prefilling);
    r->admitted = now;
    attach_prefix(*r);
    r->cached_tokens = r->n_kv;
    {
      std::lock_guard<std::mutex> lock(mu_);
      metrics_.queue_time.observe(ms_between(r->arrival, now) / 1000.0);
      metrics_.max_queue_wait_ms =
          std::max(metrics_.max_queue_wait_ms, ms_between(r->arrival, now));
      metrics_.prompt_tokens_total += static_cast<uint64_t>(r->n_prompt);
    }
    log::info(
        "req={} admitted: prompt {} tokens, {} reused from cache, max_tokens {}, queued {:.1f} ms",
        r->id, r->n_prompt, r->cached_tokens, r->params.max_tokens, ms_between(r->arrival, now));
    note(*r, "admitted",
         fmt::format("prompt {} tokens, {} cached, queued {:.0f} ms", r->n_prompt, r->cached_tokens,
                     ms_between(r->arrival, now)));
    running_.push_back(std::move(r));
  }
}

// Leaves the slot at a step boundary. Its blocks either stay pinned (within --park-ram-mb), or
// go back to the prefix cache, named, so the resume's lookup reuses whatever is still cached.
// Tokens, sampler and constraint stay, so the resumed request continues exactly where it was.
void LoopCore::park(Request& r, const char* why, bool keep_blocks, Clock::time_point now) {
  // Mid-decode the last sampled token has no KV yet: the resume computes it and samples next.
  if (r.decoding()) r.n_fill = static_cast<int32_t>(r.tokens.size());
  r.parked_position = r.n_kv;
  const auto held = r.block_table.size();
  if (!keep_blocks) forget_kv(r);
  r.state = RequestState::Parked;
  r.channel->set_state(RequestState::Parked);
  r.park_why = why;
  r.parked_since = now;
  r.paused_since.reset();
  r.starved_steps = 0;
  ++r.parks;
  note(r, "parked",
       fmt::format("{} at position {}, blocks {}", why, r.parked_position,
                   keep_blocks ? "kept" : "released"));
  log::info("req={} parked ({}): position {}/{} ({} generated), {} blocks {}, park #{}", r.id, why,
            r.parked_position, r.n_fill, r.generated, held,
            keep_blocks ? "kept pinned" : "released to the prefix cache", r.parks);
}

void LoopCore::forget_kv(Request& r) {
  release_blocks(r, /*keep_partial=*/true);
  engine_.release_sequence(r.id);  // it starts again at position 0
  r.n_kv = 0;
  r.n_named_blocks = 0;
  r.chain_hash = pool_.root_hash();
}

bool LoopCore::drop_parked_blocks() {
  // The most recently parked gives its blocks back first: it would resume last.
  for (auto it = parked_.rbegin(); it != parked_.rend(); ++it) {
    Request& r = **it;
    if (r.block_table.empty()) continue;
    log::info("req={} parked: {} kept blocks released to the prefix cache (KV pressure)", r.id,
              r.block_table.size());
    forget_kv(r);
    return true;
  }
  return false;
}

void LoopCore::move_parked() {
  for (auto& r : running_) {
    if (r->state == RequestState::Parked) parked_.push_back(r);
  }
  std::erase_if(running_, [](const ReqPtr& r) { return r->state == RequestState::Parked; });
  std::stable_sort(parked_.begin(), parked_.end(),
                   [](const ReqPtr& a, const ReqPtr& b) { return a->seq < b->seq; });
}

void LoopCore::resume(const ReqPtr& r, Clock::time_point now) {
  const double parked_ms = r->parked_since ? ms_between(*r->parked_since, now) : 0;
  r->parked_ms_total += parked_ms;
  r->parked_since.reset();
  r->state = RequestState::Prefilling;
  r->channel->set_state(RequestState::Prefilling);
  if (r->block_table.empty()) attach_prefix(*r);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++metrics_.prefill_resumes_total;
  }
  log::info("req={} resumed after {:.1f} ms parked ({}): {} of {} positions reused, {} to compute",
            r->id, parked_ms, r->park_why, r->n_kv, r->n_fill, r->remaining_prompt());
  note(*r, "resumed",
       fmt::format("after {:.0f} ms, {} of {} positions reused", parked_ms, r->n_kv, r->n_fill));
  running_.push_back(r);
}

void LoopCore::attach_prefix(Request& r) {
  if (!config_.prefix_cache) return;
  std::span<const int32_t> seq(r.tokens.data(), static_cast<size_t>(r.n_fill));
  kv::PrefixMatch m = pool_.lookup(seq, resumable());
  r.block_table = m.blocks;
  r.n_kv = m.full_tokens;
  r.n_named_blocks = static_cast<int32_t>(m.blocks.size());
  r.chain_hash = m.chain_hash;
  r.disk_checked_blocks = 0;
  r.disk_checked_hash = pool_.root_hash();
  // A hybrid's match ends at a checkpointed block, with no partial tail.
  if (states_ && r.n_kv > 0) restore_prefix_state(r);
  if (disk_ && start_disk_load(r, m.tail_block, m.tail_tokens, Clock::now())) return;
  if (m.tail_block >= 0) {
    // The tail block is shared: copy its matching positions into a block of our own.
    if (auto dst = pool_.allocate()) {
      try {
        engine_.copy_block(m.tail_block, *dst, m.tail_tokens);
        r.block_table.push_back(*dst);
        r.n_kv += m.tail_tokens;
      } catch (const std::exception& e) {
        log::warn("req={} prefix tail copy failed, recomputing it: {}", r.id, e.what());
        pool_.release(*dst);
      }
    }
    pool_.release(m.tail_block);
  }
}

void LoopCore::commit_full_blocks(Request& r) {
  if (!config_.prefix_cache) return;
  const int32_t bs = pool_.block_size();
  while ((r.n_named_blocks + 1) * bs <= r.n_kv &&
         r.n_named_blocks < static_cast<int32_t>(r.block_table.size())) {
    std::span<const int32_t> toks(r.tokens.data() + static_cast<size_t>(r.n_named_blocks) * bs,
                                  static_cast<size_t>(bs));
    r.chain_hash = pool_.commit_full(r.block_table[r.n_named_blocks], r.chain_hash, toks);
    ++r.n_named_blocks;
  }
}

void LoopCore::release_blocks(Request& r, bool keep_partial) {
  const int32_t bs = pool_.block_size();
  if (keep_partial && config_.prefix_cache) {
    commit_full_blocks(r);
    save_to_disk(r, /*everything=*/true);
    const int32_t idx = r.n_kv / bs;
    if (r.n_kv % bs != 0 && idx == r.n_named_blocks &&
        idx < static_cast<int32_t>(r.block_table.size())) {
      std::span<const int32_t> toks(r.tokens.data() + static_cast<size_t>(idx) * bs,
                                    static_cast<size_t>(r.n_kv % bs));
      pool_.commit_partial(r.block_table[idx], r.chain_hash, toks);
    }
  }
  // Deepest blocks first, so under pressure the LRU evicts a prefix from its end.
  for (auto it = r.block_table.rbegin(); it != r.block_table.rend(); ++it) pool_.release(*it);
  r.block_table.clear();
}

void LoopCore::finish(Request& r, FinishReason why, const std::string& error,
                      Clock::time_point now) {
  if (ended(r.state)) return;
  const bool was_queued = r.state == RequestState::Queued;
  r.state = why == FinishReason::Failed                                  ? RequestState::Failed
            : (why == FinishReason::Stop || why == FinishReason::Length) ? RequestState::Finished
                                                                         : RequestState::Cancelled;
  release_blocks(r, why != FinishReason::Failed);
  engine_.release_sequence(r.id);
  if (why == FinishReason::Stop || why == FinishReason::Length) remember_output(r);
  Event ev;
  ev.kind = Event::Kind::Finished;
  ev.reason = why;
  ev.error = error;
  ev.request_fault = why == FinishReason::Failed && r.failed_by_request;
  ev.stats = r.stats(now);
  close_stop_condition(r.params.stop.get(), ev);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++metrics_.requests_total[status_label(why)];
    if (r.drafted_tokens > 0) {
      metrics_.spec_request_acceptance.observe(static_cast<double>(r.accepted_tokens) /
                                               static_cast<double>(r.drafted_tokens));
    }
    metrics_.e2e_latency.observe(ev.stats.total_ms / 1000.0);
    if (was_queued) {
      metrics_.max_queue_wait_ms = std::max(metrics_.max_queue_wait_ms, ev.stats.queue_ms);
    } else {
      sessions_.record(r.params.session, r.n_prompt, r.cached_tokens, now);
    }
  }
  auto line = fmt::format(
      "req={} finished: reason={} tokens={} queue={:.1f}ms ttft={:.1f}ms total={:.1f}ms", r.id,
      finish_reason_name(why), r.generated, ev.stats.queue_ms, ev.stats.time_to_first_token_ms,
      ev.stats.total_ms);
  note(r, "finished",
       why == FinishReason::Failed
           ? fmt::format("failed: {}", error)
           : fmt::format("{}, {} tokens", finish_reason_name(why), r.generated));
  if (why == FinishReason::Failed) {
    log::warn("{} error: {}", line, error);
  } else {
    log::info("{}", line);
  }
  // Publish the state before the event so a client that saw Finished also sees the state.
  r.channel->set_state(r.state);
  r.channel->push_final(std::move(ev));
}

}  // namespace baton::sched
