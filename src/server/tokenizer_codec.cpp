#include "server/tokenizer_codec.h"

namespace baton::server {

namespace {

class DecoderStream : public TextStream {
 public:
  explicit DecoderStream(const tokenizer::Tokenizer& tok) : dec_(tok) {}
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

std::unique_ptr<TextStream> TokenizerCodec::stream(const std::vector<int32_t>& prompt) const {
  auto s = std::make_unique<DecoderStream>(tok_);
  for (int32_t id : prompt) s->push(id);
  return s;
}

std::string TokenizerCodec::piece(int32_t token) const {
  return tokenizer::sanitize_utf8(tok_.token_to_piece(token));
}

bool TokenizerCodec::has_token(const std::string& text) const {
  return tok_.token_id(text).has_value();
}

}  // namespace baton::server
