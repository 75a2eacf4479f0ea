#include "cli/bench_sampler.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "engine/rng.h"
#include "engine/sampler.h"

namespace baton::cli {
namespace {

struct Config {
  const char* name;
  engine::SamplingParams p;
};

std::vector<Config> configs() {
  engine::SamplingParams greedy;
  greedy.temperature = 0;
  auto greedy_lp = greedy;
  greedy_lp.logprobs = true;
  greedy_lp.top_logprobs = 5;
  const engine::SamplingParams server;  // a request that sets nothing: temperature 1, no cut
  engine::SamplingParams top_p;         // what many OpenAI clients send
  top_p.top_p = 0.95f;
  engine::SamplingParams run;  // `baton run`'s defaults without its min_p
  run.temperature = 0.8f;
  run.top_k = 40;
  run.top_p = 0.95f;
  auto run_lp = run;
  run_lp.logprobs = true;
  run_lp.top_logprobs = 5;
  auto run_pen = run;
  run_pen.repetition_penalty = 1.1f;
  run_pen.frequency_penalty = 0.2f;
  return {{"greedy", greedy},
          {"greedy + logprobs 5", greedy_lp},
          {"T1 (server default)", server},
          {"T1 p0.95", top_p},
          {"T0.8 k40 p0.95", run},
          {"T0.8 k40 p0.95 + lp 5", run_lp},
          {"T0.8 k40 p0.95 + pen", run_pen}};
}

// Gaussian logits (sd 3: a few hundred tokens carry most of the mass, as with real models'
// flatter steps), several vectors so one call's cache state does not flatter the next.
std::vector<std::vector<float>> random_logits(int32_t n_vocab, int count) {
  engine::Rng rng(n_vocab);
  std::vector<std::vector<float>> out(count, std::vector<float>(n_vocab));
  for (auto& l : out) {
    for (auto& v : l) {
      const double u1 = rng.uniform() + 1e-12, u2 = rng.uniform();
      v = static_cast<float>(3.0 * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307 * u2));
    }
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

std::vector<SamplerBenchRow> bench_sampler(const std::vector<int32_t>& vocab_sizes) {
  using Clock = std::chrono::steady_clock;
  std::vector<SamplerBenchRow> rows;
  for (const int32_t n : vocab_sizes) {
    const auto logits = random_logits(n, 8);
    engine::Rng rng(7);
    std::vector<int32_t> history(64);
    for (auto& t : history) t = static_cast<int32_t>(rng.next() % static_cast<uint64_t>(n));
    for (const auto& c : configs()) {
      engine::Sampler s(c.p);
      std::vector<double> us;
      const auto start = Clock::now();
      // At least 20 calls, then until 200 calls or 0.4 s, whichever comes first.
      while (us.size() < 20 ||
             (us.size() < 200 && Clock::now() - start < std::chrono::milliseconds(400))) {
        const auto& l = logits[us.size() % logits.size()];
        const auto t0 = Clock::now();
        const auto tok = s.sample(l.data(), n, history);
        us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        if (tok.id < 0) throw std::runtime_error("bench sampler: no token sampled");
      }
      rows.push_back({c.name, n, median(us), static_cast<int32_t>(us.size())});
    }
  }
  return rows;
}

}  // namespace baton::cli
