#pragma once
// What a model will take of memory once it serves, known before its weights are rewritten into
// tiles (the slow part of a load): the server plans its KV pool from this against what the host
// can give (sched/memory_plan.h) and refuses settings that cannot fit before it spends a minute
// loading a file that would then be killed for memory.
#include <cstdint>

#include "gguf/gguf_file.h"
#include "model/hparams.h"

namespace baton::model {

struct ModelFootprint {
  uint64_t file_bytes = 0;     // the GGUF file (its mapping counts toward an address-space limit)
  uint64_t weights_bytes = 0;  // every tensor's data: resident in tiles or in the page cache
  uint64_t tiled_bytes = 0;    // of those, rewritten into anonymous memory at load (0: none)
  int32_t block_size = 16;
  uint64_t kv_bytes_per_block = 0;  // the block cache: full-attention layers, K and V
  // Per running sequence, beside its blocks: a windowed model's ring (its window plus one
  // prefill quantum of positions) and a hybrid model's recurrent state.
  uint64_t window_bytes_per_position = 0;
  int32_t window = 0;
  uint64_t state_bytes_per_seq = 0;
  uint64_t checkpoint_bytes = 0;  // one state checkpoint (0: a model without sequence state)
  // Activations of one batch row through every layer (buffers reused pass to pass), and of one
  // row of logits.
  uint64_t activation_bytes_per_row = 0;
  uint64_t logits_bytes_per_row = 0;
  int32_t n_ctx_train = 0;
};

// The activation buffers of one row (model/llama_model_acts.h: the residual stream, the
// projections, the widest FFN of the model, their fused outputs), in bytes.
uint64_t activation_bytes_per_row(const HParams& h);

// Every tensor's data bytes in the file.
uint64_t tensor_bytes(const gguf::GgufFile& f);

}  // namespace baton::model
