#include "server/answer/stop_condition.h"

namespace baton::server {

StopStringCondition::StopStringCondition(const tokenizer::TextCodec& codec,
                                         std::shared_ptr<const StopSet> stop,
                                         const std::vector<int32_t>& prompt, bool show_special)
    : stream_(codec.stream(prompt, show_special)), matcher_(std::move(stop)) {}

bool StopStringCondition::on_token(int32_t token, std::string& text) {
  text += matcher_.push(stream_->push(token));
  return matcher_.matched();
}

std::string StopStringCondition::held_text() {
  std::string text = matcher_.push(stream_->flush());
  if (!matcher_.matched()) text += matcher_.flush();
  return text;
}

std::shared_ptr<sched::StopCondition> make_stop_condition(
    const tokenizer::TextCodec& codec, const std::shared_ptr<const StopSet>& stop,
    const std::vector<int32_t>& prompt, bool show_special) {
  return std::make_shared<StopStringCondition>(codec, stop, prompt, show_special);
}

std::shared_ptr<sched::StopCondition> make_stop_condition(const tokenizer::TextCodec& codec,
                                                          const std::vector<std::string>& stop,
                                                          const std::vector<int32_t>& prompt) {
  return make_stop_condition(codec, make_stop_set(stop), prompt);
}

}  // namespace baton::server
