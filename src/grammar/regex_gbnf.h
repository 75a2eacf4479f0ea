#pragma once
// A practical regex subset → a GBNF expression, for the `regex` request field and JSON Schema
// string `pattern`. What it accepts is listed in docs/GRAMMAR.md; anything else (backreferences,
// lookaround, ...) is a GrammarError naming the construct.
#include <string>
#include <string_view>

#include "grammar/grammar.h"

namespace baton::grammar {

struct RegexOptions {
  // JSON Schema patterns match anywhere in the string unless anchored with ^ and $; the
  // `regex` field must match the whole output.
  bool search = false;
  // Emit the characters as they appear inside a JSON string literal (", \ and control
  // characters escaped), for a pattern on a JSON string's value.
  bool json_string_body = false;
};

// A GBNF expression (no rule name) for the strings the pattern matches.
std::string regex_to_gbnf(std::string_view pattern, const RegexOptions& opts = {});

}  // namespace baton::grammar
