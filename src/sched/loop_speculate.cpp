// Lossless speculation (--speculate ngram): a decoding request's row carries tokens drafted by
// an n-gram lookup over its own sequence, the engine returns logits for every row, and the
// tokens are sampled one position at a time exactly as plain decoding would sample them (the
// same sampler, RNG stream, constraint and stop condition, each advanced only by tokens that
// are kept). A draft is kept while it equals the token sampled before it; the first sample that
// differs is kept in its place and the rest is dropped. Batch-invariant kernels make every
// row's logits bit-identical to a decode of that position alone, so the output is the same
// bytes as without speculation, for greedy and sampled requests alike.
//
// Drafts never cost another request time: they are added only to steps with no prefill work
// (where a queued or prefilling request is waiting, the rows are theirs), within the latency
// target as the cost model predicts it, only into KV blocks that are free (never by evicting a
// cached prefix), and never past what the request may still generate or its channel can take.
// Models with sequence state (recurrent layers, windowed KV) cannot roll a state back and never
// speculate.
#include <algorithm>

#include "sched/loop_core.h"
#include "sched/ngram_drafter.h"

namespace baton::sched {

bool LoopCore::may_speculate(const StepPlan& plan) const {
  return config_.speculate != SpeculateMode::Off && config_.draft_max > 0 &&
         info_.state_bytes_per_seq == 0 && plan.prefill.empty() && !plan.decode.empty();
}

// Each draft pays a row in this step for a chance to save a whole step later: it is worth it
// while the chance that it and every draft before it are right, times the step it would save,
// covers its row. The chance per draft is the request's own record so far (with one right and
// one wrong assumed, so a new request starts at even odds). On a model so small that a row costs
// a good part of a step this keeps drafts short or off; on a large one, where a step is mostly
// reading the weights, drafts run long. A request's first draft is always made: while every
// decode step has the same rows, the fit cannot tell a row's cost from the step's fixed cost,
// and only steps with drafts show it.
void LoopCore::worth_drafting(const Request& r, int32_t start_pos, const StepShape& shape,
                              std::vector<int32_t>& draft) const {
  const CostModel& m = costs_.model();
  const double right =
      (static_cast<double>(r.accepted_tokens) + 1) / (static_cast<double>(r.drafted_tokens) + 2);
  const double step_ms = m.predict_ms(shape);
  double chance = 1;
  size_t worth = 0;
  for (size_t j = 0; j < draft.size(); ++j) {
    chance *= right;
    const double kpairs = attention_kpairs(start_pos + 1 + static_cast<int32_t>(j), 1);
    if (chance * step_ms < m.ms_per_decode_row + m.ms_per_kpair * kpairs) break;
    worth = j + 1;
  }
  if (r.drafted_tokens == 0) worth = std::max<size_t>(worth, std::min<size_t>(draft.size(), 1));
  draft.resize(worth);
}

void LoopCore::add_drafts(engine::StepBatch& batch) {
  StepShape shape = shape_of(batch);
  const bool timed = config_.itl_target_ms > 0 && costs_.model().measured();
  for (auto& c : batch.seqs) {
    Request* r = find_running(c.request_id);
    if (!r || !r->decoding() || c.tokens.size() != 1) continue;
    if (r->draft_length <= 0) r->draft_length = std::min(4, config_.draft_max);
    // Room: what it may still generate (the sampled token after the drafts is one), what its
    // channel takes now, and the context.
    int32_t room = std::min({r->draft_length, r->params.max_tokens - r->generated - 1,
                             config_.ctx - static_cast<int32_t>(r->tokens.size()) - 1});
    room = std::min<int64_t>(room, static_cast<int64_t>(r->channel->room()) - 1);
    if (room <= 0) continue;
    NgramDraftOptions o;
    o.max_draft = room;
    std::vector<int32_t> draft = ngram_draft(r->tokens, o);
    if (draft.empty() && config_.speculate == SpeculateMode::Suffix) {
      draft = corpus_.draft(r->tokens, o);
    }
    // Only blocks nobody has cached: a draft must not evict a reusable prefix.
    const int32_t bs = pool_.block_size();
    while (!draft.empty()) {
      const int32_t need = (c.start_pos + 1 + static_cast<int32_t>(draft.size()) + bs - 1) / bs -
                           static_cast<int32_t>(r->block_table.size());
      if (need <= pool_.free_uncached()) break;
      draft.pop_back();
    }
    if (costs_.model().fitted) worth_drafting(*r, c.start_pos, shape, draft);
    if (timed) {
      while (!draft.empty()) {
        StepShape with = shape;
        for (size_t i = 0; i < draft.size(); ++i) {
          with.add_decode(c.start_pos + 1 + static_cast<int32_t>(i));
        }
        if (costs_.model().predict_ms(with) <= config_.itl_target_ms) break;
        draft.pop_back();
      }
    }
    if (draft.empty() || !grow_table(*r, c.start_pos + 1 + static_cast<int32_t>(draft.size()))) {
      continue;
    }
    for (size_t i = 0; i < draft.size(); ++i) shape.add_decode(c.start_pos + 1 + int32_t(i));
    c.tokens.insert(c.tokens.end(), draft.begin(), draft.end());
    c.block_table = r->block_table;
    c.logit_rows = static_cast<int32_t>(c.tokens.size());
  }
}

void LoopCore::remember_output(const Request& r) {
  if (config_.speculate != SpeculateMode::Suffix || r.generated < 2) return;
  const auto from = static_cast<size_t>(r.n_prompt);
  if (from < r.tokens.size()) corpus_.add(std::span<const int32_t>(r.tokens).subspan(from));
}

void LoopCore::verify_drafts(Request& r, const engine::SeqChunk& c,
                             const std::vector<std::vector<float>>& logits, size_t first,
                             Clock::time_point now) {
  const auto drafted = static_cast<int32_t>(c.tokens.size()) - 1;
  int32_t accepted = 0;
  for (int32_t i = 0; i <= drafted; ++i) {
    emit_token(r, logits[first + static_cast<size_t>(i)].data(), now);
    if (ended(r.state) || i == drafted) break;
    if (r.tokens.back() != c.tokens[static_cast<size_t>(i) + 1]) break;
    // The draft was right: its KV, computed in this step, is the sequence's.
    ++accepted;
    ++r.n_kv;
  }
  r.drafted_tokens += drafted;
  r.accepted_tokens += accepted;
  r.draft_length = next_draft_length(r.draft_length, drafted, accepted, config_.draft_max);
  std::lock_guard<std::mutex> lock(mu_);
  metrics_.spec_drafted_tokens_total += static_cast<uint64_t>(drafted);
  metrics_.spec_accepted_tokens_total += static_cast<uint64_t>(accepted);
  ++metrics_.spec_verify_rows_total;
  metrics_.spec_tokens_per_verify.observe(accepted + 1);
}

}  // namespace baton::sched
