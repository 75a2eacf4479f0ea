// Seed corpus for fuzz_gguf: `fuzz_gguf_corpus OUT_DIR [real.gguf ...]`.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gguf/gguf_writer.h"

namespace fs = std::filesystem;
using baton::gguf::GgufWriter;
using baton::gguf::TensorType;

namespace {

void save(const fs::path& dir, const std::string& name, const std::vector<uint8_t>& b) {
  std::ofstream out(dir / name, std::ios::binary);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

std::vector<uint8_t> small_model() {
  GgufWriter w;
  w.set_string("general.architecture", "llama");
  w.set_u32("llama.embedding_length", 32);
  w.set_f32("llama.rope.freq_base", 10000.0f);
  w.set_bool("tokenizer.ggml.add_bos_token", true);
  w.set_strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "a"});
  w.set_f32s("tokenizer.ggml.scores", {0, 0, 0, -1});
  w.set_i32s("tokenizer.ggml.token_type", {2, 3, 3, 1});
  w.add_tensor("token_embd.weight", TensorType::F32, {32, 4}, std::vector<uint8_t>(32 * 4 * 4, 1));
  w.add_tensor("blk.0.attn_q.weight", TensorType::Q8_0, {32, 2}, std::vector<uint8_t>(68, 2));
  w.add_tensor("blk.0.ffn_up.weight", TensorType::Q4_K, {256, 1}, std::vector<uint8_t>(144, 3));
  w.add_tensor("output_norm.weight", TensorType::F16, {32}, std::vector<uint8_t>(64, 4));
  return w.serialize();
}

std::vector<uint8_t> read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), {});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR [real.gguf ...]\n", argv[0]);
    return 2;
  }
  fs::path dir = argv[1];
  fs::create_directories(dir);
  auto seed = small_model();
  save(dir, "small.gguf", seed);
  auto v2 = seed;
  v2[4] = 2;
  save(dir, "small-v2.gguf", v2);
  for (size_t cut : {4u, 8u, 24u, 40u, 100u, 300u}) {
    if (cut < seed.size())
      save(dir, "cut-" + std::to_string(cut), {seed.begin(), seed.begin() + cut});
  }
  for (size_t at = 0; at + 8 <= seed.size() && at < 600; at += 37) {
    auto b = seed;
    uint64_t big = ~0ull >> (at % 13);
    std::memcpy(b.data() + at, &big, 8);
    save(dir, "poke-" + std::to_string(at), b);
  }
  // Real files: only their header matters to the parser, so keep at most 64 KiB of each.
  for (int k = 2; k < argc; ++k) {
    auto b = read_file(argv[k]);
    if (b.size() > 65536) b.resize(65536);
    save(dir, "real-" + std::to_string(k - 1), b);
  }
  std::printf("wrote the seed corpus to %s\n", dir.c_str());
  return 0;
}
