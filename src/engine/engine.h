#pragma once
// The interface the engine loop drives. The real engine (model forward on the CPU) and the fake
// engine of the scheduler tests both implement it. Only the engine-loop thread calls it.
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace baton::engine {

struct EngineInfo {
  std::string model_name;
  int32_t n_vocab = 0;
  int32_t n_ctx_train = 0;          // the model's trained context
  int32_t block_size = 16;          // tokens per KV block
  uint64_t kv_bytes_per_block = 0;  // all layers, K and V
  uint64_t fingerprint = 0;         // identifies weights + KV layout, seeds prefix hash chains
  // What a KV block's bytes mean (type and shapes), e.g. "f16 layers=22 kv_heads=4 head_dim=64";
  // the disk tier refuses files whose layout differs.
  std::string kv_layout;
  int32_t bos_id = -1;
  std::vector<int32_t> eog_ids;  // end-of-generation tokens (eos, eot, ...)
  // Hybrid recurrent models: the bytes of state each sequence holds beside its KV (0: none).
  // Such a state covers a whole prefix and cannot be cut back, so a sequence may only continue
  // from where its previous step ended, or start again at position 0.
  uint64_t state_bytes_per_seq = 0;
};

// A checkpoint a step takes of a sequence's recurrent state: once the step has succeeded, slot
// `slot` holds the state after the sequence's first `pos` positions (start_pos < pos <=
// start_pos + tokens.size()), and restore_state can start another sequence from there.
struct StateCheckpoint {
  int32_t pos = 0;
  int32_t slot = 0;
};

// One sequence's contribution to a step: `tokens` are new tokens at positions
// start_pos .. start_pos + tokens.size() - 1. KV for positions < start_pos is already in the
// blocks listed in block_table, which covers every position the step writes too
// (block_table[p / block_size] holds position p).
struct SeqChunk {
  uint64_t request_id = 0;
  int32_t start_pos = 0;
  std::vector<int32_t> tokens;
  std::vector<int32_t> block_table;
  bool want_logits = false;  // logits of the chunk's last token (decode rows, final prefill chunk)
  std::vector<StateCheckpoint> checkpoints;  // hybrid models only; in increasing pos
  // With want_logits: logits of the chunk's last `logit_rows` tokens, one entry each. A decode
  // row followed by drafted tokens (speculation) wants every row, to check each draft.
  int32_t logit_rows = 1;
};

struct StepBatch {
  std::vector<SeqChunk> seqs;
  size_t total_tokens() const {
    size_t n = 0;
    for (const auto& s : seqs) n += s.tokens.size();
    return n;
  }
};

// Logits for every SeqChunk with want_logits, in batch order (logit_rows entries for a chunk, in
// position order, each with the chunk's request id): logits[k] has n_vocab floats.
struct StepOutput {
  std::vector<uint64_t> request_ids;
  std::vector<std::vector<float>> logits;
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual EngineInfo info() const = 0;
  // Allocates KV storage for n_blocks blocks (ids 0..n_blocks-1). Called once before forward.
  virtual void allocate_kv(int32_t n_blocks) = 0;
  // One forward pass over a ragged batch. A sequence's logits must be bit-identical whatever
  // else is in the batch and however its prompt was chunked. Throws std::runtime_error on failure.
  virtual void forward(const StepBatch& batch, StepOutput& out) = 0;
  // Copies the first n_tokens positions of block src into block dst (copy-on-write of a shared
  // partial tail block).
  virtual void copy_block(int32_t src, int32_t dst, int32_t n_tokens) = 0;
  // The request is done with its sequence (finished, or restarting from position 0): the engine
  // may free the recurrent state it keeps for it. No-op for engines without such state.
  virtual void release_sequence(uint64_t request_id) { (void)request_id; }
  // Hybrid models: storage for n_slots state checkpoints of state_bytes_per_seq bytes each
  // (slot ids 0..n_slots-1), which the loop names and evicts (kv::StateStore). Called once,
  // after allocate_kv; throws std::runtime_error when the memory cannot be had.
  virtual void allocate_state_slots(int32_t n_slots) { (void)n_slots; }
  // The request's sequence continues from the checkpoint in `slot`, which must hold the state
  // after exactly `n_pos` positions (its next step starts at n_pos). Throws std::runtime_error
  // when it does not (an empty or overwritten slot), so a wrong state is never used.
  virtual void restore_state(uint64_t request_id, int32_t slot, int32_t n_pos) {
    (void)request_id;
    (void)slot;
    (void)n_pos;
    throw std::runtime_error("this engine keeps no recurrent state to restore");
  }
  // The bytes of checkpoint slot `slot`, for the disk tier: read on the loop thread while the
  // slot holds a checkpoint, written by the disk tier's thread while the loop keeps the slot
  // reserved. Empty when the engine cannot expose them (the disk tier then holds no state).
  virtual std::span<uint8_t> state_slot(int32_t slot) {
    (void)slot;
    return {};
  }
  // Slot `slot` now holds the state after n_pos positions, its bytes written through state_slot
  // (n_pos <= 0: nothing usable, before they are written). Throws std::runtime_error for a slot
  // that does not exist or bytes the engine cannot take.
  virtual void set_state_slot(int32_t slot, int32_t n_pos) {
    (void)slot;
    (void)n_pos;
    throw std::runtime_error("this engine keeps no state checkpoints");
  }
  // The bytes of one block (all layers, K and V), for the disk tier, which reads and writes them
  // from its own thread while the block is pinned and in no step. Stable from allocate_kv on.
  // Empty when the engine cannot expose its KV (the disk tier is then refused).
  virtual std::span<uint8_t> kv_block(int32_t block) {
    (void)block;
    return {};
  }
};

}  // namespace baton::engine
