// Lossless speculation in the engine loop (--speculate ngram), driven step by step with the
// fake engine in its copying mode (it mostly repeats the token a period back, as a model
// continuing a text it was given does, so n-gram drafts are often right): every request's tokens
// are the same with and without speculation, greedy and sampled, constrained or not, and drafts
// never ride in a step that has prefill work or on a model with sequence state.
#include <gtest/gtest.h>

#include "sched/draft_corpus.h"
#include "sched/driver.h"
#include "sched/ngram_drafter.h"

namespace baton::sched {
namespace {

using engine::FakeEngine;
using engine::FakeEngineConfig;
using testing::Driver;
using testing::greedy;
using testing::make_prompt;

TEST(NgramDraft, ProposesWhatFollowedTheLatestEarlierOccurrence) {
  NgramDraftOptions o;
  o.max_draft = 3;
  // "5 6" occurred twice before; the latest was followed by 9 9 9.
  const std::vector<int32_t> t = {5, 6, 1, 2, 3, 5, 6, 9, 9, 9, 4, 5, 6};
  EXPECT_EQ(ngram_draft(t, o), (std::vector<int32_t>{9, 9, 9}));
  o.max_draft = 8;  // up to the end of the sequence
  EXPECT_EQ(ngram_draft(t, o), (std::vector<int32_t>{9, 9, 9, 4, 5, 6}));
}

TEST(NgramDraft, PrefersTheLongestMatchingSuffix) {
  NgramDraftOptions o;
  o.max_draft = 1;
  // "2 3" last occurred before 8, but "1 2 3" only before 7.
  const std::vector<int32_t> t = {1, 2, 3, 7, 0, 2, 3, 8, 0, 1, 2, 3};
  EXPECT_EQ(ngram_draft(t, o), (std::vector<int32_t>{7}));
}

TEST(NgramDraft, NothingWithoutARepeatOfAtLeastTheShortestNgram) {
  NgramDraftOptions o;
  EXPECT_TRUE(ngram_draft(std::vector<int32_t>{1, 2, 3, 4, 5, 1}, o).empty()) << "one token";
  EXPECT_TRUE(ngram_draft(std::vector<int32_t>{}, o).empty());
  EXPECT_TRUE(ngram_draft(std::vector<int32_t>{7}, o).empty());
  o.max_draft = 0;
  EXPECT_TRUE(ngram_draft(std::vector<int32_t>{1, 2, 1, 2, 1, 2}, o).empty());
  o.max_draft = 4;  // a run overlaps itself
  EXPECT_EQ(ngram_draft(std::vector<int32_t>{4, 4, 4}, o), (std::vector<int32_t>{4}));
}

TEST(NgramDraft, TheDraftLengthFollowsAcceptance) {
  EXPECT_EQ(next_draft_length(4, 4, 4, 8), 8) << "all right: longer";
  EXPECT_EQ(next_draft_length(8, 8, 8, 8), 8) << "within --draft-max";
  EXPECT_EQ(next_draft_length(8, 8, 2, 8), 3) << "a miss: what was right, and one more";
  EXPECT_EQ(next_draft_length(4, 4, 0, 8), 1);
}

TEST(DraftCorpus, DraftsFromTheNewestOutputThatHoldsTheSuffix) {
  DraftCorpus c(100);
  c.add(std::vector<int32_t>{1, 2, 3, 4, 5});
  c.add(std::vector<int32_t>{9, 2, 3, 7, 7});
  NgramDraftOptions o;
  o.max_draft = 2;
  EXPECT_EQ(c.draft(std::vector<int32_t>{8, 2, 3}, o), (std::vector<int32_t>{7, 7}));
  EXPECT_EQ(c.draft(std::vector<int32_t>{1, 2, 3}, o), (std::vector<int32_t>{4, 5}))
      << "the longer suffix wins over the newer output";
  EXPECT_TRUE(c.draft(std::vector<int32_t>{6, 6}, o).empty());
}

TEST(DraftCorpus, HoldsAtMostItsBoundDroppingTheOldest) {
  DraftCorpus c(10);
  c.add(std::vector<int32_t>{1, 2, 3, 4});
  c.add(std::vector<int32_t>{5, 6, 7, 8});
  c.add(std::vector<int32_t>{9, 10, 11, 12});  // 12 tokens: the first output goes
  EXPECT_EQ(c.tokens(), 8);
  EXPECT_EQ(c.outputs(), 2u);
  NgramDraftOptions o;
  EXPECT_TRUE(c.draft(std::vector<int32_t>{1, 2}, o).empty());
  EXPECT_EQ(c.draft(std::vector<int32_t>{5, 6}, o), (std::vector<int32_t>{7, 8}));
  std::vector<int32_t> huge(50);
  for (int32_t i = 0; i < 50; ++i) huge[static_cast<size_t>(i)] = 100 + i;
  c.add(huge);  // keeps its last 10 tokens only
  EXPECT_EQ(c.tokens(), 10);
  EXPECT_EQ(c.draft(std::vector<int32_t>{141, 142}, o),
            (std::vector<int32_t>{143, 144, 145, 146, 147, 148, 149}));
  DraftCorpus off(0);
  off.add(huge);
  EXPECT_EQ(off.tokens(), 0);
}

struct SpecRun {
  std::vector<testing::Outcome> outcomes;
  Metrics metrics;
  std::vector<engine::StepBatch> steps;
};

// Steps cost a fixed millisecond of real time and rows next to nothing (a large model reading
// its weights): the fitted cost model then finds drafts worth their rows whatever the machine's
// noise, so how many are made does not depend on it.
FakeEngineConfig steps_cost_time(FakeEngineConfig e) {
  e.sleep_us_per_step = 1000;
  e.sleep_us_per_token = 0;
  return e;
}

FakeEngineConfig copying() {
  FakeEngineConfig e = steps_cost_time(testing::small_blocks());
  e.copy_period = 24;
  return e;
}

// The requests, all submitted at once to a fresh loop with speculation on or off.
SpecRun run(const std::vector<GenerateRequest>& reqs, bool speculate,
            FakeEngineConfig e = copying(), int32_t parallel = 4,
            SpeculateMode mode = SpeculateMode::Ngram) {
  FakeEngine eng(e);
  SchedConfig c;
  c.parallel = parallel;
  c.ctx = 4096;
  c.speculate = speculate ? mode : SpeculateMode::Off;
  c.draft_max = 6;
  LoopCore core(eng, c);
  Driver d(core);
  std::vector<uint64_t> ids;
  for (const auto& r : reqs) ids.push_back(d.submit(r));
  EXPECT_TRUE(d.run_until_done());
  SpecRun out;
  for (uint64_t id : ids) out.outcomes.push_back(d.out[id]);
  out.metrics = core.metrics();
  out.steps = eng.steps();
  return out;
}

GenerateRequest sampled(std::vector<int32_t> prompt, int32_t max_tokens, uint64_t seed) {
  GenerateRequest r = greedy(std::move(prompt), max_tokens);
  r.sampling.temperature = 1.0f;
  r.sampling.top_p = 0.95f;
  r.sampling.seed = seed;
  return r;
}

void expect_same_tokens(const SpecRun& plain, const SpecRun& spec) {
  ASSERT_EQ(plain.outcomes.size(), spec.outcomes.size());
  for (size_t i = 0; i < plain.outcomes.size(); ++i) {
    EXPECT_TRUE(spec.outcomes[i].finished);
    EXPECT_EQ(spec.outcomes[i].tokens, plain.outcomes[i].tokens) << "request " << i;
    EXPECT_EQ(spec.outcomes[i].final.reason, plain.outcomes[i].final.reason) << "request " << i;
  }
}

TEST(Speculation, GreedyAndSampledOutputsAreTheSameTokens) {
  std::vector<GenerateRequest> reqs;
  for (int32_t s = 0; s < 4; ++s) reqs.push_back(greedy(make_prompt(40 + s * 9, s), 60));
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    reqs.push_back(sampled(make_prompt(50, static_cast<int32_t>(seed)), 50, seed));
  }
  const SpecRun plain = run(reqs, false);
  const SpecRun spec = run(reqs, true);
  expect_same_tokens(plain, spec);
  EXPECT_GT(spec.metrics.spec_accepted_tokens_total, 50u) << "drafts were right, and kept";
  EXPECT_LT(spec.metrics.spec_accepted_tokens_total, spec.metrics.spec_drafted_tokens_total)
      << "some drafts were wrong, and dropped";
  EXPECT_LT(spec.steps.size(), plain.steps.size()) << "fewer steps for the same tokens";
  EXPECT_EQ(plain.metrics.spec_drafted_tokens_total, 0u);
  // The histograms agree with the counters: one verify observation per row that carried drafts,
  // summing to the tokens those rows produced; one acceptance per request that drafted.
  const Metrics& m = spec.metrics;
  EXPECT_EQ(m.spec_tokens_per_verify.count, m.spec_verify_rows_total);
  EXPECT_DOUBLE_EQ(m.spec_tokens_per_verify.sum,
                   static_cast<double>(m.spec_accepted_tokens_total + m.spec_verify_rows_total));
  EXPECT_GT(m.spec_request_acceptance.count, 0u);
  EXPECT_LE(m.spec_request_acceptance.count, reqs.size());
  EXPECT_GT(m.spec_request_acceptance.sum, 0);
  EXPECT_LE(m.spec_request_acceptance.sum, static_cast<double>(m.spec_request_acceptance.count));
  EXPECT_EQ(plain.metrics.spec_tokens_per_verify.count, 0u);
  EXPECT_EQ(plain.metrics.spec_request_acceptance.count, 0u);
}

TEST(Speculation, EndingsAreTheSame) {
  std::vector<GenerateRequest> reqs;
  // Stopped by max_tokens at every offset inside a draft, and by the end token.
  for (int32_t n = 1; n <= 9; ++n) reqs.push_back(greedy(make_prompt(30, n), 20 + n));
  for (int32_t s = 0; s < 4; ++s) reqs.push_back(greedy(make_prompt(45, 50 + s), 200, false));
  expect_same_tokens(run(reqs, false), run(reqs, true));
}

TEST(Speculation, DraftsNeverRideInAStepWithPrefillWork) {
  std::vector<GenerateRequest> reqs = {greedy(make_prompt(40, 1), 80),
                                       greedy(make_prompt(600, 2), 4)};
  const SpecRun spec = run(reqs, true);
  size_t with_drafts = 0;
  for (const auto& step : spec.steps) {
    bool prefill = false, drafts = false;
    for (const auto& c : step.seqs) {
      if (!c.want_logits || c.logit_rows == 1) prefill = prefill || c.tokens.size() > 1;
      drafts = drafts || c.logit_rows > 1;
    }
    EXPECT_FALSE(prefill && drafts) << "a draft took rows from a prefill";
    with_drafts += drafts ? 1 : 0;
  }
  EXPECT_GT(with_drafts, 0u);
}

// A request that repeats what an earlier one generated (the same prompt again, on a model that
// does not copy within a sequence) drafts from the corpus of recent outputs, and keeps them.
TEST(Speculation, SuffixModeDraftsFromOtherRequestsOutputs) {
  // copy_period 0: no repeats within one request.
  const FakeEngineConfig hashing = steps_cost_time(testing::small_blocks());
  const std::vector<GenerateRequest> first = {greedy(make_prompt(40, 11), 40)};
  std::vector<GenerateRequest> both = first;
  both.push_back(greedy(make_prompt(40, 11), 40));
  // One slot: the second runs after the first has finished and left its output behind.
  const SpecRun ngram = run(both, true, hashing, 1, SpeculateMode::Ngram);
  const SpecRun suffix = run(both, true, hashing, 1, SpeculateMode::Suffix);
  expect_same_tokens(run(both, false, hashing, 1), suffix);
  EXPECT_EQ(ngram.metrics.spec_accepted_tokens_total, 0u) << "nothing repeats within one";
  EXPECT_GT(suffix.metrics.spec_accepted_tokens_total, 30u) << "the second copied the first";
}

// A draft is made only when the step it may save is worth its row: where a row costs about a
// step (a tiny model), drafts stop after the first; where a step is mostly fixed cost (a large
// model reading its weights), they run long. The cost model is fitted to the fake engine's real
// sleeps.
TEST(Speculation, DraftsOnlyWhereARowCostsLessThanTheStepItMaySave) {
  FakeEngineConfig rows_cost = copying();
  rows_cost.sleep_us_per_step = 0;
  rows_cost.sleep_us_per_token = 5000;
  FakeEngineConfig steps_cost = copying();
  steps_cost.sleep_us_per_step = 8000;
  steps_cost.sleep_us_per_token = 0;
  const std::vector<GenerateRequest> reqs = {greedy(make_prompt(30, 5), 60)};
  const SpecRun expensive = run(reqs, true, rows_cost, 1);
  const SpecRun cheap = run(reqs, true, steps_cost, 1);
  expect_same_tokens(run(reqs, false, rows_cost, 1), expensive);
  EXPECT_GT(cheap.metrics.spec_drafted_tokens_total,
            3 * expensive.metrics.spec_drafted_tokens_total)
      << "expensive rows: " << expensive.metrics.spec_drafted_tokens_total
      << " drafted; cheap rows: " << cheap.metrics.spec_drafted_tokens_total;
  EXPECT_LT(cheap.steps.size(), expensive.steps.size());
}

TEST(Speculation, ModelsWithSequenceStateDoNotSpeculate) {
  FakeEngineConfig e = copying();
  e.recurrent = true;
  std::vector<GenerateRequest> reqs = {greedy(make_prompt(40, 3), 60)};
  const SpecRun spec = run(reqs, true, e);
  EXPECT_EQ(spec.metrics.spec_drafted_tokens_total, 0u);
  expect_same_tokens(run(reqs, false, e), spec);
}

}  // namespace
}  // namespace baton::sched
