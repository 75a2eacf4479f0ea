// SentencePiece-style encoding: start from UTF-8 characters and keep merging the adjacent pair
// whose joined text is a vocabulary piece with the highest score (ties: leftmost), then map
// leftover pieces to <0xNN> byte tokens. A heap over a linked list keeps it O(n log n).
#include <optional>
#include <vector>

#include "tokenizer/symbol_merge.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace baton::tokenizer {
namespace {}  // namespace

void Tokenizer::encode_spm(std::string_view text, std::vector<int32_t>& out) const {
  std::vector<MergeSymbol> sym;
  sym.reserve(text.size());
  for (size_t off = 0; off < text.size();) {
    // Invalid UTF-8 goes byte by byte, so a stray lead byte cannot swallow the next character.
    const auto sc = utf8::scan(text, off);
    const size_t len = sc.status == utf8::Status::Complete ? sc.len : 1;
    const int idx = static_cast<int>(sym.size());
    sym.push_back({idx - 1, off + len == text.size() ? -1 : idx + 1, off, len});
    off += len;
  }
  merge_symbols<float>(sym, [&](int l, int r) -> std::optional<float> {
    const int32_t id = lookup(text.substr(sym[l].off, sym[l].len + sym[r].len));
    if (id < 0) return std::nullopt;
    return scores_[id];
  });

  for (int i = sym.empty() ? -1 : 0; i != -1; i = sym[i].next) {
    const std::string_view piece = text.substr(sym[i].off, sym[i].len);
    if (const int32_t id = lookup(piece); id >= 0) {
      out.push_back(id);
      continue;
    }
    // A vocabulary without a "▁" piece (a bare byte vocabulary) spells the space as <0x20>, so
    // decoding gives a space back rather than the bytes of U+2581.
    constexpr uint8_t kSpace = ' ';
    if (piece == "\xE2\x96\x81" && byte_ids_[kSpace] >= 0) {
      out.push_back(byte_ids_[kSpace]);
      continue;
    }
    bool bytes = true;
    for (char c : piece) bytes = bytes && byte_ids_[static_cast<uint8_t>(c)] >= 0;
    if (bytes) {
      for (char c : piece) out.push_back(byte_ids_[static_cast<uint8_t>(c)]);
    } else if (unk_id_ >= 0) {
      out.push_back(unk_id_);  // one unknown per character, as SentencePiece does
    }
  }
}

}  // namespace baton::tokenizer
