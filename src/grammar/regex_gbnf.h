#pragma once
// A practical regex subset → a GBNF expression, for the `regex` request field and JSON Schema
// string `pattern`. What it accepts is listed in docs/GRAMMAR.md; anything else (backreferences,
// lookaround, ...) is a GrammarError naming the construct.
#include <cstdint>
#include <functional>
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
  // Length bounds in characters (code points) of the matched string, as JSON Schema's
  // minLength / maxLength count them (a character spelled as an escape is one); max_length < 0:
  // no upper bound.
  int64_t min_length = 0;
  int64_t max_length = -1;
  // Adds a named GBNF rule (hint: a name to derive it from; body: its alternatives) and returns
  // the rule's name. Required when a length bound is set: the bounded form needs rules, not one
  // expression. The caller may return an earlier rule's name for a body it has seen.
  std::function<std::string(const std::string& hint, const std::string& body)> add_rule;
};

// A GBNF expression (no rule name) for the strings the pattern matches, within the length
// bounds when they are set. Throws GrammarError when the pattern is not supported, or when no
// string of the allowed lengths matches it.
std::string regex_to_gbnf(std::string_view pattern, const RegexOptions& opts = {});

}  // namespace baton::grammar
