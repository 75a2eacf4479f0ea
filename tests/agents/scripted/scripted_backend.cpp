#include "scripted/scripted_backend.h"

#include <fmt/format.h>

#include <algorithm>

namespace baton::agents {

ScriptedBackend::ScriptedBackend(const tokenizer::Tokenizer& tok,
                                 const tokenizer::Tokenizer& replies, Script& script,
                                 RequestLog& log, sched::SchedConfig config)
    : tok_(tok), replies_(replies), script_(script), log_(log), config_(config) {
  thread_ = std::thread([this] { run(); });
}

ScriptedBackend::~ScriptedBackend() {
  shutdown();
}

std::shared_ptr<sched::RequestHandle> ScriptedBackend::submit(sched::GenerateRequest req) {
  using sched::SubmitError;
  if (req.max_tokens < 1) {
    throw SubmitError(SubmitError::Code::Invalid,
                      fmt::format("max_tokens must be at least 1, got {}", req.max_tokens));
  }
  const int64_t total = static_cast<int64_t>(req.prompt.size()) + req.max_tokens;
  if (total > config_.ctx) {
    throw SubmitError(SubmitError::Code::TooLong,
                      fmt::format("prompt ({} tokens) + max_tokens ({}) exceeds the context of {}",
                                  req.prompt.size(), req.max_tokens, config_.ctx));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) throw SubmitError(SubmitError::Code::ShuttingDown, "shutting down");
  }
  const int64_t n = ++count_;
  // Special tokens shown, so rules and tests see the template's markup as rendered.
  const std::string prompt = tok_.decode(req.prompt, /*skip_special=*/false);
  Reply reply = script_.match(prompt, n);
  std::vector<std::string> control;
  for (int32_t t : req.prompt) {
    if (tok_.token_type(t) == tokenizer::TokenType::Control)
      control.push_back(tok_.token_to_piece(t));
  }
  log_.write({n, prompt, std::move(control), &req, reply.rule, reply.text});

  Stream s;
  s.handle = std::make_shared<ScriptedHandle>(static_cast<uint64_t>(n));
  // parse_special: markup that is a token of the vocabulary (<tool_call>, <think>) is emitted as
  // that one token, as a model would.
  s.tokens = replies_.encode(reply.text, /*add_bos=*/false, /*parse_special=*/true);
  s.max_tokens = req.max_tokens;
  s.stop = std::move(req.stop);
  s.delay = std::chrono::milliseconds(std::max(0, reply.token_delay_ms));
  s.length = reply.length;
  s.start = Clock::now();
  s.due = s.start + s.delay;
  s.prompt_tokens = static_cast<int32_t>(req.prompt.size());
  auto handle = s.handle;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) throw SubmitError(SubmitError::Code::ShuttingDown, "shutting down");
    pending_.push_back(std::move(s));
    ++running_;
  }
  cv_.notify_all();
  return handle;
}

sched::StatusSnapshot ScriptedBackend::status() const {
  sched::StatusSnapshot snap;
  snap.config = config_;
  std::lock_guard<std::mutex> lock(mu_);
  snap.metrics.requests_running = running_;
  return snap;
}

void ScriptedBackend::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ScriptedBackend::finish(Stream& s, sched::FinishReason why, Clock::time_point now) {
  sched::Event ev;
  ev.kind = sched::Event::Kind::Finished;
  ev.reason = why;
  ev.stats.prompt_tokens = s.prompt_tokens;
  ev.stats.generated_tokens = static_cast<int32_t>(s.sent);
  ev.stats.total_ms = std::chrono::duration<double, std::milli>(now - s.start).count();
  sched::close_stop_condition(s.stop.get(), ev);
  s.handle->set_state(why == sched::FinishReason::Stop || why == sched::FinishReason::Length
                          ? sched::RequestState::Finished
                          : sched::RequestState::Cancelled);
  s.handle->push(std::move(ev));
}

bool ScriptedBackend::step(Stream& s, Clock::time_point now) {
  using sched::FinishReason;
  if (s.handle->cancel_requested()) {
    finish(s, FinishReason::Cancelled, now);
    return false;
  }
  if (s.sent == s.tokens.size()) {
    finish(s, s.length ? FinishReason::Length : FinishReason::Stop, now);
    return false;
  }
  if (static_cast<int32_t>(s.sent) >= s.max_tokens) {
    finish(s, FinishReason::Length, now);
    return false;
  }
  s.handle->set_state(sched::RequestState::Decoding);
  sched::Event ev;
  ev.token.token = s.tokens[s.sent++];
  // As the engine loop: the condition gives the event its text before it is queued.
  const bool stop = s.stop && s.stop->on_token(ev.token.token, ev.token.text);
  s.handle->push(std::move(ev));
  if (stop) {
    finish(s, FinishReason::Stop, now);
    return false;
  }
  s.due = now + s.delay;
  return true;
}

void ScriptedBackend::run() {
  std::vector<Stream> streams;  // owned by this thread
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      auto ready = [&] { return stopping_ || !pending_.empty(); };
      if (streams.empty()) {
        cv_.wait(lock, ready);
      } else {
        auto due =
            std::min_element(streams.begin(), streams.end(), [](const Stream& a, const Stream& b) {
              return a.due < b.due;
            })->due;
        cv_.wait_until(lock, due, ready);
      }
      for (auto& s : pending_) streams.push_back(std::move(s));
      pending_.clear();
      if (stopping_) break;
    }
    const auto now = Clock::now();
    size_t ended = 0;
    std::erase_if(streams, [&](Stream& s) {
      if (s.due > now || step(s, now)) return false;
      ++ended;
      return true;
    });
    if (ended) {
      std::lock_guard<std::mutex> lock(mu_);
      running_ -= static_cast<int64_t>(ended);
    }
  }
  const auto now = Clock::now();
  for (auto& s : streams) finish(s, sched::FinishReason::Shutdown, now);
  std::lock_guard<std::mutex> lock(mu_);
  running_ = 0;
}

}  // namespace baton::agents
