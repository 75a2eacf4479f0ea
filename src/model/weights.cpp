#include "model/weights.h"

#include <fmt/format.h>

#include <stdexcept>

namespace baton::model {
namespace {

class Loader {
 public:
  Loader(const gguf::GgufFile& f) : f_(f) {}

  const gguf::TensorInfo* find(const std::string& name) const { return f_.find_tensor(name); }

  const gguf::TensorInfo& need(const std::string& name) const {
    const auto* t = f_.find_tensor(name);
    if (!t) throw std::runtime_error(fmt::format("{}: tensor {} is missing", f_.path(), name));
    if (!gguf::traits(t->type).supported) {
      throw std::runtime_error(
          fmt::format("{}: tensor {} has type {}, which baton cannot compute "
                      "with (use f32, f16, bf16, q8_0, q5_0, q4_0, q4_1, iq4_nl, q2_K, q3_K, "
                      "q4_K, q5_K, q6_K or iq4_xs)",
                      f_.path(), name, gguf::type_name(t->type)));
    }
    return *t;
  }

  kernels::MatrixView matrix(const std::string& name, int64_t cols, int64_t rows) const {
    const auto& t = need(name);
    if (t.dims.size() != 2 || t.dims[0] != static_cast<uint64_t>(cols) ||
        t.dims[1] != static_cast<uint64_t>(rows)) {
      throw std::runtime_error(fmt::format("{}: tensor {} has shape {}, expected [{}, {}]",
                                           f_.path(), name, shape(t), cols, rows));
    }
    return kernels::view_of(t, f_.tensor_data(t));
  }

  std::vector<float> vec(const std::string& name, int64_t n) const {
    const auto& t = need(name);
    if (t.n_elements != static_cast<uint64_t>(n) || t.dims.empty() || t.dims[0] != t.n_elements) {
      throw std::runtime_error(
          fmt::format("{}: tensor {} has shape {}, expected [{}]", f_.path(), name, shape(t), n));
    }
    std::vector<float> out(n);
    kernels::get_row(kernels::view_of(t, f_.tensor_data(t)), 0, out.data());
    return out;
  }

  std::vector<float> opt_vec(const std::string& name, int64_t n) const {
    return find(name) ? vec(name, n) : std::vector<float>{};
  }

 private:
  static std::string shape(const gguf::TensorInfo& t) {
    std::string s = "[";
    for (size_t i = 0; i < t.dims.size(); ++i) s += (i ? ", " : "") + std::to_string(t.dims[i]);
    return s + "]";
  }
  const gguf::GgufFile& f_;
};

uint64_t view_bytes(const kernels::MatrixView& m) {
  return m.row_stride * m.rows;
}

LayerWeights load_layer(const Loader& L, const HParams& h, int i) {
  const std::string p = fmt::format("blk.{}.", i);
  LayerWeights w;
  w.attn_norm = L.vec(p + "attn_norm.weight", h.n_embd);
  w.wq = L.matrix(p + "attn_q.weight", h.n_embd, h.q_dim());
  w.wk = L.matrix(p + "attn_k.weight", h.n_embd, h.kv_dim());
  w.wv = L.matrix(p + "attn_v.weight", h.n_embd, h.kv_dim());
  w.wo = L.matrix(p + "attn_output.weight", h.q_dim(), h.n_embd);
  if (h.arch == Arch::Qwen2) {
    w.bq = L.vec(p + "attn_q.bias", h.q_dim());
    w.bk = L.vec(p + "attn_k.bias", h.kv_dim());
    w.bv = L.vec(p + "attn_v.bias", h.kv_dim());
  } else {
    // Some llama conversions carry biases too; use them when present.
    w.bq = L.opt_vec(p + "attn_q.bias", h.q_dim());
    w.bk = L.opt_vec(p + "attn_k.bias", h.kv_dim());
    w.bv = L.opt_vec(p + "attn_v.bias", h.kv_dim());
  }
  if (h.arch == Arch::Qwen3) {
    w.q_norm = L.vec(p + "attn_q_norm.weight", h.head_dim);
    w.k_norm = L.vec(p + "attn_k_norm.weight", h.head_dim);
  }
  w.ffn_norm = L.vec(p + "ffn_norm.weight", h.n_embd);
  w.w_gate = L.matrix(p + "ffn_gate.weight", h.n_embd, h.n_ff);
  w.w_up = L.matrix(p + "ffn_up.weight", h.n_embd, h.n_ff);
  w.w_down = L.matrix(p + "ffn_down.weight", h.n_ff, h.n_embd);
  return w;
}

}  // namespace

ModelWeights load_weights(const gguf::GgufFile& f, HParams& h) {
  Loader L(f);
  const auto& embd = L.need("token_embd.weight");
  if (embd.dims.size() != 2 || embd.dims[0] != static_cast<uint64_t>(h.n_embd) ||
      embd.dims[1] == 0 || embd.dims[1] > (1u << 24)) {
    throw std::runtime_error(
        fmt::format("{}: tensor token_embd.weight must be [{}, n_vocab]", f.path(), h.n_embd));
  }
  h.n_vocab = static_cast<int32_t>(embd.dims[1]);
  ModelWeights w;
  w.token_embd = L.matrix("token_embd.weight", h.n_embd, h.n_vocab);
  w.layers.reserve(h.n_layer);
  for (int i = 0; i < h.n_layer; ++i) w.layers.push_back(load_layer(L, h, i));
  w.output_norm = L.vec("output_norm.weight", h.n_embd);
  w.output =
      L.find("output.weight") ? L.matrix("output.weight", h.n_embd, h.n_vocab) : w.token_embd;
  w.rope_freqs = L.opt_vec("rope_freqs.weight", h.n_rot / 2);
  for (const auto& l : w.layers) {
    for (const auto* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) {
      w.matmul_params_per_token += static_cast<uint64_t>(m->rows * m->cols);
      w.matmul_bytes_per_token += view_bytes(*m);
    }
  }
  w.matmul_params_per_token += static_cast<uint64_t>(w.output.rows * w.output.cols);
  w.matmul_bytes_per_token += view_bytes(w.output);
  return w;
}

}  // namespace baton::model
