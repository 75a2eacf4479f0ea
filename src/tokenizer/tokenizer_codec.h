#pragma once
// TextCodec over the real tokenizer (src/tokenizer).
#include "tokenizer/text_codec.h"
#include "tokenizer/tokenizer.h"

namespace baton::tokenizer {

class TokenizerCodec : public TextCodec {
 public:
  explicit TokenizerCodec(const tokenizer::Tokenizer& tok) : tok_(tok) {}
  std::vector<int32_t> encode(const std::string& text, bool add_bos,
                              bool parse_special) const override;
  std::string decode(const std::vector<int32_t>& tokens) const override;
  std::vector<int32_t> encode_rendered(
      const std::string& text, bool add_bos,
      const std::vector<std::pair<size_t, size_t>>& literal) const override;
  std::unique_ptr<TextStream> stream(const std::vector<int32_t>& prompt,
                                     bool show_special) const override;
  std::vector<std::string> control_texts() const override;
  std::string bos_text() const override;
  std::string eos_text() const override;
  std::string piece(int32_t token) const override;
  bool has_token(const std::string& text) const override;
  int32_t n_vocab() const override { return tok_.n_vocab(); }
  std::string token_bytes(int32_t token) const override;
  std::vector<int32_t> eog_tokens() const override;
  bool default_add_bos() const override { return tok_.add_bos(); }
  // Computed once when the vocabulary is loaded (Tokenizer::max_token_bytes).
  size_t max_token_bytes() const override { return tok_.max_token_bytes(); }

 private:
  const tokenizer::Tokenizer& tok_;
};

}  // namespace baton::tokenizer
