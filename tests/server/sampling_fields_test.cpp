// One reader of the basic sampling fields, each API's ranges as data.
#include "server/api/sampling_fields.h"

#include <gtest/gtest.h>

#include "server/errors.h"

namespace baton::server {
namespace {

using nlohmann::json;

int status_of(const json& body, const SamplingFields& api) {
  engine::SamplingParams sp;
  try {
    parse_basic_sampling(body, api, sp);
  } catch (const ApiError& e) {
    return e.status;
  }
  return 200;
}

TEST(SamplingFields, EachApiKeepsItsOwnRanges) {
  const json warm = {{"temperature", 1.5}};
  EXPECT_EQ(status_of(warm, kOpenAiSampling), 200);
  EXPECT_EQ(status_of(warm, kResponsesSampling), 200);
  EXPECT_EQ(status_of(warm, kAnthropicSampling), 400) << "Anthropic's temperature ends at 1";
  EXPECT_EQ(status_of({{"temperature", 2.5}}, kOpenAiSampling), 400);
  EXPECT_EQ(status_of({{"temperature", -0.1}}, kAnthropicSampling), 400);
  EXPECT_EQ(status_of({{"top_p", 1.1}}, kOpenAiSampling), 400);
  EXPECT_EQ(status_of({{"top_k", -1}}, kAnthropicSampling), 400);
}

TEST(SamplingFields, ValuesReachTheSamplerWhereTheApiHasTheField) {
  const json body = {{"temperature", 0.25}, {"top_p", 0.5}, {"top_k", 7}};
  engine::SamplingParams chat, responses;
  parse_basic_sampling(body, kOpenAiSampling, chat);
  parse_basic_sampling(body, kResponsesSampling, responses);
  EXPECT_FLOAT_EQ(chat.temperature, 0.25f);
  EXPECT_FLOAT_EQ(chat.top_p, 0.5f);
  EXPECT_EQ(chat.top_k, 7);
  EXPECT_FLOAT_EQ(responses.temperature, 0.25f);
  EXPECT_EQ(responses.top_k, engine::SamplingParams{}.top_k) << "not a Responses API field";
}

}  // namespace
}  // namespace baton::server
