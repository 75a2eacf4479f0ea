// The keys of hybrid recurrent models (qwen35, qwen35moe, qwen3next): the gated DeltaNet shape
// (ssm.*), which layers are recurrent, the IMRoPE sections (qwen35 and qwen35moe; qwen3next's
// attention rotates as neox) and the shared expert. Every refusal names the key and the
// fix, in one line.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "model/hparams.h"

namespace baton::model {
namespace {

[[noreturn]] void refuse(const gguf::GgufFile& f, const std::string& what) {
  throw std::runtime_error(fmt::format("{}: {}", f.path(), what));
}

int32_t ssm_key(const gguf::GgufFile& f, const std::string& a, const char* name, int64_t max) {
  const std::string key = a + "ssm." + name;
  if (!f.has(key)) {
    refuse(f, fmt::format("required key {} is missing (a {} file describes its DeltaNet layers "
                          "with the ssm.* keys; convert the model again with a current llama.cpp)",
                          key, a.substr(0, a.size() - 1)));
  }
  const int64_t v = f.get_int(key);
  if (v < 1 || v > max) {
    refuse(f, fmt::format("{} = {} is out of range (expected 1..{})", key, v, max));
  }
  return static_cast<int32_t>(v);
}

void read_ssm(const gguf::GgufFile& f, const std::string& a, HParams& h) {
  SsmParams& s = h.ssm;
  s.d_conv = ssm_key(f, a, "conv_kernel", 64);
  s.head_dim = ssm_key(f, a, "state_size", 1024);
  s.n_k_heads = ssm_key(f, a, "group_count", 1024);
  s.n_v_heads = ssm_key(f, a, "time_step_rank", 4096);
  s.d_inner = ssm_key(f, a, "inner_size", 1 << 20);
  if (s.n_v_heads % s.n_k_heads != 0) {
    refuse(f, fmt::format("{0}ssm.time_step_rank {1} (value heads) is not a multiple of "
                          "{0}ssm.group_count {2} (key heads): each key head serves a whole group "
                          "of value heads; fix the keys to the model's head counts",
                          a, s.n_v_heads, s.n_k_heads));
  }
  if (int64_t(s.n_v_heads) * s.head_dim != s.d_inner) {
    refuse(f,
           fmt::format("{0}ssm.inner_size {1} is not {0}ssm.time_step_rank {2} x "
                       "{0}ssm.state_size {3} = {4}: the file is inconsistent (set "
                       "ssm.inner_size to {4} or use a consistent file)",
                       a, s.d_inner, s.n_v_heads, s.head_dim, int64_t(s.n_v_heads) * s.head_dim));
  }
}

// Which of the block_count layers are recurrent: attention.recurrent_layers (one flag per layer,
// or one for all), else every full_attention_interval-th layer attends (default 4).
std::vector<uint8_t> read_pattern(const gguf::GgufFile& f, const std::string& a, int64_t n_all) {
  std::vector<uint8_t> rec(static_cast<size_t>(n_all));
  const std::string list = a + "attention.recurrent_layers";
  const std::string interval = a + "full_attention_interval";
  if (const auto* v = f.find(list)) {
    if (v->type == gguf::ValueType::ARRAY) {
      const auto& flags = f.get_ints(list);
      if (static_cast<int64_t>(flags.size()) != n_all) {
        refuse(f, fmt::format("{} has {} entries but {}block_count is {}: the layer pattern is "
                              "unknown (give one flag per layer)",
                              list, flags.size(), a, n_all));
      }
      for (int64_t i = 0; i < n_all; ++i) rec[i] = flags[i] != 0;
    } else {
      const bool all = v->type == gguf::ValueType::BOOL ? v->b : f.get_int(list) != 0;
      std::fill(rec.begin(), rec.end(), all);
    }
    return rec;
  }
  const int64_t every = f.get_int_or(interval, 4);
  if (every < 1 || every > n_all) {
    refuse(f, fmt::format("{} = {} is not a layer pattern baton knows (expected 1..{}: every "
                          "n-th layer attends, the others are DeltaNet; real files carry 4)",
                          interval, every, n_all));
  }
  for (int64_t i = 0; i < n_all; ++i) rec[i] = (i + 1) % every != 0;
  return rec;
}

void read_sections(const gguf::GgufFile& f, const std::string& a, HParams& h) {
  const std::string key = a + "rope.dimension_sections";
  if (!f.has(key)) {
    refuse(f, fmt::format("required key {} is missing (the IMRoPE sections of the attention "
                          "layers; convert the model again with a current llama.cpp)",
                          key));
  }
  const auto& s = f.get_ints(key);
  if (s.size() != 4) {
    refuse(f,
           fmt::format("{} has {} entries, expected 4 (the t, h, w, e sections)", key, s.size()));
  }
  for (size_t i = 0; i < 4; ++i) {
    if (s[i] < 0 || s[i] > h.n_rot / 2) {
      refuse(f, fmt::format("{} entry {} = {} is out of range (expected 0..{})", key, i, s[i],
                            h.n_rot / 2));
    }
    h.rope_sections[i] = static_cast<int32_t>(s[i]);
  }
  if (s[0] + s[1] + s[2] == 0) {
    refuse(f, fmt::format("{} gives no pair to the t, h and w sections: fix the key to the "
                          "model's sections",
                          key));
  }
}

}  // namespace

void read_hybrid_hparams(const gguf::GgufFile& f, HParams& h) {
  const std::string a = h.arch_key + ".";
  read_ssm(f, a, h);
  // Layers past block_count - nextn_predict_layers are a draft head (multi-token prediction)
  // that a plain forward pass does not run.
  const int64_t n_all = h.n_layer;
  const int64_t nextn = f.get_int_or(a + "nextn_predict_layers", 0);
  if (nextn < 0 || nextn >= n_all) {
    refuse(f, fmt::format("{}nextn_predict_layers = {} is out of range (expected 0..{})", a, nextn,
                          n_all - 1));
  }
  h.recurrent = read_pattern(f, a, n_all);
  h.n_layer = static_cast<int32_t>(n_all - nextn);
  h.recurrent.resize(static_cast<size_t>(h.n_layer));
  if (h.n_attention_layers() == 0) {
    refuse(f, fmt::format("every one of the {} layers is recurrent by the file's layer pattern: "
                          "baton runs hybrid models with at least one attention layer (check "
                          "{}full_attention_interval / attention.recurrent_layers)",
                          h.n_layer, a));
  }
  if (h.arch == Arch::Qwen3Next) {
    // qwen3next's converter keeps the original weights' value heads, grouped by key head.
    h.ssm.v_heads_grouped = true;
  } else {
    read_sections(f, a, h);
    h.rope_mode = RopeMode::Imrope;
  }
  const std::string shared = a + "expert_shared_feed_forward_length";
  if (f.has(shared)) {
    const int64_t v = f.get_int(shared);
    if (v < 1 || v > (1 << 20)) {
      refuse(f, fmt::format("{} = {} is out of range (expected 1..{})", shared, v, 1 << 20));
    }
    h.n_ff_shared = static_cast<int32_t>(v);
  }
}

}  // namespace baton::model
