// Byte-level BPE: pre-tokenize, write each chunk's bytes as GPT-2's byte characters, then merge
// adjacent symbols by lowest merge rank (ties: leftmost) until no ranked pair is left.
#include <optional>
#include <vector>

#include "tokenizer/pretokenizer.h"
#include "tokenizer/symbol_merge.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace baton::tokenizer {
namespace {}  // namespace

void Tokenizer::encode_bpe(std::string_view text, std::vector<int32_t>& out) const {
  std::string word, key;
  std::vector<MergeSymbol> sym;
  for (const auto& [coff, clen] : pretok_->split(text)) {
    word.clear();
    for (size_t i = coff; i < coff + clen; ++i) {
      word += utf8::byte_to_unicode(static_cast<uint8_t>(text[i]));
    }
    if (pretok_->ignore_merges()) {
      if (const int32_t id = lookup(word); id >= 0) {
        out.push_back(id);
        continue;
      }
    }
    sym.clear();
    for (size_t off = 0; off < word.size();) {
      const size_t len = utf8::lead_len(static_cast<uint8_t>(word[off]));
      const int idx = static_cast<int>(sym.size());
      sym.push_back({idx - 1, off + len >= word.size() ? -1 : idx + 1, off, len});
      off += len;
    }
    // Lower rank merges first, so the priority is the negated rank.
    merge_symbols<int64_t>(sym, [&](int l, int r) -> std::optional<int64_t> {
      key.assign(word, sym[l].off, sym[l].len);
      key += ' ';
      key.append(word, sym[r].off, sym[r].len);
      auto it = merge_rank_.find(key);
      if (it == merge_rank_.end()) return std::nullopt;
      return -static_cast<int64_t>(it->second);
    });
    for (int i = sym.empty() ? -1 : 0; i != -1; i = sym[i].next) {
      const std::string_view piece = std::string_view(word).substr(sym[i].off, sym[i].len);
      if (const int32_t id = lookup(piece); id >= 0) {
        out.push_back(id);
        continue;
      }
      // A piece the vocabulary lacks: fall back to its characters one by one (llama.cpp drops
      // what it cannot find; the unknown token is used where the vocabulary has one).
      for (size_t off = 0; off < piece.size();) {
        const size_t len =
            std::min(utf8::lead_len(static_cast<uint8_t>(piece[off])), piece.size() - off);
        int32_t id = lookup(piece.substr(off, len));
        if (id < 0) id = unk_id_;
        if (id >= 0) out.push_back(id);
        off += len;
      }
    }
  }
}

}  // namespace baton::tokenizer
