#pragma once
// llama.cpp's logits for every position of a prompt ("BLGT" files next to the reference models
// in ../shared/models, format in their README), and baton's logits for the same positions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <ostream>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace baton::testing {

struct Reference {
  int32_t n_vocab = 0;
  std::vector<int32_t> ids;
  std::vector<std::vector<float>> rows;  // rows[p]: logits after ids[0..p]
};

// Reads the "BLGT" file; empty ids when the file is malformed.
inline Reference read_reference(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  Reference ref;
  size_t at = 0;
  auto u32 = [&] {
    uint32_t v = 0;
    if (at + 4 <= bytes.size()) std::memcpy(&v, bytes.data() + at, 4);
    at += 4;
    return v;
  };
  if (bytes.size() < 16 || std::memcmp(bytes.data(), "BLGT", 4) != 0) return ref;
  at = 4;
  ref.n_vocab = int32_t(u32());
  const uint32_t n_tokens = u32(), n_rows = u32();
  if (bytes.size() != 16 + 4 * n_tokens + size_t(n_rows) * (4 + 4 * size_t(ref.n_vocab))) {
    return ref;
  }
  for (uint32_t i = 0; i < n_tokens; ++i) ref.ids.push_back(int32_t(u32()));
  ref.rows.resize(n_tokens);
  for (uint32_t r = 0; r < n_rows; ++r) {
    const uint32_t pos = u32();
    if (pos >= n_tokens) return {};
    ref.rows[pos].resize(size_t(ref.n_vocab));
    std::memcpy(ref.rows[pos].data(), bytes.data() + at, 4 * size_t(ref.n_vocab));
    at += 4 * size_t(ref.n_vocab);
  }
  return ref;
}

inline std::vector<double> log_softmax(const std::vector<float>& l) {
  const double mx = *std::max_element(l.begin(), l.end());
  double sum = 0;
  for (float v : l) sum += std::exp(double(v) - mx);
  std::vector<double> out(l.size());
  for (size_t i = 0; i < l.size(); ++i) out[i] = double(l[i]) - mx - std::log(sum);
  return out;
}

// Logits after every prefix of ids: one token per step, all in one sequence's KV blocks.
inline std::vector<std::vector<float>> logits_per_position(engine::Engine& eng,
                                                           const std::vector<int32_t>& ids) {
  const int32_t bs = eng.info().block_size;
  const int32_t n_blocks = (int32_t(ids.size()) + bs - 1) / bs;
  eng.allocate_kv(n_blocks);
  engine::SeqChunk seq;
  seq.request_id = 1;
  for (int32_t b = 0; b < n_blocks; ++b) seq.block_table.push_back(b);
  seq.want_logits = true;
  std::vector<std::vector<float>> out;
  for (size_t p = 0; p < ids.size(); ++p) {
    seq.start_pos = int32_t(p);
    seq.tokens = {ids[p]};
    engine::StepBatch batch;
    batch.seqs.push_back(seq);
    engine::StepOutput step;
    eng.forward(batch, step);
    out.push_back(step.logits.at(0));
  }
  return out;
}

struct ArchCase {
  const char* file;  // the model FILE.gguf and its reference FILE.logits
  // Max |log-softmax difference| over a position's five most likely tokens (by the reference),
  // the README's measure, allowed at every position but the router flips below.
  double bound;
  // Positions allowed above the bound: where a router's k-th and next expert are near a tie,
  // 8-bit rounding of the activations (baton's and llama.cpp's differ in their last bits) can
  // pick another expert, and that position moves by tenths (a dense model's positions can
  // cross the bound by the same rounding). Even there the error stays under `cap`; a wrong
  // expert layout or gating moves every position by far more.
  int max_flips;
  double cap;
  // The median over positions of the same measure: router flips move single positions, a wrong
  // feature (window, sinks, YaRN, a bias) moves the median by a logprob or more (the README's
  // max/median table).
  double median;
};

// A reference file's name as a gtest parameter label (no '-').
inline std::string test_label(std::string file) {
  std::replace(file.begin(), file.end(), '-', '_');
  return file;
}

inline void PrintTo(const ArchCase& c, std::ostream* os) {
  *os << c.file;
}

// The five most likely tokens of a log-softmax row, most likely first.
inline std::vector<size_t> top5(const std::vector<double>& lp) {
  std::vector<size_t> order(lp.size());
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + 5, order.end(),
                    [&](size_t a, size_t b) { return lp[a] > lp[b]; });
  order.resize(5);
  return order;
}

// baton's logits on ref.ids against every row the reference holds, by c's bounds; prints the
// measured figures.
inline void expect_matches_reference(const ArchCase& c, engine::Engine& eng, const Reference& ref) {
  ASSERT_EQ(eng.info().n_vocab, ref.n_vocab);
  const auto got = logits_per_position(eng, ref.ids);
  double worst = 0, worst_kept = 0;
  int flips = 0, compared_argmax = 0, rows = 0;
  std::vector<double> errs;
  for (size_t p = 0; p < ref.ids.size(); ++p) {
    if (ref.rows[p].empty()) continue;
    ++rows;
    const auto want = log_softmax(ref.rows[p]);
    const auto have = log_softmax(got[p]);
    const auto top = top5(want);
    double err = 0;
    for (size_t i : top) err = std::max(err, std::abs(want[i] - have[i]));
    worst = std::max(worst, err);
    errs.push_back(err);
    EXPECT_LE(err, c.cap) << c.file << " position " << p;
    if (err > c.bound) {
      ++flips;
      std::printf("[ measure  ] %s position %zu: %.4f (above the bound)\n", c.file, p, err);
      continue;
    }
    worst_kept = std::max(worst_kept, err);
    // Greedy choice: must agree wherever the reference's top two are further apart than two
    // bounds, since then no error within the bound can swap them.
    if (want[top[0]] - want[top[1]] > 2 * c.bound) {
      ++compared_argmax;
      EXPECT_EQ(std::max_element(have.begin(), have.end()) - have.begin(),
                static_cast<std::ptrdiff_t>(top[0]))
          << c.file << " position " << p;
    }
  }
  std::sort(errs.begin(), errs.end());
  const double median = errs.empty() ? 0 : errs[errs.size() / 2];
  std::printf(
      "[ measure  ] %s: max |d logprob| over the top 5: %.5f, %.5f without the %d position(s) "
      "above the bound %.3f; median %.5f; argmax compared at %d of %d\n",
      c.file, worst, worst_kept, flips, c.bound, median, compared_argmax, rows);
  EXPECT_GE(rows, 8) << c.file << ": the reference holds too few rows";
  EXPECT_LE(median, c.median) << c.file;
  EXPECT_LE(flips, c.max_flips) << c.file;
  EXPECT_GE(compared_argmax, rows / 3) << c.file << ": too few positions to check the argmax";
}

}  // namespace baton::testing
