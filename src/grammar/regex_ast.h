#pragma once
// Internal to the regex compiler (regex_parse.cpp parses, regex_nodes.cpp builds the tree,
// regex_gbnf.cpp prints it, regex_bounded.cpp adds length bounds): the pattern's syntax tree, the
// constructors that keep it normalized, the parser's entry point and the GBNF printer. Not for
// other callers: use regex_gbnf.h.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "grammar/regex_gbnf.h"

namespace baton::grammar::regex {

using Ranges = std::vector<std::pair<uint32_t, uint32_t>>;
inline constexpr int kInf = -1;  // Node::max of an unbounded repetition
inline constexpr uint32_t kMaxCodePoint = 0x10FFFF;

// Every node matches at least one string (there is no node for the empty language), and a
// Repeat never repeats something that may match the empty string.
struct Node {
  enum class Kind { Empty, Chars, Concat, Alt, Repeat } kind = Kind::Empty;
  Ranges chars;            // Chars: sorted, merged, without surrogates, never empty
  std::vector<Node> kids;  // Concat and Alt; Repeat has exactly one
  int min = 0, max = 0;    // Repeat; max kInf is unbounded
};
using Kind = Node::Kind;

// Code point sets. Surrogates are never members: complement and subtract leave them out, so
// "all characters" is one canonical set and emptiness tests mean what they say.
Ranges complement(Ranges r);
Ranges subtract(const Ranges& a, Ranges b);
bool contains(const Ranges& r, uint32_t cp);

// One character out of the ranges (surrogates are dropped).
Node chars(const Ranges& r);
bool nullable(const Node& n);
// These flatten nested concatenations / alternations and drop what adds nothing.
Node make_concat(std::vector<Node> parts);
Node make_alt(std::vector<Node> alts);
Node make_repeat(Node x, int min, int max);

// The whole pattern as one tree. With search, a side without its anchor (^ or $) takes any
// text, so the tree matches every string that contains a match. Throws GrammarError.
Node parse_pattern(std::string_view pattern, bool search);

// A GBNF expression for n that may be embedded anywhere (in parentheses unless it is one atom);
// with json_string_body the characters are spelled as inside a JSON string literal.
std::string to_gbnf(const Node& n, bool json_string_body);

// The length-bounded form of regex_to_gbnf (regex_bounded.cpp): root is parse_pattern's tree.
std::string bounded_to_gbnf(const Node& root, std::string_view pattern, const RegexOptions& opts);

}  // namespace baton::grammar::regex
