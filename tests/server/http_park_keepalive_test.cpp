// A streaming request parked mid-prefill (prefill preemption: one slot, a short request arrives)
// sends nothing of its own while parked, so its SSE stream must carry keepalive comments then,
// and once it resumes it completes normally with the text it would have produced unparked.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "server_fixture.h"
#include "sse_client.h"

namespace baton::server::testing {
namespace {

using namespace std::chrono_literals;
using sched::RequestState;

// Holds the loop thread inside the fake engine's forward at the first step that computes
// positions >= `at`, so the test decides exactly when the long prompt is mid-prefill.
class Gate {
 public:
  explicit Gate(int32_t at) : at_(at) {}
  void on_step(const engine::StepBatch& batch) {
    std::unique_lock<std::mutex> lock(mu_);
    if (open_) return;
    bool reached = false;
    for (const auto& c : batch.seqs) reached = reached || c.start_pos >= at_;
    if (!reached) return;
    held_ = true;
    cv_.notify_all();
    cv_.wait_for(lock, 30s, [&] { return open_; });  // the limit only guards against a hang
    open_ = true;
  }
  bool wait_held() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, 30s, [&] { return held_; });
  }
  void release() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  const int32_t at_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool held_ = false;
  bool open_ = false;
};

std::optional<sched::RequestStatus> find_state(ServerHarness& h, RequestState state) {
  for (int i = 0; i < 5000; ++i) {
    for (const auto& r : h.loop().status().requests) {
      if (r.state == state) return r;
    }
    std::this_thread::sleep_for(2ms);
  }
  return std::nullopt;
}

std::string completion(const std::string& prompt, int max_tokens) {
  return R"({"prompt":")" + prompt + R"(","max_tokens":)" + std::to_string(max_tokens) +
         R"(,"temperature":0,"ignore_eos":true,"stream":true})";
}

// HTTP/1.0, so the SSE body comes unchunked and ends when the server closes.
void post_http10(RawSocket& s, const std::string& body) {
  s.send_all("POST /v1/completions HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: " +
             std::to_string(body.size()) + "\r\n\r\n" + body);
}

TEST(Stream, KeepaliveCommentsWhileParkedThenTheStreamCompletes) {
  FixtureOptions o;
  o.sched.parallel = 1;
  o.sched.prefill_chunk = 64;
  o.sched.mixed_prefill_chunk = 16;
  o.sched.preempt_min_tokens = 64;
  o.sched.preempt_max_wait_s = 0;  // parked for as long as the short request holds the slot
  o.engine.sleep_us_per_step = 1000;
  o.server.keepalive_s = 0.05;
  Gate gate(128);
  ServerHarness h(o);
  h.engine().set_on_step([&gate](const engine::StepBatch& b) { gate.on_step(b); });
  struct Release {
    Gate& g;
    ~Release() { g.release(); }  // before the harness shuts the loop down
  } release{gate};

  const std::string prompt(2000, 'p');
  const int max_tokens = 20;
  RawSocket big(h.port());
  post_http10(big, completion(prompt, max_tokens));
  ASSERT_TRUE(gate.wait_held()) << "the long prompt never reached position 128";
  // A short request with a long answer: it holds the slot until the test hangs it up.
  RawSocket small(h.port());
  small.post("/v1/completions", completion("s", 3000));
  ASSERT_TRUE(find_state(h, RequestState::Queued));
  gate.release();
  auto parked = find_state(h, RequestState::Parked);
  ASSERT_TRUE(parked) << "the long prompt was not parked for the short request";
  EXPECT_EQ(parked->prompt_tokens, 2000);
  EXPECT_EQ(parked->parked_why, "prefill_preempt");

  // Whatever was sent before or around the park; then only what comes while it stays parked.
  big.read_until("never sent", 100);
  const std::string before = big.received();
  big.clear();
  ASSERT_TRUE(big.read_until(": keepalive\n\n: keepalive\n\n", 20000))
      << "no keepalives while parked: " << big.received();
  EXPECT_EQ(big.received().find("data:"), std::string::npos) << big.received();
  auto still = find_state(h, RequestState::Parked);
  ASSERT_TRUE(still);
  EXPECT_EQ(still->id, parked->id);
  EXPECT_EQ(still->parks, 1) << "it stayed parked the whole time";

  small.close();  // the short one is cancelled; the long one resumes
  ASSERT_TRUE(big.wait_closed(60000)) << "the parked stream never completed";
  const std::string raw = before + big.received();
  EXPECT_EQ(raw.rfind("HTTP/1.0 200", 0), 0u) << raw.substr(0, 200);
  const size_t body_at = raw.find("\r\n\r\n");
  ASSERT_NE(body_at, std::string::npos);
  const std::string body = raw.substr(body_at + 4);
  std::string text;
  std::string finish;
  for (const auto& j : sse_json(body)) {
    ASSERT_TRUE(j.is_object()) << body;
    text += j["choices"][0]["text"].get<std::string>();
    if (j["choices"][0]["finish_reason"].is_string()) {
      finish = j["choices"][0]["finish_reason"].get<std::string>();
    }
  }
  EXPECT_EQ(text, h.expected_text(prompt, max_tokens, /*ignore_eos=*/true));
  EXPECT_EQ(finish, "length");
  EXPECT_NE(body.find("data: [DONE]"), std::string::npos);
  EXPECT_TRUE(h.wait_idle());
  EXPECT_EQ(h.loop().metrics().prefill_preemptions_total, 1u);
}

}  // namespace
}  // namespace baton::server::testing
