#pragma once
// Helpers for scheduler tests: draining request channels and checking the step invariants on
// the batches a FakeEngine recorded.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "sched/engine_loop.h"

namespace baton::sched::testing {

struct Outcome {
  std::vector<int32_t> tokens;
  std::string text;  // the token events' text (from the request's StopCondition)
  bool finished = false;
  Event final;
};

// Reads whatever is already queued (no waiting).
inline void drain_ready(RequestHandle& h, Outcome& o) {
  Event e;
  while (!o.finished && h.next(e, std::chrono::milliseconds(0))) {
    if (e.kind == Event::Kind::Token) {
      o.tokens.push_back(e.token.token);
      o.text += e.token.text;
    } else {
      o.finished = true;
      o.final = e;
    }
  }
}

// Reads until Finished or `limit` passes (a hang shows as finished == false).
inline Outcome drain_all(RequestHandle& h,
                         std::chrono::milliseconds limit = std::chrono::seconds(30)) {
  Outcome o;
  auto until = std::chrono::steady_clock::now() + limit;
  Event e;
  while (!o.finished && std::chrono::steady_clock::now() < until) {
    if (!h.next(e, std::chrono::milliseconds(50))) continue;
    if (e.kind == Event::Kind::Token) {
      o.tokens.push_back(e.token.token);
    } else {
      o.finished = true;
      o.final = e;
    }
  }
  return o;
}

struct Appearance {
  size_t step;
  int32_t start_pos;
  int32_t n_tokens;
};

inline std::map<uint64_t, std::vector<Appearance>> appearances(
    const std::vector<engine::StepBatch>& steps) {
  std::map<uint64_t, std::vector<Appearance>> out;
  for (size_t s = 0; s < steps.size(); ++s) {
    for (const auto& c : steps[s].seqs) {
      out[c.request_id].push_back({s, c.start_pos, static_cast<int32_t>(c.tokens.size())});
    }
  }
  return out;
}

// Invariants for every request of known prompt length: its chunks are contiguous positions;
// the decode rows (positions >= prompt) run in consecutive steps right after the final prefill
// chunk; no step carries one request twice. A request in `parked` may also leave for a while and
// come back at another position (a resume recomputes from a lower one, or reuses a longer prefix
// that another request put in the cache meanwhile), so for it only contiguity (or such a
// restart) is checked. Returns "" when all hold.
inline std::string check_invariants(const std::vector<engine::StepBatch>& steps,
                                    const std::map<uint64_t, int32_t>& prompt_len,
                                    const std::set<uint64_t>& parked = {}) {
  for (size_t s = 0; s < steps.size(); ++s) {
    std::map<uint64_t, int> seen;
    for (const auto& c : steps[s].seqs) {
      if (++seen[c.request_id] > 1) {
        return "step " + std::to_string(s) + " carries request " + std::to_string(c.request_id) +
               " twice";
      }
    }
  }
  for (const auto& [id, apps] : appearances(steps)) {
    auto it = prompt_len.find(id);
    if (it == prompt_len.end()) continue;
    const int32_t n_prompt = it->second;
    const bool may_park = parked.count(id) != 0;
    int32_t pos = -1;
    long last_step = -1;
    bool in_decode = false;
    for (const auto& a : apps) {
      const std::string where = "request " + std::to_string(id) + " step " + std::to_string(a.step);
      const bool restart = may_park && pos >= 0 && a.start_pos != pos;
      if (pos >= 0 && a.start_pos != pos && !restart) return where + ": positions not contiguous";
      pos = a.start_pos + a.n_tokens;
      if (may_park) continue;
      const bool decode = a.start_pos >= n_prompt;
      if (decode && a.n_tokens != 1) return where + ": decode row with several tokens";
      if (decode && static_cast<long>(a.step) != last_step + 1) {
        return where + ": decode row not in the step after its previous row (missed " +
               std::to_string(static_cast<long>(a.step) - last_step - 1) + " steps)";
      }
      if (!decode && in_decode) return where + ": prefill after decode";
      in_decode = in_decode || decode || a.start_pos + a.n_tokens == n_prompt;
      last_step = static_cast<long>(a.step);
    }
  }
  return "";
}

// Steps in which request `id` has a row.
inline std::vector<size_t> steps_with(const std::vector<engine::StepBatch>& steps, uint64_t id) {
  std::vector<size_t> out;
  for (size_t s = 0; s < steps.size(); ++s) {
    for (const auto& c : steps[s].seqs) {
      if (c.request_id == id) out.push_back(s);
    }
  }
  return out;
}

inline GenerateRequest greedy(std::vector<int32_t> prompt, int32_t max_tokens,
                              bool ignore_eos = true) {
  GenerateRequest r;
  r.prompt = std::move(prompt);
  r.max_tokens = max_tokens;
  r.sampling.temperature = 0;
  r.ignore_eos = ignore_eos;
  return r;
}

inline std::vector<int32_t> make_prompt(int32_t n, int32_t salt, int32_t n_vocab = 256) {
  std::vector<int32_t> p(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) p[i] = 3 + (i * 7 + salt * 13 + (i * i) % 11) % (n_vocab - 3);
  return p;
}

}  // namespace baton::sched::testing
