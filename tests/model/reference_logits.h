#pragma once
// llama.cpp's logits for every position of a prompt ("BLGT" files next to the reference models
// in ../shared/models, format in their README), and baton's logits for the same positions.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
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

}  // namespace baton::testing
