#include "engine/generate.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <stdexcept>

namespace baton::engine {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

GenerateResult generate(Engine& engine, const std::vector<int32_t>& prompt,
                        const GenerateOptions& opts, const std::function<void(int32_t)>& on_token) {
  if (prompt.empty()) throw std::runtime_error("generate: the prompt has no tokens (add BOS)");
  const EngineInfo info = engine.info();
  const int32_t max_new = std::max(0, opts.max_tokens);
  const int64_t total = static_cast<int64_t>(prompt.size()) + max_new;
  const int32_t n_blocks = static_cast<int32_t>((total + info.block_size - 1) / info.block_size);
  engine.allocate_kv(n_blocks);
  SeqChunk chunk;
  chunk.request_id = 1;
  chunk.block_table.resize(n_blocks);
  std::iota(chunk.block_table.begin(), chunk.block_table.end(), 0);

  GenerateResult res;
  StepOutput out;
  const auto t0 = std::chrono::steady_clock::now();
  const size_t step = static_cast<size_t>(std::max(1, opts.prefill_chunk));
  for (size_t i = 0; i < prompt.size(); i += step) {
    const size_t n = std::min(step, prompt.size() - i);
    chunk.start_pos = static_cast<int32_t>(i);
    chunk.tokens.assign(prompt.begin() + i, prompt.begin() + i + n);
    chunk.want_logits = i + n == prompt.size();
    StepBatch b;
    b.seqs.push_back(chunk);
    engine.forward(b, out);
  }
  res.prompt_ms = ms_since(t0);
  if (out.logits.size() != 1) throw std::runtime_error("generate: engine returned no logits");
  res.first_logits = out.logits[0];

  const auto t1 = std::chrono::steady_clock::now();
  Sampler sampler(opts.sampling);
  std::vector<int32_t> history = prompt;
  for (int32_t k = 0; k < max_new; ++k) {
    const auto tok = sampler.sample(out.logits[0].data(), info.n_vocab, history,
                                    opts.constraint ? opts.constraint->allowed() : nullptr);
    if (tok.id < 0) throw std::runtime_error("generate: the constraint allows no token here");
    if (opts.constraint) opts.constraint->accept(tok.id);
    if (opts.stop_at_eog &&
        std::find(info.eog_ids.begin(), info.eog_ids.end(), tok.id) != info.eog_ids.end()) {
      res.stopped_at_eog = true;
      break;
    }
    res.tokens.push_back(tok.id);
    history.push_back(tok.id);
    if (on_token) on_token(tok.id);
    if (opts.constraint && opts.constraint->complete()) {
      res.complete = true;
      break;
    }
    if (k + 1 == max_new) break;
    chunk.start_pos = static_cast<int32_t>(history.size() - 1);
    chunk.tokens.assign(1, tok.id);
    chunk.want_logits = true;
    StepBatch b;
    b.seqs.push_back(chunk);
    engine.forward(b, out);
  }
  res.gen_ms = ms_since(t1);
  return res;
}

}  // namespace baton::engine
