#pragma once
// The part the XML-like formats share: splitting generated text into content and markup
// blocks (a section of calls, or one call), with the streaming rules of OutputFormat::parse():
// content stops before anything that could still open a block, before trailing whitespace (a
// call may follow, and whitespace before a call is dropped) and before a split UTF-8 character.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "toolcall/markup_text.h"
#include "toolcall/output_format.h"

namespace baton::toolcall::markup {

enum class Match { yes, partial, no };

// Reads markup literals from a position, allowing whitespace between them.
struct Cursor {
  std::string_view text;
  size_t pos = 0;

  bool at_end() const { return pos >= text.size(); }
  // Skips whitespace, then `lit`: yes (moved past it), partial (the text ends inside it or in
  // the whitespace before it), no (something else is there; the cursor does not move).
  Match literal(std::string_view lit);
  // Every piece in order, whitespace allowed between them.
  Match literals(const std::vector<std::string>& pieces);
  // The literal right here, no whitespace skipped.
  Match exact(std::string_view lit);
  // Position of `lit` at or after the cursor, npos when absent.
  size_t find(std::string_view lit) const { return text.find(lit, pos); }
};

enum class Block {
  done,        // a complete block; parsing goes on at `end`
  incomplete,  // the text ends inside the block (when final: the block is malformed)
  not_markup,  // the opener was ordinary text: it stays in content
  malformed,   // a call went wrong after it was reported; when final it becomes content
};

struct BlockResult {
  Block status;
  size_t end = 0;
};

// A block's status when a literal did not match (the text may end inside it: incomplete).
// unopened: the literal that opens the block, which then was prose; broken: a piece inside a
// block already opened, which then is malformed.
inline Block unopened(Match m) {
  return m == Match::partial ? Block::incomplete : Block::not_markup;
}
inline Block broken(Match m) {
  return m == Match::partial ? Block::incomplete : Block::malformed;
}

// A section wrapping calls (`open`, calls read by `call` at the cursor, `close`), for the engines
// whose families may wrap all of a message's calls. The end of the text in place of `close` is
// accepted once the model stopped, after at least one call. A call that is not markup after the
// first one breaks the section (the calls before it were already reported). With no `open` the
// block is one call, for the families whose calls stand alone.
BlockResult read_section(Cursor& c, bool final, const std::vector<std::string>& open,
                         const std::vector<std::string>& close, const std::function<Block()>& call);

// The pieces of a call's close after the first (which the caller has read): each may be missing
// at the end of a final text, since the call is whole without them.
Block close_rest(Cursor& c, bool final, const std::vector<std::string>& close);

// The literal a block of an engine's spec starts with: its section's open, else its call's.
inline const std::string& block_opener(const std::vector<std::string>& section_open,
                                       const std::vector<std::string>& call_open) {
  return section_open.empty() ? call_open.front() : section_open.front();
}

// Parses the block that starts at `start` (where one of the openers begins), appending its
// calls to out.calls and keeping out.last_call_open up to date.
using BlockParser =
    std::function<BlockResult(std::string_view text, size_t start, bool final, ParsedOutput& out)>;

// The whole text: content between blocks, blocks through `parse_block`.
ParsedOutput scan_blocks(std::string_view text, bool final, const std::vector<std::string>& openers,
                         const BlockParser& parse_block);

}  // namespace baton::toolcall::markup
