// Validation of a SynthSpec: every message names the flag and says how to fix it.
#include <fmt/format.h>

#include "synth/synth_model.h"

namespace baton::synth {

bool synth_type_supported(gguf::TensorType t) {
  using gguf::TensorType;
  return t == TensorType::F32 || t == TensorType::F16 || t == TensorType::Q8_0 ||
         t == TensorType::Q4_0 || t == TensorType::Q4_K || t == TensorType::Q6_K;
}

namespace {

void check_range(const char* flag, int64_t v, int64_t lo, int64_t hi) {
  if (v < lo || v > hi) {
    throw SynthError(fmt::format("{} {}: expected a value in {}..{}", flag, v, lo, hi));
  }
}

void check_block(const char* flag, int64_t v, gguf::TensorType t) {
  const auto tr = gguf::traits(t);
  if (v % tr.block_elems != 0) {
    int64_t up = (v + tr.block_elems - 1) / tr.block_elems * tr.block_elems;
    throw SynthError(
        fmt::format("{} {}: --type {} needs rows that are a multiple of {}; use {} {} "
                    "or a float type (f32/f16)",
                    flag, v, tr.name, tr.block_elems, flag, up));
  }
}

}  // namespace

void validate(const SynthSpec& s) {
  if (s.arch != "llama" && s.arch != "qwen2" && s.arch != "qwen3") {
    throw SynthError(fmt::format("--arch {}: expected llama, qwen2 or qwen3", s.arch));
  }
  check_range("--embd", s.embd, 1, 1 << 16);
  check_range("--layers", s.layers, 1, 1024);
  check_range("--heads", s.heads, 1, 1024);
  check_range("--kv-heads", s.kv_heads, 1, 1024);
  check_range("--ff", s.ff, 1, 1 << 18);
  check_range("--ctx", s.ctx, 1, 1 << 24);
  if (s.embd % s.heads != 0) {
    throw SynthError(
        fmt::format("--embd {} is not a multiple of --heads {}: head_dim = embd/heads "
                    "must be a whole number",
                    s.embd, s.heads));
  }
  if ((s.embd / s.heads) % 2 != 0) {
    throw SynthError(
        fmt::format("--embd {} / --heads {} = {}: rotary embeddings need an even "
                    "head_dim; change --heads or --embd",
                    s.embd, s.heads, s.embd / s.heads));
  }
  if (s.heads % s.kv_heads != 0) {
    throw SynthError(
        fmt::format("--heads {} is not a multiple of --kv-heads {}: each kv head must "
                    "serve a whole group of query heads",
                    s.heads, s.kv_heads));
  }
  if (!synth_type_supported(s.type)) {
    throw SynthError(fmt::format("--type {}: expected f32, f16, q8_0, q4_0, q4_k or q6_k",
                                 gguf::type_name(s.type)));
  }
  if (s.q4_k_m && s.type != gguf::TensorType::Q4_K) {
    throw SynthError("the Q4_K_M mix is made of q4_K and q6_K matrices: use --type q4_k_m");
  }
  check_block("--embd", s.embd, s.type);
  check_block("--ff", s.ff, s.type);
}

}  // namespace baton::synth
