#pragma once
// A server::Backend without an engine: each submitted prompt is decoded, matched against the
// script, logged, and answered with the reply's tokens, one Token event every few milliseconds
// (so clients see real streaming), then Finished. It honours what the engine loop would:
// max_tokens (reason length), the server's StopCondition, cancel() and shutdown.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "scripted/request_log.h"
#include "scripted/script.h"
#include "scripted/scripted_handle.h"
#include "server/answer/backend.h"
#include "tokenizer/tokenizer.h"

namespace baton::agents {

class ScriptedBackend : public server::Backend {
 public:
  // All references must outlive the backend. `tok` decodes prompts (the server's vocabulary);
  // `replies` encodes the scripted replies (vocab.h: reply_tokenizer).
  ScriptedBackend(const tokenizer::Tokenizer& tok, const tokenizer::Tokenizer& replies,
                  Script& script, RequestLog& log, sched::SchedConfig config);
  ~ScriptedBackend() override;

  std::shared_ptr<sched::RequestHandle> submit(sched::GenerateRequest req) override;
  sched::StatusSnapshot status() const override;
  sched::Metrics metrics() const override { return {}; }
  const sched::SchedConfig& config() const override { return config_; }
  bool draining() const override { return false; }

  // Refuses new requests, ends running ones with reason shutdown, joins the pacing thread.
  // Idempotent.
  void shutdown();

 private:
  using Clock = std::chrono::steady_clock;
  struct Stream {
    std::shared_ptr<ScriptedHandle> handle;
    std::vector<int32_t> tokens;
    size_t sent = 0;
    int32_t max_tokens = 0;
    std::shared_ptr<sched::StopCondition> stop;
    std::chrono::milliseconds delay{0};
    bool length = false;
    Clock::time_point due, start;
    int32_t prompt_tokens = 0;
  };
  void run();
  // One pacing step of a stream; false once it has finished.
  bool step(Stream& s, Clock::time_point now);
  static void finish(Stream& s, sched::FinishReason why, Clock::time_point now);

  const tokenizer::Tokenizer& tok_;
  const tokenizer::Tokenizer& replies_;
  Script& script_;
  RequestLog& log_;
  const sched::SchedConfig config_;
  std::atomic<int64_t> count_{0};

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Stream> pending_;  // submitted, not yet taken by the pacing thread
  int64_t running_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace baton::agents
