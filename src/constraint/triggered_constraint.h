#pragma once
// tool_choice "auto": the model may answer in prose or call a tool, so nothing is constrained
// until it writes its format's call opener (e.g. "<tool_call>"); from there the call is held to
// the call grammar (a known tool, arguments valid for its parameters) until it is complete, and
// then the output is free again (prose, or another call that triggers anew). An opener inside
// a reasoning block is the model thinking about a call, not making one: it does not trigger.
#include <memory>
#include <optional>
#include <string>

#include "engine/token_constraint.h"
#include "grammar/token_mask.h"

namespace baton::constraint {

class TriggeredConstraint : public engine::TokenConstraint {
 public:
  // grammar: one call, starting with `trigger`; vocab: token bytes with the format's markers.
  struct Reasoning {
    std::string open, close;  // empty: the model does not think in tags
    bool starts_open = false;
  };
  TriggeredConstraint(std::string trigger, std::shared_ptr<const grammar::Grammar> grammar,
                      std::shared_ptr<const grammar::VocabTrie> vocab, Reasoning reasoning);
  // Free text: no restriction (nullptr); inside a call: the call grammar's mask.
  const std::vector<uint64_t>* allowed() override;
  void accept(int32_t token) override;
  bool complete() const override { return false; }
  bool in_call() const { return call_.has_value(); }

 private:
  void scan();
  void keep_tail();

  std::string trigger_;
  std::shared_ptr<const grammar::Grammar> grammar_;
  std::shared_ptr<const grammar::VocabTrie> vocab_;
  Reasoning reasoning_;
  bool thinking_ = false;
  std::string recent_;  // free text not yet scanned past, at most what a tag may straddle
  std::optional<grammar::TokenMatcher> call_;
};

}  // namespace baton::constraint
