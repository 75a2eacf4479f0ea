#include "grammar/grammar_builder.h"

#include <fmt/format.h>

#include <algorithm>

#include "grammar/utf8_ranges.h"

namespace baton::grammar {

uint32_t Grammar::Builder::add_rule(uint32_t name_index) {
  if (rule_alts.size() >= GrammarLimits::kMaxRules) {
    throw GrammarError(fmt::format(
        "the grammar needs more than {} rules (groups, repetition counts and character classes "
        "each add rules); use smaller counts, * or +, or fewer rules",
        GrammarLimits::kMaxRules));
  }
  rule_alts.emplace_back(0, 0);
  defined.push_back(false);
  name_of.push_back(name_index);
  return static_cast<uint32_t>(rule_alts.size() - 1);
}

uint32_t Grammar::Builder::name_index(const std::string& name) {
  auto [it, added] = name_ids.try_emplace(name, static_cast<uint32_t>(names.size()));
  if (added) {
    names.push_back(name);
    named_rule.push_back(kNoRule);
  }
  return it->second;
}

uint32_t Grammar::Builder::rule_id(const std::string& name) {
  const uint32_t n = name_index(name);
  if (named_rule[n] == kNoRule) named_rule[n] = add_rule(n);
  return named_rule[n];
}

uint32_t Grammar::Builder::synthetic_rule(const std::string& hint) {
  // A generated rule shares its hint's name for messages but is never the rule that name
  // refers to, so it cannot collide with a name the text uses.
  const uint32_t id = add_rule(name_index(hint));
  defined[id] = true;
  return id;
}

void Grammar::Builder::charge_elements(size_t n) {
  if (elements.size() + n > GrammarLimits::kMaxElements) {
    throw GrammarError(
        fmt::format("the grammar needs more than {} elements (characters of literals and rule "
                    "uses, with repetition counts multiplied out); use smaller counts, * or +, "
                    "or a shorter grammar",
                    GrammarLimits::kMaxElements));
  }
}

void Grammar::Builder::add_alternative(uint32_t rule, std::span<const Element> alt) {
  alt_starts.push_back(static_cast<uint32_t>(elements.size()));
  elements.insert(elements.end(), alt.begin(), alt.end());
  elements.push_back(Element{Element::Kind::End, rule});
}

// A rule's alternatives are appended together, so they are contiguous in alt_starts.
void Grammar::Builder::define(uint32_t rule, const Alternatives& alts) {
  size_t n = 0;
  for (const Sequence& alt : alts) n += alt.size() + 1;  // + its End
  charge_elements(n);
  const auto first = static_cast<uint32_t>(alt_starts.size());
  for (const Sequence& alt : alts) add_alternative(rule, alt);
  rule_alts[rule] = {first, static_cast<uint32_t>(alt_starts.size())};
}

void Grammar::Builder::define(uint32_t rule, std::initializer_list<std::span<const Element>> alts) {
  size_t n = 0;
  for (const auto& alt : alts) n += alt.size() + 1;
  charge_elements(n);
  const auto first = static_cast<uint32_t>(alt_starts.size());
  for (const auto& alt : alts) add_alternative(rule, alt);
  rule_alts[rule] = {first, static_cast<uint32_t>(alt_starts.size())};
}

Element Grammar::Builder::byte_class(const std::bitset<256>& bytes) {
  auto it = class_ids.find(bytes);
  if (it == class_ids.end()) {
    if (classes.size() >= GrammarLimits::kMaxClasses) {
      throw GrammarError(fmt::format(
          "the grammar uses more than {} distinct character classes; share classes through "
          "rules",
          GrammarLimits::kMaxClasses));
    }
    it = class_ids.emplace(bytes, static_cast<uint32_t>(classes.size())).first;
    classes.push_back(bytes);
  }
  return Element{Element::Kind::Bytes, it->second};
}

Element Grammar::Builder::byte(uint8_t b) {
  std::bitset<256> bits;
  bits.set(b);
  return byte_class(bits);
}

Element Grammar::Builder::code_points(const std::vector<std::pair<uint32_t, uint32_t>>& ranges) {
  auto norm = normalize_ranges(ranges);
  if (norm.empty()) {
    throw GrammarError("a character class matches no character; remove it or widen it");
  }
  if (norm.back().second < 0x80) {
    std::bitset<256> bits;
    for (auto [lo, hi] : norm) {
      for (uint32_t c = lo; c <= hi; ++c) bits.set(c);
    }
    return byte_class(bits);
  }
  if (auto it = char_class_rules.find(norm); it != char_class_rules.end()) {
    return Element{Element::Kind::Rule, it->second};
  }
  const uint32_t id = synthetic_rule("class");
  char_class_rules.emplace(norm, id);
  // Sequences that differ only in their first byte range merge into one alternative: ASCII
  // ranges become one byte class instead of one alternative each.
  std::bitset<256> ascii;
  Alternatives alts(1);
  for (const ByteSequence& seq : utf8_sequences(norm)) {
    if (seq.size() == 1) {
      for (int c = seq[0].lo; c <= seq[0].hi; ++c) ascii.set(c);
      continue;
    }
    Sequence alt;
    for (const ByteRange& r : seq) {
      std::bitset<256> bits;
      for (int c = r.lo; c <= r.hi; ++c) bits.set(c);
      alt.push_back(byte_class(bits));
    }
    alts.push_back(std::move(alt));
  }
  if (ascii.any()) {
    alts[0] = Sequence{byte_class(ascii)};
  } else {
    alts.erase(alts.begin());
  }
  define(id, alts);
  return Element{Element::Kind::Rule, id};
}

Element Grammar::Builder::group(Alternatives alts, const std::string& hint) {
  if (alts.size() == 1 && alts[0].size() == 1) return alts[0][0];
  const uint32_t id = synthetic_rule(hint);
  define(id, alts);
  return Element{Element::Kind::Rule, id};
}

void Grammar::Builder::repeat(const Sequence& x, int min, int max, Sequence& out,
                              const std::string& hint) {
  // Counts multiply through nesting in what they cost to build ("x"{10000} a thousand times is
  // ten million elements), so a request's grammar is bounded in total, not per repetition.
  repeated += static_cast<size_t>(std::max(min, max));
  if (repeated > GrammarLimits::kMaxRepeated) {
    throw GrammarError(
        fmt::format("the grammar's repetition counts add up to more than {}; use * "
                    "or + or smaller counts",
                    GrammarLimits::kMaxRepeated));
  }
  const Element item = group({x}, hint);
  for (int i = 0; i < min; ++i) out.push_back(item);
  if (max < 0) {
    // star ::= item star | ε (right recursion: the matcher's tail calls keep the stack flat)
    const uint32_t star = synthetic_rule(hint + "-star");
    const Element body[] = {item, Element{Element::Kind::Rule, star}};
    define(star, {body, {}});
    out.push_back(Element{Element::Kind::Rule, star});
    return;
  }
  if (max <= min) return;
  // opt_k ::= item opt_{k-1} | ε, nested so that k optional items cost k rules, not k².
  const uint32_t opt_name = name_index(hint + "-opt");
  Element body[] = {item, Element{}};
  for (int k = 0; k < max - min; ++k) {
    const uint32_t opt = add_rule(opt_name);
    defined[opt] = true;
    define(opt, {std::span<const Element>(body, k == 0 ? 1 : 2), {}});
    body[1] = Element{Element::Kind::Rule, opt};
  }
  out.push_back(body[1]);
}

std::shared_ptr<const Grammar> Grammar::Builder::finish(const std::string& root) {
  auto it = name_ids.find(root);
  const uint32_t root_id = it == name_ids.end() ? kNoRule : named_rule[it->second];
  if (root_id == kNoRule || !defined[root_id]) {
    throw GrammarError(
        fmt::format("the grammar has no '{}' rule; add `{} ::= ...` as its start", root, root));
  }
  check_defined();
  check_left_recursion(nullable());
  check_productive(root_id);
  auto g = std::make_shared<Grammar>();
  g->classes_ = std::move(classes);
  g->root_ = root_id;
  g->elements_ = std::move(elements);
  g->alt_starts_ = std::move(alt_starts);
  g->rule_alts_ = std::move(rule_alts);
  // Growth by doubling can leave half of each table unused, and a cached grammar keeps its
  // tables for as long as the cache does.
  g->classes_.shrink_to_fit();
  g->elements_.shrink_to_fit();
  g->alt_starts_.shrink_to_fit();
  g->rule_alts_.shrink_to_fit();
  plan_shortest(*g);
  return g;
}

size_t Grammar::memory_bytes() const {
  return sizeof(Grammar) + elements_.capacity() * sizeof(Element) +
         classes_.capacity() * sizeof(std::bitset<256>) +
         alt_starts_.capacity() * sizeof(uint32_t) +
         rule_alts_.capacity() * sizeof(std::pair<uint32_t, uint32_t>) +
         (min_bytes_.capacity() + shortest_alt_.capacity()) * sizeof(uint32_t);
}

}  // namespace baton::grammar
