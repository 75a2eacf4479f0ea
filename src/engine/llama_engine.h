#pragma once
// The real engine: a llama-family model on the CPU behind the engine::Engine interface.
#include <functional>
#include <memory>
#include <string>

#include "engine/engine.h"
#include "model/llama_model.h"
#include "tokenizer/tokenizer.h"

namespace baton::engine {

struct EngineOptions {
  int threads = 0;  // 0 = all cores
  // KV storage: f16 (default), f32, q8_0 or q4_0 for keys and values alike, unless
  // cache_type_k / cache_type_v (llama.cpp's -ctk / -ctv) name one for each.
  std::string kv_type = "f16";
  std::string cache_type_k, cache_type_v;
  int32_t block_size = 16;
  bool interleave_weights = true;  // see model::ModelOptions
  // See model::ModelOptions: the memory the model will take, before the slow part of the load.
  std::function<void(const model::ModelFootprint&)> before_tiles;
};

class LlamaEngine : public Engine {
 public:
  LlamaEngine(std::unique_ptr<model::LlamaModel> model, std::unique_ptr<tokenizer::Tokenizer> tok,
              uint64_t fingerprint);
  ~LlamaEngine() override;

  EngineInfo info() const override { return info_; }
  void allocate_kv(int32_t n_blocks) override;
  void forward(const StepBatch& batch, StepOutput& out) override;
  void copy_block(int32_t src, int32_t dst, int32_t n_tokens) override;
  void release_sequence(uint64_t request_id) override;
  void allocate_state_slots(int32_t n_slots) override;
  void restore_state(uint64_t request_id, int32_t slot, int32_t n_pos) override;
  std::span<uint8_t> state_slot(int32_t slot) override;
  void set_state_slot(int32_t slot, int32_t n_pos) override;
  std::span<uint8_t> kv_block(int32_t block) override;

  const tokenizer::Tokenizer& tokenizer() const { return *tok_; }
  model::LlamaModel& model() { return *model_; }
  const model::LlamaModel& model() const { return *model_; }

 private:
  std::unique_ptr<model::LlamaModel> model_;
  std::unique_ptr<tokenizer::Tokenizer> tok_;
  EngineInfo info_;
};

// The K and V storage types the options name; throws std::runtime_error listing the supported
// names for any other.
std::pair<model::KvType, model::KvType> kv_types_of(const EngineOptions& opts);

// Opens a GGUF model and its tokenizer. Throws std::runtime_error naming the file and problem.
std::unique_ptr<LlamaEngine> load_llama_engine(const std::string& path, const EngineOptions& opts);

}  // namespace baton::engine
