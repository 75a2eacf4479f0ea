#include "server/stop_condition.h"

#include <algorithm>

namespace baton::server {

StopStringCondition::StopStringCondition(const TextCodec& codec, std::vector<std::string> stop,
                                         const std::vector<int32_t>& prompt)
    : stream_(codec.stream(prompt)), matcher_(std::move(stop)) {}

bool StopStringCondition::on_token(int32_t token) {
  // The text is the client's business (Generation sends it); only the decision matters here.
  matcher_.push(stream_->push(token));
  return matcher_.matched();
}

std::shared_ptr<sched::StopCondition> make_stop_condition(const TextCodec& codec,
                                                          const std::vector<std::string>& stop,
                                                          const std::vector<int32_t>& prompt) {
  const bool any = std::any_of(stop.begin(), stop.end(), [](const auto& s) { return !s.empty(); });
  if (!any) return nullptr;
  return std::make_shared<StopStringCondition>(codec, stop, prompt);
}

}  // namespace baton::server
