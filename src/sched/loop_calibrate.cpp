// The default latency target: a few steps of a scratch sequence at start measure what one decode
// step costs on this machine and model, and the target is a multiple of it. A fixed number of
// milliseconds would be too tight for a large model (every mixed step at the minimum quantum)
// and too loose for a small one (a stream waits many of its own gaps). The same steps fault the
// weights into memory and seed the cost model, so the first mixed step is sized from
// measurements too.
#include <algorithm>
#include <limits>

#include "sched/loop_core.h"
#include "util/log.h"

namespace baton::sched {

namespace {

// Never a real request's id (those count up from 1), so the engine keeps their state apart.
constexpr uint64_t kDecoderId = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kPrefillerId = kDecoderId - 1;
constexpr int32_t kWarmTokens = 32;  // first touch of the weights: slow, not measured
constexpr int32_t kDecodeSteps = 5;
// Mixed steps (a decode row beside a chunk) as the target will size them, small and larger, so
// the per-token cost is told from the fixed one; then a step of prefill alone.
constexpr int32_t kMixedChunks[] = {16, 48};
constexpr int32_t kPrefillChunk = 64;
// A gap below this (50 tokens/s) is faster than anyone reads a stream; holding a small model's
// steps under it would only cut its prefill into tiny chunks.
constexpr double kFloorMs = 20;

}  // namespace

void LoopCore::calibrate_itl_target() {
  const int32_t bs = pool_.block_size();
  int32_t prefill_positions = kPrefillChunk;
  for (int32_t c : kMixedChunks) prefill_positions += c;
  Scratch decoder, prefiller;
  decoder.seq.request_id = kDecoderId;
  prefiller.seq.request_id = kPrefillerId;
  const int32_t decoder_positions =
      kWarmTokens + kDecodeSteps + static_cast<int32_t>(std::size(kMixedChunks));
  bool room = true;
  for (auto [s, n] : {std::pair{&decoder, decoder_positions}, {&prefiller, prefill_positions}}) {
    while (room && static_cast<int32_t>(s->seq.block_table.size()) * bs < n) {
      auto b = pool_.allocate();
      room = b.has_value();
      if (room) s->seq.block_table.push_back(*b);
    }
  }
  std::vector<double> decode_ms;
  std::string failure = "the KV pool is too small for its scratch sequences";
  if (room) {
    try {
      decode_ms = run_calibration(decoder, prefiller);
    } catch (const std::exception& e) {
      failure = e.what();
    }
  }
  for (const auto* s : {&decoder, &prefiller}) {
    engine_.release_sequence(s->seq.request_id);
    for (int32_t b : s->seq.block_table) pool_.release(b);
  }
  if (decode_ms.empty()) {
    log::warn(
        "itl target off: measuring the decode step at start failed ({}); set "
        "--itl-target-ms N to have one",
        failure);
    return;
  }
  std::nth_element(decode_ms.begin(), decode_ms.begin() + decode_ms.size() / 2, decode_ms.end());
  const double step = decode_ms[decode_ms.size() / 2];
  const double multiple = config_.itl_target_decode_steps * step;
  config_.itl_target_ms = std::max(multiple, kFloorMs);
  log::info(
      "itl target {:.0f} ms = {}: a mixed step's prefill share is sized to it "
      "(--itl-target-ms N or off overrides)",
      config_.itl_target_ms,
      multiple >= kFloorMs
          ? fmt::format("{:g} x the decode step measured at start ({:.1f} ms)",
                        config_.itl_target_decode_steps, step)
          : fmt::format("the floor, above {:g} x the decode step measured at start "
                        "({:.2f} ms)",
                        config_.itl_target_decode_steps, step));
}

// Runs the scratch sequences through a warm-up, decode steps, mixed steps and a prefill step,
// feeding the cost model; returns the decode steps' times in ms.
std::vector<double> LoopCore::run_calibration(Scratch& decoder, Scratch& prefiller) {
  const int32_t vocab = std::max(1, info_.n_vocab);
  // n tokens of each scratch (0: not in the step) in one forward pass; its time in ms.
  auto run = [&](int32_t n_decoder, int32_t n_prefiller, bool observe) {
    engine::StepBatch batch;
    StepShape shape;
    for (auto [s, n] : {std::pair{&decoder, n_decoder}, {&prefiller, n_prefiller}}) {
      if (n == 0) continue;
      s->seq.start_pos = s->pos;
      s->seq.tokens.clear();
      // Varied ids: any token costs the same, but a constant one could take a path that a
      // real prompt does not.
      for (int32_t i = 0; i < n; ++i) s->seq.tokens.push_back((s->pos + i) * 7919 % vocab);
      s->seq.want_logits = true;
      batch.seqs.push_back(s->seq);
      if (s == &decoder && s->pos > 0) {
        shape.add_decode(s->pos);
      } else {
        shape.add_prefill(s->pos, n);
      }
      s->pos += n;
    }
    engine::StepOutput out;
    const auto start = Clock::now();
    engine_.forward(batch, out);
    const double ms = ms_between(start, Clock::now());
    if (observe) costs_.observe(shape, ms);
    return ms;
  };
  run(kWarmTokens, 0, /*observe=*/false);
  std::vector<double> decode_ms;
  for (int32_t i = 0; i < kDecodeSteps; ++i) decode_ms.push_back(run(1, 0, /*observe=*/true));
  for (int32_t c : kMixedChunks) run(1, c, /*observe=*/true);
  run(0, kPrefillChunk, /*observe=*/true);
  return decode_ms;
}

}  // namespace baton::sched
