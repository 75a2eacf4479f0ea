#include "sched/policy.h"

#include <gtest/gtest.h>

namespace baton::sched {
namespace {

PolicyInput base() {
  PolicyInput in;
  in.free_slots = 0;
  in.free_blocks = 1000;
  in.unreserved_blocks = 1000;
  in.block_size = 16;
  in.prefill_chunk = 2048;
  in.mixed_prefill_chunk = 128;
  in.aging_steps = 4;
  return in;
}

PolicyInput::Prefiller pf(uint64_t id, int32_t remaining, int32_t starved = 0) {
  PolicyInput::Prefiller p;
  p.id = id;
  p.seq = id;
  p.remaining = remaining;
  p.starved_steps = starved;
  return p;
}

int32_t tokens_for(const StepPlan& plan, uint64_t id) {
  for (const auto& c : plan.prefill) {
    if (c.id == id) return c.n_tokens;
  }
  return 0;
}

TEST(Policy, IdleQuantumWhenNobodyDecodes) {
  PolicyInput in = base();
  in.prefilling = {pf(1, 5000)};
  StepPlan plan = plan_step(in);
  EXPECT_EQ(plan.quantum, 2048);
  EXPECT_EQ(tokens_for(plan, 1), 2048);
  EXPECT_TRUE(plan.decode.empty());
}

// The three-sessions case: two short prompts arrive while a long cold prompt prefills with the
// idle quantum. They are about to generate, so the step that completes them is sized like a mixed
// step (their tokens + the mixed quantum) instead of another full idle quantum.
TEST(Policy, StartingGenerationSizesTheStepLikeAMixedOne) {
  PolicyInput in = base();
  in.prefilling = {pf(1, 1952), pf(2, 20), pf(3, 21)};
  StepPlan plan = plan_step(in);
  EXPECT_EQ(plan.quantum, 20 + 21 + 128);
  EXPECT_EQ(tokens_for(plan, 2), 20);
  EXPECT_EQ(tokens_for(plan, 3), 21);
  EXPECT_EQ(tokens_for(plan, 1), 128);
}

TEST(Policy, StartingGenerationAloneKeepsTheIdleQuantum) {
  PolicyInput in = base();
  in.prefilling = {pf(2, 20), pf(3, 100)};
  EXPECT_EQ(plan_step(in).quantum, 2048);
  in.prefilling = {pf(1, 3000)};
  in.waiting = {{7, 7, 30, 0, 2}};
  in.free_slots = 1;
  StepPlan plan = plan_step(in);  // an admission counts too
  EXPECT_EQ(plan.quantum, 30 + 128);
  EXPECT_EQ(tokens_for(plan, 7), 30);
}

TEST(Policy, MixedQuantumAndEveryDecoderGetsARow) {
  PolicyInput in = base();
  in.decoders = {{7, false}, {8, false}, {9, true}};
  in.prefilling = {pf(1, 5000)};
  StepPlan plan = plan_step(in);
  EXPECT_EQ(plan.quantum, 128);
  EXPECT_EQ(tokens_for(plan, 1), 128);
  // The paused decoder (its client is not reading) is the only one left out.
  EXPECT_EQ(plan.decode, (std::vector<uint64_t>{7, 8}));
}

TEST(Policy, DecodeRowsSurviveAnExhaustedPool) {
  PolicyInput in = base();
  in.free_blocks = 0;
  in.decoders = {{7, false}};
  in.prefilling = {pf(1, 5000)};
  StepPlan plan = plan_step(in);
  EXPECT_EQ(plan.decode, (std::vector<uint64_t>{7}));
  EXPECT_TRUE(plan.prefill.empty());  // the prefill waits in its own state
}

TEST(Policy, PrefillLimitedByFreeBlocks) {
  PolicyInput in = base();
  in.free_blocks = 2;
  auto p = pf(1, 5000);
  p.n_kv = 10;
  p.held_blocks = 1;  // 6 free positions in the held block + 2 blocks of 16
  in.prefilling = {p};
  EXPECT_EQ(tokens_for(plan_step(in), 1), 38);
}

TEST(Policy, ItlTargetSizesTheMixedQuantum) {
  PolicyInput in = base();
  in.decoders = {{7, false}, {8, false}};
  in.prefilling = {pf(1, 100000)};
  in.itl_target_ms = 50;
  // Unmeasured: falls back to the mixed chunk.
  EXPECT_EQ(prefill_quantum(in), 128);
  in.costs.ms_per_decode_row = 5;
  in.costs.ms_per_prefill_token = 0.1;
  EXPECT_EQ(prefill_quantum(in), 400);  // (50 - 2 * 5) / 0.1
  in.costs.ms_per_prefill_token = 10;
  EXPECT_EQ(prefill_quantum(in), kMinTargetQuantum);  // never below the minimum
  in.costs.ms_per_prefill_token = 0.001;
  EXPECT_EQ(prefill_quantum(in), 2048);  // never above the idle quantum
  in.decoders.clear();
  EXPECT_EQ(prefill_quantum(in), 2048);  // nobody decodes: the idle quantum
}

TEST(Policy, CostModelLearnsFromSteps) {
  CostEstimator c;
  EXPECT_FALSE(c.model().measured());
  StepShape decode;
  decode.add_decode(0);
  c.observe(decode, 8.0);
  EXPECT_FALSE(c.model().measured()) << "no step with prefill yet";
  StepShape mixed = decode;
  mixed.add_prefill(0, 100);
  c.observe(mixed, 18.0);
  EXPECT_TRUE(c.model().measured());
  EXPECT_NEAR(c.model().predict_ms(mixed), 18.0, 0.1);
  EXPECT_NEAR(c.model().predict_ms(decode), 8.0, 0.1);
}

// The chunk is costed at the depth of the prefill it continues: deeper, attention costs more,
// so fewer tokens fit the same target.
TEST(Policy, ItlTargetQuantumShrinksWithTheDepthOfThePrefill) {
  PolicyInput in = base();
  in.decoders = {{7, false}};
  in.decoders[0].n_kv = 100;
  in.itl_target_ms = 60;
  in.costs = CostModel{10, 20, 1, 0.01};
  in.prefilling = {pf(1, 100000)};
  const int32_t shallow = prefill_quantum(in);
  in.prefilling[0].n_kv = 6000;
  const int32_t deep = prefill_quantum(in);
  EXPECT_LT(deep, shallow);
  EXPECT_GE(deep, kMinTargetQuantum);
  StepShape s;
  s.add_decode(100);
  s.add_prefill(6000, deep);
  EXPECT_LE(in.costs.predict_ms(s), 60);
}

TEST(Policy, ShortestRemainingFirstWithinTheBudget) {
  PolicyInput in = base();
  in.decoders = {{9, false}};
  in.prefilling = {pf(1, 5000), pf(2, 40), pf(3, 100)};
  StepPlan plan = plan_step(in);
  ASSERT_EQ(plan.prefill.size(), 2u);
  EXPECT_EQ(plan.prefill[0].id, 2u);
  EXPECT_EQ(plan.prefill[0].n_tokens, 40);
  EXPECT_EQ(tokens_for(plan, 3), 88);  // 128 - 40, the rest next step
  EXPECT_EQ(tokens_for(plan, 1), 0);
}

TEST(Policy, AgingPutsAStarvedRequestFirst) {
  PolicyInput in = base();
  in.decoders = {{9, false}};
  in.prefilling = {pf(1, 5000, /*starved=*/4), pf(2, 40), pf(3, 30, /*starved=*/5)};
  StepPlan plan = plan_step(in);
  ASSERT_EQ(plan.prefill.size(), 1u);
  EXPECT_EQ(plan.prefill[0].id, 1u);  // aged, oldest first
  EXPECT_EQ(plan.prefill[0].n_tokens, 128);
  EXPECT_EQ(tokens_for(plan, 2), 0);
}

TEST(Policy, AdmitsInArrivalOrderUpToFreeSlots) {
  PolicyInput in = base();
  in.free_slots = 2;
  in.waiting = {{11, 1, 50, 0, 4}, {12, 2, 10, 0, 4}, {13, 3, 10, 0, 4}};
  StepPlan plan = plan_step(in);
  EXPECT_EQ(plan.admit, (std::vector<uint64_t>{11, 12}));
  // Admitted requests prefill in the same step, shortest first.
  ASSERT_EQ(plan.prefill.size(), 2u);
  EXPECT_EQ(plan.prefill[0].id, 12u);
  EXPECT_EQ(tokens_for(plan, 11), 50);
}

TEST(Policy, AdmissionSkipsReusedTokensAndWaitsForReservation) {
  PolicyInput in = base();
  in.free_slots = 2;
  in.unreserved_blocks = 5;
  in.waiting = {{11, 1, 100, 64, 4}, {12, 2, 10, 0, 4}};
  StepPlan plan = plan_step(in);
  EXPECT_EQ(plan.admit, (std::vector<uint64_t>{11}));  // 12's reservation does not fit
  EXPECT_EQ(tokens_for(plan, 11), 36);
}

TEST(Policy, HeadOfQueueBlocksOvertaking) {
  PolicyInput in = base();
  in.free_slots = 2;
  in.unreserved_blocks = 5;
  in.waiting = {{11, 1, 100, 0, 50}, {12, 2, 10, 0, 1}};
  EXPECT_TRUE(plan_step(in).admit.empty());
}

TEST(Policy, NothingToDoIsAnEmptyPlan) {
  EXPECT_TRUE(plan_step(base()).empty());
}

// Prefill preemption: one slot, held by long prefills, and a short request waiting.
PolicyInput preempt_input() {
  PolicyInput in = base();
  in.prefill_preempt = true;
  in.preempt_min_tokens = 64;
  in.park_budget_blocks = 100;
  auto a = pf(1, 1000);
  auto b = pf(2, 500);
  for (auto* p : {&a, &b}) {
    p->n_kv = 320;
    p->held_blocks = 20;
    p->committed = 20;
    p->may_park = true;
  }
  in.prefilling = {a, b};
  in.admission_order = {1, 2};
  in.unreserved_blocks = 2;  // the short one fits once a slot is free
  in.waiting = {{9, 9, 20, 0, 2}};
  return in;
}

TEST(Policy, PreemptParksTheLongestPrefillForAShorterWaiter) {
  StepPlan plan = plan_step(preempt_input());
  ASSERT_EQ(plan.park.size(), 1u);
  EXPECT_EQ(plan.park[0].id, 1u);
  EXPECT_STREQ(plan.park[0].why, "prefill_preempt");
  EXPECT_TRUE(plan.park[0].keep_blocks);
  EXPECT_EQ(plan.admit, (std::vector<uint64_t>{9}));
  EXPECT_EQ(tokens_for(plan, 1), 0) << "a parked prefill gets no chunk";
  EXPECT_GT(tokens_for(plan, 9), 0);
}

TEST(Policy, PreemptReleasesBlocksBeyondTheParkBudget) {
  PolicyInput in = preempt_input();
  in.park_budget_blocks = 10;  // 20 held
  StepPlan plan = plan_step(in);
  ASSERT_EQ(plan.park.size(), 1u);
  EXPECT_FALSE(plan.park[0].keep_blocks);
  EXPECT_EQ(plan.admit, (std::vector<uint64_t>{9}));
}

TEST(Policy, PreemptGates) {
  {
    PolicyInput in = preempt_input();
    in.prefill_preempt = false;
    EXPECT_TRUE(plan_step(in).park.empty()) << "--no-prefill-preempt";
  }
  {
    PolicyInput in = preempt_input();
    in.preempt_min_tokens = 321;
    EXPECT_TRUE(plan_step(in).park.empty()) << "--preempt-min-tokens";
  }
  {
    PolicyInput in = preempt_input();
    in.prefilling[0].may_park = false;  // parked its maximum number of times, or waited enough
    StepPlan plan = plan_step(in);
    ASSERT_EQ(plan.park.size(), 1u);
    EXPECT_EQ(plan.park[0].id, 2u) << "the next longest";
  }
  {
    PolicyInput in = preempt_input();
    in.waiting = {{9, 9, 700, 0, 2}};  // more work than 2 has left, less than 1
    StepPlan plan = plan_step(in);
    ASSERT_EQ(plan.park.size(), 1u);
    EXPECT_EQ(plan.park[0].id, 1u);
    in.waiting = {{9, 9, 1000, 0, 2}};  // not shorter than anybody's remaining work
    EXPECT_TRUE(plan_step(in).park.empty());
  }
  {
    PolicyInput in = preempt_input();
    in.waiting = {{9, 9, 20, 0, 50}};  // would not fit even in the freed blocks
    EXPECT_TRUE(plan_step(in).park.empty());
  }
  {
    PolicyInput in = preempt_input();
    in.free_slots = 1;
    in.unreserved_blocks = 10;
    StepPlan plan = plan_step(in);
    EXPECT_TRUE(plan.park.empty()) << "a free slot needs no preemption";
    EXPECT_EQ(plan.admit, (std::vector<uint64_t>{9}));
  }
}

TEST(Policy, ParkedRequestPastMaxWaitTakesTheNewestLaterArrivalsSlot) {
  PolicyInput in = preempt_input();
  in.preempt_max_wait_ms = 1000;
  in.prefilling[0].seq = 10;
  in.prefilling[1].seq = 11;
  PolicyInput::Decoder d;
  d.id = 3;
  d.seq = 2;  // arrived before the parked one: never its victim
  d.may_park = true;
  d.held_blocks = d.committed = 5;
  in.decoders = {d};
  in.admission_order = {3, 1, 2};
  in.waiting = {{5, 5, 300, 0, 2, /*parked=*/true, /*parked_ms=*/999}};
  EXPECT_TRUE(plan_step(in).park.empty()) << "still within --preempt-max-wait-s";
  in.waiting[0].parked_ms = 1000;
  StepPlan plan = plan_step(in);
  ASSERT_EQ(plan.park.size(), 1u);
  EXPECT_EQ(plan.park[0].id, 2u) << "the most recently admitted";
  EXPECT_STREQ(plan.park[0].why, "max_wait");
  EXPECT_EQ(plan.admit, (std::vector<uint64_t>{5}));
  in.prefilling[0].seq = in.prefilling[1].seq = 1;  // everybody arrived before it
  EXPECT_TRUE(plan_step(in).park.empty());
}

TEST(Policy, MaxStepMsCapsEveryQuantumByMeasuredCost) {
  PolicyInput in = base();
  in.prefilling = {pf(1, 5000)};
  in.max_step_ms = 1000;
  EXPECT_EQ(plan_step(in).quantum, 128) << "nothing measured yet: a probe, not a whole chunk";
  in.costs.ms_per_prefill_token = 2;
  EXPECT_EQ(plan_step(in).quantum, 500) << "idle step";
  in.costs.ms_per_prefill_token = 0.1;
  EXPECT_EQ(plan_step(in).quantum, 2048) << "--prefill-chunk stays the upper bound";
  in.costs.ms_per_prefill_token = 2;
  in.costs.ms_per_decode_row = 95;
  in.mixed_prefill_chunk = 2048;
  for (uint64_t id = 10; id < 20; ++id) in.decoders.push_back({id, false});
  EXPECT_EQ(plan_step(in).quantum, 25) << "(1000 - 10 x 95) / 2";
  in.costs.ms_per_decode_row = 200;
  EXPECT_EQ(plan_step(in).quantum, kMinQuantum) << "never below the minimum";
  in.max_step_ms = 0;
  EXPECT_EQ(plan_step(in).quantum, 2048) << "off";
}

}  // namespace
}  // namespace baton::sched
