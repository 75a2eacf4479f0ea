#pragma once
// Builds a Grammar rule by rule: the GBNF parser's back end. Elements are lowered as they are
// added (a group or a repetition becomes a synthetic rule), so a rule is alternatives of flat
// element sequences. Every addition is charged against GrammarLimits as it is made.
#include <bitset>
#include <initializer_list>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "grammar/grammar.h"

namespace baton::grammar {

using Sequence = std::vector<Element>;
using Alternatives = std::vector<Sequence>;

struct Grammar::Builder {
  // The rules in the compiled layout from the start (a bounded repetition adds thousands of
  // rules, and allocations per rule would be most of what a large grammar costs to build):
  // every alternative is a run of `elements` closed by an End, starting at alt_starts[a], and
  // rule r's alternatives are alt_starts[rule_alts[r].first .. rule_alts[r].second).
  std::vector<Element> elements;
  std::vector<uint32_t> alt_starts;
  std::vector<std::pair<uint32_t, uint32_t>> rule_alts;
  std::vector<bool> defined;
  std::vector<std::bitset<256>> classes;
  std::unordered_map<std::bitset<256>, uint32_t> class_ids;
  std::map<std::vector<std::pair<uint32_t, uint32_t>>, uint32_t> char_class_rules;
  size_t repeated = 0;  // repetition counts added up so far

  uint32_t rule_id(const std::string& name);         // creates an undefined rule on first use
  uint32_t synthetic_rule(const std::string& hint);  // a fresh, defined rule
  // Sets a defined rule's body, charging its elements.
  void define(uint32_t rule, const Alternatives& alts);
  void define(uint32_t rule, std::initializer_list<std::span<const Element>> alts);
  size_t n_rules() const { return rule_alts.size(); }
  // The elements of alternative a, without its End.
  std::span<const Element> body(uint32_t a) const {
    const size_t end = a + 1 < alt_starts.size() ? alt_starts[a + 1] : elements.size();
    return {elements.data() + alt_starts[a], elements.data() + end - 1};
  }
  Element byte_class(const std::bitset<256>& bytes);
  Element byte(uint8_t b);
  // A set of code points: one byte class when all are ASCII, else a rule of UTF-8 spellings.
  Element code_points(const std::vector<std::pair<uint32_t, uint32_t>>& ranges);
  // x* / x+ / x? / x{min,max} (max < 0: unbounded) of a sequence, appended to `out`.
  void repeat(const Sequence& x, int min, int max, Sequence& out, const std::string& hint);
  Element group(Alternatives alts, const std::string& hint);
  // The name that messages use for rule r: a generated rule goes by the rule it came from.
  const std::string& name(uint32_t r) const { return names[name_of[r]]; }

  // Checks (undefined rules, left recursion, a root that derives nothing) and flattens.
  std::shared_ptr<const Grammar> finish(const std::string& root);

 private:
  static constexpr uint32_t kNoRule = 0xFFFFFFFFu;
  uint32_t name_index(const std::string& name);
  uint32_t add_rule(uint32_t name_index);
  void add_alternative(uint32_t rule, std::span<const Element> alt);
  void charge_elements(size_t n);
  std::vector<bool> derivable(bool bytes_hold) const;
  void check_defined() const;
  std::vector<bool> nullable() const;
  void check_left_recursion(const std::vector<bool>& nullable) const;
  void check_productive(uint32_t root) const;
  // Fills g's min_bytes_ and shortest_alt_ from its flattened rules (grammar_shortest.cpp).
  static void plan_shortest(Grammar& g);

  // Names are kept once each (a bounded repetition generates thousands of rules that share
  // one); name_of[r] indexes names, and named_rule[n] is the rule that name n defines
  // (kNoRule: a name that only generated rules go by).
  std::vector<std::string> names;
  std::unordered_map<std::string, uint32_t> name_ids;
  std::vector<uint32_t> name_of;
  std::vector<uint32_t> named_rule;
};

}  // namespace baton::grammar
