#pragma once
// Keeps what users and tools wrote from becoming control tokens once a chat template has
// rendered it. Before rendering, every occurrence of a protected text (a control token's text)
// in the context's strings is replaced by a sentinel: two characters from Unicode's
// supplementary private use area that the template copies through like any other text. After
// rendering, restore() puts the original text back and reports where it stands, and the
// tokenizer does not parse control tokens inside those ranges
// (tokenizer::TextCodec::encode_rendered). Template text itself is never touched, so the template's
// own markers stay special tokens.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace baton::chat {

class ProtectedStrings {
 public:
  // `texts`: the strings to protect (empty ones are ignored). At most 65533 of them.
  explicit ProtectedStrings(std::vector<std::string> texts);

  // Replaces protected texts (longest first at each position) in every string and object key
  // of `value`, recursively.
  void protect(nlohmann::ordered_json& value) const;
  std::string protect(std::string_view text) const;

  struct Restored {
    std::string text;
    std::vector<std::pair<size_t, size_t>> literal;  // (offset, length), sorted, disjoint
  };
  // The rendered text with the originals back in place, and their byte ranges.
  Restored restore(std::string_view rendered) const;

 private:
  // The first two bytes of s at i, as an index into by_prefix_.
  static size_t prefix_key(std::string_view s, size_t i);

  std::vector<std::string> texts_;  // index 0: the sentinel's own lead character
  // First two bytes → indices into texts_, longest first: vocabularies with thousands of
  // control tokens mostly share the first byte ('<'), rarely the first two.
  std::vector<std::vector<size_t>> by_prefix_;
  std::vector<size_t> single_;  // one-byte texts
};

}  // namespace baton::chat
