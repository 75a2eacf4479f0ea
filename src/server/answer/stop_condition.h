#pragma once
// Stop strings as a scheduler StopCondition: the engine loop runs it on each generated token so
// a request ends in the step whose token completes a stop string (finish reason "stop"), rather
// than running on while a cancel travels back from the client's thread. It repeats exactly the
// detokenization and matching that Generation does for the client's text, so both agree on the
// token that completes the match.
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
  bool on_token(int32_t token) override;

 private:
  std::unique_ptr<tokenizer::TextStream> stream_;
  StopMatcher matcher_;
};

// nullptr when there is no non-empty stop string (nothing for the loop to check). Every choice's
// condition shares `stop`.
std::shared_ptr<sched::StopCondition> make_stop_condition(
    const tokenizer::TextCodec& codec, const std::shared_ptr<const StopSet>& stop,
    const std::vector<int32_t>& prompt, bool show_special = false);
std::shared_ptr<sched::StopCondition> make_stop_condition(const tokenizer::TextCodec& codec,
                                                          const std::vector<std::string>& stop,
                                                          const std::vector<int32_t>& prompt);

}  // namespace baton::server
