// Parsing of `--type` and validation of a SynthSpec: every message names the flag and says how
// to fix it.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "synth/synth_model.h"
#include "util/ascii.h"

namespace baton::synth {

namespace {

using gguf::TensorType;

// The types `--type` accepts, in the order the help lists them.
constexpr TensorType kSynthTypes[] = {
    TensorType::F32,  TensorType::F16,    TensorType::Q8_0,   TensorType::Q4_0, TensorType::Q4_1,
    TensorType::Q5_0, TensorType::IQ4_NL, TensorType::Q2_K,   TensorType::Q3_K, TensorType::Q4_K,
    TensorType::Q5_K, TensorType::Q6_K,   TensorType::IQ4_XS,
};
constexpr Mix kMixes[] = {Mix::kQ3_K_M, Mix::kQ4_K_M, Mix::kQ5_K_M, Mix::kMXFP4_MOE};

// The `--type` value of a mix: its name in lower case, except MXFP4_MOE's, which also answers
// to its llama.cpp name.
std::string mix_flag(Mix m) {
  return m == Mix::kMXFP4_MOE ? "mxfp4" : util::ascii_lower(mix_name(m));
}

}  // namespace

bool is_moe_arch(std::string_view arch) {
  return arch == "qwen3moe" || arch == "gpt-oss" || arch == "qwen35moe" || arch == "qwen3next";
}

bool is_hybrid_arch(std::string_view arch) {
  return arch == "qwen35" || arch == "qwen35moe" || arch == "qwen3next";
}

int64_t head_dim_of(const SynthSpec& spec) {
  return spec.head_dim > 0 ? spec.head_dim : spec.embd / std::max<int64_t>(1, spec.heads);
}

bool synth_type_supported(TensorType t) {
  return std::find(std::begin(kSynthTypes), std::end(kSynthTypes), t) != std::end(kSynthTypes);
}

std::string_view mix_name(Mix m) {
  switch (m) {
    case Mix::kQ3_K_M:
      return "Q3_K_M";
    case Mix::kQ4_K_M:
      return "Q4_K_M";
    case Mix::kQ5_K_M:
      return "Q5_K_M";
    case Mix::kMXFP4_MOE:
      return "MXFP4_MOE";
    default:
      return "";
  }
}

TensorType mix_base_type(Mix m) {
  switch (m) {
    case Mix::kQ3_K_M:
      return TensorType::Q3_K;
    case Mix::kQ4_K_M:
      return TensorType::Q4_K;
    case Mix::kQ5_K_M:
      return TensorType::Q5_K;
    case Mix::kMXFP4_MOE:
      return TensorType::Q8_0;
    default:
      return TensorType::F32;
  }
}

std::string synth_type_list() {
  std::vector<std::string> names;
  for (TensorType t : kSynthTypes) names.push_back(util::ascii_lower(gguf::type_name(t)));
  for (Mix m : kMixes) names.push_back(mix_flag(m));
  std::string out = names.front();
  for (size_t i = 1; i < names.size(); ++i) {
    out += (i + 1 == names.size() ? " or " : ", ") + names[i];
  }
  return out;
}

void parse_synth_type(std::string_view name, SynthSpec& spec) {
  for (Mix m : kMixes) {
    if (util::iequals(name, mix_name(m)) || util::iequals(name, mix_flag(m))) {
      spec.mix = m;
      spec.type = mix_base_type(m);
      return;
    }
  }
  const auto t = gguf::parse_type(name);
  if (!t || !synth_type_supported(*t)) {
    throw SynthError(fmt::format("--type {}: expected {}", name, synth_type_list()));
  }
  spec.mix = Mix::kNone;
  spec.type = *t;
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

void check_moe(const SynthSpec& s) {
  check_range("--experts", s.experts, 1, 4096);
  check_range("--expert-ff", s.expert_ff, 1, 1 << 18);
  if (s.experts_used < 1 || s.experts_used > s.experts) {
    throw SynthError(fmt::format(
        "--experts-used {}: expected 1..{} (a token cannot use more experts than --experts)",
        s.experts_used, s.experts));
  }
  check_block("--expert-ff", s.expert_ff, s.type);
}

// The hybrids: attention heads of --head-dim (not embd / heads), the DeltaNet shape, the layer
// pattern and the experts and shared expert (or the dense FFN of qwen35); every matrix row length
// must suit the type.
void validate_hybrid(const SynthSpec& s) {
  const int64_t hd = head_dim_of(s);
  check_range("--head-dim", hd, 16, 1024);
  if (hd % 8 != 0) {
    throw SynthError(
        fmt::format("--head-dim {}: {} rotates a quarter of each head in "
                    "pairs, so the head dim must be a multiple of 8",
                    hd, s.arch));
  }
  check_range("--ssm-k-heads", s.ssm_k_heads, 1, 256);
  check_range("--ssm-v-heads", s.ssm_v_heads, 1, 1024);
  check_range("--ssm-head-dim", s.ssm_head_dim, 1, 1024);
  check_range("--ssm-conv", s.ssm_conv, 2, 64);
  check_range("--full-attention-interval", s.full_attention_interval, 1, 1024);
  if (s.full_attention_interval > s.layers) {
    throw SynthError(
        fmt::format("--full-attention-interval {} with --layers {}: no layer would "
                    "attend; use --layers {} or more, or a smaller interval",
                    s.full_attention_interval, s.layers, s.full_attention_interval));
  }
  if (s.ssm_v_heads % s.ssm_k_heads != 0) {
    throw SynthError(
        fmt::format("--ssm-v-heads {} is not a multiple of --ssm-k-heads {}: each "
                    "key head serves a whole group of value heads",
                    s.ssm_v_heads, s.ssm_k_heads));
  }
  check_block("--embd", s.embd, s.type);
  check_block("--heads x --head-dim", s.heads * hd, s.type);
  check_block("--ssm-v-heads x --ssm-head-dim", s.ssm_v_heads * s.ssm_head_dim, s.type);
  if (!is_moe_arch(s.arch)) {
    check_block("--ff", s.ff, s.type);
    return;
  }
  check_moe(s);
  check_block("--shared-ff", s.shared_ff > 0 ? s.shared_ff : s.expert_ff, s.type);
}

}  // namespace

void validate(const SynthSpec& s) {
  if (s.arch != "llama" && s.arch != "qwen2" && s.arch != "qwen3" && s.arch != "gemma3" &&
      s.arch != "mistral3" && !is_moe_arch(s.arch) && !is_hybrid_arch(s.arch)) {
    throw SynthError(
        fmt::format("--arch {}: expected llama, qwen2, qwen3, qwen3moe, gpt-oss, qwen35, "
                    "qwen35moe, qwen3next, gemma3 or mistral3",
                    s.arch));
  }
  check_range("--embd", s.embd, 1, 1 << 16);
  check_range("--layers", s.layers, 1, 1024);
  check_range("--heads", s.heads, 1, 1024);
  check_range("--kv-heads", s.kv_heads, 1, 1024);
  check_range("--ff", s.ff, 1, 1 << 18);
  check_range("--ctx", s.ctx, 1, 1 << 24);
  if (s.head_dim != 0) {
    check_range("--head-dim", s.head_dim, 2, 1024);
    if (s.head_dim % 2 != 0) {
      throw SynthError(fmt::format(
          "--head-dim {}: rotary embeddings need an even head dimension; use --head-dim {}",
          s.head_dim, s.head_dim + 1));
    }
  } else if (s.embd % s.heads != 0) {
    throw SynthError(
        fmt::format("--embd {} is not a multiple of --heads {}: head_dim = embd/heads "
                    "must be a whole number",
                    s.embd, s.heads));
  }
  if (s.head_dim == 0 && (s.embd / s.heads) % 2 != 0) {
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
  if (s.mix != Mix::kNone && s.type != mix_base_type(s.mix)) {
    throw SynthError(fmt::format("the {} mix has base type {}, not {}: use --type {}",
                                 mix_name(s.mix), gguf::type_name(mix_base_type(s.mix)),
                                 gguf::type_name(s.type), mix_flag(s.mix)));
  }
  if (s.type == TensorType::MXFP4) {
    throw SynthError(
        "type mxfp4 comes only as the MXFP4_MOE mix (base type q8_0, the experts in mxfp4): "
        "use --type mxfp4");
  }
  if (!synth_type_supported(s.type)) {
    throw SynthError(
        fmt::format("--type {}: expected {}", gguf::type_name(s.type), synth_type_list()));
  }
  if (is_hybrid_arch(s.arch)) return validate_hybrid(s);
  check_block("--embd", s.embd, s.type);
  if (s.head_dim != 0) check_block("--heads x --head-dim", s.heads * s.head_dim, s.type);
  if (s.arch == "gemma3") check_range("--swa", s.swa, 1, 1 << 24);
  if (!is_moe_arch(s.arch)) {
    check_block("--ff", s.ff, s.type);
    return;
  }
  if (s.arch == "gpt-oss") check_range("--swa", s.swa, 1, 1 << 24);
  check_moe(s);
}

}  // namespace baton::synth
