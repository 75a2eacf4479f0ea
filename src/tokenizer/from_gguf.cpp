// Reads the tokenizer.* metadata of a GGUF file into a VocabSpec.
#include <fmt/format.h>

#include <stdexcept>

#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace baton::tokenizer {
namespace {

int32_t optional_id(const gguf::GgufFile& f, std::string_view key) {
  const int64_t v = f.get_int_or(key, -1);
  // Files write "none" as UINT32_MAX; anything outside int32 means absent.
  return v >= 0 && v <= INT32_MAX ? static_cast<int32_t>(v) : -1;
}

std::optional<bool> optional_bool(const gguf::GgufFile& f, std::string_view key) {
  if (!f.has(key)) return std::nullopt;
  return f.get_bool_or(key, false);
}

}  // namespace

VocabSpec vocab_spec_from_gguf(const gguf::GgufFile& f) {
  if (!f.has("tokenizer.ggml.model")) {
    throw std::runtime_error(
        fmt::format("{}: no tokenizer.ggml.model key; this file carries no "
                    "vocabulary",
                    f.path()));
  }
  const std::string kind = f.get_string("tokenizer.ggml.model");
  VocabSpec spec;
  if (kind == "llama") {
    spec.model = Model::Spm;
  } else if (kind == "gpt2") {
    spec.model = Model::Bpe;
  } else if (kind == "bert") {
    throw std::runtime_error(fmt::format(
        "{}: tokenizer.ggml.model = \"bert\" (WordPiece) is not supported; supported: \"llama\" "
        "(SentencePiece), \"gpt2\" (byte-level BPE)",
        f.path()));
  } else {
    throw std::runtime_error(
        fmt::format("{}: tokenizer.ggml.model = \"{}\" is not supported; supported: \"llama\" "
                    "(SentencePiece), \"gpt2\" (byte-level BPE)",
                    f.path(), kind));
  }
  spec.pre = f.get_string_or("tokenizer.ggml.pre", "");
  spec.tokens = f.get_strings("tokenizer.ggml.tokens");
  if (f.has("tokenizer.ggml.scores")) {
    const auto& s = f.get_floats("tokenizer.ggml.scores");
    spec.scores.assign(s.begin(), s.end());
  }
  if (f.has("tokenizer.ggml.token_type")) {
    const auto& t = f.get_ints("tokenizer.ggml.token_type");
    spec.types.reserve(t.size());
    for (int64_t v : t) spec.types.push_back(static_cast<int32_t>(v));
  }
  if (spec.model == Model::Bpe && f.has("tokenizer.ggml.merges")) {
    spec.merges = f.get_strings("tokenizer.ggml.merges");
  }
  // llama.cpp's defaults for a SentencePiece vocabulary without the keys.
  const bool spm = spec.model == Model::Spm;
  spec.bos_id = f.has("tokenizer.ggml.bos_token_id") ? optional_id(f, "tokenizer.ggml.bos_token_id")
                                                     : (spm ? 1 : -1);
  spec.eos_id = f.has("tokenizer.ggml.eos_token_id") ? optional_id(f, "tokenizer.ggml.eos_token_id")
                                                     : (spm ? 2 : -1);
  spec.unk_id = f.has("tokenizer.ggml.unknown_token_id")
                    ? optional_id(f, "tokenizer.ggml.unknown_token_id")
                    : (spm ? 0 : -1);
  spec.eot_id = optional_id(f, "tokenizer.ggml.eot_token_id");
  spec.add_bos = optional_bool(f, "tokenizer.ggml.add_bos_token");
  spec.add_eos = optional_bool(f, "tokenizer.ggml.add_eos_token");
  spec.add_space_prefix = optional_bool(f, "tokenizer.ggml.add_space_prefix");
  return spec;
}

std::unique_ptr<Tokenizer> Tokenizer::from_gguf(const gguf::GgufFile& f) {
  VocabSpec spec = vocab_spec_from_gguf(f);
  try {
    return from_spec(std::move(spec));
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(fmt::format("{}: {}", f.path(), e.what()));
  }
}

}  // namespace baton::tokenizer
