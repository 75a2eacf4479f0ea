#pragma once
// Exact tokenizers for the vocabularies GGUF files carry: SentencePiece-style score merging
// (tokenizer.ggml.model = "llama") and byte-level BPE (tokenizer.ggml.model = "gpt2") with the
// pre-tokenizer named by tokenizer.ggml.pre. Output matches llama.cpp token for token on valid
// UTF-8 (all of llama.cpp's vocabulary test vectors pass). Where baton differs, on purpose:
//  - Invalid UTF-8 is kept byte for byte (llama.cpp turns it into U+FFFD before BPE), so any
//    byte string the vocabulary can spell round-trips.
//  - decode() drops the space SentencePiece inserts after special tokens as well as at the
//    start, and does no "clean_spaces" post-processing, so decode(encode(x)) == x.
//  - Per-token lstrip/rstrip attributes (phi-3, ...) are not applied.
//  - WordPiece (bert), Unigram (t5) and RWKV vocabularies are refused with a clear error.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace baton::gguf {
class GgufFile;
}

namespace baton::tokenizer {

// GGUF tokenizer.ggml.token_type values.
enum class TokenType : int32_t {
  Undefined = 0,
  Normal = 1,
  Unknown = 2,
  Control = 3,
  UserDefined = 4,
  Unused = 5,
  Byte = 6,
};

enum class Model { Spm, Bpe };

// Everything a tokenizer is built from, as GGUF metadata spells it. from_gguf fills it; tests
// build small ones by hand. Missing optionals take the per-model defaults llama.cpp uses.
struct VocabSpec {
  Model model = Model::Spm;
  std::string pre;  // BPE pre-tokenizer name; empty means absent (uses "default")
  std::vector<std::string> tokens;
  std::vector<float> scores;        // may be empty (all 0)
  std::vector<int32_t> types;       // may be empty (all Normal)
  std::vector<std::string> merges;  // BPE only: "left right", in rank order
  int32_t bos_id = -1, eos_id = -1, eot_id = -1, unk_id = -1;
  std::optional<bool> add_bos, add_eos, add_space_prefix;
};

class Pretokenizer;  // BPE regex splitter (pretokenizer.h)

// Reads the tokenizer.* metadata (what Tokenizer::from_gguf builds from); throws
// std::runtime_error for an absent or unsupported vocabulary.
VocabSpec vocab_spec_from_gguf(const gguf::GgufFile& f);

class Tokenizer {
 public:
  // Throws std::runtime_error naming the key and the supported values when the vocabulary is
  // missing, malformed or of an unsupported kind (WordPiece/bert, unknown pre, ...).
  static std::unique_ptr<Tokenizer> from_gguf(const gguf::GgufFile& f);
  static std::unique_ptr<Tokenizer> from_spec(VocabSpec spec);
  ~Tokenizer();

  // add_bos prepends bos_id() (when the vocabulary has one); pass add_bos() for the model's own
  // default. EOS is never appended here: callers append eos_id() when add_eos() says so.
  // parse_special recognises the texts of control tokens (longest first); otherwise they are
  // tokenized as plain text. User-defined (added) tokens are always recognised, as llama.cpp and
  // Hugging Face do (MPT's whitespace-run tokens depend on it).
  std::vector<int32_t> encode(std::string_view text, bool add_bos,
                              bool parse_special = false) const;
  // Byte ranges [first, first + second) of a text.
  using Spans = std::vector<std::pair<size_t, size_t>>;
  // encode() with special tokens parsed everywhere except that a control token's text is never
  // recognised where it overlaps one of `literal` (sorted, disjoint): a rendered chat prompt,
  // where those ranges hold what users and tools wrote, so their text cannot become control
  // tokens while the template's own markers do.
  std::vector<int32_t> encode_with_literals(std::string_view text, bool add_bos,
                                            const Spans& literal) const;
  // skip_special drops control tokens. A SentencePiece vocabulary also drops the space its
  // encoder puts in front of the text and after each special token, so decode(encode(x)) == x.
  std::string decode(const std::vector<int32_t>& ids, bool skip_special = true) const;
  // The bytes this token stands for; control/user-defined tokens give their text, ids out of
  // range give "".
  std::string token_to_piece(int32_t id) const;

  int32_t n_vocab() const { return static_cast<int32_t>(tokens_.size()); }
  int32_t bos_id() const { return bos_id_; }
  int32_t eos_id() const { return eos_id_; }
  int32_t eot_id() const { return eot_id_; }
  int32_t unk_id() const { return unk_id_; }
  bool add_bos() const { return add_bos_; }
  bool add_eos() const { return add_eos_; }
  bool add_space_prefix() const { return add_space_prefix_; }
  Model model() const { return model_; }
  const std::string& pre() const { return pre_; }
  // The most input bytes one token can stand for: the longest vocabulary text, special tokens
  // included, and at least 4 (one UTF-8 character becomes one unknown token). Vocabulary texts
  // never cover fewer input bytes than they hold (SentencePiece's "▁" counts 3 bytes for one
  // space, byte-level BPE spells a byte in 1 or 2), so a text of n bytes needs at least
  // n / max_token_bytes() tokens.
  size_t max_token_bytes() const { return max_token_bytes_; }
  bool is_eog(int32_t id) const;
  bool is_control(int32_t id) const;
  TokenType token_type(int32_t id) const;
  std::optional<int32_t> token_id(std::string_view piece) const;
  // The raw vocabulary text of a token (with ▁ or byte-level characters), "" when out of range.
  const std::string& token_text(int32_t id) const;

  // One step of decode(): the text of `id`, given and updating the "drop the leading space of
  // the next text piece" state that a SentencePiece vocabulary needs (start it with
  // strips_space_after_special()). StreamDecoder uses the same steps.
  std::string decode_piece(int32_t id, bool skip_special, bool& strip_space) const;
  bool strips_space_after_special() const;

 private:
  Tokenizer() = default;
  struct Fragment;
  void init(VocabSpec spec);
  void init_tokens(VocabSpec& spec);
  void init_merges(const std::vector<std::string>& merges);
  void init_special(const VocabSpec& spec);
  std::vector<Fragment> split_special(std::string_view text, bool parse_special,
                                      const Spans* literal = nullptr) const;
  std::vector<int32_t> encode_fragments(std::string_view text, bool add_bos,
                                        const std::vector<Fragment>& frags) const;
  void encode_spm(std::string_view text, std::vector<int32_t>& out) const;
  void encode_bpe(std::string_view text, std::vector<int32_t>& out) const;
  int32_t lookup(std::string_view text) const;  // -1 when absent

  struct SvHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using Index = std::unordered_map<std::string, int32_t, SvHash, std::equal_to<>>;

  Model model_ = Model::Spm;
  std::string pre_;
  std::vector<std::string> tokens_;
  std::vector<float> scores_;
  std::vector<TokenType> types_;
  Index index_;
  Index merge_rank_;               // "left right" -> rank
  std::vector<int32_t> specials_;  // control/user-defined/unknown ids, longest text first
  std::vector<bool> eog_;
  int32_t byte_ids_[256] = {};  // SPM <0xNN> ids, -1 when absent
  int32_t bos_id_ = -1, eos_id_ = -1, eot_id_ = -1, unk_id_ = -1;
  bool add_bos_ = false, add_eos_ = false, add_space_prefix_ = false;
  size_t max_token_bytes_ = 0;
  std::unique_ptr<Pretokenizer> pretok_;
};

// Streaming detokenizer: returns text as soon as bytes form complete UTF-8, never half a
// character. Invalid byte sequences come out as U+FFFD (one per maximal invalid subpart), so
// the concatenated output is decode() passed through sanitize_utf8().
class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& t, bool skip_special = true);
  std::string push(int32_t id);  // newly completed text (may be empty)
  std::string flush();           // whatever is left (incomplete bytes become U+FFFD)

 private:
  const Tokenizer& tok_;
  bool skip_special_;
  bool strip_space_ = false;
  std::string pending_;
};

// Replaces every ill-formed UTF-8 subpart with U+FFFD (the same rule StreamDecoder applies).
std::string sanitize_utf8(std::string_view s);

}  // namespace baton::tokenizer
