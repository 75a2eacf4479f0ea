#pragma once
// LlamaModel's activation buffers, shared by the files that implement the model's forward pass
// (llama_model.cpp) and its sequence state (llama_model_state.cpp). Internal to model/.
#include <cstdint>
#include <utility>
#include <vector>

#include "model/delta_net.h"
#include "model/llama_model.h"
#include "model/moe.h"
#include "model/shared_expert.h"

namespace baton::model {

// Activations of every row of one forward pass (row-major, one row per token). Kept between
// passes: a 512-token MoE prefill needs ~120 MB of them, and allocating that afresh each pass
// had the kernel zero new pages for a third of the pass's time. Every buffer is written before
// it is read, so what a previous pass left in it cannot reach a result.
struct LlamaModel::Acts {
  int64_t n = 0;
  std::vector<int32_t> pos, row_seq;
  std::vector<const int32_t*> row_table;
  std::vector<const int32_t*> row_window_table;    // windowed models: each row's window blocks
  std::vector<std::pair<int64_t, int32_t>> tiles;  // (first row, rows) within one sequence
  std::vector<float> x, xn, q, k, v, att, tmp, gate, up, cos_v, sin_v;
  std::vector<float> cos_swa, sin_swa;  // the windowed layers' rope, when it has its own
  std::vector<float> fused;             // output of a stacked matmul (q|k|v or gate|up rows)
  MoeScratch moe;
  // Hybrid models: each sequence's first row and recurrent state, the gated attention's gates.
  std::vector<DeltaNetSeq> seqs;
  std::vector<float*> seq_state;
  std::vector<std::vector<std::pair<int32_t, float*>>> seq_captures;  // (rows, slot's state)
  std::vector<float> qgate;
  DeltaNetScratch dnet;
  SharedExpertScratch shexp;

  // Forgets the previous pass's rows, keeping the buffers' memory.
  void begin_pass() {
    n = 0;
    pos.clear();
    row_seq.clear();
    row_table.clear();
    row_window_table.clear();
    tiles.clear();
    seqs.clear();
    seq_state.clear();
    seq_captures.clear();
  }
};

}  // namespace baton::model
