#pragma once
// A llama-family model (llama, qwen2, qwen3, qwen3moe, gpt-oss, gemma3, mistral3, and the hybrid
// qwen35moe) over a GGUF mapping, with its block KV cache, the recurrent state of each sequence
// (hybrid models), and the forward pass over a ragged batch of sequences.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "kernels/thread_pool.h"
#include "model/footprint.h"
#include "model/hparams.h"
#include "model/kv_cache.h"
#include "model/recurrent_state.h"
#include "model/rope.h"
#include "model/weight_arena.h"
#include "model/weights.h"
#include "model/window_kv.h"

namespace baton::model {

struct ModelOptions {
  int threads = 0;              // 0 = hardware concurrency
  KvType k_type = KvType::F16;  // KV storage (kv_cache.h)
  KvType v_type = KvType::F16;
  int32_t block_size = 16;
  // Rewrite quantized matrices into the layout the AVX-512 kernels stream fastest (see
  // model/weight_arena.h); off keeps them in the file's mapping (for comparing).
  bool interleave_weights = true;
  // Called once the model's shapes are known and before its weights are rewritten into tiles
  // (the minute of a large load): what it will take of memory. It may throw to refuse the load.
  std::function<void(const ModelFootprint&)> before_tiles;
};

// A checkpoint of a sequence's state (a hybrid model's recurrent state, a windowed model's
// window KV) after its first `pos` positions, written into checkpoint slot `slot` (see
// LlamaModel::allocate_state_slots) by the step that reaches pos.
struct StateCapture {
  int32_t pos = 0;
  int32_t slot = 0;
};

// One sequence's slice of a batch (see engine::SeqChunk).
struct SeqSlice {
  int32_t start_pos = 0;
  const int32_t* tokens = nullptr;
  int32_t n_tokens = 0;
  const int32_t* block_table = nullptr;
  int32_t n_table = 0;
  bool want_logits = false;
  int32_t logit_rows = 1;  // with want_logits: logits of the last logit_rows tokens
  // Names the sequence's state (hybrid models' recurrent state, windowed layers' KV): one id per
  // sequence in a step.
  uint64_t seq_id = 0;
  // Models with sequence state: checkpoints to take inside this slice (start_pos < pos <= start_pos
  // + n_tokens, increasing, each slot once per step).
  const StateCapture* captures = nullptr;
  int32_t n_captures = 0;
};

class LlamaModel {
 public:
  // Owns the file. Throws std::runtime_error naming what is wrong with it.
  LlamaModel(std::unique_ptr<gguf::GgufFile> file, const ModelOptions& opts);
  ~LlamaModel();

  const HParams& hparams() const { return h_; }
  const ModelWeights& weights() const { return w_; }
  const gguf::GgufFile& file() const { return *file_; }
  // Bytes of weights rewritten into the interleaved layout at load (0: the file's layout).
  size_t interleaved_bytes() const { return arena_ ? arena_->size() : 0; }
  KvCache& kv() { return kv_; }
  const KvCache& kv() const { return kv_; }
  kernels::ThreadPool& pool() { return *pool_; }
  // Hybrid models only (null otherwise): the per-sequence recurrent states.
  RecurrentStates* states() { return states_.get(); }
  const RecurrentStates* states() const { return states_.get(); }
  // Windowed models only (null otherwise): the windowed layers' KV of each sequence.
  WindowKv* window_kv() { return window_.get(); }
  const WindowKv* window_kv() const { return window_.get(); }

  // State a sequence keeps beside its blocks, which cannot be rebuilt from the block cache: a
  // hybrid model's recurrent state, a windowed model's window KV. Such a sequence continues only
  // from where its last step ended (or restarts at 0, or from a checkpoint of that state).
  bool has_sequence_state() const { return states_ || window_; }
  // Bytes of one checkpoint slot (recurrent state + the window before its position), a multiple
  // of 64.
  uint64_t state_checkpoint_bytes() const;
  // Storage for n checkpoint slots (untouched pages cost nothing); throws std::runtime_error
  // when it cannot be had.
  void allocate_state_slots(int32_t n);
  int32_t n_state_slots() const { return n_slots_; }
  // Slot s's bytes, for copying a checkpoint out or in (empty when s is out of range), and the
  // positions a slot written that way holds (<= 0: nothing usable; mark it so before writing).
  std::span<uint8_t> state_slot(int32_t s);
  void set_state_slot(int32_t s, int32_t n_pos);
  // Sequence seq_id continues from slot s, which must hold the state after n_pos positions: ""
  // when it did, else why not (one line).
  std::string restore_state(uint64_t seq_id, int32_t s, int32_t n_pos);
  // Frees a sequence's state (nothing for other models).
  void release_sequence(uint64_t seq_id) {
    if (states_) states_->release(seq_id);
    if (window_) window_->release(seq_id);
  }
  // Forgets every sequence's state (the KV they pointed into is gone).
  void clear_sequences() {
    if (states_) states_->clear();
    if (window_) window_->clear();
  }

  // The memory this model takes as it is configured (before_tiles gets the same).
  ModelFootprint footprint(bool tiles) const;

  // Runs every slice's tokens through the model, writing their K/V into the cache, and returns
  // the last-token logits of each slice with want_logits, in order. Throws std::runtime_error
  // on a bad slice (token out of range, block table too short, block id out of range).
  void forward(const std::vector<SeqSlice>& seqs, std::vector<std::vector<float>>& logits);

 private:
  struct Acts;
  void validate(const std::vector<SeqSlice>& seqs) const;
  void validate_captures(const std::vector<SeqSlice>& seqs) const;
  void validate_sequence_state(size_t i, const std::vector<SeqSlice>& seqs) const;
  void begin_sequence_state(const std::vector<SeqSlice>& seqs, Acts& a);
  void commit_sequence_state(const std::vector<SeqSlice>& seqs);
  void layer(int32_t il, Acts& a);
  void project_qkv(const LayerWeights& L, Acts& a);
  void ffn(const LayerWeights& L, Acts& a);
  void gate_up(const LayerWeights& L, Acts& a);
  void rope_rows(int32_t il, const LayerWeights& L, Acts& a);
  void add_sublayer(const std::vector<float>& post_norm, Acts& a);
  void attention(int32_t il, Acts& a);
  void recurrent_layer(int32_t il, Acts& a);
  void split_query_gate(Acts& a);
  template <typename F>
  void for_rows(int64_t n, F&& fn);

  std::unique_ptr<gguf::GgufFile> file_;
  HParams h_;
  ModelWeights w_;
  std::unique_ptr<Rope> rope_;
  std::unique_ptr<Rope> rope_swa_;  // the windowed layers' own rope (gemma3), or null
  // Per layer, its layer in the KV cache (full-attention layers) or in the window KV (windowed
  // layers); -1 for recurrent layers.
  std::vector<int32_t> kv_layer_;
  // Quantized KV: q and k (and v) are rotated by a Walsh-Hadamard matrix of this many dims
  // before K (V) is stored, as llama.cpp does, so an outlier dimension spreads over its block
  // before quantization rounds it (0: no rotation). The attention output is rotated back.
  int32_t rot_k_ = 0, rot_v_ = 0;
  KvCache kv_;
  std::unique_ptr<RecurrentStates> states_;
  std::unique_ptr<WindowKv> window_;
  // Checkpoint slots: each the recurrent state's bytes, then the window's.
  std::unique_ptr<uint8_t[]> slot_arena_;
  int32_t n_slots_ = 0;
  std::unique_ptr<kernels::ThreadPool> pool_;
  std::unique_ptr<WeightArena> arena_;  // the interleaved matrices w_ points into, if any
  std::unique_ptr<Acts> acts_;          // the activations, reused by every forward pass
};

}  // namespace baton::model
