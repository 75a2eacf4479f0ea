#include "constraint/triggered_constraint.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace baton::constraint {

TriggeredConstraint::TriggeredConstraint(std::string trigger,
                                         std::shared_ptr<const grammar::Grammar> grammar,
                                         std::shared_ptr<const grammar::VocabTrie> vocab,
                                         Reasoning reasoning)
    : trigger_(std::move(trigger)),
      grammar_(std::move(grammar)),
      vocab_(std::move(vocab)),
      reasoning_(std::move(reasoning)),
      thinking_(reasoning_.starts_open && !reasoning_.close.empty()) {}

const std::vector<uint64_t>* TriggeredConstraint::allowed() {
  return call_ ? &call_->allowed() : nullptr;
}

void TriggeredConstraint::accept(int32_t token) {
  if (call_) {
    if (!call_->accept(token)) {
      throw std::runtime_error(fmt::format("token {} is outside the tool-call grammar", token));
    }
    if (call_->can_end()) {
      call_.reset();  // the call is whole: free text (or a next call) follows
      recent_.clear();
    }
    return;
  }
  recent_ += vocab_->bytes(token);
  scan();
}

void TriggeredConstraint::keep_tail() {
  // Only what could still be the start of a tag stays.
  const size_t longest =
      std::max({trigger_.size(), reasoning_.open.size(), reasoning_.close.size()});
  const size_t keep = longest > 1 ? longest - 1 : 0;
  if (recent_.size() > keep) recent_.erase(0, recent_.size() - keep);
}

void TriggeredConstraint::scan() {
  while (true) {
    if (thinking_) {
      const size_t end = recent_.find(reasoning_.close);
      if (end == std::string::npos) return keep_tail();
      recent_.erase(0, end + reasoning_.close.size());
      thinking_ = false;
      continue;
    }
    const size_t at = recent_.find(trigger_);
    const size_t think =
        reasoning_.open.empty() ? std::string::npos : recent_.find(reasoning_.open);
    if (think != std::string::npos && think < at && !reasoning_.close.empty()) {
      recent_.erase(0, think + reasoning_.open.size());
      thinking_ = true;
      continue;
    }
    if (at == std::string::npos) return keep_tail();
    grammar::TokenMatcher call(grammar_, vocab_);
    // The trigger and whatever its token wrote after it start the call; text the grammar cannot
    // continue was written freely and is left to the parser (that call stays unconstrained).
    if (call.accept_bytes(std::string_view(recent_).substr(at)) && !call.can_end()) {
      call_.emplace(std::move(call));
    }
    recent_.clear();
    return;
  }
}

}  // namespace baton::constraint
