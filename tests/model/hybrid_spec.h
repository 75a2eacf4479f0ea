#pragma once
// Synthetic hybrid models for the model tests: the reference files' shape (README of
// ../shared/models/arch) with widths every type accepts (rows of 256 for the K-quants), written
// once per test process.
#include <filesystem>
#include <map>
#include <mutex>
#include <string>

#include "gguf/gguf_file.h"
#include "synth/synth_model.h"

namespace baton::testing {

// `interval`: every interval-th layer attends. qwen35 takes a dense FFN of 256 rows instead of
// the experts.
inline synth::SynthSpec hybrid_spec(gguf::TensorType type, synth::Mix mix, int64_t interval,
                                    uint64_t seed, const std::string& arch = "qwen35moe") {
  synth::SynthSpec spec;
  spec.arch = arch;
  spec.embd = 256;
  spec.layers = 4;
  spec.heads = 2;
  spec.kv_heads = 1;
  spec.head_dim = 128;
  spec.ff = 256;
  spec.experts = 8;
  spec.experts_used = 2;
  spec.expert_ff = 256;
  spec.shared_ff = 256;
  spec.ssm_k_heads = 2;
  spec.ssm_v_heads = 4;
  spec.ssm_head_dim = 64;
  spec.full_attention_interval = interval;
  spec.ctx = 1024;
  spec.type = type;
  spec.mix = mix;
  spec.seed = seed;
  spec.threads = 2;
  return spec;
}

inline std::string hybrid_model(gguf::TensorType type, synth::Mix mix = synth::Mix::kNone,
                                int64_t interval = 4, uint64_t seed = 7,
                                const std::string& arch = "qwen35moe") {
  static std::mutex mu;
  static std::map<std::string, std::string> made;
  std::lock_guard lock(mu);
  const std::string key =
      arch + "-" +
      std::string(mix == synth::Mix::kNone ? gguf::type_name(type) : synth::mix_name(mix)) +
      "-every" + std::to_string(interval) + "-seed" + std::to_string(seed);
  if (auto it = made.find(key); it != made.end()) return it->second;
  auto dir = std::filesystem::temp_directory_path() / "baton-tests" / "model-hybrid";
  std::filesystem::create_directories(dir);
  const auto path = (dir / (key + ".gguf")).string();
  synth::write_synthetic_model(hybrid_spec(type, mix, interval, seed, arch), path);
  return made[key] = path;
}

}  // namespace baton::testing
