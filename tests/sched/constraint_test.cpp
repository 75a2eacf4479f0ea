// Token constraints (structured output) inside the engine loop: the mask decides every sampled
// token, a complete output ends the request in that step, and a broken constraint fails only
// its own request. Driven step by step with the fake engine.
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

constexpr int32_t kVocab = 256;

SchedConfig constraint_config() {
  SchedConfig c;
  c.parallel = 4;
  c.ctx = 8192;
  return c;
}

// Allows tokens ≡ residue (mod modulus); complete after `length` tokens when length > 0.
class ModuloConstraint : public TokenConstraint {
 public:
  ModuloConstraint(int32_t modulus, int32_t residue, int32_t length = 0)
      : modulus_(modulus), length_(length), bits_((kVocab + 63) / 64, 0) {
    for (int32_t id = 0; id < kVocab; ++id) {
      if (id % modulus == residue) bits_[id >> 6] |= uint64_t{1} << (id & 63);
    }
  }
  const std::vector<uint64_t>* allowed() override { return &bits_; }
  void accept(int32_t token) override { seen.push_back(token); }
  bool complete() const override {
    return length_ > 0 && static_cast<int32_t>(seen.size()) >= length_;
  }
  std::vector<int32_t> seen;

 private:
  int32_t modulus_;
  int32_t length_;
  std::vector<uint64_t> bits_;
};

class Throwing : public ModuloConstraint {
 public:
  Throwing() : ModuloConstraint(1, 0) {}
  void accept(int32_t) override { throw std::runtime_error("matcher broke"); }
};

GenerateRequest constrained(GenerateRequest r, std::shared_ptr<TokenConstraint> c) {
  r.constraint = std::move(c);
  return r;
}

Outcome run(LoopCore& core, RequestHandle& h, int max_steps = 1000) {
  Outcome o;
  for (int i = 0; i < max_steps && !o.finished; ++i) {
    core.step();
    drain_ready(h, o);
  }
  return o;
}

TEST(TokenConstraint, EverySampledTokenIsAllowedAndAccepted) {
  FakeEngine eng;
  LoopCore core(eng, constraint_config());
  auto c = std::make_shared<ModuloConstraint>(5, 3);
  auto req = greedy(make_prompt(20, 1), 30);
  req.sampling.temperature = 1.0f;  // a draw, not only the argmax, stays inside the mask
  req.sampling.seed = 7;
  auto h = core.submit(constrained(req, c));
  Outcome o = run(core, *h);
  ASSERT_TRUE(o.finished);
  ASSERT_EQ(o.tokens.size(), 30u);
  for (int32_t t : o.tokens) EXPECT_EQ(t % 5, 3) << t;
  EXPECT_EQ(c->seen, o.tokens);
  EXPECT_EQ(o.final.reason, FinishReason::Length);
}

TEST(TokenConstraint, ACompleteOutputEndsTheRequestInThatStep) {
  FakeEngine eng;
  LoopCore core(eng, constraint_config());
  auto c = std::make_shared<ModuloConstraint>(2, 0, 4);
  auto h = core.submit(constrained(greedy(make_prompt(10, 2), 100), c));
  Outcome o = run(core, *h);
  ASSERT_TRUE(o.finished);
  EXPECT_EQ(o.tokens.size(), 4u);
  EXPECT_EQ(o.final.reason, FinishReason::Stop);
  EXPECT_FALSE(core.step());  // nothing left: no step spent sampling an end token
  EXPECT_EQ(core.pool().used(), 0);
}

TEST(TokenConstraint, AMaskThatAllowsNothingFailsWithTheReason) {
  FakeEngine eng;
  LoopCore core(eng, constraint_config());
  auto h = core.submit(
      constrained(greedy(make_prompt(10, 3), 10), std::make_shared<ModuloConstraint>(1000, 999)));
  Outcome o = run(core, *h);
  ASSERT_TRUE(o.finished);
  EXPECT_TRUE(o.tokens.empty());
  EXPECT_EQ(o.final.reason, FinishReason::Failed);
  EXPECT_NE(o.final.error.find("allows no token"), std::string::npos) << o.final.error;
}

TEST(TokenConstraint, ABrokenConstraintFailsOnlyItsRequestAndRowsStayBatchInvariant) {
  const auto p1 = make_prompt(30, 4), p2 = make_prompt(25, 5);
  std::vector<int32_t> alone;
  {
    FakeEngine eng;
    LoopCore core(eng, constraint_config());
    auto h = core.submit(constrained(greedy(p1, 12), std::make_shared<ModuloConstraint>(3, 1)));
    alone = run(core, *h).tokens;
  }
  FakeEngine eng;
  LoopCore core(eng, constraint_config());
  auto h1 = core.submit(constrained(greedy(p1, 12), std::make_shared<ModuloConstraint>(3, 1)));
  auto h2 = core.submit(constrained(greedy(p2, 12), std::make_shared<Throwing>()));
  auto h3 = core.submit(greedy(make_prompt(15, 6), 12));
  Outcome o1, o2, o3;
  for (int i = 0; i < 200 && !(o1.finished && o2.finished && o3.finished); ++i) {
    core.step();
    drain_ready(*h1, o1);
    drain_ready(*h2, o2);
    drain_ready(*h3, o3);
  }
  EXPECT_EQ(o1.tokens, alone);  // same bytes whatever else is in the batch
  EXPECT_EQ(o2.final.reason, FinishReason::Failed);
  EXPECT_NE(o2.final.error.find("matcher broke"), std::string::npos);
  EXPECT_EQ(o3.tokens, eng.reference(make_prompt(15, 6), 12, true));
}

}  // namespace
}  // namespace baton::sched
