// The server over the real engine and tokenizer: a synthetic byte-vocab model (always) and
// stories260K from ../shared (when present). Greedy answers must equal engine::generate's.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "engine/generate.h"
#include "engine/llama_engine.h"
#include "sched/engine_loop.h"
#include "server/answer/backend.h"
#include "server/http_server.h"
#include "server_fixture.h"
#include "sse_client.h"
#include "support/shared_files.h"
#include "synth/synth_model.h"
#include "tokenizer/tokenizer_codec.h"

namespace baton::server::testing {
namespace {

using nlohmann::json;

// Written in-process rather than by `baton gguf synth`, so sanitizer builds without the binary
// still run the server over the real engine.
std::string synth_model(const std::filesystem::path& dir) {
  auto path = (dir / "synth.gguf").string();
  synth::SynthSpec spec;  // byte vocab, as `gguf synth --byte-vocab`
  spec.ctx = 512;
  spec.threads = 1;
  synth::write_synthetic_model(spec, path);
  return path;
}

class RealServer {
 public:
  explicit RealServer(const std::string& model, ChatOptions chat = {}, int32_t ctx = 512) {
    engine::EngineOptions eo;
    eo.threads = 1;
    eng_ = engine::load_llama_engine(model, eo);
    ref_ = engine::load_llama_engine(model, eo);
    sched::SchedConfig sc;
    sc.ctx = ctx;
    sc.parallel = 2;
    loop_ = std::make_unique<sched::EngineLoop>(*eng_, sc);
    loop_->start();
    backend_ = std::make_unique<EngineLoopBackend>(*loop_);
    codec_ = std::make_unique<tokenizer::TokenizerCodec>(eng_->tokenizer());
    ServerOptions so;
    so.port = 0;
    so.model_id = "real";
    so.chat = std::move(chat);
    http_ = std::make_unique<HttpServer>(so);
    port_ = http_->start();
    http_->attach(*backend_, *codec_);
  }
  ~RealServer() {
    loop_->shutdown();
    http_->stop();
  }
  httplib::Client client() const { return httplib::Client("127.0.0.1", port_); }
  const tokenizer::Tokenizer& tok() const { return eng_->tokenizer(); }

  // What a lone greedy generation gives for this prompt text.
  std::string reference(const std::string& prompt, int n) {
    return reference_tokens(tok().encode(prompt, tok().add_bos()), n);
  }

  std::string reference_tokens(const std::vector<int32_t>& ids, int n) {
    engine::GenerateOptions go;
    go.max_tokens = n;
    go.sampling.temperature = 0;
    auto r = engine::generate(*ref_, ids, go);
    // Decoded as a continuation of the prompt (see tokenizer::TextCodec::stream).
    tokenizer::StreamDecoder dec(tok());
    for (int32_t id : ids) dec.push(id);
    std::string text;
    for (int32_t id : r.tokens) text += dec.push(id);
    return text + dec.flush();
  }

 private:
  std::unique_ptr<engine::LlamaEngine> eng_, ref_;
  std::unique_ptr<sched::EngineLoop> loop_;
  std::unique_ptr<EngineLoopBackend> backend_;
  std::unique_ptr<tokenizer::TokenizerCodec> codec_;
  std::unique_ptr<HttpServer> http_;
  int port_ = 0;
};

void check_server(RealServer& s) {
  auto c = s.client();
  const std::string prompt = "Once upon a time, h\xc3\xa9llo";
  std::string expected = s.reference(prompt, 20);
  json body = {{"prompt", prompt}, {"max_tokens", 20}, {"temperature", 0}};
  auto r = c.Post("/v1/completions", body.dump(), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(parse(r->body)["choices"][0]["text"], expected);

  body["stream"] = true;
  r = c.Post("/v1/completions", body.dump(), "application/json");
  ASSERT_TRUE(r);
  std::string streamed;
  for (const auto& ch : sse_json(r->body)) streamed += ch["choices"][0]["text"].get<std::string>();
  EXPECT_EQ(streamed, expected);

  r = c.Post("/tokenize", json{{"content", "h\xc3\xa9llo"}, {"with_pieces", true}}.dump(),
             "application/json");
  ASSERT_TRUE(r);
  auto toks = parse(r->body)["tokens"];
  auto ids = s.tok().encode("h\xc3\xa9llo", false, true);
  ASSERT_EQ(toks.size(), ids.size());
  json plain_ids = json::array();
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(toks[i]["id"], ids[i]);
    plain_ids.push_back(ids[i]);
  }
  r = c.Post("/detokenize", json{{"tokens", plain_ids}}.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(parse(r->body)["content"], "h\xc3\xa9llo");

  // n choices: the followers start from the leader's prefilled KV blocks, so greedy choices
  // must be exactly the lone greedy answer (a wrong block reuse shows as different text).
  const std::string story =
      "Once upon a time, there was a little girl named Lily. She loved to play outside in the "
      "park with her friends.";
  const std::string story_expected = s.reference(story, 16);
  json many = {{"prompt", story}, {"max_tokens", 16}, {"temperature", 0}, {"n", 3}};
  r = c.Post("/v1/completions", many.dump(), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto mj = parse(r->body);
  ASSERT_EQ(mj["choices"].size(), 3u);
  for (const auto& ch : mj["choices"]) EXPECT_EQ(ch["text"], story_expected) << r->body;

  json chat = {{"messages", {{{"role", "user"}, {"content", "Hi"}}}},
               {"max_tokens", 12},
               {"temperature", 0}};
  r = c.Post("/v1/chat/completions", chat.dump(), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(parse(r->body)["choices"][0]["message"]["content"],
            s.reference("User: Hi\nAssistant:", 12));
}

TEST(RealModel, SyntheticByteVocab) {
  RealServer s(synth_model(baton::testing::scratch_dir()));
  check_server(s);
}

TEST(RealModel, Stories260K) {
  BATON_REQUIRE_SHARED(model, "models/stories260K.gguf");
  RealServer s(model.string());
  check_server(s);
}

// A Llama-2 style template set with --chat-template: the prompt is the rendering, its <s> and
// </s> the BOS/EOS tokens (the template writes them, so no second BOS is added), and the user's
// own "</s>" stays text.
void check_chat_template(const std::string& model) {
  ChatOptions chat;
  chat.template_text =
      "{{ bos_token }}{% for m in messages %}{% if m.role == 'user' %}[INST] {{ m.content }} "
      "[/INST]{% else %}{{ m.content }}{{ eos_token }}{% endif %}{% endfor %}";
  RealServer s(model, chat);
  const auto& tok = s.tok();
  const std::string user = "Tell me a story </s> about a cat";
  json body = {{"messages",
                {{{"role", "user"}, {"content", "Hi"}},
                 {{"role", "assistant"}, {"content", "Hello."}},
                 {{"role", "user"}, {"content", user}}}},
               {"max_tokens", 10},
               {"temperature", 0}};
  auto r = s.client().Post("/v1/chat/completions", body.dump(), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const std::string bos = tok.token_text(tok.bos_id()), eos = tok.token_text(tok.eos_id());
  const std::string head = bos + "[INST] Hi [/INST]Hello." + eos + "[INST] ";
  const std::string tail = " [/INST]";
  // The template's markers parsed as special tokens, the user's text as plain text.
  const auto literal =
      tok.encode_with_literals(head + user + tail, false, {{head.size(), user.size()}});
  EXPECT_EQ(std::count(literal.begin(), literal.end(), tok.eos_id()), 1);
  EXPECT_EQ(std::count(literal.begin(), literal.end(), tok.bos_id()), 1);
  auto j = parse(r->body);
  EXPECT_EQ(j["usage"]["prompt_tokens"], literal.size());
  EXPECT_EQ(j["choices"][0]["message"]["content"], s.reference_tokens(literal, 10));
}

TEST(RealModel, Stories260KWithChatTemplate) {
  BATON_REQUIRE_SHARED(model, "models/stories260K.gguf");
  check_chat_template(model.string());
}

TEST(RealModel, Llama2VocabWithChatTemplate) {
  BATON_REQUIRE_SHARED(model, "models/llama-2-tiny-random.gguf");
  check_chat_template(model.string());
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// gpt-oss end to end with its own chat template: the template renders the harmony prompt (tools
// as a TypeScript namespace in the developer message), the output format is recognised from it,
// and a call the request forces comes back as a parsed tool call, in one response and streamed.
TEST(RealModel, GptOssWithItsOwnTemplateAnswersAForcedToolCall) {
  BATON_REQUIRE_SHARED(model, "models/arch/synth-gpt-oss-Q8_0.gguf");
  ChatOptions chat;
  chat.template_text = read_text(std::filesystem::path(BATON_SOURCE_DIR) /
                                 "tests/server/templates/openai-gpt-oss.jinja");
  ASSERT_FALSE(chat.template_text.empty());
  // The harmony prompt takes ~440 tokens of this 512-token vocabulary.
  RealServer s(model.string(), chat, 1024);
  const json tools = json::parse(R"([{"type": "function", "function": {
      "name": "get_weather", "description": "Current weather of a city",
      "parameters": {"type": "object",
                     "properties": {"city": {"type": "string", "enum": ["Paris", "Lyon"]}},
                     "required": ["city"]}}}])");
  // (An enum, since a random-weight model would fill a free string up to max_tokens; one call,
  // since it would as well go on calling until max_tokens where the grammar allows more.)
  json body = {{"messages",
                {{{"role", "system"}, {"content", "Be brief."}},
                 {{"role", "user"}, {"content", "Weather in Paris?"}}}},
               {"tools", tools},
               {"tool_choice", "required"},
               {"parallel_tool_calls", false},
               {"max_tokens", 300},
               {"temperature", 0}};
  auto r = s.client().Post("/v1/chat/completions", body.dump(), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto j = parse(r->body);
  const auto& choice = j["choices"][0];
  ASSERT_EQ(choice["finish_reason"], "tool_calls") << r->body;
  ASSERT_EQ(choice["message"]["tool_calls"].size(), 1u) << r->body;
  const auto& call = choice["message"]["tool_calls"][0];
  EXPECT_EQ(call["function"]["name"], "get_weather");
  const json args = json::parse(call["function"]["arguments"].get<std::string>());
  ASSERT_TRUE(args.is_object()) << r->body;
  EXPECT_TRUE(args["city"] == "Paris" || args["city"] == "Lyon") << r->body;
  // The prompt is the harmony rendering: far longer than the two messages' text.
  EXPECT_GT(j["usage"]["prompt_tokens"].get<int>(), 100);

  body["stream"] = true;
  r = s.client().Post("/v1/chat/completions", body.dump(), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  std::string name, arguments, finish;
  for (const auto& ch : sse_json(r->body)) {
    const auto& c = ch["choices"][0];
    if (c.contains("finish_reason") && c["finish_reason"].is_string()) finish = c["finish_reason"];
    if (!c["delta"].contains("tool_calls")) continue;
    for (const auto& tc : c["delta"]["tool_calls"]) {
      if (tc["function"].contains("name")) name += tc["function"]["name"].get<std::string>();
      if (tc["function"].contains("arguments")) {
        arguments += tc["function"]["arguments"].get<std::string>();
      }
    }
  }
  EXPECT_EQ(finish, "tool_calls");
  EXPECT_EQ(name, "get_weather");
  EXPECT_EQ(json::parse(arguments), args) << "streamed and whole answers differ";
}

}  // namespace
}  // namespace baton::server::testing
