#pragma once
// Splits a leading reasoning block (<think>…</think>) off the generated text, before the
// output format sees the rest.
#include <string>
#include <string_view>

#include "toolcall/output_parser.h"

namespace baton::toolcall {

struct ReasoningSplit {
  std::string reasoning;  // without its markers and without whitespace at its edges
  // What follows the block (leading whitespace dropped), or the whole text when there is no
  // block; empty while a non-final text may still be (or be inside) a block.
  std::string_view rest;
};

ReasoningSplit split_reasoning(std::string_view text, const ReasoningOptions& r, bool final);

}  // namespace baton::toolcall
