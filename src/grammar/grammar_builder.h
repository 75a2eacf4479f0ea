#pragma once
// Builds a Grammar rule by rule: the GBNF parser's back end. Elements are lowered as they are
// added (a group or a repetition becomes a synthetic rule), so a rule is alternatives of flat
// element sequences.
#include <bitset>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "grammar/grammar.h"

namespace baton::grammar {

using Sequence = std::vector<Element>;
using Alternatives = std::vector<Sequence>;

struct Grammar::Builder {
  std::vector<Alternatives> rules;
  std::vector<std::string> names;
  std::vector<bool> defined;
  std::vector<std::bitset<256>> classes;
  std::map<std::string, uint32_t> class_ids;  // bitset as a 256-char string → index
  std::unordered_map<std::string, uint32_t> rule_ids;
  std::map<std::vector<std::pair<uint32_t, uint32_t>>, uint32_t> char_class_rules;
  static constexpr size_t kMaxRepeated = 1'000'000;
  size_t repeated = 0;  // elements and rules that repetition counts have created so far

  uint32_t rule_id(const std::string& name);         // creates an undefined rule on first use
  uint32_t synthetic_rule(const std::string& hint);  // a fresh, defined rule
  Element byte_class(const std::bitset<256>& bytes);
  Element byte(uint8_t b);
  // A set of code points: one byte class when all are ASCII, else a rule of UTF-8 spellings.
  Element code_points(const std::vector<std::pair<uint32_t, uint32_t>>& ranges);
  // x* / x+ / x? / x{min,max} (max < 0: unbounded) of a sequence, appended to `out`.
  void repeat(const Sequence& x, int min, int max, Sequence& out, const std::string& hint);
  Element group(Alternatives alts, const std::string& hint);

  // Checks (undefined rules, left recursion, a root that derives nothing) and flattens.
  std::shared_ptr<const Grammar> finish(const std::string& root);

 private:
  void check_defined() const;
  std::vector<bool> nullable() const;
  void check_left_recursion(const std::vector<bool>& nullable) const;
  void check_productive(uint32_t root) const;
};

}  // namespace baton::grammar
