// Stop conditions end a request inside the engine loop, in the step that produced the deciding
// token (driven step by step, so the counts are exact).
#include <gtest/gtest.h>

#include <stdexcept>

#include "sched/harness.h"
#include "sched/loop_core.h"
#include "support/fake_engine.h"

namespace baton::sched {
namespace {

using engine::FakeEngine;
using testing::drain_ready;
using testing::greedy;
using testing::make_prompt;
using testing::Outcome;
using testing::steps_with;

SchedConfig stop_config() {
  SchedConfig c;
  c.parallel = 4;
  c.ctx = 8192;
  return c;
}

// Fires on the n-th token it is shown, records what it saw, and gives each token the text
// "<id>," (holding nothing back until the end, when it releases "held").
class NthToken : public StopCondition {
 public:
  explicit NthToken(int n) : n_(n) {}
  bool on_token(int32_t token, std::string& text) override {
    seen.push_back(token);
    text += std::to_string(token) + ",";
    return static_cast<int>(seen.size()) == n_;
  }
  std::string held_text() override { return fired() ? "" : "held"; }
  std::string matched_stop() const override { return fired() ? "nth" : ""; }
  std::vector<int32_t> seen;

 private:
  bool fired() const { return static_cast<int>(seen.size()) == n_; }
  int n_;
};

class Throws : public StopCondition {
 public:
  bool on_token(int32_t, std::string&) override { throw std::runtime_error("boom"); }
  std::string held_text() override { throw std::runtime_error("boom at the end"); }
  std::string matched_stop() const override { return ""; }
};

std::string texts_of(const std::vector<int32_t>& tokens) {
  std::string out;
  for (int32_t t : tokens) out += std::to_string(t) + ",";
  return out;
}

Outcome run(LoopCore& core, RequestHandle& h, int max_steps = 1000) {
  Outcome o;
  for (int i = 0; i < max_steps && !o.finished; ++i) {
    core.step();
    drain_ready(h, o);
  }
  return o;
}

uint64_t count_of(const Metrics& m, const std::string& status) {
  auto it = m.requests_total.find(status);
  return it == m.requests_total.end() ? 0 : it->second;
}

GenerateRequest with_stop(GenerateRequest r, std::shared_ptr<StopCondition> stop) {
  r.stop = std::move(stop);
  return r;
}

TEST(StopCondition, FiresOnTheNthTokenAndEndsTheRequestInThatStep) {
  FakeEngine eng;
  LoopCore core(eng, stop_config());
  const auto prompt = make_prompt(10, 1);
  auto cond = std::make_shared<NthToken>(5);
  auto h = core.submit(with_stop(greedy(prompt, 100), cond));
  Outcome o = run(core, *h);
  ASSERT_TRUE(o.finished);
  const auto ref = eng.reference(prompt, 5, true);
  EXPECT_EQ(o.tokens, ref);
  EXPECT_EQ(cond->seen, ref);        // in order, each token once
  EXPECT_EQ(o.text, texts_of(ref));  // each event carries the condition's text for its token
  EXPECT_EQ(o.final.stop_sequence, "nth");
  EXPECT_EQ(o.final.text, "");
  EXPECT_EQ(o.final.reason, FinishReason::Stop);
  EXPECT_EQ(o.final.stats.generated_tokens, 5);
  EXPECT_EQ(h->state(), RequestState::Finished);
  // One prefill step gives token 1, four decode rows give tokens 2..5, and nothing after.
  EXPECT_EQ(steps_with(eng.steps(), h->id()).size(), 5u);
  EXPECT_FALSE(core.step());
  EXPECT_EQ(steps_with(eng.steps(), h->id()).size(), 5u);
  EXPECT_EQ(core.pool().used(), 0);
  const Metrics m = core.metrics();
  EXPECT_EQ(count_of(m, "ok"), 1u);
  EXPECT_EQ(count_of(m, "cancelled"), 0u);
  EXPECT_EQ(m.generation_tokens_total, 5u);
}

TEST(StopCondition, FiringOnTheFirstTokenEndsRightAfterPrefill) {
  FakeEngine eng;
  LoopCore core(eng, stop_config());
  auto h = core.submit(with_stop(greedy(make_prompt(40, 2), 100), std::make_shared<NthToken>(1)));
  Outcome o = run(core, *h);
  EXPECT_EQ(o.tokens.size(), 1u);
  EXPECT_EQ(o.final.reason, FinishReason::Stop);
  EXPECT_EQ(steps_with(eng.steps(), h->id()).size(), 1u);
}

TEST(StopCondition, StopOnTheLastAllowedTokenReadsAsStop) {
  FakeEngine eng;
  LoopCore core(eng, stop_config());
  auto h = core.submit(with_stop(greedy(make_prompt(10, 3), 4), std::make_shared<NthToken>(4)));
  Outcome o = run(core, *h);
  EXPECT_EQ(o.tokens.size(), 4u);
  EXPECT_EQ(o.final.reason, FinishReason::Stop);
}

TEST(StopCondition, NeverFiringLeavesLengthAndEndOfGenerationAlone) {
  engine::FakeEngineConfig fc;
  fc.n_vocab = 5;  // EOG (2) comes up often
  FakeEngine eng(fc);
  LoopCore core(eng, stop_config());
  const std::vector<int32_t> prompt{3, 4, 3};
  const auto ref = eng.reference(prompt, 50, false);
  ASSERT_EQ(ref.back(), 2) << "pick a prompt whose reference hits EOG";
  auto cond = std::make_shared<NthToken>(1000);
  auto h = core.submit(with_stop(greedy(prompt, 50, /*ignore_eos=*/false), cond));
  Outcome o = run(core, *h);
  EXPECT_EQ(o.final.reason, FinishReason::Stop);
  const std::vector<int32_t> sent(ref.begin(), ref.end() - 1);
  EXPECT_EQ(o.tokens, sent);
  EXPECT_EQ(cond->seen, sent);  // the EOG token is not shown to the condition
  EXPECT_EQ(o.text, texts_of(sent));
  EXPECT_EQ(o.final.text, "held");  // what it held back goes out with the end
  EXPECT_EQ(o.final.stop_sequence, "");
  auto h2 = core.submit(
      with_stop(greedy(make_prompt(10, 4, fc.n_vocab), 7), std::make_shared<NthToken>(99)));
  EXPECT_EQ(run(core, *h2).final.reason, FinishReason::Length);
}

TEST(StopCondition, OnlyItsOwnRequestStops) {
  FakeEngine eng;
  LoopCore core(eng, stop_config());
  auto stopped =
      core.submit(with_stop(greedy(make_prompt(10, 5), 30), std::make_shared<NthToken>(3)));
  auto other = core.submit(greedy(make_prompt(12, 6), 30));
  Outcome a, b;
  for (int i = 0; i < 1000 && !(a.finished && b.finished); ++i) {
    core.step();
    drain_ready(*stopped, a);
    drain_ready(*other, b);
  }
  EXPECT_EQ(a.tokens.size(), 3u);
  EXPECT_EQ(a.final.reason, FinishReason::Stop);
  EXPECT_EQ(b.tokens, eng.reference(make_prompt(12, 6), 30, true));
  EXPECT_EQ(b.final.reason, FinishReason::Length);
}

TEST(StopCondition, AThrowingConditionFailsOnlyItsRequest) {
  FakeEngine eng;
  LoopCore core(eng, stop_config());
  auto h = core.submit(with_stop(greedy(make_prompt(10, 7), 30), std::make_shared<Throws>()));
  Outcome o = run(core, *h);
  EXPECT_EQ(o.final.reason, FinishReason::Failed);
  EXPECT_NE(o.final.error.find("boom"), std::string::npos) << o.final.error;
  EXPECT_EQ(o.tokens.size(), 1u);  // the token it threw on still went out, as before
  EXPECT_EQ(o.final.text, "");     // and its throw at the end is no one else's problem
  EXPECT_EQ(core.pool().used(), 0);
  auto h2 = core.submit(greedy(make_prompt(10, 8), 3));
  EXPECT_EQ(run(core, *h2).final.reason, FinishReason::Length);
}

}  // namespace
}  // namespace baton::sched
