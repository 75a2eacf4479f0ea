// Stop strings: the condition the engine loop runs per token (StopStringCondition) and how
// Generation turns the loop's Stop finish into client text without blocking.
#include "server/answer/stop_condition.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <deque>

#include "sched/loop_core.h"
#include "server/answer/generation.h"
#include "support/fake_engine.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_codec.h"

namespace baton::server {
namespace {

using namespace std::chrono_literals;
using tokenizer::Tokenizer;
using tokenizer::VocabSpec;

// A SentencePiece-style vocabulary: <unk> <s> </s>, the 256 byte tokens, then `pieces` (whose
// ids are index + 259). No dummy prefix, so a piece's text is exactly what it adds.
std::unique_ptr<Tokenizer> byte_vocab(const std::vector<std::string>& pieces) {
  VocabSpec spec;
  spec.model = tokenizer::Model::Spm;
  spec.tokens = {"<unk>", "<s>", "</s>"};
  spec.types = {2, 3, 3};
  for (int b = 0; b < 256; ++b) {
    spec.tokens.push_back(fmt::format("<0x{:02X}>", b));
    spec.types.push_back(6);
  }
  for (const auto& p : pieces) {
    spec.tokens.push_back(p);
    spec.types.push_back(1);
  }
  spec.bos_id = 1;
  spec.eos_id = 2;
  spec.unk_id = 0;
  spec.add_bos = false;
  spec.add_space_prefix = false;
  return Tokenizer::from_spec(std::move(spec));
}

int32_t byte_token(unsigned char b) {
  return 3 + b;
}

struct Vocab {
  explicit Vocab(const std::vector<std::string>& pieces) : tok(byte_vocab(pieces)), codec(*tok) {}
  int32_t id(const std::string& piece) const { return tok->token_id(piece).value(); }
  std::unique_ptr<Tokenizer> tok;
  tokenizer::TokenizerCodec codec;
};

// Feeds tokens and returns the index of the token on which the condition fired (-1: never).
int fires_at(sched::StopCondition& c, const std::vector<int32_t>& tokens) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string text;
    if (c.on_token(tokens[i], text)) return static_cast<int>(i);
  }
  return -1;
}

TEST(StopStringCondition, FiresOnTheTokenThatCompletesAStopSplitAcrossTokens) {
  Vocab v({"abc", "E", "N", "Dxyz", "more"});
  auto c = make_stop_condition(v.codec, {"END"}, {});
  ASSERT_TRUE(c);
  EXPECT_EQ(fires_at(*c, {v.id("abc"), v.id("E"), v.id("N"), v.id("Dxyz"), v.id("more")}), 3);
}

TEST(StopStringCondition, TextThatOnlyLooksLikeAStopStartDoesNotFire) {
  Vocab v({"E", "N", "x", "D"});
  auto c = make_stop_condition(v.codec, {"END"}, {});
  EXPECT_EQ(fires_at(*c, {v.id("E"), v.id("N"), v.id("x"), v.id("E"), v.id("N")}), -1);
  std::string text;
  EXPECT_TRUE(c->on_token(v.id("D"), text));
  EXPECT_EQ(c->matched_stop(), "END");
}

TEST(StopStringCondition, AnyOfSeveralStopsFiresAtTheFirstCompletedOne) {
  Vocab v({"ab", "c", "d", "zz", "y"});
  auto c = make_stop_condition(v.codec, {"zzz", "cd", "y"}, {});
  EXPECT_EQ(fires_at(*c, {v.id("ab"), v.id("zz"), v.id("c"), v.id("d"), v.id("y")}), 3);
  auto c2 = make_stop_condition(v.codec, {"zzz", "cd", "y"}, {});
  EXPECT_EQ(fires_at(*c2, {v.id("zz"), v.id("zz")}), 1);
}

TEST(StopStringCondition, MultiByteCharactersSplitAcrossByteTokens) {
  Vocab v({"a"});
  const std::string stop = "日本";  // 6 bytes, each its own byte token here
  std::vector<int32_t> tokens{v.id("a")};
  for (unsigned char b : stop) tokens.push_back(byte_token(b));
  auto c = make_stop_condition(v.codec, {stop}, {});
  EXPECT_EQ(fires_at(*c, tokens), 6);
  // Only the first character of the stop, then other text: never fires.
  const std::string other = "日x本";
  std::vector<int32_t> t2;
  for (unsigned char b : other) t2.push_back(byte_token(b));
  auto c2 = make_stop_condition(v.codec, {stop}, {});
  EXPECT_EQ(fires_at(*c2, t2), -1);
}

TEST(StopStringCondition, StopEndingInsideACharacterFiresWhenTheCharacterCompletes) {
  // "é" is C3 A9: the detokenizer releases it only once both bytes are in.
  Vocab v({"caf"});
  auto c = make_stop_condition(v.codec, {"é"}, {});
  EXPECT_EQ(fires_at(*c, {v.id("caf"), byte_token(0xC3), byte_token(0xA9)}), 2);
}

// Without stop strings the condition still makes the client's text: it only never fires.
TEST(StopStringCondition, WithoutStopStringsTheConditionOnlyDecodes) {
  Vocab v({"Hello", " wor", "ld"});
  for (const std::vector<std::string>& stops :
       {std::vector<std::string>{}, std::vector<std::string>{"", ""}}) {
    auto c = make_stop_condition(v.codec, stops, {});
    ASSERT_NE(c, nullptr);
    std::string text;
    for (const char* p : {"Hello", " wor", "ld"}) EXPECT_FALSE(c->on_token(v.id(p), text));
    text += c->held_text();
    EXPECT_EQ(text, "Hello world");
    EXPECT_EQ(c->matched_stop(), "");
  }
}

// A RequestHandle that hands out scripted events and never blocks.
// Its events carry the text of `condition`, run on each token as the engine loop runs it.
class ScriptedHandle : public sched::RequestHandle {
 public:
  explicit ScriptedHandle(std::shared_ptr<sched::StopCondition> c) : condition(std::move(c)) {}
  uint64_t id() const override { return 1; }
  bool next(sched::Event& out, std::chrono::milliseconds) override {
    ++next_calls;
    if (events.empty()) return false;
    out = events.front();
    events.pop_front();
    return true;
  }
  void cancel() override { cancelled = true; }
  sched::RequestState state() const override { return sched::RequestState::Decoding; }
  void set_listener(std::function<void()>) override {}

  void token(int32_t id) {
    sched::Event e;
    e.kind = sched::Event::Kind::Token;
    e.token.token = id;
    condition->on_token(id, e.token.text);
    events.push_back(e);
  }
  void finished(sched::FinishReason why, int32_t cached = 0) {
    sched::Event e;
    e.kind = sched::Event::Kind::Finished;
    e.reason = why;
    e.stats.cached_tokens = cached;
    sched::close_stop_condition(condition.get(), e);
    events.push_back(e);
  }
  std::shared_ptr<sched::StopCondition> condition;
  std::deque<sched::Event> events;
  bool cancelled = false;
  int next_calls = 0;
};

struct Polled {
  std::string text;
  int polls = 0;
};

Polled poll_until_done(Generation& g) {
  Polled r;
  for (int i = 0; i < 100 && !g.done(); ++i) {
    GenerationDelta d;
    g.poll(0ms, d);
    r.text += d.text;
    ++r.polls;
  }
  return r;
}

TEST(Generation, StopFromTheLoopEndsWithTextBeforeTheStopString) {
  Vocab v({"Hello", " wor", "ld", "END", "!"});
  auto h = std::make_shared<ScriptedHandle>(make_stop_condition(v.codec, {"ldEND"}, {}));
  for (const char* p : {"Hello", " wor", "ld", "END"}) h->token(v.id(p));
  h->finished(sched::FinishReason::Stop, 7);
  Generation g(h, v.codec, false, 0);
  Polled r = poll_until_done(g);
  ASSERT_TRUE(g.done());
  EXPECT_EQ(r.text, "Hello wor");
  EXPECT_EQ(g.finish_reason(), "stop");
  EXPECT_FALSE(g.failed());
  EXPECT_FALSE(h->cancelled);
  EXPECT_EQ(g.usage().completion_tokens, 4);
  EXPECT_EQ(g.usage().cached_tokens, 7);
}

TEST(Generation, PollAfterAMatchNeverWaitsForTheFinish) {
  Vocab v({"a", "STOP"});
  auto h = std::make_shared<ScriptedHandle>(make_stop_condition(v.codec, {"STOP"}, {}));
  h->token(v.id("a"));
  h->token(v.id("STOP"));
  Generation g(h, v.codec, false, 0);
  GenerationDelta d;
  EXPECT_EQ(g.poll(0ms, d), Generation::Poll::Progress);
  EXPECT_EQ(g.poll(0ms, d), Generation::Poll::Progress);
  EXPECT_EQ(d.text, "a");
  const int calls = h->next_calls;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(g.poll(0ms, d), Generation::Poll::Idle);  // the Finished event is not here yet
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 100ms);
  EXPECT_EQ(h->next_calls, calls + 1);
  EXPECT_FALSE(g.done());
  h->finished(sched::FinishReason::Stop);
  EXPECT_EQ(g.poll(0ms, d), Generation::Poll::Done);
  EXPECT_EQ(d.text, "a");
  EXPECT_EQ(g.finish_reason(), "stop");
}

TEST(Generation, NoMatchKeepsHeldTextAndTheLoopsReason) {
  Vocab v({"a", "ST"});
  auto h = std::make_shared<ScriptedHandle>(make_stop_condition(v.codec, {"STOP"}, {}));
  h->token(v.id("a"));
  h->token(v.id("ST"));
  h->finished(sched::FinishReason::Length);
  Generation g(h, v.codec, false, 0);
  Polled r = poll_until_done(g);
  EXPECT_EQ(r.text, "aST");
  EXPECT_EQ(g.finish_reason(), "length");
}

// The whole path: the real loop core and the fake engine, with a vocabulary in which every
// token id has its own text, so the stop string can be taken from the reference output.
TEST(StopStringCondition, LoopEndsTheRequestOnTheMatchingTokenAndGenerationAgrees) {
  std::vector<std::string> pieces;
  for (int i = 259; i < 512; ++i) pieces.push_back(fmt::format("<w{}>", i));
  Vocab v(pieces);
  engine::FakeEngineConfig fc;
  fc.n_vocab = 512;
  engine::FakeEngine eng(fc);
  sched::SchedConfig sc;
  sc.ctx = 4096;
  sched::LoopCore core(eng, sc);
  const std::vector<int32_t> prompt{300, 301, 302, 303};
  const auto ref = eng.reference(prompt, 64, true);
  // Find a token id at least 259 (so it has a word piece) that appears first at index k >= 2.
  size_t k = 2;
  while (k < ref.size() &&
         (ref[k] < 259 || std::find(ref.begin(), ref.begin() + k, ref[k]) != ref.begin() + k)) {
    ++k;
  }
  ASSERT_LT(k, ref.size());
  const std::string piece = v.tok->token_to_piece(ref[k]);
  sched::GenerateRequest g;
  g.prompt = prompt;
  g.max_tokens = 64;
  g.sampling.temperature = 0;
  g.ignore_eos = true;
  const std::vector<std::string> stops{"<never>", piece};
  g.stop = make_stop_condition(v.codec, stops, prompt);
  auto h = core.submit(std::move(g));
  Generation gen(h, v.codec, false, static_cast<int32_t>(prompt.size()));
  std::string text;
  for (int i = 0; i < 500 && !gen.done(); ++i) {
    core.step();
    GenerationDelta d;
    while (gen.poll(0ms, d) == Generation::Poll::Progress) {
    }
    text += d.text;
  }
  ASSERT_TRUE(gen.done());
  EXPECT_EQ(gen.finish_reason(), "stop");
  EXPECT_FALSE(gen.failed());
  EXPECT_EQ(gen.usage().completion_tokens, static_cast<int32_t>(k + 1));
  const std::vector<int32_t> before(ref.begin(), ref.begin() + static_cast<long>(k));
  EXPECT_EQ(text, v.codec.decode(before));
  const auto m = core.metrics();
  EXPECT_EQ(m.requests_total.at("ok"), 1u);
  const auto cancelled = m.requests_total.find("cancelled");
  EXPECT_TRUE(cancelled == m.requests_total.end() || cancelled->second == 0);
  EXPECT_EQ(m.generation_tokens_total, k + 1);
}

}  // namespace
}  // namespace baton::server
