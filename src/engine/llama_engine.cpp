#include "engine/llama_engine.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <stdexcept>
#include <tuple>

#include "util/log.h"

namespace baton::engine {
namespace {

model::KvType parse_kv_type(const char* flag, const std::string& s) {
  if (const auto t = model::kv_type_from_name(s)) return *t;
  throw std::runtime_error(
      fmt::format("{} '{}' is not supported: use one of {}", flag, s, model::kv_type_names()));
}

// How the KV types enter the fingerprint and the layout string: as before quantized types
// existed when K and V share a type, so blocks saved by earlier builds keep their names.
std::string kv_types_label(model::KvType k, model::KvType v, const char* both_prefix) {
  if (k == v) return both_prefix + std::string(model::kv_type_name(k));
  return fmt::format("k={} v={}", model::kv_type_name(k), model::kv_type_name(v));
}

// The version of the arithmetic that produces KV (kernels, attention, norms): KV saved on disk by
// a build with other arithmetic holds other bits than this build computes, so the disk tier
// refuses it (its layout string differs). Bump it with any change that alters a logit.
constexpr int kKvArithmetic = 3;  // 3: the 16-row tiles

// Bytes of each tensor's data that the fingerprint samples: its start, middle and end.
constexpr uint64_t kSampleBytes = 4096;

void hash_weight_samples(const gguf::GgufFile& f, XXH3_state_t* st) {
  for (const auto& t : f.tensors()) {
    const uint8_t* data = f.tensor_data(t);
    const uint64_t n = std::min(kSampleBytes, t.n_bytes);
    for (uint64_t at : {uint64_t{0}, (t.n_bytes - n) / 2, t.n_bytes - n}) {
      XXH3_64bits_update(st, data + at, n);
    }
  }
}

// Names the model whose KV a prefix chain holds: the header (metadata + tensor table), a sample
// of every tensor's data (4 KiB at its start, middle and end, so two files with the same header
// and other weights, e.g. a fine-tune saved over the same shapes, never share blocks, without
// reading gigabytes at start), the file size, and the KV layout. The disk tier keeps blocks
// across restarts under this name.
uint64_t fingerprint_of(const gguf::GgufFile& f, const EngineOptions& opts) {
  const auto [k_type, v_type] = kv_types_of(opts);
  std::ifstream in(f.path(), std::ios::binary);
  // A file without tensors may end before its (aligned) data offset.
  std::string header(std::min(f.data_offset(), f.file_size()), '\0');
  if (!in.read(header.data(), static_cast<std::streamsize>(header.size()))) {
    throw std::runtime_error(f.path() + ": cannot re-read the GGUF header for the fingerprint");
  }
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  XXH3_64bits_update(st, header.data(), header.size());
  hash_weight_samples(f, st);
  const std::string layout = fmt::format(
      "{};block={};size={}", kv_types_label(k_type, v_type, "kv="), opts.block_size, f.file_size());
  XXH3_64bits_update(st, layout.data(), layout.size());
  const uint64_t h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return h;
}

}  // namespace

std::pair<model::KvType, model::KvType> kv_types_of(const EngineOptions& opts) {
  // "kv type" names the shared setting, as the error for a bad --kv-type always has.
  const model::KvType both = parse_kv_type("kv type", opts.kv_type);
  return {opts.cache_type_k.empty() ? both : parse_kv_type("--cache-type-k", opts.cache_type_k),
          opts.cache_type_v.empty() ? both : parse_kv_type("--cache-type-v", opts.cache_type_v)};
}

LlamaEngine::LlamaEngine(std::unique_ptr<model::LlamaModel> model,
                         std::unique_ptr<tokenizer::Tokenizer> tok, uint64_t fingerprint)
    : model_(std::move(model)), tok_(std::move(tok)) {
  const auto& h = model_->hparams();
  info_.model_name = h.name;
  info_.n_vocab = h.n_vocab;
  info_.n_ctx_train = h.n_ctx_train;
  info_.block_size = model_->kv().block_size();
  info_.kv_bytes_per_block = model_->kv().bytes_per_block();
  info_.fingerprint = fingerprint;
  // Blocks hold the full-attention layers only (windowed layers keep theirs per sequence).
  const auto* win = model_->window_kv();
  info_.kv_layout = fmt::format("{} layers={} kv_heads={} head_dim={} arithmetic={}",
                                kv_types_label(model_->kv().k_type(), model_->kv().v_type(), ""),
                                h.n_attention_layers() - (win ? win->cache().n_layers() : 0),
                                h.n_head_kv, h.head_dim, kKvArithmetic);
  if (h.is_hybrid() || win) {
    // KV of another layer pattern means other bits: the layout names it (r: recurrent, w:
    // windowed, a: full attention).
    std::string pattern;
    for (int32_t il = 0; il < h.n_layer; ++il) {
      pattern += h.is_recurrent(il) ? 'r' : h.window(il) > 0 ? 'w' : 'a';
    }
    info_.kv_layout += " pattern=" + pattern;
    if (win) info_.kv_layout += fmt::format(" window={}", win->window());
  }
  info_.state_bytes_per_seq = model_->state_checkpoint_bytes();
  info_.bos_id = tok_->bos_id();
  for (int32_t id = 0; id < tok_->n_vocab(); ++id) {
    if (tok_->is_eog(id)) info_.eog_ids.push_back(id);
  }
}

LlamaEngine::~LlamaEngine() = default;

void LlamaEngine::allocate_kv(int32_t n_blocks) {
  model_->kv().allocate(n_blocks);
  model_->clear_sequences();  // the sequences they belonged to are gone
}

void LlamaEngine::release_sequence(uint64_t request_id) {
  model_->release_sequence(request_id);
}

void LlamaEngine::allocate_state_slots(int32_t n_slots) {
  model_->allocate_state_slots(n_slots);
}

void LlamaEngine::restore_state(uint64_t request_id, int32_t slot, int32_t n_pos) {
  if (const auto why = model_->restore_state(request_id, slot, n_pos); !why.empty()) {
    throw std::runtime_error(why);
  }
}

std::span<uint8_t> LlamaEngine::state_slot(int32_t slot) {
  return model_->state_slot(slot);
}

void LlamaEngine::set_state_slot(int32_t slot, int32_t n_pos) {
  model_->set_state_slot(slot, n_pos);
}

void LlamaEngine::copy_block(int32_t src, int32_t dst, int32_t n_tokens) {
  model_->kv().copy_block(src, dst, n_tokens);
}

std::span<uint8_t> LlamaEngine::kv_block(int32_t block) {
  auto& kv = model_->kv();
  if (block < 0 || block >= kv.n_blocks()) return {};
  return {kv.block_data(block), kv.bytes_per_block()};
}

void LlamaEngine::forward(const StepBatch& batch, StepOutput& out) {
  std::vector<model::SeqSlice> slices;
  slices.reserve(batch.seqs.size());
  std::vector<std::vector<model::StateCapture>> captures(batch.seqs.size());
  for (size_t i = 0; i < batch.seqs.size(); ++i) {
    const auto& s = batch.seqs[i];
    for (const auto& cp : s.checkpoints) captures[i].push_back({cp.pos, cp.slot});
    model::SeqSlice m;
    m.start_pos = s.start_pos;
    m.tokens = s.tokens.data();
    m.n_tokens = static_cast<int32_t>(s.tokens.size());
    m.block_table = s.block_table.data();
    m.n_table = static_cast<int32_t>(s.block_table.size());
    m.want_logits = s.want_logits;
    m.logit_rows = s.logit_rows;
    m.seq_id = s.request_id;
    m.captures = captures[i].data();
    m.n_captures = static_cast<int32_t>(captures[i].size());
    slices.push_back(m);
  }
  out.request_ids.clear();
  model_->forward(slices, out.logits);
  for (const auto& s : batch.seqs) {
    if (!s.want_logits) continue;
    for (int32_t r = 0; r < s.logit_rows; ++r) out.request_ids.push_back(s.request_id);
  }
}

std::unique_ptr<LlamaEngine> load_llama_engine(const std::string& path, const EngineOptions& opts) {
  auto file = gguf::GgufFile::open(path);
  auto tok = tokenizer::Tokenizer::from_gguf(*file);
  const uint64_t fp = fingerprint_of(*file, opts);
  model::ModelOptions mo;
  mo.threads = opts.threads;
  std::tie(mo.k_type, mo.v_type) = kv_types_of(opts);
  mo.block_size = opts.block_size;
  mo.interleave_weights = opts.interleave_weights;
  mo.before_tiles = opts.before_tiles;
  const auto load_start = std::chrono::steady_clock::now();
  auto model = std::make_unique<model::LlamaModel>(std::move(file), mo);
  const double load_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  if (tok->n_vocab() != model->hparams().n_vocab) {
    log::warn("{}: tokenizer has {} tokens but token_embd has {} rows", path, tok->n_vocab(),
              model->hparams().n_vocab);
  }
  const auto& h = model->hparams();
  std::string ffn = h.is_moe() ? fmt::format("experts {} ({} used per token), expert ff {}",
                                             h.moe.n_expert, h.moe.n_used, h.moe.n_ff)
                               : fmt::format("ff {}", h.n_ff);
  if (const auto* win = model->window_kv()) {
    ffn += fmt::format(", sliding window {} in {} of {} layers", h.n_swa, win->cache().n_layers(),
                       h.n_layer);
  }
  log::info("loaded {} ({}): {} layers, embd {}, heads {}/{}, {}, vocab {}, {} threads", path,
            model::arch_name(h.arch), h.n_layer, h.n_embd, h.n_head, h.n_head_kv, ffn, h.n_vocab,
            model->pool().size());
  if (h.is_hybrid()) {
    log::info(
        "hybrid model: {} of {} layers are gated DeltaNet (recurrent state {:.2f} MB per "
        "sequence), {} attend",
        h.n_layer - h.n_attention_layers(), h.n_layer,
        double(model->states()->bytes_per_seq()) / 1048576.0, h.n_attention_layers());
  }
  if (const auto* win = model->window_kv()) {
    const uint64_t per_pos = win->cache().bytes_per_block() / uint64_t(win->cache().block_size());
    log::info(
        "windowed layers keep their KV per sequence, only the last {} positions and the step "
        "being computed ({:.1f} KiB per position; the block cache holds the other {} layers): "
        "a prefix is reused from a {:.2f} MB checkpoint of that window",
        h.n_swa, double(per_pos) / 1024.0, h.n_attention_layers() - win->cache().n_layers(),
        double(win->checkpoint_bytes()) / 1048576.0);
  }
  if (model->interleaved_bytes() > 0) {
    log::info(
        "weights: {:.0f} MB rewritten in 16-row tiles for the avx512-vnni kernels "
        "(model ready in {:.1f} s)",
        double(model->interleaved_bytes()) / 1048576.0, load_s);
  }
  return std::make_unique<LlamaEngine>(std::move(model), std::move(tok), fp);
}

}  // namespace baton::engine
