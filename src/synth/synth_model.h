#pragma once
// Synthetic models: real llama/qwen2/qwen3/qwen3moe/gpt-oss/qwen35moe/gemma3/mistral3 shapes,
// tensor names and metadata as llama.cpp's converters write them, with RANDOM weights. Tests of
// every module and the benchmarks build their models with this; the output is gibberish by
// construction.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "gguf/tensor_type.h"

namespace baton::synth {

// A spec that cannot be built; the message names the flag and how to fix it.
class SynthError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The mixes downloads use instead of one type for every matrix: a base type (SynthSpec's type)
// and, for the matrices that hurt most when quantized coarsely, more bits (the K-quant mixes: see
// synth_model.cpp, mix_type); or, for MXFP4_MOE (gpt-oss's layout), base type Q8_0 and the 3-D
// expert tensors in MXFP4.
enum class Mix { kNone, kQ3_K_M, kQ4_K_M, kQ5_K_M, kMXFP4_MOE };

struct SynthSpec {
  // llama | qwen2 | qwen3 | qwen3moe | gpt-oss | qwen35 | qwen35moe | qwen3next | gemma3 |
  // mistral3
  std::string arch = "llama";
  int64_t embd = 64;
  int64_t layers = 2;
  int64_t heads = 4;
  int64_t kv_heads = 4;
  // Dimensions of each attention head; 0 = embd / heads. Written as attention.key_length and
  // value_length when set (the q width heads * head_dim may then differ from embd); the hybrids
  // always write them.
  int64_t head_dim = 0;
  int64_t ff = 128;  // of a MoE arch: written as feed_forward_length only, as converters do
  // Mixture-of-experts archs (qwen3moe, gpt-oss, qwen35moe, qwen3next) only: experts per layer,
  // experts each token uses, and the rows of each expert's gate and up matrices.
  int64_t experts = 8;
  int64_t experts_used = 2;
  int64_t expert_ff = 32;
  // The hybrids (qwen35, qwen35moe, qwen3next) only: gated DeltaNet layers between gated
  // attention layers.
  int64_t shared_ff = 0;                // the MoE hybrids' shared expert width; 0 = expert_ff
  int64_t ssm_k_heads = 2;              // DeltaNet key heads (ssm.group_count)
  int64_t ssm_v_heads = 4;              // DeltaNet value heads (ssm.time_step_rank)
  int64_t ssm_head_dim = 32;            // DeltaNet head width (ssm.state_size)
  int64_t ssm_conv = 4;                 // taps of the causal convolution (ssm.conv_kernel)
  int64_t full_attention_interval = 4;  // every n-th layer attends, the others are DeltaNet
  int64_t ctx = 256;
  // gpt-oss and gemma3: the sliding window of the windowed layers, in positions (gpt-oss:
  // layers 0, 2, 4, ...; gemma3: all but every sixth, 5, 11, ...).
  int64_t swa = 128;
  gguf::TensorType type = gguf::TensorType::F32;  // of the 2-D matrices and token_embd
  Mix mix = Mix::kNone;    // kQ3_K_M needs type Q3_K, kQ4_K_M Q4_K, kQ5_K_M Q5_K, kMXFP4_MOE Q8_0
  std::string vocab_from;  // copy tokenizer.* from this GGUF; empty = built-in byte vocab
  uint64_t seed = 1;
  std::string name;                    // general.name; empty = "synthetic-<arch>"
  std::optional<bool> tie_embeddings;  // omit output.weight; default: qwen2/qwen3/gemma3 yes
  int threads = 0;                     // 0 = hardware concurrency
};

// Whether arch's FFNs are mixtures of experts.
bool is_moe_arch(std::string_view arch);
// Whether arch puts gated DeltaNet layers between gated attention layers.
bool is_hybrid_arch(std::string_view arch);

// The head dimension a spec writes: head_dim, or embd / heads when that is 0.
int64_t head_dim_of(const SynthSpec& spec);

// Throws SynthError naming the offending flag (--embd, --type, ...) and the fix.
void validate(const SynthSpec& spec);

// Writes the model atomically; throws SynthError (bad spec) or gguf::GgufError (I/O, vocab file).
// Holds one tensor in memory at a time.
void write_synthetic_model(const SynthSpec& spec, const std::string& out_path);

// Element types `baton gguf synth --type` accepts.
bool synth_type_supported(gguf::TensorType t);

// A mix's name as llama.cpp spells it ("Q4_K_M", "MXFP4_MOE") and its base type; kNone: "" and
// F32.
std::string_view mix_name(Mix m);
gguf::TensorType mix_base_type(Mix m);

// Parses a `--type` value: a tensor type synth writes or a mix name, case-insensitive ("mxfp4"
// is the MXFP4_MOE mix: the format only ever comes that way). Throws SynthError with the accepted
// values (synth_type_list) for anything else.
void parse_synth_type(std::string_view name, SynthSpec& spec);

// "f32, f16, q8_0, ... q5_k_m or mxfp4": every value `--type` accepts, for messages and help.
std::string synth_type_list();

}  // namespace baton::synth
