#include "tokenizer/tokenizer_codec.h"

namespace baton::tokenizer {

namespace {

class DecoderStream : public TextStream {
 public:
  DecoderStream(const tokenizer::Tokenizer& tok, bool show_special) : dec_(tok, !show_special) {}
  std::string push(int32_t token) override { return dec_.push(token); }
  std::string flush() override { return dec_.flush(); }

 private:
  tokenizer::StreamDecoder dec_;
};

}  // namespace

std::vector<int32_t> TokenizerCodec::encode(const std::string& text, bool add_bos,
                                            bool parse_special) const {
  return tok_.encode(text, add_bos, parse_special);
}

std::string TokenizerCodec::decode(const std::vector<int32_t>& tokens) const {
  return tokenizer::sanitize_utf8(tok_.decode(tokens));
}

std::vector<int32_t> TokenizerCodec::encode_rendered(
    const std::string& text, bool add_bos,
    const std::vector<std::pair<size_t, size_t>>& literal) const {
  return tok_.encode_with_literals(text, add_bos, literal);
}

std::unique_ptr<TextStream> TokenizerCodec::stream(const std::vector<int32_t>& prompt,
                                                   bool show_special) const {
  auto s = std::make_unique<DecoderStream>(tok_, show_special);
  for (int32_t id : prompt) s->push(id);
  return s;
}

std::vector<std::string> TokenizerCodec::control_texts() const {
  std::vector<std::string> out;
  for (int32_t id = 0; id < tok_.n_vocab(); ++id) {
    if (tok_.token_type(id) == tokenizer::TokenType::Control && !tok_.token_text(id).empty()) {
      out.push_back(tok_.token_text(id));
    }
  }
  return out;
}

std::string TokenizerCodec::bos_text() const {
  return tok_.bos_id() >= 0 ? tok_.token_text(tok_.bos_id()) : std::string();
}

std::string TokenizerCodec::eos_text() const {
  return tok_.eos_id() >= 0 ? tok_.token_text(tok_.eos_id()) : std::string();
}

std::string TokenizerCodec::piece(int32_t token) const {
  return tokenizer::sanitize_utf8(tok_.token_to_piece(token));
}

bool TokenizerCodec::has_token(const std::string& text) const {
  return tok_.token_id(text).has_value();
}

std::string TokenizerCodec::token_bytes(int32_t token) const {
  switch (tok_.token_type(token)) {
    case tokenizer::TokenType::Normal:
    case tokenizer::TokenType::Byte:
    case tokenizer::TokenType::UserDefined:
      return tok_.token_to_piece(token);
    default:
      return {};
  }
}

std::vector<int32_t> TokenizerCodec::eog_tokens() const {
  std::vector<int32_t> out;
  for (int32_t id = 0; id < tok_.n_vocab(); ++id) {
    if (tok_.is_eog(id)) out.push_back(id);
  }
  return out;
}

}  // namespace baton::tokenizer
