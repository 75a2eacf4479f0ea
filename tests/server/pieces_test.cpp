// The server's pure pieces: stop strings, SSE framing, chat format, status JSON,
// error bodies and request parsing.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "server/answer/stop_matcher.h"
#include "server/api/openai_objects.h"
#include "server/api/openai_request.h"
#include "server/errors.h"
#include "server/http/sse.h"
#include "server/ops/status_json.h"

namespace baton::server {
namespace {

using nlohmann::json;

std::string feed(StopMatcher& m, const std::vector<std::string>& pieces) {
  std::string out;
  for (const auto& p : pieces) out += m.push(p);
  return out + m.flush();
}

TEST(StopMatcher, PassesTextWithoutStops) {
  StopMatcher m(std::vector<std::string>{});
  EXPECT_EQ(feed(m, {"hello", " world"}), "hello world");
  EXPECT_FALSE(m.matched());
}

TEST(StopMatcher, CutsAtStopSplitAcrossPieces) {
  StopMatcher m({"END"});
  EXPECT_EQ(m.push("abc E"), "abc ");  // "E" could start "END": held back
  EXPECT_EQ(m.push("N"), "");
  EXPECT_EQ(m.push("Dxyz"), "");
  EXPECT_TRUE(m.matched());
  EXPECT_EQ(m.flush(), "");
  EXPECT_EQ(m.push("more"), "");
}

TEST(StopMatcher, ReleasesHeldTextThatTurnsOutNotToBeAStop) {
  StopMatcher m({"END"});
  EXPECT_EQ(m.push("E"), "");
  EXPECT_EQ(m.push("Nx"), "ENx");
  EXPECT_EQ(m.push("EN"), "");
  EXPECT_EQ(m.flush(), "EN");
  EXPECT_FALSE(m.matched());
}

TEST(StopMatcher, EarliestOfSeveralStopsWins) {
  StopMatcher m({"cd", "b"});
  EXPECT_EQ(feed(m, {"abcd"}), "a");
  EXPECT_TRUE(m.matched());
}

TEST(StopMatcher, StopInsideOnePiece) {
  StopMatcher m({"\n\n"});
  EXPECT_EQ(feed(m, {"line one\n", "\nline two"}), "line one");
}

TEST(Sse, FramesDataDoneAndComments) {
  EXPECT_EQ(sse_data(json{{"a", "x\ny"}}), "data: {\"a\":\"x\\ny\"}\n\n");
  EXPECT_EQ(sse_done(), "data: [DONE]\n\n");
  EXPECT_EQ(sse_comment("keep\nalive"), ": keep alive\n\n");
}

TEST(Sse, InvalidUtf8DoesNotThrow) {
  std::string bad = "\xff\xfe";
  std::string out = sse_data(json{{"t", bad}});
  EXPECT_EQ(out.rfind("data: ", 0), 0u);
  EXPECT_EQ(out.substr(out.size() - 2), "\n\n");
}

TEST(Errors, BodyShape) {
  ApiError e = bad_request("'temperature' must be between 0 and 2", "temperature");
  auto j = json::parse(error_body(e));
  EXPECT_EQ(j["error"]["type"], "invalid_request_error");
  EXPECT_EQ(j["error"]["param"], "temperature");
  EXPECT_TRUE(j["error"]["code"].is_null());
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(ApiError(401, "x").type, "authentication_error");
  EXPECT_EQ(ApiError(500, "x").type, "server_error");
}

TEST(StatusJson, SplitsRunningWaitingAndParked) {
  sched::StatusSnapshot s;
  s.config.parallel = 3;
  auto request = [](uint64_t id, sched::RequestState state, int32_t prompt, int32_t done,
                    int32_t cached, int32_t generated, double waited) {
    sched::RequestStatus r;
    r.id = id;
    r.state = state;
    r.prompt_tokens = prompt;
    r.prompt_done = done;
    r.cached_tokens = cached;
    r.generated = generated;
    r.ms_waited = waited;
    return r;
  };
  s.requests.push_back(request(1, sched::RequestState::Decoding, 10, 10, 4, 5, 12.5));
  s.requests.push_back(request(2, sched::RequestState::Queued, 7, 0, 0, 0, 3));
  auto parked = request(3, sched::RequestState::Parked, 900, 128, 0, 0, 40);
  parked.parked_why = "prefill_preempt";
  parked.position = 128;
  parked.blocks_kept = 8;
  s.requests.push_back(parked);
  auto j = status_json(s, "m");
  EXPECT_EQ(j["config"]["parallel"], 3);
  ASSERT_EQ(j["running"].size(), 1u);
  ASSERT_EQ(j["waiting"].size(), 1u);
  ASSERT_EQ(j["parked"].size(), 1u);
  EXPECT_EQ(j["parked"][0]["why"], "prefill_preempt");
  EXPECT_EQ(j["parked"][0]["position"], 128);
  EXPECT_EQ(j["parked"][0]["blocks_kept"], 8);
  EXPECT_FALSE(j["running"][0].contains("why"));
  EXPECT_EQ(j["running"][0]["generated"], 5);
  EXPECT_EQ(j["waiting"][0]["id"], 2);
  EXPECT_TRUE(j["kv"].contains("blocks_used"));
}

TEST(Schema, ParsesEveryChatField) {
  auto r = parse_chat_request(R"({
    "model": "m", "stream": true, "stream_options": {"include_usage": true},
    "max_completion_tokens": 7, "temperature": 0.5, "top_p": 0.9, "top_k": 40, "min_p": 0.05,
    "seed": 42, "presence_penalty": 0.1, "frequency_penalty": -0.2, "repetition_penalty": 1.1,
    "stop": ["a", "b"], "n": 1, "logprobs": true, "top_logprobs": 3, "user": "u",
    "messages": [{"role": "system", "content": "s"},
                 {"role": "user", "content": [{"type": "text", "text": "x"},
                                              {"type": "text", "text": "y"}]}]})",
                              {});
  EXPECT_EQ(r.common.model, "m");
  EXPECT_TRUE(r.common.stream);
  EXPECT_TRUE(r.common.include_usage);
  EXPECT_EQ(*r.common.max_tokens, 7);
  EXPECT_FLOAT_EQ(r.common.sampling.temperature, 0.5f);
  EXPECT_EQ(r.common.sampling.top_k, 40);
  EXPECT_EQ(r.common.sampling.seed, 42u);
  EXPECT_FLOAT_EQ(r.common.sampling.repetition_penalty, 1.1f);
  EXPECT_EQ(r.common.stop, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(r.common.sampling.logprobs);
  EXPECT_EQ(r.common.sampling.top_logprobs, 3);
  ASSERT_EQ(r.chat.messages.size(), 2u);
  EXPECT_EQ(r.chat.messages[1]["content"], "xy");
}

TEST(Schema, CompletionPromptForms) {
  EXPECT_EQ(parse_completion_request(R"({"prompt":"hi"})", {}).prompts.at(0).text, "hi");
  EXPECT_EQ(parse_completion_request(R"({"prompt":["hi"]})", {}).prompts.at(0).text, "hi");
  auto t = parse_completion_request(R"({"prompt":[1,2,3],"logprobs":2})", {4096, 10});
  ASSERT_EQ(t.prompts.size(), 1u);
  EXPECT_TRUE(t.prompts[0].is_tokens);
  EXPECT_EQ(t.prompts[0].tokens, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(t.common.sampling.top_logprobs, 2);
  EXPECT_THROW(parse_completion_request(R"({"prompt":[1,20]})", {4096, 10}), ApiError);
  auto list = parse_completion_request(R"({"prompt":["a",[4,5],"c"],"n":2})", {4096, 10});
  ASSERT_EQ(list.prompts.size(), 3u);
  EXPECT_EQ(list.prompts[1].tokens, (std::vector<int32_t>{4, 5}));
  EXPECT_EQ(list.prompts[2].text, "c");
  EXPECT_EQ(list.common.n, 2);
  EXPECT_TRUE(parse_completion_request(R"({"prompt":"a","echo":true})", {}).echo);
  EXPECT_EQ(parse_completion_request(R"({"prompt":"a","n":2,"best_of":3})", {}).best_of, 3);
}

TEST(Schema, ChoiceCountsAreChecked) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"prompt":"a","n":0})", "n"},
      {R"({"prompt":"a","n":65})", "n"},
      {R"({"prompt":"a","n":3,"best_of":2})", "best_of"},
      {R"({"prompt":"a","best_of":3,"stream":true})", "best_of"},
      {R"({"prompt":"a","echo":true,"logprobs":1})", "logprobs"},
      {R"({"prompt":[]})", "prompt"},
      {R"({"prompt":["a",[]]})", "prompt"},
      {R"({"prompt":["a",{}]})", "prompt"},
  };
  for (const auto& [body, param] : bad) {
    try {
      parse_completion_request(body, {4096, 10});
      ADD_FAILURE() << body;
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status, 400) << body;
      EXPECT_EQ(e.param, param) << body;
    }
  }
}

TEST(Schema, DeepNestingIsRejectedNotCrashed) {
  std::string deep(200000, '[');
  EXPECT_THROW(parse_json_object(deep), ApiError);
}

TEST(Schema, ArrayBoundNamesTheArrayAndCountsEachLevel) {
  EXPECT_EQ(parse_json_object(R"({"a":[1,2,{"b":[3,4]}],"c":[]})", 3)["a"][2]["b"][1], 4);
  try {
    parse_json_object(R"({"a":[[1],{"b":[1,2,3,4]}]})", 3, 7);
    FAIL() << "a 4-entry array passed a bound of 3";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.code, "context_length_exceeded");
    EXPECT_EQ(e.param, "b");
  }
  EXPECT_EQ(parse_json_object(R"({"a":[1,2,3,4,5]})", 0)["a"].size(), 5u);  // 0: no bound
  EXPECT_THROW(parse_json_object(R"({"a":[1,2)", 10), ApiError);
  EXPECT_THROW(parse_json_object(R"({"a":1} x)", 10), ApiError);
}

// An array of N objects used to cost O(N²) (nlohmann's parser callback rescans the enclosing
// array after each one: 3.5 s for 131072 in a release build); a bound of a long context must
// stay linear, well under a second even in a sanitizer build.
TEST(Schema, ArrayOfObjectsParsesInLinearTime) {
  const size_t n = 1 << 18;
  std::string body = "{\"messages\":[";
  for (size_t i = 0; i < n; ++i) body += i ? ",{}" : "{}";
  body += "]}";
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(parse_json_object(body, n, static_cast<int32_t>(n))["messages"].size(), n);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

// The body is parsed once, keeping the client's key order for the template's tools and for
// the schema's properties, and an object of many members is built member by member: with
// nlohmann's ordered builder a 3.5 MB object of 300,000 members took 74 s of a worker's CPU.
TEST(Schema, OneParseKeepsKeyOrderAndBuildsWideObjects) {
  std::string wide = "{";
  for (int i = 0; i < 300000; ++i) wide += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":0";
  wide += "}";
  auto r = parse_chat_request(
      R"({"messages":[{"role":"user","content":"x"}],"metadata":)" + wide +
          R"(,"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object",)"
          R"("properties":{"zeta":{"type":"string"},"alpha":{"type":"integer"}}}}}],)"
          R"("response_format":{"type":"json_schema","json_schema":{"name":"s","schema":)"
          R"({"type":"object","properties":{"zulu":{"type":"string"},"bravo":{"type":"string"}}}}}})",
      {});
  const auto& props = r.chat.tools[0]["function"]["parameters"]["properties"];
  EXPECT_EQ(props.begin().key(), "zeta");
  EXPECT_EQ(r.common.constraint.schema["properties"].begin().key(), "zulu");
  EXPECT_EQ(r.common.constraint.kind, constraint::ConstraintSpec::Kind::JsonSchema);
}

TEST(Responses, UsageAndChunkShapes) {
  ResponseMeta meta{"chatcmpl-1", 5, "m"};
  auto r = chat_response_json(
      meta, json::array({chat_choice_json(0, chat_message_json({"", "hi", {}}), "stop", nullptr)}),
      {3, 2, 1});
  EXPECT_EQ(r["object"], "chat.completion");
  EXPECT_EQ(r["usage"]["total_tokens"], 5);
  EXPECT_EQ(r["usage"]["prompt_tokens_details"]["cached_tokens"], 1);
  EXPECT_EQ(r["choices"][0]["message"]["content"], "hi");
  auto c = chat_chunk_json(meta, {{"content", "x"}}, "", nullptr);
  EXPECT_TRUE(c["choices"][0]["finish_reason"].is_null());
  auto u = usage_chunk_json(meta, true, {1, 1, 0});
  EXPECT_TRUE(u["choices"].empty());
  EXPECT_NE(make_response_id("cmpl-"), make_response_id("cmpl-"));
}

TEST(Responses, ToolCallMessageAndDeltas) {
  toolcall::ParsedOutput msg;
  msg.reasoning = "think";
  msg.calls.push_back({"call_1", "read", R"({"path": "a"})"});
  auto m = chat_message_json(msg);
  EXPECT_TRUE(m["content"].is_null()) << "only tool calls: content is null, as OpenAI sends";
  EXPECT_EQ(m["reasoning_content"], "think");
  EXPECT_EQ(m["tool_calls"][0]["id"], "call_1");
  EXPECT_EQ(m["tool_calls"][0]["type"], "function");
  EXPECT_EQ(m["tool_calls"][0]["function"]["arguments"], R"({"path": "a"})");
  EXPECT_EQ(chat_finish_reason("stop", msg), "tool_calls");
  EXPECT_EQ(chat_finish_reason("length", msg), "length");
  EXPECT_EQ(chat_finish_reason("stop", {}), "stop");
  auto first = tool_call_delta({2, "call_1", "read", "{\"pa"});
  EXPECT_EQ(first, json::parse(R"({"index": 2, "id": "call_1", "type": "function",
                                   "function": {"name": "read", "arguments": "{\"pa"}})"));
  auto next = tool_call_delta({2, "", "", "th\""});
  EXPECT_EQ(next, json::parse(R"({"index": 2, "function": {"arguments": "th\""}})"));
}

}  // namespace
}  // namespace baton::server
