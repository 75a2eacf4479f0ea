#pragma once
// A context-free grammar over bytes, compiled from GBNF text (the syntax llama.cpp users know;
// docs/GRAMMAR.md states it exactly), and a Matcher that follows one generation through it.
//
// Terminals are byte classes: the parser turns every character class over code points into the
// UTF-8 byte sequences that spell it, so a token that holds half a character (a byte-fallback
// token) is matched byte by byte like any other.
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/gbnf_literal.h"

namespace baton::grammar {

// A grammar that does not parse, refers to an undefined rule, is left-recursive, or can never
// be satisfied. what() names the rule or the line:column and says what to change.
struct GrammarError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A matcher step that needed more work than its budget: the grammar keeps so many parses open
// at once (it is ambiguous, e.g. `[a-z]* [a-m] [a-z]{100}`) that following it would stall the
// server. The matcher is left as it was before the step.
struct GrammarBudgetError : GrammarError {
  using GrammarError::GrammarError;
};

// What one grammar may cost; docs/GRAMMAR.md lists them. The size limits are checked while the
// grammar is built, so a grammar over one is refused before it takes the memory.
struct GrammarLimits {
  static constexpr size_t kMaxNesting = 1000;        // ( ) groups inside one another
  static constexpr size_t kMaxRules = 250'000;       // named rules plus those groups,
                                                     // repetitions and classes generate
  static constexpr size_t kMaxElements = 4'000'000;  // terminals and rule uses in all rules
  static constexpr size_t kMaxClasses = 65'536;      // distinct byte classes
  static constexpr size_t kMaxRepeated = 1'000'000;  // repetition counts added up
  // Matcher work (parse stacks visited, frames and states built; a state counts
  // kStateWork) for one byte of accept(), one token mask, or the start state: at most
  // kStepWork, and token masks at most kMeanStepWork each on average (a request saves up to
  // kStepWork). Ordinary JSON-schema grammars take well under a tenth of either.
  static constexpr uint64_t kStepWork = 1'000'000;
  static constexpr uint64_t kMeanStepWork = 100'000;
  static constexpr uint64_t kStateWork = 256;
  // A matcher's cached states, frames and stacks; past this it keeps only where it stands.
  static constexpr size_t kMatcherBytes = size_t{32} << 20;
};

// The compiled form: rules of alternatives of elements, flattened into one array so that a
// position in the grammar is one index.
struct Element {
  enum class Kind : uint8_t { Bytes, Rule, End } kind = Kind::End;
  uint32_t index = 0;  // Bytes: into Grammar::classes; Rule: rule id; End: the rule it closes
};

using util::gbnf_literal;  // the GBNF literal of some bytes (util/gbnf_literal.h)

class Grammar {
 public:
  // Throws GrammarError. `root` names the start rule.
  static std::shared_ptr<const Grammar> parse(std::string_view gbnf,
                                              std::string_view root = "root");

  const std::vector<Element>& elements() const { return elements_; }
  const std::vector<std::bitset<256>>& classes() const { return classes_; }
  // Start positions (into elements()) of each alternative of rule r.
  std::span<const uint32_t> alternatives(uint32_t r) const {
    return {alt_starts_.data() + rule_alts_[r].first, alt_starts_.data() + rule_alts_[r].second};
  }
  uint32_t root() const { return root_; }
  size_t n_rules() const { return rule_alts_.size(); }
  // What this compiled grammar holds in memory, for caches that bound their size.
  size_t memory_bytes() const;

  // Shortest completions (grammar_shortest.cpp), what a max_tokens budget is planned with.
  static constexpr uint32_t kNoEnd = 0xFFFFFFFFu;  // no finite text gets there (or too long)
  // a + b bytes of completion: kNoEnd when either is, or when the sum passes a gigabyte (no
  // budget plans with a completion that long).
  static uint32_t add_min_bytes(uint32_t a, uint32_t b);
  // The fewest bytes from element `pos` to the end of its alternative.
  uint32_t min_bytes_from(uint32_t pos) const { return min_bytes_[pos]; }
  // Appends a shortest text from element `pos` to the end of its alternative (each byte class
  // spelt by its lowest byte); nothing when min_bytes_from(pos) is kNoEnd.
  void spell_shortest(uint32_t pos, std::string& out) const;

  // Building blocks for the parser (grammar_parser.cpp); not for other callers.
  struct Builder;

 private:
  friend struct Builder;
  std::vector<Element> elements_;
  std::vector<std::bitset<256>> classes_;
  // Rule r's alternatives start at alt_starts_[rule_alts_[r].first .. .second): flat arrays,
  // so a rule costs a few bytes (bounded repetitions generate one rule per count).
  std::vector<uint32_t> alt_starts_;
  std::vector<std::pair<uint32_t, uint32_t>> rule_alts_;
  uint32_t root_ = 0;
  std::vector<uint32_t> min_bytes_;     // per element
  std::vector<uint32_t> shortest_alt_;  // per rule: the start of an alternative of fewest bytes
};

// Where one generation stands in a grammar: the set of parse stacks that the bytes so far allow.
// Not thread-safe; one per request. Stack sets are interned, and the byte transitions between
// them are cached as they are discovered (a DFA built lazily), so that following a text and
// computing a token mask are table lookups after the first visit.
//
// Work is bounded per step (GrammarLimits::kStepWork): the start state, each byte of accept(),
// and whatever next() computes between two begin_work() calls. A step past its budget throws
// GrammarBudgetError and leaves the matcher as it was. Cached states are bounded in memory
// (GrammarLimits::kMatcherBytes): past it the cache is dropped at the next accept.
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
  // Grants `units` of work to the next() calls that follow (one token mask).
  void begin_work(uint64_t units);
  // Work done so far, in all steps together.
  uint64_t work() const;
  // Changes whenever cached states are dropped: state ids taken before then mean nothing.
  uint64_t cache_epoch() const;
  // Memory held by the cached states, frames and stacks.
  size_t cache_bytes() const;

  // The fewest bytes that complete the text from state s (0 where it may end; Grammar::kNoEnd
  // where it cannot), and one such text from where the matcher stands.
  uint32_t min_bytes_to_end(StateId s) const;
  std::string shortest_completion() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True when the whole of `text` is a sentence of g.
bool matches(const std::shared_ptr<const Grammar>& g, std::string_view text);

}  // namespace baton::grammar
