#include "model/llama_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "kernels/matmul.h"
#include "model/attention.h"
#include "model/llama_model_acts.h"
#include "model/moe.h"
#include "model/ops.h"

namespace baton::model {

namespace {

int default_threads(int requested) {
  if (requested > 0) return requested;
  const unsigned hc = std::thread::hardware_concurrency();
  return hc == 0 ? 1 : static_cast<int>(hc);
}

// Rows of one sequence attended together, sharing each K/V block read.
constexpr int32_t kAttentionTile = 16;

// The windowed layers' rope when they have their own base: unscaled, as llama.cpp's local
// layers rotate (their frequency scale is 1 whatever the global layers' scaling).
HParams swa_rope_params(const HParams& h) {
  HParams s = h;
  s.rope_base = h.rope_base_swa;
  s.rope_scaling_type.clear();
  s.rope_scaling_factor = 1.0f;
  return s;
}

// Each full-attention layer's index among them (their KV is in the block cache), each windowed
// layer's among the windowed ones (their KV is in the window KV); recurrent layers hold none.
std::vector<int32_t> kv_layers_of(const HParams& h) {
  std::vector<int32_t> out(static_cast<size_t>(h.n_layer), -1);
  int32_t full = 0, windowed = 0;
  for (int32_t il = 0; il < h.n_layer; ++il) {
    if (h.is_recurrent(il)) continue;
    out[il] = h.window(il) > 0 ? windowed++ : full++;
  }
  return out;
}

int32_t n_windowed_layers(const HParams& h) {
  int32_t n = 0;
  for (int32_t il = 0; il < h.n_layer; ++il) n += !h.is_recurrent(il) && h.window(il) > 0;
  return n;
}

void add_bias(float* y, const std::vector<float>& b, int64_t n_rows) {
  if (b.empty()) return;
  const int64_t d = static_cast<int64_t>(b.size());
  for (int64_t r = 0; r < n_rows; ++r) add_inplace(y + r * d, b.data(), d);
}

}  // namespace

LlamaModel::LlamaModel(std::unique_ptr<gguf::GgufFile> file, const ModelOptions& opts)
    : file_(std::move(file)),
      h_(read_hparams(*file_)),
      w_(load_weights(*file_, h_)),
      rope_(std::make_unique<Rope>(h_, w_.rope_freqs)),
      rope_swa_(h_.rope_base_swa > 0
                    ? std::make_unique<Rope>(swa_rope_params(h_), std::vector<float>{})
                    : nullptr),
      kv_layer_(kv_layers_of(h_)),
      kv_(opts.k_type, opts.v_type, opts.block_size,
          h_.n_attention_layers() - n_windowed_layers(h_), h_.n_head_kv, h_.head_dim),
      pool_(std::make_unique<kernels::ThreadPool>(default_threads(opts.threads))),
      acts_(std::make_unique<Acts>()) {
  if (h_.is_hybrid()) states_ = std::make_unique<RecurrentStates>(h_);
  if (n_windowed_layers(h_) > 0) {
    window_ =
        std::make_unique<WindowKv>(opts.k_type, opts.v_type, opts.block_size, n_windowed_layers(h_),
                                   h_.n_head_kv, h_.head_dim, h_.n_swa);
  }
  // llama.cpp's sizes: for keys the largest power of two from 64 that divides the head dim, for
  // values 64.
  if (kv_type_is_quantized(opts.k_type) && h_.head_dim % 64 == 0) {
    for (rot_k_ = 64; h_.head_dim % (2 * rot_k_) == 0;) rot_k_ *= 2;
  }
  if (kv_type_is_quantized(opts.v_type) && h_.head_dim % 64 == 0) rot_v_ = 64;
  if (opts.before_tiles) opts.before_tiles(footprint(opts.interleave_weights));
  if (opts.interleave_weights) arena_ = interleave_weights(w_, pool_.get());
}

ModelFootprint LlamaModel::footprint(bool tiles) const {
  ModelFootprint f;
  f.file_bytes = file_->file_size();
  f.tiled_bytes = arena_ ? arena_->size() : tiles ? interleave_bytes(w_) : 0;
  f.weights_bytes = tensor_bytes(*file_);
  f.block_size = kv_.block_size();
  f.kv_bytes_per_block = kv_.bytes_per_block();
  if (window_) {
    f.window = window_->window();
    f.window_bytes_per_position = window_->cache().bytes_per_block() / kv_.block_size();
  }
  f.state_bytes_per_seq = states_ ? states_->bytes_per_seq() : 0;
  f.checkpoint_bytes = has_sequence_state() ? state_checkpoint_bytes() : 0;
  f.activation_bytes_per_row = activation_bytes_per_row(h_);
  f.logits_bytes_per_row = static_cast<uint64_t>(h_.n_vocab) * sizeof(float);
  f.n_ctx_train = h_.n_ctx_train;
  return f;
}

LlamaModel::~LlamaModel() = default;

template <typename F>
void LlamaModel::for_rows(int64_t n, F&& fn) {
  if (n < 4) {
    for (int64_t r = 0; r < n; ++r) fn(r);
    return;
  }
  pool_->parallel_for(n, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) fn(r);
  });
}

void LlamaModel::validate(const std::vector<SeqSlice>& seqs) const {
  const int32_t bs = kv_.block_size();
  for (size_t i = 0; i < seqs.size(); ++i) {
    const auto& s = seqs[i];
    if (s.n_tokens < 0 || (s.n_tokens > 0 && !s.tokens)) {
      throw std::runtime_error(fmt::format("batch seq {}: bad token list", i));
    }
    if (s.want_logits && (s.logit_rows < 1 || s.logit_rows > s.n_tokens)) {
      throw std::runtime_error(fmt::format("batch seq {}: logits of {} rows of a {}-token chunk", i,
                                           s.logit_rows, s.n_tokens));
    }
    if (s.n_tokens == 0) {
      if (s.want_logits)
        throw std::runtime_error(
            fmt::format("batch seq {}: want_logits with "
                        "no tokens",
                        i));
      continue;
    }
    if (s.start_pos < 0 || s.start_pos > (1 << 30) - s.n_tokens) {
      throw std::runtime_error(
          fmt::format("batch seq {}: start_pos {} out of range", i, s.start_pos));
    }
    for (int32_t t = 0; t < s.n_tokens; ++t) {
      if (s.tokens[t] < 0 || s.tokens[t] >= h_.n_vocab) {
        throw std::runtime_error(fmt::format("batch seq {}: token id {} out of range (n_vocab {})",
                                             i, s.tokens[t], h_.n_vocab));
      }
    }
    const int32_t need = (s.start_pos + s.n_tokens - 1) / bs + 1;
    if (s.n_table < need) {
      throw std::runtime_error(
          fmt::format("batch seq {}: block_table has {} blocks, positions up "
                      "to {} need {}",
                      i, s.n_table, s.start_pos + s.n_tokens - 1, need));
    }
    for (int32_t b = 0; b < need; ++b) {
      if (s.block_table[b] < 0 || s.block_table[b] >= kv_.n_blocks()) {
        throw std::runtime_error(
            fmt::format("batch seq {}: block id {} out of range (allocated "
                        "{}; call allocate_kv first)",
                        i, s.block_table[b], kv_.n_blocks()));
      }
    }
    if (has_sequence_state()) validate_sequence_state(i, seqs);
  }
}

void LlamaModel::forward(const std::vector<SeqSlice>& seqs,
                         std::vector<std::vector<float>>& logits) {
  validate(seqs);
  validate_captures(seqs);
  Acts& a = *acts_;
  a.begin_pass();
  for (size_t i = 0; i < seqs.size(); ++i) {
    for (int32_t t = 0; t < seqs[i].n_tokens; t += kAttentionTile) {
      a.tiles.emplace_back(static_cast<int64_t>(a.pos.size()) + t,
                           std::min(kAttentionTile, seqs[i].n_tokens - t));
    }
    for (int32_t t = 0; t < seqs[i].n_tokens; ++t) {
      a.pos.push_back(seqs[i].start_pos + t);
      a.row_seq.push_back(static_cast<int32_t>(i));
      a.row_table.push_back(seqs[i].block_table);
    }
  }
  a.n = static_cast<int64_t>(a.pos.size());
  logits.clear();
  if (a.n == 0) return;
  begin_sequence_state(seqs, a);
  const int64_t E = h_.n_embd, P = rope_->n_pairs();
  a.x.resize(a.n * E);
  a.xn.resize(a.n * E);
  a.cos_v.resize(a.n * P);
  a.sin_v.resize(a.n * P);
  {
    int64_t r = 0;
    for (const auto& s : seqs) {
      for (int32_t t = 0; t < s.n_tokens; ++t, ++r) {
        kernels::get_row(w_.token_embd, s.tokens[t], a.x.data() + r * E);
        if (h_.embd_scale != 1.0f) {
          for (int64_t i = 0; i < E; ++i) a.x[r * E + i] *= h_.embd_scale;
        }
      }
    }
  }
  for_rows(a.n, [&](int64_t r) {
    rope_->angles(a.pos[r], a.cos_v.data() + r * P, a.sin_v.data() + r * P);
  });
  if (rope_swa_) {
    a.cos_swa.resize(a.n * P);
    a.sin_swa.resize(a.n * P);
    for_rows(a.n, [&](int64_t r) {
      rope_swa_->angles(a.pos[r], a.cos_swa.data() + r * P, a.sin_swa.data() + r * P);
    });
  }
  for (int32_t il = 0; il < h_.n_layer; ++il) layer(il, a);
  commit_sequence_state(seqs);

  // Final norm and the output projection, only for the rows that want logits.
  std::vector<float> last;
  int64_t row_end = 0;
  for (const auto& s : seqs) {
    row_end += s.n_tokens;
    if (!s.want_logits) continue;
    for (int64_t row = row_end - s.logit_rows; row < row_end; ++row) {
      last.resize(last.size() + E);
      rms_norm(a.x.data() + row * E, w_.output_norm.data(), static_cast<int32_t>(E), h_.rms_eps,
               last.data() + last.size() - E);
    }
  }
  const int64_t n_out = static_cast<int64_t>(last.size()) / E;
  if (n_out == 0) return;
  std::vector<float> all(n_out * h_.n_vocab);
  kernels::matmul(w_.output, last.data(), n_out, all.data(), pool_.get());
  if (h_.final_softcap > 0) {
    const float c = h_.final_softcap, inv = 1.0f / c;
    for (float& l : all) l = std::tanh(l * inv) * c;
  }
  for (int64_t i = 0; i < n_out; ++i) {
    logits.emplace_back(all.begin() + i * h_.n_vocab, all.begin() + (i + 1) * h_.n_vocab);
  }
}

void LlamaModel::layer(int32_t il, Acts& a) {
  const auto& L = w_.layers[il];
  if (L.recurrent) return recurrent_layer(il, a);
  const int64_t n = a.n, E = h_.n_embd, QD = h_.q_dim(), KD = h_.kv_dim();
  a.q.resize(n * L.wq.rows);  // gated attention: [q, gate] per head, split below
  a.k.resize(n * KD);
  a.v.resize(n * KD);
  a.att.resize(n * QD);
  a.tmp.resize(n * E);

  for_rows(n, [&](int64_t r) {
    rms_norm(a.x.data() + r * E, L.attn_norm.data(), E, h_.rms_eps, a.xn.data() + r * E);
  });
  project_qkv(L, a);
  add_bias(a.q.data(), L.bq, n);
  add_bias(a.k.data(), L.bk, n);
  add_bias(a.v.data(), L.bv, n);
  if (h_.gated_attention()) split_query_gate(a);
  rope_rows(il, L, a);
  if (rot_k_ > 0 || rot_v_ > 0) {
    for_rows(n, [&](int64_t r) {
      if (rot_k_ > 0) {
        hadamard_blocks(a.q.data() + r * QD, QD, rot_k_);
        hadamard_blocks(a.k.data() + r * KD, KD, rot_k_);
      }
      if (rot_v_ > 0) hadamard_blocks(a.v.data() + r * KD, KD, rot_v_);
    });
  }
  // Every row's K/V goes to the cache before any row attends, and attention reads only the
  // cache: a token then sees the same (possibly F16-rounded) keys in any chunking.
  const int32_t bs = kv_.block_size();
  const bool windowed = window_ && h_.window(il) > 0;
  KvCache& cache = windowed ? window_->cache() : kv_;
  const auto& tables = windowed ? a.row_window_table : a.row_table;
  // Each row writes its own slot, so rows convert (and quantize) in parallel.
  for_rows(n, [&](int64_t r) {
    cache.write(tables[r][a.pos[r] / bs], a.pos[r] % bs, kv_layer_[il], a.k.data() + r * KD,
                a.v.data() + r * KD);
  });
  attention(il, a);
  if (rot_v_ > 0) {
    for_rows(n, [&](int64_t r) { hadamard_blocks(a.att.data() + r * QD, QD, rot_v_); });
  }
  if (h_.gated_attention()) {
    for_rows(n, [&](int64_t r) {
      float* o = a.att.data() + r * QD;
      const float* g = a.qgate.data() + r * QD;
      for (int64_t i = 0; i < QD; ++i) o[i] *= 1.0f / (1.0f + std::exp(-g[i]));
    });
  }
  kernels::matmul(L.wo, a.att.data(), n, a.tmp.data(), pool_.get());
  add_bias(a.tmp.data(), L.bo, n);
  add_sublayer(L.post_attn_norm, a);

  for_rows(n, [&](int64_t r) {
    rms_norm(a.x.data() + r * E, L.ffn_norm.data(), E, h_.rms_eps, a.xn.data() + r * E);
  });
  ffn(L, a);
  add_sublayer(L.post_ffn_norm, a);
}

// q/k norms (when the layer has them), then the rope of the layer's kind, then the attention
// temperature of each row's position (when the model has one), in place on a.q and a.k.
void LlamaModel::rope_rows(int32_t il, const LayerWeights& L, Acts& a) {
  const int64_t QD = h_.q_dim(), KD = h_.kv_dim(), P = rope_->n_pairs(), HD = h_.head_dim;
  const bool own = rope_swa_ && h_.window(il) > 0;
  const Rope& rope = own ? *rope_swa_ : *rope_;
  const float* cos_v = own ? a.cos_swa.data() : a.cos_v.data();
  const float* sin_v = own ? a.sin_swa.data() : a.sin_v.data();
  for_rows(a.n, [&](int64_t r) {
    float* q = a.q.data() + r * QD;
    float* k = a.k.data() + r * KD;
    if (!L.q_norm.empty()) {
      for (int32_t h = 0; h < h_.n_head; ++h)
        rms_norm(q + h * HD, L.q_norm.data(), HD, h_.rms_eps, q + h * HD);
      for (int32_t h = 0; h < h_.n_head_kv; ++h)
        rms_norm(k + h * HD, L.k_norm.data(), HD, h_.rms_eps, k + h * HD);
    }
    rope.apply(q, h_.n_head, cos_v + r * P, sin_v + r * P);
    rope.apply(k, h_.n_head_kv, cos_v + r * P, sin_v + r * P);
    const float t = attention_temperature(h_.attn_temp_scale, h_.attn_temp_floor, a.pos[r]);
    if (t != 1.0f) {
      for (int64_t i = 0; i < QD; ++i) q[i] *= t;
    }
  });
}

// x += the sublayer's output a.tmp, RMS-normed first by post_norm when it is not empty.
void LlamaModel::add_sublayer(const std::vector<float>& post_norm, Acts& a) {
  const int64_t E = h_.n_embd;
  if (!post_norm.empty()) {
    for_rows(a.n, [&](int64_t r) {
      float* y = a.tmp.data() + r * E;
      rms_norm(y, post_norm.data(), static_cast<int32_t>(E), h_.rms_eps, y);
    });
  }
  add_inplace(a.x.data(), a.tmp.data(), a.n * E);
}

// a.tmp = the layer's FFN of every row of a.xn.
void LlamaModel::ffn(const LayerWeights& L, Acts& a) {
  switch (L.ffn) {
    case FfnKind::Dense:
      gate_up(L, a);
      kernels::matmul(L.w_down, a.gate.data(), a.n, a.tmp.data(), pool_.get());
      return;
    case FfnKind::Moe:
      moe_ffn(L.moe, h_.moe, h_.n_embd, a.xn.data(), a.n, a.tmp.data(), a.moe, pool_.get());
      if (L.moe.shared.present()) {
        add_shared_expert(L.moe.shared, h_.n_embd, a.xn.data(), a.n, a.tmp.data(), a.shexp,
                          pool_.get());
      }
      return;
  }
}

// q, k and v of every row from a.xn: one matmul over the stacked matrices when the weights are
// stacked (then each row split), else three.
void LlamaModel::project_qkv(const LayerWeights& L, Acts& a) {
  const int64_t n = a.n, QD = L.wq.rows, KD = h_.kv_dim();
  if (L.wqkv.data == nullptr) {
    kernels::matmul(L.wq, a.xn.data(), n, a.q.data(), pool_.get());
    kernels::matmul(L.wk, a.xn.data(), n, a.k.data(), pool_.get());
    kernels::matmul(L.wv, a.xn.data(), n, a.v.data(), pool_.get());
    return;
  }
  const int64_t T = QD + 2 * KD;
  a.fused.resize(n * T);
  kernels::matmul(L.wqkv, a.xn.data(), n, a.fused.data(), pool_.get());
  for (int64_t r = 0; r < n; ++r) {
    const float* row = a.fused.data() + r * T;
    std::copy(row, row + QD, a.q.data() + r * QD);
    std::copy(row + QD, row + QD + KD, a.k.data() + r * KD);
    std::copy(row + QD + KD, row + T, a.v.data() + r * KD);
  }
}

// a.gate = act(gate) * up (the model's activation) of every row of a.xn, from the stacked gate|up
// matrix when there is one.
void LlamaModel::gate_up(const LayerWeights& L, Acts& a) {
  const int64_t n = a.n, F = h_.n_ff;
  const auto activate = h_.ffn_act == FfnAct::GeluTanh ? gelu_tanh_mul : silu_mul;
  a.gate.resize(n * F);
  if (L.w_gate_up.data == nullptr) {
    a.up.resize(n * F);
    kernels::matmul(L.w_gate, a.xn.data(), n, a.gate.data(), pool_.get());
    kernels::matmul(L.w_up, a.xn.data(), n, a.up.data(), pool_.get());
    for_rows(n, [&](int64_t r) { activate(a.gate.data() + r * F, a.up.data() + r * F, F); });
    return;
  }
  a.fused.resize(n * 2 * F);
  kernels::matmul(L.w_gate_up, a.xn.data(), n, a.fused.data(), pool_.get());
  for_rows(n, [&](int64_t r) {
    float* row = a.fused.data() + r * 2 * F;
    activate(row, row + F, F);
    std::copy(row, row + F, a.gate.data() + r * F);
  });
}

void LlamaModel::attention(int32_t il, Acts& a) {
  AttentionShape s;
  s.n_head = h_.n_head;
  s.n_head_kv = h_.n_head_kv;
  s.head_dim = h_.head_dim;
  s.scale = h_.attention_scale();
  s.window = h_.window(il);
  s.sinks = w_.layers[il].sinks.empty() ? nullptr : w_.layers[il].sinks.data();
  const int64_t QD = h_.q_dim();
  const int64_t n_tiles = static_cast<int64_t>(a.tiles.size());
  const int64_t items = n_tiles * h_.n_head_kv;
  // A tile's cost grows with its rows times its span (at most the window and the tile's own
  // rows in a windowed layer): a long prefill's tiles dwarf decode rows.
  // Threads take (KV head, tile) items from a shared counter, costliest tiles first within each
  // head, so a thread that finishes early or was descheduled does not leave the other waiting.
  // Which thread runs an item cannot change its bits: each item writes only its own outputs.
  std::vector<int32_t> order(n_tiles);
  std::iota(order.begin(), order.end(), 0);
  auto cost = [&](int32_t t) {
    const auto [r, n] = a.tiles[t];
    const int64_t span = a.pos[r + n - 1] + 1;
    return static_cast<int64_t>(n) * (s.window > 0 ? std::min<int64_t>(span, s.window + n) : span);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t x, int32_t y) { return cost(x) > cost(y); });
  std::atomic<int64_t> next{0};
  const bool windowed = window_ && s.window > 0;
  const KvCache& cache = windowed ? window_->cache() : kv_;
  const auto& tables = windowed ? a.row_window_table : a.row_table;
  auto run = [&](int64_t, int64_t) {
    AttentionScratch scratch;
    for (int64_t it = next++; it < items; it = next++) {
      const auto [r, n] = a.tiles[order[it % n_tiles]];
      const int32_t g = static_cast<int32_t>(it / n_tiles);
      attend_rows(cache, kv_layer_[il], s, g, a.q.data() + r * QD, a.pos.data() + r, n, tables[r],
                  a.att.data() + r * QD, scratch);
    }
  };
  if (items < 2) {
    run(0, 1);
  } else {
    pool_->parallel_for(std::min<int64_t>(items, pool_->size()), run);
  }
}

}  // namespace baton::model

namespace baton::model {

// Gated attention: each head's query rows are [q, gate]; a.q keeps the queries, a.qgate the
// gates that scale the head's output.
void LlamaModel::split_query_gate(Acts& a) {
  const int64_t n = a.n, QD = h_.q_dim(), HD = h_.head_dim;
  a.fused.swap(a.q);
  a.q.resize(n * QD);
  a.qgate.resize(n * QD);
  for_rows(n, [&](int64_t r) {
    const float* row = a.fused.data() + r * 2 * QD;
    for (int32_t h = 0; h < h_.n_head; ++h) {
      std::copy(row + 2 * h * HD, row + (2 * h + 1) * HD, a.q.data() + r * QD + h * HD);
      std::copy(row + (2 * h + 1) * HD, row + (2 * h + 2) * HD, a.qgate.data() + r * QD + h * HD);
    }
  });
}

// A gated DeltaNet layer of a hybrid model, then its FFN: the residual structure of the
// attention layers, with each sequence's recurrent state in place of KV.
void LlamaModel::recurrent_layer(int32_t il, Acts& a) {
  const auto& L = w_.layers[il];
  const int64_t n = a.n, E = h_.n_embd;
  a.tmp.resize(n * E);
  for_rows(n, [&](int64_t r) {
    rms_norm(a.x.data() + r * E, L.attn_norm.data(), E, h_.rms_eps, a.xn.data() + r * E);
  });
  for (size_t i = 0; i < a.seqs.size(); ++i) {
    a.seqs[i].conv = states_->conv(a.seq_state[i], il);
    a.seqs[i].matrix = states_->matrix(a.seq_state[i], il);
    a.seqs[i].captures.clear();
    for (const auto& [rows, state] : a.seq_captures[i]) {
      a.seqs[i].captures.push_back({rows, states_->conv(state, il), states_->matrix(state, il)});
    }
  }
  delta_net(L.dnet, h_.ssm, h_.rms_eps, a.xn.data(), n, a.seqs, a.tmp.data(), a.dnet, pool_.get());
  add_inplace(a.x.data(), a.tmp.data(), n * E);
  for_rows(n, [&](int64_t r) {
    rms_norm(a.x.data() + r * E, L.ffn_norm.data(), E, h_.rms_eps, a.xn.data() + r * E);
  });
  ffn(L, a);
  add_inplace(a.x.data(), a.tmp.data(), n * E);
}

}  // namespace baton::model
