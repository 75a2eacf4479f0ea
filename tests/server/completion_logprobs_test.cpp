// /v1/completions reports top_logprobs as an object keyed by token text. Two tokens can print
// the same text (byte tokens that each decode to U+FFFD): the most likely one keeps the key.
#include <gtest/gtest.h>

#include "server/api/openai_objects.h"

namespace baton::server {
namespace {

TEST(CompletionLogprobs, TokensThatPrintTheSameKeepTheMostLikely) {
  TokenLogprob lp;
  lp.token = "\xEF\xBF\xBD";
  lp.logprob = -0.5f;
  lp.top = {{"\xEF\xBF\xBD", -0.5f}, {"a", -1.0f}, {"\xEF\xBF\xBD", -2.5f}, {"b", -3.0f}};
  const auto j = completion_logprobs_json({lp}, 7);
  const auto& top = j.at("top_logprobs").at(0);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_FLOAT_EQ(top.at("\xEF\xBF\xBD").get<float>(), -0.5f);
  EXPECT_FLOAT_EQ(top.at("a").get<float>(), -1.0f);
  EXPECT_FLOAT_EQ(top.at("b").get<float>(), -3.0f);
  EXPECT_EQ(j.at("text_offset").at(0), 7);
  EXPECT_FLOAT_EQ(j.at("token_logprobs").at(0).get<float>(), -0.5f);
}

}  // namespace
}  // namespace baton::server
