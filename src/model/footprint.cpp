#include "model/footprint.h"

#include <algorithm>

namespace baton::model {

uint64_t activation_bytes_per_row(const HParams& h) {
  const uint64_t E = h.n_embd, QD = h.q_dim(), KD = h.kv_dim();
  // The widest FFN a row passes through: dense, its chosen experts (each with its own gate and
  // up rows in the MoE scratch), or the shared expert beside them.
  const uint64_t ff = std::max<uint64_t>({static_cast<uint64_t>(h.n_ff),
                                          static_cast<uint64_t>(h.moe.n_used) * h.moe.n_ff,
                                          static_cast<uint64_t>(h.n_ff_shared)});
  // x, xn, tmp and the MoE output (4 E); q, att, a gated query's gate and the fused q|gate rows
  // (4 QD); k, v and their fused rows (3 KD); gate, up, the fused gate|up and the expert
  // outputs (4 ff); a hybrid's convolved q|k|v, its gates and the DeltaNet output (3 conv).
  uint64_t floats = 4 * E + 4 * QD + 3 * KD + 4 * ff;
  if (h.is_hybrid()) floats += 3 * static_cast<uint64_t>(h.ssm.conv_dim());
  return floats * sizeof(float);
}

uint64_t tensor_bytes(const gguf::GgufFile& f) {
  uint64_t bytes = 0;
  for (const auto& t : f.tensors()) bytes += t.n_bytes;
  return bytes;
}

}  // namespace baton::model
