#include "tokenizer/tokenizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <stdexcept>

#include "tokenizer/pretokenizer.h"
#include "tokenizer/utf8.h"

namespace baton::tokenizer {
namespace {

constexpr std::string_view kSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's space

// Texts that end a turn in the chat formats baton knows; the first one present is the EOT
// token when the file names none.
constexpr std::array<std::string_view, 8> kEotTexts = {
    "<|eot_id|>",    "<|im_end|>", "<|end|>", "<end_of_turn>",
    "<|endoftext|>", "<EOT>",      "_<EOT>",  "<｜end▁of▁sentence｜>"};
constexpr std::array<std::string_view, 3> kExtraEogTexts = {"<|eom_id|>", "<|end_of_text|>",
                                                            "</s>"};

}  // namespace

struct Tokenizer::Fragment {
  int32_t id;  // >= 0: a special token; -1: raw text [off, off + len)
  size_t off, len;
};

Tokenizer::~Tokenizer() = default;

std::unique_ptr<Tokenizer> Tokenizer::from_spec(VocabSpec spec) {
  std::unique_ptr<Tokenizer> t(new Tokenizer());
  t->init(std::move(spec));
  return t;
}

void Tokenizer::init(VocabSpec spec) {
  init_tokens(spec);
  std::fill(std::begin(byte_ids_), std::end(byte_ids_), -1);
  if (model_ == Model::Spm) {
    for (int b = 0; b < 256; ++b) byte_ids_[b] = lookup(fmt::format("<0x{:02X}>", b));
  } else {
    init_merges(spec.merges);
    pretok_ = Pretokenizer::create(pre_);
  }
  // llama.cpp's defaults when the file has no tokenizer.ggml.add_* keys.
  const bool spm = model_ == Model::Spm;
  const bool llama3 = pretok_ && pretok_->ignore_merges();
  add_bos_ = spec.add_bos.value_or(spm || llama3);
  add_eos_ = spec.add_eos.value_or(false);
  add_space_prefix_ = spec.add_space_prefix.value_or(spm);
  init_special(spec);
}

void Tokenizer::init_tokens(VocabSpec& spec) {
  const size_t n = spec.tokens.size();
  if (n == 0) throw std::runtime_error("tokenizer.ggml.tokens is empty; a vocabulary is needed");
  if (n > static_cast<size_t>(INT32_MAX)) {
    throw std::runtime_error("tokenizer.ggml.tokens has more than 2^31-1 entries");
  }
  if (!spec.scores.empty() && spec.scores.size() != n) {
    throw std::runtime_error(
        fmt::format("tokenizer.ggml.scores has {} entries, expected one per token ({})",
                    spec.scores.size(), n));
  }
  if (!spec.types.empty() && spec.types.size() != n) {
    throw std::runtime_error(
        fmt::format("tokenizer.ggml.token_type has {} entries, expected one per token ({})",
                    spec.types.size(), n));
  }
  model_ = spec.model;
  pre_ = spec.pre;
  tokens_ = std::move(spec.tokens);
  scores_ = spec.scores.empty() ? std::vector<float>(n, 0.0f) : std::move(spec.scores);
  types_.resize(n, TokenType::Normal);
  for (size_t i = 0; i < spec.types.size(); ++i) {
    const int32_t t = spec.types[i];
    types_[i] = (t >= 0 && t <= 6) ? static_cast<TokenType>(t) : TokenType::Normal;
  }
  max_token_bytes_ = 4;  // an unknown token replaces one character of up to 4 bytes
  for (const auto& t : tokens_) max_token_bytes_ = std::max(max_token_bytes_, t.size());
  index_.reserve(n);
  // Duplicate texts: a Normal token beats the others, then the lowest id. (deepseek vocabularies
  // list byte characters such as "ù" twice, once as an added user-defined token; the merges must
  // reach the byte one, or raw bytes would decode as the added token's text.)
  for (size_t i = 0; i < n; ++i) {
    auto [it, added] = index_.emplace(tokens_[i], static_cast<int32_t>(i));
    if (!added && types_[it->second] != TokenType::Normal && types_[i] == TokenType::Normal) {
      it->second = static_cast<int32_t>(i);
    }
  }
}

void Tokenizer::init_merges(const std::vector<std::string>& merges) {
  if (merges.empty()) {
    throw std::runtime_error(
        "tokenizer.ggml.merges is missing or empty; a gpt2 (BPE) vocabulary needs its merge list");
  }
  merge_rank_.reserve(merges.size());
  for (size_t r = 0; r < merges.size(); ++r) {
    const auto& m = merges[r];
    if (m.find(' ', 1) == std::string::npos) {
      throw std::runtime_error(
          fmt::format("tokenizer.ggml.merges[{}] = \"{}\" is not \"left right\"", r, m));
    }
    merge_rank_.emplace(m, static_cast<int32_t>(r));  // first occurrence keeps its rank
  }
}

void Tokenizer::init_special(const VocabSpec& spec) {
  const auto valid = [&](int32_t id) { return id >= 0 && id < n_vocab() ? id : -1; };
  bos_id_ = valid(spec.bos_id);
  eos_id_ = valid(spec.eos_id);
  unk_id_ = valid(spec.unk_id);
  eot_id_ = valid(spec.eot_id);
  if (eot_id_ < 0) {
    for (auto text : kEotTexts) {
      if (auto id = lookup(text); id >= 0) {
        eot_id_ = id;
        break;
      }
    }
  }
  eog_.assign(tokens_.size(), false);
  if (eos_id_ >= 0) eog_[eos_id_] = true;
  if (eot_id_ >= 0) eog_[eot_id_] = true;
  const auto mark_eog = [&](std::string_view text) {
    const int32_t id = lookup(text);
    if (id >= 0 && (types_[id] == TokenType::Control || types_[id] == TokenType::UserDefined)) {
      eog_[id] = true;
    }
  };
  for (auto text : kEotTexts) mark_eog(text);
  for (auto text : kExtraEogTexts) mark_eog(text);

  for (size_t i = 0; i < tokens_.size(); ++i) {
    const auto t = types_[i];
    if ((t == TokenType::Control || t == TokenType::UserDefined || t == TokenType::Unknown) &&
        !tokens_[i].empty()) {
      specials_.push_back(static_cast<int32_t>(i));
    }
  }
  std::stable_sort(specials_.begin(), specials_.end(),
                   [&](int32_t a, int32_t b) { return tokens_[a].size() > tokens_[b].size(); });
}

int32_t Tokenizer::lookup(std::string_view text) const {
  auto it = index_.find(text);
  return it == index_.end() ? -1 : it->second;
}

std::optional<int32_t> Tokenizer::token_id(std::string_view piece) const {
  const int32_t id = lookup(piece);
  if (id < 0) return std::nullopt;
  return id;
}

const std::string& Tokenizer::token_text(int32_t id) const {
  static const std::string kEmpty;
  return id >= 0 && id < n_vocab() ? tokens_[id] : kEmpty;
}

TokenType Tokenizer::token_type(int32_t id) const {
  return id >= 0 && id < n_vocab() ? types_[id] : TokenType::Undefined;
}

bool Tokenizer::is_eog(int32_t id) const {
  return id >= 0 && id < n_vocab() && eog_[id];
}

bool Tokenizer::is_control(int32_t id) const {
  return token_type(id) == TokenType::Control;
}

// Special texts are cut out longest first over the whole text, as llama.cpp does. User-defined
// tokens are always recognised (they are ordinary vocabulary the merges cannot produce);
// control and unknown tokens only with parse_special.
namespace {

// Whether [off, off + len) overlaps a span of `spans` (sorted, disjoint).
bool overlaps_any(const Tokenizer::Spans& spans, size_t off, size_t len) {
  auto it = std::upper_bound(spans.begin(), spans.end(), off,
                             [](size_t o, const auto& s) { return o < s.first + s.second; });
  return it != spans.end() && it->first < off + len;
}

}  // namespace

std::vector<Tokenizer::Fragment> Tokenizer::split_special(std::string_view text, bool parse_special,
                                                          const Spans* literal) const {
  std::vector<Fragment> frags;
  if (text.empty()) return frags;
  frags.push_back({-1, 0, text.size()});
  // Vocabularies with thousands of added tokens (deepseek) would otherwise scan the text once
  // per token: skip every token whose first two bytes never occur next to each other.
  std::vector<bool> pairs(1 << 16, false);
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    pairs[static_cast<uint8_t>(text[i]) << 8 | static_cast<uint8_t>(text[i + 1])] = true;
  }
  std::vector<Fragment> next;
  for (int32_t id : specials_) {
    if (!parse_special && types_[id] != TokenType::UserDefined) continue;
    const std::string& piece = tokens_[id];
    if (piece.size() > text.size()) continue;
    if (piece.size() >= 2 &&
        !pairs[static_cast<uint8_t>(piece[0]) << 8 | static_cast<uint8_t>(piece[1])]) {
      continue;
    }
    next.clear();
    bool changed = false;
    for (const auto& f : frags) {
      if (f.id >= 0 || f.len < piece.size()) {
        next.push_back(f);
        continue;
      }
      const std::string_view raw = text.substr(f.off, f.len);
      const bool guarded = literal != nullptr && types_[id] != TokenType::UserDefined;
      size_t pos = 0;
      for (size_t hit, from = 0; (hit = raw.find(piece, from)) != std::string_view::npos;) {
        if (guarded && overlaps_any(*literal, f.off + hit, piece.size())) {
          from = hit + 1;
          continue;
        }
        if (hit > pos) next.push_back({-1, f.off + pos, hit - pos});
        next.push_back({id, f.off + hit, piece.size()});
        pos = from = hit + piece.size();
        changed = true;
      }
      if (pos < raw.size()) next.push_back({-1, f.off + pos, raw.size() - pos});
    }
    if (changed) frags.swap(next);
  }
  return frags;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_bos,
                                       bool parse_special) const {
  return encode_fragments(text, add_bos, split_special(text, parse_special));
}

std::vector<int32_t> Tokenizer::encode_with_literals(std::string_view text, bool add_bos,
                                                     const Spans& literal) const {
  return encode_fragments(text, add_bos, split_special(text, true, &literal));
}

std::vector<int32_t> Tokenizer::encode_fragments(std::string_view text, bool add_bos,
                                                 const std::vector<Fragment>& frags) const {
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 2);
  if (add_bos && bos_id_ >= 0) out.push_back(bos_id_);
  bool prev_special = true;  // SentencePiece puts its space in front of the first text
  std::string scratch;
  for (const auto& f : frags) {
    if (f.id >= 0) {
      out.push_back(f.id);
      prev_special = true;
      continue;
    }
    const std::string_view raw = text.substr(f.off, f.len);
    if (model_ == Model::Bpe) {
      encode_bpe(raw, out);
      continue;
    }
    scratch.clear();
    if (add_space_prefix_ && prev_special) scratch += kSpace;
    for (char c : raw) {
      if (c == ' ') {
        scratch += kSpace;
      } else {
        scratch += c;
      }
    }
    encode_spm(scratch, out);
    prev_special = false;
  }
  return out;
}

std::string Tokenizer::token_to_piece(int32_t id) const {
  if (id < 0 || id >= n_vocab()) return {};
  const std::string& text = tokens_[id];
  switch (types_[id]) {
    case TokenType::Control:
    case TokenType::UserDefined:
      return text;
    case TokenType::Unused:
      return {};
    case TokenType::Unknown:
      return "\xE2\x96\x85";  // llama.cpp shows unknown text as U+2585
    case TokenType::Byte:
      if (model_ == Model::Spm && text.size() == 6 && text.starts_with("<0x") && text[5] == '>') {
        const auto hex = [](char c) {
          return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        };
        const int hi = hex(text[3]), lo = hex(text[4]);
        if (hi >= 0 && lo >= 0) return std::string(1, static_cast<char>(hi * 16 + lo));
      }
      break;
    default:
      break;
  }
  std::string out;
  out.reserve(text.size());
  if (model_ == Model::Spm) {
    for (size_t i = 0; i < text.size();) {
      if (text.compare(i, kSpace.size(), kSpace) == 0) {
        out += ' ';
        i += kSpace.size();
      } else {
        out += text[i++];
      }
    }
    return out;
  }
  for (size_t i = 0; i < text.size();) {
    size_t len = 1;
    const uint32_t cpt = utf8::decode_cpt(text, i, &len);
    const int b = utf8::unicode_to_byte(cpt);
    if (b >= 0) {
      out += static_cast<char>(b);
    } else {
      out.append(text, i, len);
    }
    i += len;
  }
  return out;
}

bool Tokenizer::strips_space_after_special() const {
  return model_ == Model::Spm && add_space_prefix_;
}

// The encoder puts a space in front of the text at the start and after every special token;
// the decoder takes exactly that space away again (as SentencePiece's decoder does per segment).
std::string Tokenizer::decode_piece(int32_t id, bool skip_special, bool& strip_space) const {
  const TokenType t = token_type(id);
  if (t == TokenType::Control || t == TokenType::UserDefined) {
    strip_space = strips_space_after_special();
    if (t == TokenType::Control && skip_special) return {};
    return token_to_piece(id);
  }
  std::string piece = token_to_piece(id);
  if (strip_space && !piece.empty() && piece[0] == ' ') piece.erase(0, 1);
  strip_space = false;
  return piece;
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special) const {
  std::string out;
  bool strip = strips_space_after_special();
  for (int32_t id : ids) out += decode_piece(id, skip_special, strip);
  return out;
}

}  // namespace baton::tokenizer
