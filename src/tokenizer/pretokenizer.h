#pragma once
// Byte-level BPE pre-tokenization: the regex list llama.cpp applies for a tokenizer.ggml.pre
// value, run with PCRE2. Each regex splits every chunk the previous one produced into its
// matches and the gaps between them, so the lists compose like llama.cpp's.
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace baton::tokenizer {

class Pretokenizer {
 public:
  // Throws std::runtime_error naming `pre` and the supported names when unknown. An empty name
  // (key absent) selects llama.cpp's "default" list.
  static std::unique_ptr<Pretokenizer> create(std::string_view pre);
  static std::vector<std::string> supported_names();
  ~Pretokenizer();

  // Chunks of text as (offset, length), covering it in order. Invalid UTF-8 bytes are never
  // handed to the regexes: each one becomes a chunk of its own.
  std::vector<std::pair<size_t, size_t>> split(std::string_view text) const;
  // llama3-style vocabularies look a whole chunk up before merging it.
  bool ignore_merges() const { return ignore_merges_; }

 private:
  struct Regex;
  Pretokenizer() = default;
  void split_valid(std::string_view text, size_t base,
                   std::vector<std::pair<size_t, size_t>>& out) const;
  std::vector<std::unique_ptr<Regex>> regexes_;
  bool ignore_merges_ = false;
};

}  // namespace baton::tokenizer
