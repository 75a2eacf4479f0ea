#pragma once
// A context-free grammar over bytes, compiled from GBNF text (the syntax llama.cpp users know;
// docs/GRAMMAR.md states it exactly), and a Matcher that follows one generation through it.
//
// Terminals are byte classes: the parser turns every character class over code points into the
// UTF-8 byte sequences that spell it, so a token that holds half a character (a byte-fallback
// token) is matched byte by byte like any other.
#include <bitset>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace baton::grammar {

// A grammar that does not parse, refers to an undefined rule, is left-recursive, or can never
// be satisfied. what() names the rule or the line:column and says what to change.
struct GrammarError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The compiled form: rules of alternatives of elements, flattened into one array so that a
// position in the grammar is one index.
struct Element {
  enum class Kind : uint8_t { Bytes, Rule, End } kind = Kind::End;
  uint32_t index = 0;  // Bytes: into Grammar::classes; Rule: rule id; End: the rule it closes
};

// The GBNF literal that matches exactly these bytes: quoted, with " and \ escaped and control
// bytes written \xHH (what the parser reads back as the same bytes).
std::string gbnf_literal(std::string_view bytes);

class Grammar {
 public:
  // Throws GrammarError. `root` names the start rule.
  static std::shared_ptr<const Grammar> parse(std::string_view gbnf,
                                              std::string_view root = "root");

  const std::vector<Element>& elements() const { return elements_; }
  const std::vector<std::bitset<256>>& classes() const { return classes_; }
  // Start positions (into elements()) of each alternative of rule r.
  const std::vector<uint32_t>& alternatives(uint32_t r) const { return alts_[r]; }
  uint32_t root() const { return root_; }
  size_t n_rules() const { return alts_.size(); }
  const std::string& rule_name(uint32_t r) const { return names_[r]; }

  // Building blocks for the parser (grammar_parser.cpp); not for other callers.
  struct Builder;

 private:
  friend struct Builder;
  std::vector<Element> elements_;
  std::vector<std::bitset<256>> classes_;
  std::vector<std::vector<uint32_t>> alts_;
  std::vector<std::string> names_;
  uint32_t root_ = 0;
};

// Where one generation stands in a grammar: the set of parse stacks that the bytes so far allow.
// Not thread-safe; one per request. Stack sets are interned, and the byte transitions between
// them are cached as they are discovered (a DFA built lazily), so that following a text and
// computing a token mask are table lookups after the first visit.
class Matcher {
 public:
  explicit Matcher(std::shared_ptr<const Grammar> g);
  ~Matcher();
  Matcher(Matcher&&) noexcept;
  Matcher& operator=(Matcher&&) noexcept;

  // Advances by one byte; false (state unchanged) when the grammar does not allow it here.
  bool accept_byte(uint8_t b);
  // Advances by every byte of s; false (state unchanged) when some byte is not allowed.
  bool accept(std::string_view s);
  // The bytes so far form a complete sentence of the grammar.
  bool can_end() const;
  // Complete, and no byte may follow.
  bool must_end() const;

  // The lazy DFA, for the token mask (token_mask.h). A state id is stable for this Matcher's
  // life; kDead means no byte sequence continues.
  using StateId = int32_t;
  static constexpr StateId kDead = -1;
  StateId state() const;
  StateId next(StateId s, uint8_t b);  // computes and caches on first use
  bool state_can_end(StateId s) const;
  size_t n_states() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True when the whole of `text` is a sentence of g.
bool matches(const std::shared_ptr<const Grammar>& g, std::string_view text);

}  // namespace baton::grammar
