// What the GBNF tests ask of a grammar text: the compiled grammar, or the error compiling it
// gives.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "grammar/grammar.h"

namespace baton::testing {

inline std::shared_ptr<const grammar::Grammar> G(std::string_view text) {
  return grammar::Grammar::parse(text);
}

// The message of the GrammarError that compiling `text` throws ("" when it compiles).
inline std::string error_of(std::string_view text) {
  try {
    grammar::Grammar::parse(text);
  } catch (const grammar::GrammarError& e) {
    return e.what();
  }
  return "";
}

}  // namespace baton::testing
