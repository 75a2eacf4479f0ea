// Hostile grammars at the server: over a limit is a 400 naming it, and the cache of compiled
// grammars stays within its bytes whatever sizes clients send.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "constraint/constraint_compiler.h"
#include "server/errors.h"
#include "server/server_fixture.h"

namespace baton::server {
namespace {

using testing::FakeCodec;
using testing::parse;
using testing::ServerHarness;

constraint::ConstraintSpec gbnf_spec(std::string text) {
  constraint::ConstraintSpec spec;
  spec.kind = constraint::ConstraintSpec::Kind::Grammar;
  spec.field = "grammar";
  spec.text = std::move(text);
  return spec;
}

// The 400 that compiling `text` gets ("" when it compiles).
std::string refusal(constraint::ConstraintCompiler& cc, std::string text) {
  try {
    cc.compile(gbnf_spec(std::move(text)));
  } catch (const constraint::ConstraintError& refused) {
    const ApiError e = bad_request(refused);  // what the server answers with
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.param, "grammar");
    EXPECT_EQ(e.code, "invalid_grammar");
    return e.what();
  }
  return "";
}

TEST(GrammarLimitsServer, OverALimitIsA400NamingIt) {
  FakeCodec codec;
  constraint::ConstraintCompiler cc(codec);
  std::string e =
      refusal(cc, "root ::= " + std::string(30000, '(') + "\"a\"" + std::string(30000, ')'));
  EXPECT_NE(e.find("nested deeper than 1000"), std::string::npos) << e;
  std::string many = "root ::=";
  for (int i = 0; i < 99; ++i) many += " \"a\"{0,10000}";
  e = refusal(cc, many);
  EXPECT_NE(e.find("more than 250000 rules"), std::string::npos) << e;
  // A start that expands exponentially is refused when compiled, not on the engine loop.
  std::string expo = "root ::= r1 \"x\" | r1 \"y\"\n";
  for (int i = 1; i < 40; ++i)
    expo += fmt::format("r{} ::= r{} \"x\" | r{} \"y\"\n", i, i + 1, i + 1);
  expo += "r40 ::= \"a\"\n";
  e = refusal(cc, expo);
  EXPECT_NE(e.find("too many parses open"), std::string::npos) << e;
  EXPECT_EQ(cc.cached_grammars(), 0u);
}

TEST(GrammarLimitsServer, TheGrammarCacheIsBoundedInBytes) {
  FakeCodec codec;
  constraint::ConstraintCompiler cc(codec);
  // Each about 12 MB compiled (a million characters of literal, 12 bytes each: the element and
  // its shortest-completion length); twelve would be 144 MB.
  size_t peak = 0;
  for (int i = 0; i < 12; ++i) {
    auto g = cc.compile(
        gbnf_spec(fmt::format("root ::= \"{}\" \"{}\"", i, std::string(1'000'000, 'a'))));
    ASSERT_TRUE(g);
    peak = std::max(peak, cc.cached_bytes());
  }
  EXPECT_LE(peak, constraint::ConstraintCompiler::kCachedGrammarBytes);
  EXPECT_LT(cc.cached_grammars(), 12u);
  EXPECT_GT(cc.cached_grammars(), 0u);
  // One over an eighth of the bytes serves its request but is never kept.
  const size_t before = cc.cached_grammars();
  auto big = cc.compile(gbnf_spec("root ::= \"" + std::string(2'500'000, 'b') + "\""));
  ASSERT_TRUE(big);
  EXPECT_GT(big->memory_bytes(), constraint::ConstraintCompiler::kCachedGrammarBytes / 8);
  EXPECT_EQ(cc.cached_grammars(), before);
  // Small ones are still cached by their text.
  auto a = cc.compile(gbnf_spec("root ::= \"x\""));
  EXPECT_EQ(cc.compile(gbnf_spec("root ::= \"x\"")), a);
}

TEST(GrammarLimitsServer, AHostileGrammarOverHttpIsA400AndTheServerStaysUp) {
  ServerHarness h;
  auto c = h.client();
  nlohmann::json body = {
      {"prompt", "a"},
      {"max_tokens", 4},
      {"grammar", "root ::= " + std::string(30000, '(') + "\"a\"" + std::string(30000, ')')}};
  auto r = c->Post("/v1/completions", body.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  testing::expect_error_shape(r->body, "nesting");
  const std::string msg = parse(r->body)["error"]["message"];
  EXPECT_NE(msg.find("nested deeper than 1000"), std::string::npos) << msg;
  auto health = c->Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

// A grammar that compiles but whose parses multiply as text arrives fails mid-answer: a 400
// (the request's fault) naming the cause, never a 500, and the server keeps serving.
TEST(GrammarLimitsServer, AGrammarOverItsStepBudgetMidAnswerIsA400) {
  FakeCodec codec;
  constraint::ConstraintCompiler cc(codec);
  auto constraint = cc.make(cc.compile(gbnf_spec("root ::= [a-z]* [a-m] [a-z]{10000}")), {});
  ASSERT_TRUE(constraint);
  bool threw = false;
  try {
    for (int i = 0; i < 10000; ++i) {
      const auto* mask = constraint->allowed();
      ASSERT_TRUE(mask);
      int32_t pick = -1;  // the first allowed letter token: keeps every parse open
      for (int32_t id = 0; id < codec.n_vocab() && pick < 0; ++id) {
        const char c = codec.piece(id)[0];
        if (c >= 'a' && c <= 'z' && ((*mask)[id / 64] >> (id % 64) & 1)) pick = id;
      }
      ASSERT_GE(pick, 0);
      constraint->accept(pick);
    }
  } catch (const engine::ConstraintBudgetExceeded& e) {
    threw = true;
    EXPECT_NE(std::string(e.what()).find("too many parses open"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(threw) << "the grammar's state sets grew for 10000 bytes without meeting a budget";
}

}  // namespace
}  // namespace baton::server
