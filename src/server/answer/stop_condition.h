#pragma once
// A request's client text and its stop strings, as the scheduler StopCondition the engine loop
// runs on each generated token: it decodes the token (incremental detokenization), holds back
// text that may still become a stop string, and ends the request in the step whose token
// completes one (finish reason "stop"). The events carry the text it releases; Generation only
// forwards it, so the text is decoded and matched once.
#include <memory>
#include <string>
#include <vector>

#include "sched/engine_loop.h"
#include "server/answer/stop_matcher.h"
#include "tokenizer/text_codec.h"

namespace baton::server {

class StopStringCondition : public sched::StopCondition {
 public:
  // `codec` must outlive the condition (the server's codec lives as long as the engine loop).
  // `show_special` as the request's Generation decodes, so that both see the same text.
  StopStringCondition(const tokenizer::TextCodec& codec, std::shared_ptr<const StopSet> stop,
                      const std::vector<int32_t>& prompt, bool show_special = false);
  bool on_token(int32_t token, std::string& text) override;
  std::string held_text() override;
  std::string matched_stop() const override { return matcher_.matched_string(); }

 private:
  std::unique_ptr<tokenizer::TextStream> stream_;
  StopMatcher matcher_;
};

// The condition of one choice (every choice's shares `stop`, which may be null: no stop
// strings, and then the condition only decodes).
std::shared_ptr<sched::StopCondition> make_stop_condition(
    const tokenizer::TextCodec& codec, const std::shared_ptr<const StopSet>& stop,
    const std::vector<int32_t>& prompt, bool show_special = false);
std::shared_ptr<sched::StopCondition> make_stop_condition(const tokenizer::TextCodec& codec,
                                                          const std::vector<std::string>& stop,
                                                          const std::vector<int32_t>& prompt);

}  // namespace baton::server
