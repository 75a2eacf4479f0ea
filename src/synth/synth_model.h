#pragma once
// Synthetic models: real llama/qwen2/qwen3 shapes, tensor names and metadata as llama.cpp's
// converters write them, with RANDOM weights. Tests of every module and the benchmarks build
// their models with this; the output is gibberish by construction.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "gguf/tensor_type.h"

namespace baton::synth {

// A spec that cannot be built; the message names the flag and how to fix it.
class SynthError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SynthSpec {
  std::string arch = "llama";  // llama | qwen2 | qwen3
  int64_t embd = 64;
  int64_t layers = 2;
  int64_t heads = 4;
  int64_t kv_heads = 4;
  int64_t ff = 128;
  int64_t ctx = 256;
  gguf::TensorType type = gguf::TensorType::F32;  // of the 2-D matrices and token_embd
  // With type Q4_K: the Q4_K_M mix that users download instead of every matrix in Q4_K (see
  // synth_model.cpp, more_bits_layer).
  bool q4_k_m = false;
  std::string vocab_from;  // copy tokenizer.* from this GGUF; empty = built-in byte vocab
  uint64_t seed = 1;
  std::string name;                    // general.name; empty = "synthetic-<arch>"
  std::optional<bool> tie_embeddings;  // omit output.weight; default: qwen yes, llama no
  int threads = 0;                     // 0 = hardware concurrency
};

// Throws SynthError naming the offending flag (--embd, --type, ...) and the fix.
void validate(const SynthSpec& spec);

// Writes the model atomically; throws SynthError (bad spec) or gguf::GgufError (I/O, vocab file).
// Holds one tensor in memory at a time.
void write_synthetic_model(const SynthSpec& spec, const std::string& out_path);

// Element types `baton gguf synth --type` accepts.
bool synth_type_supported(gguf::TensorType t);

}  // namespace baton::synth
