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
                      "q4_K, q5_K, q6_K, iq4_xs or mxfp4)",
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

  // A tensor the architecture requires though llama-family files in general do not carry it:
  // the message says what it is for.
  void require(const std::string& name, const char* what) const {
    if (!find(name)) {
      throw std::runtime_error(fmt::format(
          "{}: tensor {} is missing ({}; the file is not a complete model of its architecture: "
          "convert it again with a current llama.cpp)",
          f_.path(), name, what));
    }
  }

  // A 1-D tensor of n floats whose length follows from a key: a wrong length names the key.
  std::vector<float> vec_per(const std::string& name, int64_t n, const std::string& key,
                             const char* what) const {
    require(name, what);
    const auto& t = need(name);
    if (t.n_elements != static_cast<uint64_t>(n) || t.dims.size() != 1) {
      throw std::runtime_error(
          fmt::format("{}: tensor {} has shape {}, expected [{}] ({}, one per {} = {}): the file "
                      "is inconsistent; use a consistent file",
                      f_.path(), name, shape(t), n, what, key, n));
    }
    return vec(name, n);
  }

  // The rows x cols floats of a 2-D tensor [cols, rows] (per-expert biases), row after row.
  std::vector<float> rows_of(const std::string& name, int64_t cols, int64_t rows,
                             const char* what) const {
    require(name, what);
    const auto m = matrix(name, cols, rows);
    std::vector<float> out(static_cast<size_t>(cols * rows));
    for (int64_t r = 0; r < rows; ++r) kernels::get_row(m, r, out.data() + r * cols);
    return out;
  }

  // The n_expert slices of a 3-D expert tensor [cols, rows, n_expert], each a rows x cols
  // matrix. rows < 0: any (the caller reads it from the tensor). `what` says, in a message,
  // what the tensor is for.
  std::vector<kernels::MatrixView> experts(const std::string& name, int64_t cols, int64_t rows,
                                           const std::string& expert_key, int64_t n_expert,
                                           const char* what) const {
    const auto* t = find(name);
    if (!t) {
      throw std::runtime_error(fmt::format(
          "{}: tensor {} is missing ({}; the file is not a complete mixture-of-experts model)",
          f_.path(), name, what));
    }
    need(name);  // type check
    if (t->dims.size() != 3 || t->dims[0] != static_cast<uint64_t>(cols) ||
        (rows >= 0 && t->dims[1] != static_cast<uint64_t>(rows)) || t->dims[1] == 0) {
      throw std::runtime_error(fmt::format("{}: tensor {} has shape {}, expected [{}, {}, {}]",
                                           f_.path(), name, shape(*t), cols,
                                           rows >= 0 ? std::to_string(rows) : "n_ff", n_expert));
    }
    if (t->dims[2] != static_cast<uint64_t>(n_expert)) {
      throw std::runtime_error(fmt::format(
          "{}: tensor {} holds {} experts but {} is {}: the file is inconsistent (set the key "
          "to {} or use a consistent file)",
          f_.path(), name, t->dims[2], expert_key, n_expert, t->dims[2]));
    }
    gguf::TensorInfo flat = *t;
    flat.dims = {t->dims[0], t->dims[1] * t->dims[2]};
    const kernels::MatrixView all = kernels::view_of(flat, f_.tensor_data(*t));
    const int64_t per = static_cast<int64_t>(t->dims[1]);
    std::vector<kernels::MatrixView> out(n_expert, all);
    for (int64_t e = 0; e < n_expert; ++e) {
      out[e].data = static_cast<const uint8_t*>(all.data) + e * per * all.row_stride;
      out[e].rows = per;
    }
    return out;
  }

  const std::string& path() const { return f_.path(); }

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

// The shared expert beside the routed ones. Its width comes from the tensors when the file has
// no expert_shared_feed_forward_length; every layer must then agree.
SharedExpertWeights load_shared_expert(const Loader& L, HParams& h, const std::string& p) {
  const int64_t E = h.n_embd;
  SharedExpertWeights w;
  const std::string gate = p + "ffn_gate_shexp.weight";
  const auto& t = L.need(gate);
  const int64_t ff = t.dims.size() == 2 ? static_cast<int64_t>(t.dims[1]) : -1;
  if (h.n_ff_shared > 0 && ff != h.n_ff_shared) {
    throw std::runtime_error(fmt::format(
        "{}: tensor {} has {} rows but {}.expert_shared_feed_forward_length is {}: the file is "
        "inconsistent (set the key to {} or use a consistent file)",
        L.path(), gate, ff, h.arch_key, h.n_ff_shared, ff));
  }
  if (ff < 1 || ff > (1 << 20)) {
    throw std::runtime_error(fmt::format("{}: tensor {} must be [{}, n_ff_shared] with 1..{} rows",
                                         L.path(), gate, E, 1 << 20));
  }
  h.n_ff_shared = static_cast<int32_t>(ff);
  w.gate = L.matrix(gate, E, ff);
  w.up = L.matrix(p + "ffn_up_shexp.weight", E, ff);
  w.down = L.matrix(p + "ffn_down_shexp.weight", ff, E);
  w.scale = L.vec(p + "ffn_gate_inp_shexp.weight", E);
  return w;
}

// A layer's router and experts. Sets h.moe.n_ff from the first layer's tensors when the file
// has no key for it; every layer must then agree.
MoeWeights load_moe(const Loader& L, HParams& h, const std::string& p) {
  const std::string a = h.arch_key + ".";
  const int64_t E = h.n_embd, N = h.moe.n_expert;
  MoeWeights m;
  const std::string router = p + "ffn_gate_inp.weight";
  if (!L.find(router)) {
    throw std::runtime_error(
        fmt::format("{}: tensor {} is missing (the expert router; the file is not a complete "
                    "mixture-of-experts model)",
                    L.path(), router));
  }
  const auto& rt = L.need(router);
  if (rt.dims.size() == 2 && rt.dims[0] == static_cast<uint64_t>(E) &&
      rt.dims[1] != static_cast<uint64_t>(N)) {
    throw std::runtime_error(
        fmt::format("{}: tensor {} routes to {} experts but {}expert_count is {}: the file is "
                    "inconsistent (set the key to {} or use a consistent file)",
                    L.path(), router, rt.dims[1], a, N, rt.dims[1]));
  }
  m.router = L.matrix(router, E, N);
  const std::string count_key = a + "expert_count";
  m.gate = L.experts(p + "ffn_gate_exps.weight", E, -1, count_key, N, "the experts' gate matrices");
  const int64_t ff = m.gate[0].rows;
  if (h.moe.n_ff > 0 && ff != h.moe.n_ff) {
    throw std::runtime_error(
        fmt::format("{}: tensor {}ffn_gate_exps.weight has experts of {} rows but "
                    "{}expert_feed_forward_length is {}: the file is inconsistent (set the key to "
                    "{} or use a consistent file)",
                    L.path(), p, ff, a, h.moe.n_ff, ff));
  }
  if (ff > (1 << 20)) {
    throw std::runtime_error(
        fmt::format("{}: tensor {}ffn_gate_exps.weight has experts of {} rows (at most {})",
                    L.path(), p, ff, 1 << 20));
  }
  h.moe.n_ff = static_cast<int32_t>(ff);
  m.up = L.experts(p + "ffn_up_exps.weight", E, ff, count_key, N, "the experts' up matrices");
  m.down = L.experts(p + "ffn_down_exps.weight", ff, E, count_key, N, "the experts' down matrices");
  m.gate_up.assign(N, kernels::MatrixView{});
  // qwen35moe always has a shared expert; qwen3next has one where the file holds it.
  if (h.arch == Arch::Qwen35Moe ||
      (h.arch == Arch::Qwen3Next && L.find(p + "ffn_gate_shexp.weight"))) {
    m.shared = load_shared_expert(L, h, p);
  }
  if (h.arch == Arch::GptOss) {
    m.router_bias = L.vec_per(p + "ffn_gate_inp.bias", N, count_key, "the router's bias");
    m.gate_bias = L.rows_of(p + "ffn_gate_exps.bias", ff, N, "the experts' gate biases");
    m.up_bias = L.rows_of(p + "ffn_up_exps.bias", ff, N, "the experts' up biases");
    m.down_bias = L.rows_of(p + "ffn_down_exps.bias", E, N, "the experts' down biases");
  }
  return m;
}

// The DeltaNet tensors of a recurrent layer, whose shapes follow from the ssm.* keys: a
// mismatch names the keys as well as the tensor.
DeltaNetWeights load_delta_net(const Loader& L, const HParams& h, const std::string& p) {
  const SsmParams& s = h.ssm;
  const int64_t E = h.n_embd, C = s.conv_dim(), V = s.value_dim(), Hv = s.n_v_heads;
  DeltaNetWeights w;
  if (L.find(p + "ssm_in.weight") && !L.find(p + "attn_qkv.weight")) {
    throw std::runtime_error(fmt::format(
        "{}: layer {}ssm_in.weight holds q, k, v and z interleaved per key head, the layout of "
        "qwen3next files converted before January 2026, which baton does not read; convert the "
        "model again with a current llama.cpp (it writes attn_qkv and attn_gate)",
        L.path(), p));
  }
  try {
    w.qkv = L.matrix(p + "attn_qkv.weight", E, C);
    w.z = L.matrix(p + "attn_gate.weight", E, V);
    if (L.find(p + "ssm_ba.weight")) {
      w.beta_alpha = L.matrix(p + "ssm_ba.weight", E, 2 * Hv);
    } else {
      w.beta = L.matrix(p + "ssm_beta.weight", E, Hv);
      w.alpha = L.matrix(p + "ssm_alpha.weight", E, Hv);
    }
    w.out = L.matrix(p + "ssm_out.weight", V, E);
    const auto conv = L.matrix(p + "ssm_conv1d.weight", s.d_conv, C);
    w.conv.resize(static_cast<size_t>(C * s.d_conv));
    for (int64_t c = 0; c < C; ++c) kernels::get_row(conv, c, w.conv.data() + c * s.d_conv);
    w.dt_bias = L.vec(p + "ssm_dt.bias", Hv);
    w.a = L.vec(p + "ssm_a", Hv);
    w.norm = L.vec(p + "ssm_norm.weight", s.head_dim);
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()).find("has shape") == std::string::npos) throw;
    const std::string a = h.arch_key + ".ssm.";
    throw std::runtime_error(fmt::format(
        "{} (shapes from {a}state_size {}, {a}group_count {}, {a}time_step_rank {}, "
        "{a}conv_kernel {}: q|k|v {} = 2 x {} x {} + {} x {}; the file's ssm keys disagree with "
        "its tensors: fix the keys or use a consistent file)",
        e.what(), s.head_dim, s.n_k_heads, s.n_v_heads, s.d_conv, C, s.n_k_heads, s.head_dim,
        s.n_v_heads, s.head_dim, fmt::arg("a", a)));
  }
  return w;
}

// The layer's FFN: routed experts for a mixture-of-experts model, else a SiLU-gated dense one.
void load_ffn(const Loader& L, HParams& h, const std::string& p, LayerWeights& w) {
  if (h.is_moe()) {
    w.ffn = FfnKind::Moe;
    w.moe = load_moe(L, h, p);
    return;
  }
  w.w_gate = L.matrix(p + "ffn_gate.weight", h.n_embd, h.n_ff);
  w.w_up = L.matrix(p + "ffn_up.weight", h.n_embd, h.n_ff);
  w.w_down = L.matrix(p + "ffn_down.weight", h.n_ff, h.n_embd);
}

// A hybrid model's recurrent layer: attn_norm, the DeltaNet, and the layer's FFN.
LayerWeights load_recurrent_layer(const Loader& L, HParams& h, int i) {
  const std::string p = fmt::format("blk.{}.", i);
  LayerWeights w{};
  w.attn_norm = L.vec(p + "attn_norm.weight", h.n_embd);
  w.recurrent = true;
  w.dnet = load_delta_net(L, h, p);
  w.ffn_norm = L.vec(p + "post_attention_norm.weight", h.n_embd);
  load_ffn(L, h, p, w);
  return w;
}

// A hybrid layer whose tensors are of the other kind than the layer pattern says: the pattern
// key, not a tensor, is what is wrong (or the file is not a whole model).
void check_layer_kind(const Loader& L, const HParams& h, int i) {
  const std::string p = fmt::format("blk.{}.", i);
  const bool rec = h.is_recurrent(i);
  const char* own = rec ? "attn_qkv.weight" : "attn_q.weight";
  const char* other = rec ? "attn_q.weight" : "attn_qkv.weight";
  if (L.find(p + own) || !L.find(p + other)) return;
  throw std::runtime_error(fmt::format(
      "{}: layer {} is {} by the layer pattern ({}.full_attention_interval or "
      "attention.recurrent_layers) but holds {}{} instead of {}{}: the pattern key disagrees "
      "with the tensors (fix the key to the model's pattern)",
      L.path(), i, rec ? "gated DeltaNet" : "attention", h.arch_key, p, other, p, own));
}

LayerWeights load_layer(const Loader& L, HParams& h, int i) {
  if (h.is_hybrid()) check_layer_kind(L, h, i);
  if (h.is_recurrent(i)) return load_recurrent_layer(L, h, i);
  const std::string p = fmt::format("blk.{}.", i);
  LayerWeights w{};
  w.attn_norm = L.vec(p + "attn_norm.weight", h.n_embd);
  // A gated attention layer's query rows hold each head's queries then its output gate.
  w.wq = L.matrix(p + "attn_q.weight", h.n_embd, h.q_dim() * (h.gated_attention() ? 2 : 1));
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
  if (has_qk_norm(h.arch)) {
    w.q_norm = L.vec(p + "attn_q_norm.weight", h.head_dim);
    w.k_norm = L.vec(p + "attn_k_norm.weight", h.head_dim);
  }
  if (h.arch == Arch::GptOss) {
    L.require(p + "attn_output.bias", "the attention output's bias");
    w.sinks = L.vec_per(p + "attn_sinks.weight", h.n_head, h.arch_key + ".attention.head_count",
                        "the attention sinks, a logit per head");
    // gpt-oss's norm between attention and FFN: the same place as ffn_norm, another name.
    L.require(p + "post_attention_norm.weight", "the norm before the layer's experts");
    w.ffn_norm = L.vec(p + "post_attention_norm.weight", h.n_embd);
  } else {
    // The hybrids name the norm before the FFN after the attention it follows.
    w.ffn_norm = L.vec(
        p + (is_hybrid_arch(h.arch) ? "post_attention_norm.weight" : "ffn_norm.weight"), h.n_embd);
  }
  if (h.post_norms) {
    L.require(p + "post_attention_norm.weight", "the norm of the attention's output");
    w.post_attn_norm = L.vec(p + "post_attention_norm.weight", h.n_embd);
    L.require(p + "post_ffw_norm.weight", "the norm of the feed-forward's output");
    w.post_ffn_norm = L.vec(p + "post_ffw_norm.weight", h.n_embd);
  }
  w.bo = L.opt_vec(p + "attn_output.bias", h.n_embd);
  load_ffn(L, h, p, w);
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
  auto count = [&w](const kernels::MatrixView& m, uint64_t times = 1, uint64_t per = 1) {
    w.matmul_params_per_token += static_cast<uint64_t>(m.rows * m.cols) * times / per;
    w.matmul_bytes_per_token += view_bytes(m) * times / per;
  };
  for (const auto& l : w.layers) {
    for (const auto* m : {&l.wq, &l.wk, &l.wv, &l.wo}) count(*m);
    for (const auto* m :
         {&l.dnet.qkv, &l.dnet.z, &l.dnet.beta, &l.dnet.alpha, &l.dnet.beta_alpha, &l.dnet.out}) {
      count(*m);
    }
    if (l.ffn == FfnKind::Dense) {
      for (const auto* m : {&l.w_gate, &l.w_up, &l.w_down}) count(*m);
      continue;
    }
    count(l.moe.router);
    for (const auto* m : {&l.moe.shared.gate, &l.moe.shared.up, &l.moe.shared.down}) count(*m);
    const auto N = static_cast<uint64_t>(h.moe.n_expert), k = static_cast<uint64_t>(h.moe.n_used);
    for (const auto* ms : {&l.moe.gate, &l.moe.up, &l.moe.down}) {
      for (const auto& m : *ms) count(m, k, N);
    }
  }
  w.matmul_params_per_token += static_cast<uint64_t>(w.output.rows * w.output.cols);
  w.matmul_bytes_per_token += view_bytes(w.output);
  return w;
}

}  // namespace baton::model
