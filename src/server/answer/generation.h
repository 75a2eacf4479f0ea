#pragma once
// Reads one request's events from the scheduler and turns them into what a client is sent:
// the text the request's StopStringCondition (stop_condition.h) decoded and released in the
// engine loop, logprobs, the finish reason and usage. Used by both streaming and non-streaming
// handlers; it never touches HTTP, and never blocks longer than the timeout given to poll().
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "sched/engine_loop.h"
#include "server/api/openai_objects.h"
#include "tokenizer/text_codec.h"

namespace baton::server {

struct GenerationDelta {
  std::string text;
  std::vector<TokenLogprob> logprobs;
  bool empty() const { return text.empty() && logprobs.empty(); }
};

class Generation {
 public:
  // `show_special`: control tokens are decoded as their text (tokenizer::TextCodec::stream).
  // `codec` names the tokens of logprobs. The request must have been submitted with its
  // StopStringCondition: the text comes with its events.
  Generation(std::shared_ptr<sched::RequestHandle> handle, const tokenizer::TextCodec& codec,
             bool want_logprobs, int32_t prompt_tokens);
  ~Generation();  // cancels a request that has not finished
  Generation(const Generation&) = delete;
  Generation& operator=(const Generation&) = delete;

  enum class Poll { Progress, Idle, Done };
  // Waits up to `timeout` for the next event and appends what may now be sent to `out`.
  Poll poll(std::chrono::milliseconds timeout, GenerationDelta& out);
  // The client went away: cancel the request (idempotent).
  void cancel();

  bool done() const { return done_; }
  bool started() const { return tokens_ > 0; }
  // The request ended without a normal finish (engine failure, cancellation, shutdown).
  bool failed() const { return !error_.empty(); }
  int error_status() const { return error_status_; }
  const std::string& error() const { return error_; }
  const std::string& finish_reason() const { return finish_reason_; }  // "stop" | "length"
  // The stop string that ended the answer, empty when none did.
  const std::string& stop_sequence() const { return stop_sequence_; }
  Usage usage() const;
  uint64_t request_id() const { return handle_->id(); }

 private:
  void on_token(const sched::TokenEvent& t, GenerationDelta& out);
  void on_finished(const sched::Event& ev, GenerationDelta& out);

  std::shared_ptr<sched::RequestHandle> handle_;
  const tokenizer::TextCodec& codec_;
  std::string stop_sequence_;
  bool want_logprobs_;
  int32_t prompt_tokens_;
  int32_t tokens_ = 0;
  int32_t cached_tokens_ = 0;
  bool done_ = false;
  bool cancelled_ = false;
  std::string finish_reason_;
  std::string error_;
  int error_status_ = 500;
};

}  // namespace baton::server
