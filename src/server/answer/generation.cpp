#include "server/answer/generation.h"

namespace baton::server {

using sched::FinishReason;

Generation::Generation(std::shared_ptr<sched::RequestHandle> handle,
                       const tokenizer::TextCodec& codec, bool want_logprobs, int32_t prompt_tokens)
    : handle_(std::move(handle)),
      codec_(codec),
      want_logprobs_(want_logprobs),
      prompt_tokens_(prompt_tokens) {}

Generation::~Generation() {
  if (!done_) handle_->cancel();
}

void Generation::cancel() {
  if (cancelled_) return;
  cancelled_ = true;
  handle_->cancel();
}

Usage Generation::usage() const {
  return {prompt_tokens_, tokens_, cached_tokens_};
}

Generation::Poll Generation::poll(std::chrono::milliseconds timeout, GenerationDelta& out) {
  if (done_) return Poll::Done;
  sched::Event ev;
  if (!handle_->next(ev, timeout)) return Poll::Idle;
  if (ev.kind == sched::Event::Kind::Token) {
    on_token(ev.token, out);
    return Poll::Progress;
  }
  on_finished(ev, out);
  return Poll::Done;
}

void Generation::on_token(const sched::TokenEvent& t, GenerationDelta& out) {
  ++tokens_;
  if (want_logprobs_) {
    TokenLogprob lp{codec_.piece(t.token), t.logprob, {}};
    for (const auto& [id, p] : t.top) lp.top.emplace_back(codec_.piece(id), p);
    out.logprobs.push_back(std::move(lp));
  }
  out.text += t.text;
}

void Generation::on_finished(const sched::Event& ev, GenerationDelta& out) {
  done_ = true;
  cached_tokens_ = ev.stats.cached_tokens;
  out.text += ev.text;
  stop_sequence_ = ev.stop_sequence;
  switch (ev.reason) {
    case FinishReason::Stop:
      finish_reason_ = "stop";
      break;
    case FinishReason::Length:
      finish_reason_ = "length";
      break;
    case FinishReason::Failed:
      if (ev.request_fault) {
        error_status_ = 400;
        error_ = "this request's " + ev.error;
      } else {
        error_status_ = 500;
        error_ = "the engine failed this request: " + (ev.error.empty() ? "unknown" : ev.error);
      }
      break;
    case FinishReason::Cancelled:
      error_status_ = 503;
      error_ = "the request was cancelled by the server" +
               (ev.error.empty() ? std::string() : ": " + ev.error);
      break;
    case FinishReason::Shutdown:
      error_status_ = 503;
      error_ = "the server is shutting down; retry on another instance";
      break;
  }
  if (!stop_sequence_.empty()) {
    finish_reason_ = "stop";
    error_.clear();
  }
}

}  // namespace baton::server
