#pragma once
// The tokenizer as the layers above it use it: text in, tokens out, and back. The real one
// (src/tokenizer) is wrapped by tokenizer_codec.h; tests can use a tiny fake. Implementations must
// be thread-safe for const calls (every HTTP handler thread tokenizes on its own).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace baton::tokenizer {

// Incremental detokenizer for one stream: holds back incomplete UTF-8 sequences.
class TextStream {
 public:
  virtual ~TextStream() = default;
  virtual std::string push(int32_t token) = 0;
  virtual std::string flush() = 0;
};

class TextCodec {
 public:
  virtual ~TextCodec() = default;
  virtual std::vector<int32_t> encode(const std::string& text, bool add_bos,
                                      bool parse_special) const = 0;
  // A rendered chat prompt: special tokens parsed, except that control-token text inside the
  // byte ranges `literal` (what users and tools wrote) stays plain text.
  virtual std::vector<int32_t> encode_rendered(
      const std::string& text, bool add_bos,
      const std::vector<std::pair<size_t, size_t>>& literal) const = 0;
  virtual std::string decode(const std::vector<int32_t>& tokens) const = 0;
  // A detokenizer for the tokens that follow `prompt`: it is primed with the prompt so the first
  // generated piece keeps its leading space when it continues the text (and loses it when it
  // starts the text after BOS), exactly as `baton run` prints it.
  // `show_special`: control tokens come out as their text (a chat answer whose tool-call markup
  // uses them, for the output parser to read); otherwise they are dropped.
  virtual std::unique_ptr<TextStream> stream(const std::vector<int32_t>& prompt,
                                             bool show_special = false) const = 0;
  // The token's own text (for logprobs and /tokenize with_pieces).
  virtual std::string piece(int32_t token) const = 0;
  // Whether a special token with this exact text exists (chat format detection).
  virtual bool has_token(const std::string& text) const = 0;
  // The texts of the control tokens (what chat content must never turn into).
  virtual std::vector<std::string> control_texts() const = 0;
  // The BOS / EOS tokens' texts for chat templates ("" when the vocabulary has none).
  virtual std::string bos_text() const = 0;
  virtual std::string eos_text() const = 0;
  virtual int32_t n_vocab() const = 0;
  // The bytes a generated token adds to the output, for grammar-constrained decoding; "" for a
  // token that a grammar must never pick (control tokens).
  virtual std::string token_bytes(int32_t token) const { return piece(token); }
  // The tokens that end a generation (a grammar allows them where the output may end).
  virtual std::vector<int32_t> eog_tokens() const { return {}; }
  // Whether the model expects a BOS token in front of a prompt.
  virtual bool default_add_bos() const = 0;
  // The most input text bytes a single token can cover (an upper bound, possibly loose). A text
  // longer than ctx × max_token_bytes() bytes cannot fit in ctx tokens, which the server can
  // tell without tokenizing it.
  virtual size_t max_token_bytes() const = 0;
};

}  // namespace baton::tokenizer
