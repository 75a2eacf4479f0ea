#include "scripted/request_log.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace baton::agents {

RequestLog::RequestLog(const std::string& path) {
  if (path.empty()) return;
  out_.open(path, std::ios::out | std::ios::trunc);
  if (!out_) throw std::runtime_error("cannot open the log " + path);
}

void RequestLog::write(const LoggedRequest& r) {
  const auto& req = *r.request;
  const auto& s = req.sampling;
  nlohmann::json j = {
      {"n", r.n},
      {"rule", r.rule},
      {"prompt", r.prompt},
      {"control_tokens", r.control_tokens},
      {"prompt_tokens", req.prompt.size()},
      {"max_tokens", req.max_tokens},
      {"ignore_eos", req.ignore_eos},
      {"has_stop", req.stop != nullptr},
      {"sampling",
       {{"temperature", s.temperature},
        {"top_k", s.top_k},
        {"top_p", s.top_p},
        {"min_p", s.min_p},
        {"repetition_penalty", s.repetition_penalty},
        {"presence_penalty", s.presence_penalty},
        {"frequency_penalty", s.frequency_penalty},
        {"seed", s.seed},
        {"logprobs", s.logprobs},
        {"top_logprobs", s.top_logprobs}}},
      {"reply", r.reply},
  };
  std::lock_guard<std::mutex> lock(mu_);
  if (!out_.is_open()) return;
  // Invalid UTF-8 in a prompt (a byte-level piece cut mid-character) must not lose the line.
  out_ << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  out_.flush();
}

}  // namespace baton::agents
