// `baton gguf info FILE` and `baton gguf synth OUT ...`.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_info.h"
#include "synth/synth_model.h"

namespace baton::cli {
namespace {

struct SynthArgs {
  std::string out;
  std::string type = "f32";
  bool byte_vocab = false;
  synth::SynthSpec spec;
};

void run_synth(const SynthArgs& a) {
  synth::SynthSpec spec = a.spec;
  synth::parse_synth_type(a.type, spec);
  if (spec.vocab_from.empty() == !a.byte_vocab) {
    throw synth::SynthError(
        "gguf synth: give exactly one of --vocab-from FILE.gguf (copy a real tokenizer) or "
        "--byte-vocab (built-in 259-token byte vocabulary)");
  }
  synth::write_synthetic_model(spec, a.out);
}

// The hybrids' shape (qwen35, qwen35moe, qwen3next): the DeltaNet layers, the shared expert.
void register_hybrid_flags(CLI::App& cmd, synth::SynthSpec& s) {
  cmd.add_option(
      "--shared-ff", s.shared_ff,
      "feed-forward length of the shared expert (qwen35moe, qwen3next; default --expert-ff)");
  cmd.add_option("--ssm-k-heads", s.ssm_k_heads,
                 "DeltaNet key heads (qwen35, qwen35moe, qwen3next)")
      ->capture_default_str();
  cmd.add_option("--ssm-v-heads", s.ssm_v_heads,
                 "DeltaNet value heads (qwen35, qwen35moe, qwen3next)")
      ->capture_default_str();
  cmd.add_option("--ssm-head-dim", s.ssm_head_dim,
                 "DeltaNet head width (qwen35, qwen35moe, qwen3next)")
      ->capture_default_str();
  cmd.add_option("--ssm-conv", s.ssm_conv,
                 "DeltaNet convolution taps (qwen35, qwen35moe, qwen3next)")
      ->capture_default_str();
  cmd.add_option(
         "--full-attention-interval", s.full_attention_interval,
         "every n-th layer attends, the others are gated DeltaNet (qwen35, qwen35moe, qwen3next)")
      ->capture_default_str();
}

void register_synth(CLI::App& gguf) {
  auto args = std::make_shared<SynthArgs>();
  auto* cmd = gguf.add_subcommand("synth", "write a model of a real shape with RANDOM weights");
  auto& s = args->spec;
  cmd->add_option("out", args->out, "output .gguf path")->required();
  cmd->add_option(
         "--arch", s.arch,
         "llama | qwen2 | qwen3 | qwen3moe | gpt-oss | qwen35 | qwen35moe | qwen3next | gemma3 | "
         "mistral3")
      ->capture_default_str();
  cmd->add_option("--embd", s.embd, "embedding length")->capture_default_str();
  cmd->add_option("--layers", s.layers, "number of blocks")->capture_default_str();
  cmd->add_option("--heads", s.heads, "attention heads")->capture_default_str();
  cmd->add_option("--kv-heads", s.kv_heads, "key/value heads")->capture_default_str();
  cmd->add_option("--head-dim", s.head_dim,
                  "dimensions per attention head (0 = embd / heads; the q width heads x "
                  "head-dim may then differ from embd)")
      ->capture_default_str();
  cmd->add_option("--ff", s.ff, "feed-forward length")->capture_default_str();
  cmd->add_option("--experts", s.experts,
                  "experts per layer (qwen3moe, gpt-oss, qwen35moe, qwen3next)")
      ->capture_default_str();
  cmd->add_option("--experts-used", s.experts_used,
                  "experts each token uses (qwen3moe, gpt-oss, qwen35moe, qwen3next)")
      ->capture_default_str();
  cmd->add_option("--expert-ff", s.expert_ff,
                  "feed-forward length of each expert (qwen3moe, gpt-oss, qwen35moe, qwen3next)")
      ->capture_default_str();
  cmd->add_option("--swa", s.swa,
                  "sliding window of the windowed layers (gpt-oss: layers 0, 2, 4, ...; "
                  "gemma3: all but every sixth)")
      ->capture_default_str();
  register_hybrid_flags(*cmd, s);
  cmd->add_option("--ctx", s.ctx, "context length")->capture_default_str();
  cmd->add_option("--type", args->type,
                  "f32|f16|q8_0|q4_0|q4_1|q5_0|iq4_nl|q2_k|q3_k|q4_k|q5_k|q6_k|iq4_xs for "
                  "every matrix, or a mix as downloads have them: q4_k_m / q5_k_m (Q4_K / Q5_K "
                  "with Q6_K for the output and some attn_v / ffn_down matrices), q3_k_m (Q3_K "
                  "with Q4_K / Q5_K for attn_v, attn_output and ffn_down, Q6_K for the output), "
                  "mxfp4 (= mxfp4_moe: the expert tensors in MXFP4, every other matrix Q8_0, "
                  "as gpt-oss ships)")
      ->capture_default_str();
  cmd->add_option("--vocab-from", s.vocab_from, "copy tokenizer.* keys from this GGUF");
  cmd->add_flag("--byte-vocab", args->byte_vocab, "built-in byte-level SentencePiece vocab");
  cmd->add_option("--seed", s.seed, "random seed (same seed, same bytes)")->capture_default_str();
  cmd->add_option("--name", s.name, "general.name");
  cmd->add_option("--threads", s.threads, "generator threads (0 = all cores)");
  cmd->callback([args] { run_synth(*args); });
}

void register_info(CLI::App& gguf) {
  auto path = std::make_shared<std::string>();
  auto* cmd = gguf.add_subcommand("info", "print a GGUF file's metadata and tensor table");
  cmd->add_option("file", *path, "a .gguf file")->required();
  cmd->callback([path] {
    auto f = gguf::GgufFile::open(*path);
    std::string text = gguf::format_info(*f);
    std::fwrite(text.data(), 1, text.size(), stdout);
  });
}

}  // namespace

void register_gguf(CLI::App& app) {
  auto* gguf = app.add_subcommand("gguf", "inspect GGUF files, or write synthetic models");
  gguf->require_subcommand(1);
  register_info(*gguf);
  register_synth(*gguf);
}

}  // namespace baton::cli
