#pragma once
// The seed corpus for fuzz_http, written out by fuzz_http_corpus and replayed by
// tests/server/http_pipeline_corpus_test.cpp: a valid request for every route and feature, the
// framings (chunked, HTTP/1.0, pipelined), and the hostile cases the transport must refuse.
// Each seed names the statuses its answers must have, in order, with the connection closed by
// the client after the bytes (run_request_pipeline with eof).
#include <cstdio>
#include <string>
#include <vector>

#include "http_fuzz_app.h"

namespace baton::server::fuzzing {

struct HttpSeed {
  std::string name;  // also the corpus file name
  std::string bytes;
  std::vector<int> statuses;  // expected answers, in order
};

namespace seeds {

inline const std::string kAuth = "Authorization: Bearer fuzz-key\r\n";

// A request with Host, the API key and (with a body or for POST) a Content-Length.
inline std::string req(const std::string& method, const std::string& target,
                       const std::string& body = "", const std::string& extra = "",
                       const std::string& version = "HTTP/1.1") {
  std::string r = method + " " + target + " " + version + "\r\nHost: x\r\n" + kAuth + extra;
  if (!body.empty() || method == "POST")
    r += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  return r + "\r\n" + body;
}

inline std::string post(const std::string& target, const std::string& body,
                        const std::string& extra = "") {
  return req("POST", target, body, extra + "Content-Type: application/json\r\n");
}

// A POST whose body comes in chunks of `piece` bytes.
inline std::string chunked(const std::string& target, const std::string& body, size_t piece) {
  std::string r =
      "POST " + target + " HTTP/1.1\r\nHost: x\r\n" + kAuth + "Transfer-Encoding: chunked\r\n\r\n";
  for (size_t i = 0; i < body.size(); i += piece) {
    std::string part = body.substr(i, piece);
    char size[20];
    std::snprintf(size, sizeof size, "%zx", part.size());
    r += std::string(size) + "\r\n" + part + "\r\n";
  }
  return r + "0\r\n\r\n";
}

inline std::string chat(const std::string& extra_fields = "") {
  return R"({"model":"fuzz-model","messages":[{"role":"system","content":"Be brief."},)"
         R"({"role":"user","content":"Hello there"}])" +
         extra_fields + "}";
}

inline std::string ints(size_t n) {
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) s += (i ? "," : "") + std::to_string(i % 256);
  return s + "]";
}

// A chat history whose assistant turn called a tool with `arguments` (JSON text in a string).
inline std::string chat_tool_history(const std::string& arguments) {
  return R"({"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,)"
         R"("tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":")" +
         arguments + R"("}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}],"max_tokens":4})";
}

// The same history as Responses input items.
inline std::string responses_tool_history(const std::string& arguments) {
  return R"({"input":[{"role":"user","content":"hi"},{"type":"function_call","call_id":"c1",)"
         R"("name":"f","arguments":")" +
         arguments + R"("},{"type":"function_call_output","call_id":"c1","output":"ok"}]})";
}

// {\"a\":[[...]]} as it stands inside a JSON string: an object nesting depth + 1.
inline std::string nested_arguments(int depth) {
  return "{\\\"a\\\":" + std::string(depth, '[') + std::string(depth, ']') + "}";
}

}  // namespace seeds

inline std::vector<HttpSeed> valid_seeds() {
  using namespace seeds;
  const std::string chat_path = "/v1/chat/completions", cmpl = "/v1/completions";
  return {
      {"health", req("GET", "/health"), {200}},
      {"health-v1-no-key", "GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n", {200}},
      {"models", req("GET", "/v1/models"), {200}},
      {"models-short", req("GET", "/models?x=1"), {200}},
      {"model-by-id", req("GET", "/v1/models/fuzz-model"), {200}},
      {"model-percent", req("GET", "/models/fuzz%2Dmodel"), {200}},
      {"model-other", req("GET", "/v1/models/other"), {404}},
      {"metrics", req("GET", "/metrics"), {200}},
      {"status", req("GET", "/status"), {200}},
      {"chat", post(chat_path, chat()), {503}},
      {"chat-n-three", post(chat_path, chat(R"(,"n":3,"stream":true)")), {503}},
      {"completion-prompt-list",
       post(cmpl, R"({"prompt":["a",[1,2]],"n":2,"echo":true,"best_of":3})"),
       {503}},
      {"responses-items",
       post("/v1/responses",
            R"({"input":[{"type":"message","role":"developer","content":[{"type":"input_text",)"
            R"("text":"be brief"}]},{"type":"function_call","call_id":"c1","name":"f",)"
            R"("arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"ok"}],)"
            R"("tools":[{"type":"function","name":"f","parameters":{"type":"object"}},)"
            R"({"type":"web_search"}],"stream":true,"store":false})"),
       {503}},
      {"messages-tools",
       post("/v1/messages",
            R"({"model":"m","max_tokens":8,"system":[{"type":"text","text":"s"}],"messages":[)"
            R"({"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use",)"
            R"("id":"t1","name":"f","input":{}}]},{"role":"user","content":[{"type":)"
            R"("tool_result","tool_use_id":"t1","content":"ok"}]}],"stream":true})"),
       {503}},
      {"count-tokens",
       post("/v1/messages/count_tokens",
            R"({"model":"m","messages":[{"role":"user","content":"hi"}]})"),
       {200}},
      {"chat-stream",
       post(chat_path, chat(R"(,"stream":true,"stream_options":{"include_usage":true})")),
       {503}},
      {"chat-logprobs", post(chat_path, chat(R"(,"logprobs":true,"top_logprobs":3)")), {503}},
      {"chat-sampling",
       post("/chat/completions",
            chat(R"(,"max_tokens":8,"temperature":0.7,"top_p":0.9,"top_k":40,"min_p":0.05,)"
                 R"("presence_penalty":0.5,"frequency_penalty":-0.5,"repetition_penalty":1.1,)"
                 R"("seed":-3,"n":1,"ignore_eos":true,"user":"u","response_format":)"
                 R"({"type":"text"},"tools":[])")),
       {503}},
      {"chat-stop",
       post(chat_path, chat(R"(,"stop":["\n","User:"],"max_completion_tokens":4)")),
       {503}},
      {"chat-parts",
       post(chat_path, R"({"messages":[{"role":"developer","content":[{"type":"text","text":"a"},)"
                       R"({"type":"text","text":"b"}]},{"role":"tool","content":null},)"
                       R"({"role":"assistant"}]})"),
       {503}},
      {"completion",
       post(cmpl, R"({"prompt":"Once upon a time","max_tokens":16,"stop":"."})"),
       {503}},
      {"completion-stream",
       post("/completions", R"({"prompt":["x"],"stream":true,"logprobs":2})"),
       {503}},
      {"completion-tokens",
       post(cmpl, R"({"prompt":[1,2,3,255],"best_of":1,"echo":false})"),
       {503}},
      {"completion-token-batch", post(cmpl, R"({"prompt":[[5,6,7]],"suffix":null})"), {503}},
      {"tokenize",
       post("/tokenize", R"({"content":"hello <|im_start|>","with_pieces":true,)"
                         R"("add_special":true,"parse_special":false})"),
       {200}},
      {"detokenize", post("/detokenize", R"({"tokens":[104,105,255,0]})"), {200}},
      {"chunked-chat", chunked(chat_path, chat(R"(,"stream":true)"), 7), {503}},
      {"chunked-ext",
       "POST /tokenize HTTP/1.1\r\nHost: x\r\n" + kAuth +
           "Transfer-Encoding: chunked\r\n\r\n5;a=b\r\n{\"con\r\n"
           "c\r\ntent\":\"abc\"}\r\n0\r\nTrailer: 1\r\n\r\n",
       {200}},
      {"http10", req("GET", "/v1/models", "", "", "HTTP/1.0"), {200}},
      {"http10-post", req("POST", cmpl, R"({"prompt":"hi"})", "", "HTTP/1.0"), {503}},
      {"http10-keepalive",
       req("GET", "/health", "", "Connection: keep-alive\r\n", "HTTP/1.0") + req("GET", "/status"),
       {200, 200}},
      {"pipelined-gets", req("GET", "/health") + req("GET", "/v1/models"), {200, 200}},
      {"pipelined-posts",
       post("/tokenize", R"({"content":"a"})") + post(cmpl, R"({"prompt":"b"})"),
       {200, 503}},
      {"pipelined-close",
       req("GET", "/health", "", "Connection: close\r\n") + req("GET", "/status"),
       {200}},
      {"expect-continue", post(chat_path, chat(), "Expect: 100-continue\r\n"), {503}},
      {"x-api-key", "GET /v1/models HTTP/1.1\r\nHost: x\r\nx-api-key: fuzz-key\r\n\r\n", {200}},
      {"chat-tool-history", post(chat_path, chat_tool_history(nested_arguments(8))), {503}},
      {"responses-tool-history",
       post("/v1/responses", responses_tool_history(nested_arguments(8))),
       {503}},
  };
}

inline std::vector<HttpSeed> hostile_seeds() {
  using namespace seeds;
  const std::string chat_path = "/v1/chat/completions", cmpl = "/v1/completions";
  std::string deep(200, '[');
  return {
      {"no-key", "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n", {401}},
      {"wrong-key", "GET /status HTTP/1.1\r\nAuthorization: Bearer nope\r\n\r\n", {401}},
      {"not-found", req("GET", "/v2/nothing"), {404}},
      {"wrong-method", req("DELETE", "/v1/models"), {405}},
      {"bad-utf8-path", req("GET", "/\xff\xfe"), {404}},
      {"bad-utf8-model", req("GET", "/v1/models/%ff%c3"), {404}},
      {"bad-percent-model", req("GET", "/v1/models/%zz%"), {404}},
      {"bad-utf8-headers",
       req("GET", "/health", "", "X-A: \x80\xff\r\nUser-Agent: \xc3\x28\r\n"),
       {200}},
      {"bad-utf8-json",
       post(chat_path, "{\"messages\":[{\"role\":\"\xff\",\"content\":\"x\"}]}"),
       {400}},
      {"bad-utf8-model-field", post(cmpl, "{\"prompt\":\"x\",\"model\":\"\xc3\x28\"}"), {400}},
      {"dup-content-length",
       "POST /tokenize HTTP/1.1\r\nHost: x\r\n" + kAuth +
           "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
       {400}},
      {"conflicting-content-length",
       "POST /tokenize HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\n{}",
       {400}},
      {"invalid-content-length", "POST /tokenize HTTP/1.1\r\nContent-Length: 1x\r\n\r\n{}", {400}},
      {"negative-content-length", "POST /tokenize HTTP/1.1\r\nContent-Length: -1\r\n\r\n", {400}},
      {"cl-and-te",
       "POST /tokenize HTTP/1.1\r\nHost: x\r\n" + kAuth +
           "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
       {400}},
      {"te-gzip", "POST /tokenize HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", {501}},
      {"bad-chunk-size",
       "POST /tokenize HTTP/1.1\r\nHost: x\r\n" + kAuth +
           "Transfer-Encoding: chunked\r\n\r\n"
           "zz\r\nabc\r\n0\r\n\r\n",
       {400}},
      {"huge-chunk-size",
       "POST /tokenize HTTP/1.1\r\nHost: x\r\n" + kAuth +
           "Transfer-Encoding: chunked\r\n\r\n"
           "ffffffffffffffffff\r\nabc\r\n",
       {400}},
      {"content-encoding-gzip",
       post("/tokenize", "\x1f\x8b\x08", "Content-Encoding: gzip\r\n"),
       {415}},
      {"no-length-post",
       "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n" + kAuth + "\r\n",
       {411}},
      {"body-over-limit",
       "POST /tokenize HTTP/1.1\r\nHost: x\r\n" + kAuth + "Content-Length: 9000000\r\n\r\n{",
       {413}},
      {"huge-header",
       req("GET", "/health", "", "X-Big: " + std::string(66000, 'a') + "\r\n"),
       {431}},
      {"long-url", req("GET", "/v1/models/" + std::string(9000, 'm')), {414}},
      {"longer-url-than-head", req("GET", "/" + std::string(66000, 'u')), {414}},
      {"http2-version", "GET /health HTTP/2.0\r\n\r\n", {505}},
      {"bad-version", "GET /health HTTP/9.9\r\n\r\n", {505}},
      {"no-target-slash", "GET health HTTP/1.1\r\n\r\n", {400}},
      {"tls-hello", std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11), {400}},
      {"no-colon-header", "GET /health HTTP/1.1\r\nNoColon\r\n\r\n", {400}},
      {"truncated-head", "GET /health HTTP/1.1\r\nHost: x\r\n", {400}},
      {"truncated-body",
       "POST /tokenize HTTP/1.1\r\n" + kAuth + "Content-Length: 50\r\n\r\n{",
       {400}},
      {"deep-json", post(chat_path, deep), {400}},
      {"deep-json-in-string", post(chat_path, "{\"messages\":\"" + deep + "\"}"), {400}},
      // JSON text inside a string, parsed again: the body's nesting bound holds there too.
      {"deep-tool-arguments", post(chat_path, chat_tool_history(nested_arguments(25000))), {400}},
      {"deep-tool-arguments-past-bound",
       post(chat_path, chat_tool_history(nested_arguments(64))),
       {400}},
      {"deep-responses-arguments",
       post("/v1/responses", responses_tool_history(nested_arguments(25000))),
       {400}},
      {"deep-tool-use-input",
       post("/v1/messages",
            R"({"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[)"
            R"({"type":"tool_use","id":"t1","name":"f","input":{"a":)" +
                std::string(25000, '[') + std::string(25000, ']') + "}}]}]}"),
       {400}},
      {"huge-token-array", post(cmpl, "{\"prompt\":" + ints(kFuzzCtx + 1) + "}"), {400}},
      {"huge-message-array",
       post(chat_path,
            [] {
              std::string m = "{\"messages\":[";
              for (int i = 0; i <= kFuzzCtx; ++i) m += std::string(i ? "," : "") + "{}";
              return m + "]}";
            }()),
       {400}},
      {"prompt-too-long",
       post(cmpl, "{\"prompt\":\"" + std::string(kFuzzCtx + 1, 'p') + "\"}"),
       {400}},
      {"prompt-fills-ctx",
       post(cmpl, "{\"prompt\":\"" + std::string(kFuzzCtx - 1, 'p') + "\",\"max_tokens\":5}"),
       {400}},
      {"token-out-of-vocab", post(cmpl, R"({"prompt":[1,256]})"), {400}},
      {"detokenize-negative", post("/detokenize", R"({"tokens":[-1]})"), {400}},
      {"not-json", post(chat_path, "{nope"), {400}},
      {"not-object", post(chat_path, "[1,2]"), {400}},
      {"empty-messages", post(chat_path, R"({"messages":[]})"), {400}},
      {"n-too-many", post(chat_path, chat(R"(,"n":65)")), {400}},
      {"responses-previous-id",
       post("/v1/responses", R"({"input":"x","previous_response_id":"r"})"),
       {400}},
      {"responses-unknown-item", post("/v1/responses", R"({"input":[{"type":"nope"}]})"), {400}},
      {"messages-no-max-tokens",
       post("/v1/messages", R"({"model":"m","messages":[{"role":"user","content":"x"}]})"),
       {400}},
      {"messages-bad-block",
       post("/v1/messages",
            R"({"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":7}]}]})"),
       {400}},
      {"wrong-model", post(chat_path, R"({"model":"gpt-4","messages":[{"role":"user"}]})"), {400}},
      {"max-tokens-over", post(cmpl, R"({"prompt":"x","max_tokens":99999999})"), {400}},
      {"tools", post(chat_path, chat(R"(,"tools":[{"type":"function"}])")), {400}},
      {"stop-five", post(cmpl, R"({"prompt":"x","stop":["a","b","c","d","e"]})"), {400}},
      {"temperature-nan", post(cmpl, R"({"prompt":"x","temperature":1e999})"), {400}},
      {"refused-then-smuggled",
       "POST /tokenize HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n" +
           req("GET", "/v1/models"),
       {400}},
      {"error-then-pipelined", req("GET", "/nope") + req("GET", "/health"), {404}},
  };
}

inline std::vector<HttpSeed> http_seeds() {
  auto all = valid_seeds();
  for (auto& s : hostile_seeds()) all.push_back(std::move(s));
  return all;
}

}  // namespace baton::server::fuzzing
