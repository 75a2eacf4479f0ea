#include "constraint/constraint_compiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>

#include "grammar/json_schema.h"
#include "grammar/regex_gbnf.h"

namespace baton::constraint {

void require_room(const engine::TokenConstraint& c, int32_t budget_tokens,
                  const std::string& budget, bool is_default) {
  const int32_t need = c.min_tokens_to_complete();
  if (need <= budget_tokens) return;
  if (need == INT32_MAX) {
    throw ConstraintError(
        "the output constraint allows no output this model's vocabulary can spell; check the "
        "grammar, response_format or tool definitions",
        "", "unspellable_constraint");
  }
  throw ConstraintError(fmt::format("{} is {}{} but the shortest output the output constraint "
                                    "(response_format, grammar or forced tool call) allows takes "
                                    "{} tokens; set {} to at least {}",
                                    budget, budget_tokens, is_default ? " (the default here)" : "",
                                    need, budget, need),
                        budget, "max_tokens_too_small");
}

std::string constraint_gbnf(const ConstraintSpec& spec) {
  switch (spec.kind) {
    case ConstraintSpec::Kind::JsonObject:
      return grammar::json_object_gbnf();
    case ConstraintSpec::Kind::JsonSchema:
      return grammar::json_schema_to_gbnf(spec.schema);
    case ConstraintSpec::Kind::Grammar:
      return spec.text;
    case ConstraintSpec::Kind::Regex:
      return "root ::= " + grammar::regex_to_gbnf(spec.text) + "\n";
    case ConstraintSpec::Kind::Choice: {
      std::string root = "root ::= ";
      for (size_t i = 0; i < spec.choices.size(); ++i) {
        root += (i ? " | " : "") + grammar::gbnf_literal(spec.choices[i]);
      }
      return root + "\n";
    }
    case ConstraintSpec::Kind::None:
      break;
  }
  return {};
}

std::shared_ptr<const grammar::Grammar> ConstraintCompiler::compile_gbnf(const std::string& gbnf,
                                                                         const std::string& field) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < cache_.size(); ++i) {
      if (cache_[i].gbnf == gbnf) {
        std::rotate(cache_.begin(), cache_.begin() + i, cache_.begin() + i + 1);
        return cache_[0].grammar;
      }
    }
  }
  std::shared_ptr<const grammar::Grammar> g;
  try {
    g = grammar::Grammar::parse(gbnf);
    // Where a generation starts is worked out once per request, here on the caller's thread
    // first: a grammar whose start alone is past the matcher's budget is refused now, not on
    // the engine loop.
    grammar::Matcher start(g);
  } catch (const grammar::GrammarError& e) {
    throw ConstraintError(fmt::format("'{}': {}", field, e.what()), field, "invalid_grammar");
  }
  const size_t bytes = g->memory_bytes() + gbnf.size() + sizeof(CachedGrammar);
  if (bytes > kCachedGrammarBytes / 8) return g;  // used by this request only, never kept
  std::lock_guard<std::mutex> lock(mu_);
  cache_.insert(cache_.begin(), {gbnf, g, bytes});
  cache_bytes_ += bytes;
  while (cache_.size() > kCachedGrammars || cache_bytes_ > kCachedGrammarBytes) {
    cache_bytes_ -= cache_.back().bytes;
    cache_.pop_back();
  }
  return g;
}

size_t ConstraintCompiler::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cache_bytes_;
}

size_t ConstraintCompiler::cached_grammars() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cache_.size();
}

std::shared_ptr<const grammar::Grammar> ConstraintCompiler::compile(const ConstraintSpec& spec) {
  std::string gbnf;
  try {
    gbnf = constraint_gbnf(spec);
  } catch (const grammar::GrammarError& e) {
    throw ConstraintError(fmt::format("'{}': {}", spec.field, e.what()), spec.field,
                          "invalid_grammar");
  }
  return compile_gbnf(gbnf, spec.field);
}

std::shared_ptr<const grammar::VocabTrie> ConstraintCompiler::vocab(
    const std::vector<std::string>& markers) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = markers.empty() ? vocab_ : marker_vocab_;
  if (!markers.empty() && markers != vocab_markers_) {
    marker_vocab_.reset();  // one server has one tool-call format, so one marker set
    vocab_markers_ = markers;
  }
  if (!slot) {
    std::vector<std::string> bytes(static_cast<size_t>(codec_.n_vocab()));
    const std::vector<int32_t> eog = codec_.eog_tokens();
    for (int32_t id = 0; id < codec_.n_vocab(); ++id) {
      bytes[id] = codec_.token_bytes(id);
      if (!bytes[id].empty() || std::find(eog.begin(), eog.end(), id) != eog.end()) continue;
      std::string text = codec_.piece(id);
      if (std::find(markers.begin(), markers.end(), text) != markers.end()) bytes[id] = text;
    }
    slot = std::make_shared<grammar::VocabTrie>(bytes, eog);
  }
  return slot;
}

namespace {

class GrammarConstraint : public engine::TokenConstraint {
 public:
  GrammarConstraint(std::shared_ptr<const grammar::Grammar> g,
                    std::shared_ptr<const grammar::VocabTrie> v, int32_t max_tokens)
      : m_(std::move(g), std::move(v)) {
    m_.limit_tokens(max_tokens);
  }
  const std::vector<uint64_t>* allowed() override {
    try {
      return &m_.allowed();
    } catch (const grammar::GrammarBudgetError& e) {
      throw engine::ConstraintBudgetExceeded(e.what());
    }
  }
  void accept(int32_t token) override {
    bool ok = false;
    try {
      ok = m_.accept(token);
    } catch (const grammar::GrammarBudgetError& e) {
      throw engine::ConstraintBudgetExceeded(e.what());
    }
    if (!ok) throw std::runtime_error(fmt::format("token {} is outside the grammar", token));
  }
  bool complete() const override { return m_.must_end(); }
  int32_t min_tokens_to_complete() const override { return m_.min_tokens_to_end(); }

 private:
  grammar::TokenMatcher m_;
};

}  // namespace

std::shared_ptr<engine::TokenConstraint> ConstraintCompiler::make(
    std::shared_ptr<const grammar::Grammar> g, const std::vector<std::string>& markers,
    int32_t max_tokens) {
  return std::make_shared<GrammarConstraint>(std::move(g), vocab(markers), max_tokens);
}

}  // namespace baton::constraint
