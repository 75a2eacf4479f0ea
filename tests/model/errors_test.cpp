// Files the engine must refuse with a message that names the problem.
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/llama_engine.h"
#include "gguf/gguf_writer.h"
#include "load_error.h"
#include "support/shared_files.h"
#include "synth/synth_model.h"

namespace baton {
namespace {

std::string base_model(const std::filesystem::path& dir) {
  synth::SynthSpec spec;
  spec.embd = 64;
  spec.layers = 1;
  spec.heads = 2;
  spec.kv_heads = 2;
  spec.ff = 64;
  spec.threads = 1;
  const auto path = (dir / "base.gguf").string();
  synth::write_synthetic_model(spec, path);
  return path;
}

// Rewrites `from` into `to`, letting edit() change metadata and swap tensors.
void rewrite(const std::string& from, const std::string& to, const std::string& arch,
             const std::string& retype_tensor, const std::string& drop_tensor) {
  auto f = gguf::GgufFile::open(from);
  gguf::GgufWriter w;
  w.copy_metadata(*f, "");
  if (!arch.empty()) w.set_string("general.architecture", arch);
  for (const auto& t : f->tensors()) {
    if (t.name == drop_tensor) continue;
    if (t.name == retype_tensor) {
      const auto type = gguf::TensorType::Q5_1;
      w.add_tensor(t.name, type, t.dims,
                   std::vector<uint8_t>(gguf::row_bytes(type, t.dims[0]) * t.rows(), 0));
      continue;
    }
    const uint8_t* d = f->tensor_data(t);
    w.add_tensor(t.name, t.type, t.dims, std::vector<uint8_t>(d, d + t.n_bytes));
  }
  w.write(to);
}

using testing::load_error;

TEST(ModelErrors, UnsupportedArchitectureIsNamed) {
  const auto dir = testing::scratch_dir();
  const auto base = base_model(dir);
  const auto bad = (dir / "gpt2.gguf").string();
  rewrite(base, bad, "gpt2", "", "");
  const auto msg = load_error(bad);
  EXPECT_NE(msg.find("'gpt2' is not supported"), std::string::npos) << msg;
}

TEST(ModelErrors, UnsupportedTensorTypeIsNamed) {
  const auto dir = testing::scratch_dir();
  const auto base = base_model(dir);
  const auto bad = (dir / "q5_1.gguf").string();
  rewrite(base, bad, "", "blk.0.attn_k.weight", "");
  const auto msg = load_error(bad);
  EXPECT_NE(msg.find("blk.0.attn_k.weight has type q5_1"), std::string::npos) << msg;
}

TEST(ModelErrors, MissingTensorIsNamed) {
  const auto dir = testing::scratch_dir();
  const auto base = base_model(dir);
  const auto bad = (dir / "missing.gguf").string();
  rewrite(base, bad, "", "", "blk.0.ffn_up.weight");
  const auto msg = load_error(bad);
  EXPECT_NE(msg.find("blk.0.ffn_up.weight is missing"), std::string::npos) << msg;
}

// A vocabulary-only GGUF (no tensors) ends before its aligned data offset; loading it must name
// the first missing tensor rather than fail on the header.
TEST(ModelErrors, VocabularyOnlyFileNamesMissingTensor) {
  BATON_REQUIRE_SHARED(vocab, "models/vocab/ggml-vocab-llama-spm.gguf");
  const auto msg = load_error(vocab.string());
  EXPECT_NE(msg.find("token_embd.weight is missing"), std::string::npos) << msg;
}

TEST(ModelErrors, MissingFileAndBadKvTypeFail) {
  EXPECT_NE(load_error((testing::scratch_dir() / "absent.gguf").string()), "(no error)");
  const auto dir = testing::scratch_dir();
  const auto base = base_model(dir);
  engine::EngineOptions opts;
  opts.kv_type = "q8";
  try {
    engine::load_llama_engine(base, opts);
    ADD_FAILURE() << "kv type q8 accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("kv type 'q8'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace baton
