// The chat and text completion objects (openai_objects.h).
#include "server/api/openai_objects.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <random>

namespace baton::server {

using nlohmann::json;

namespace {

json bytes_of(const std::string& s) {
  json b = json::array();
  for (unsigned char c : s) b.push_back(static_cast<int>(c));
  return b;
}

json finish_or_null(const std::string& reason) {
  return reason.empty() ? json(nullptr) : json(reason);
}

json logprobs_or_null(const json& lp) {
  return lp.is_null() ? json(nullptr) : lp;
}

}  // namespace

std::string make_response_id(const std::string& prefix) {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t salt = std::random_device{}();
  uint64_t n = counter.fetch_add(1) + 1;
  return fmt::format("{}{:08x}{:08x}", prefix, static_cast<uint32_t>(salt), n);
}

json usage_json(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
}

json chat_logprobs_json(const std::vector<TokenLogprob>& lps) {
  json content = json::array();
  for (const auto& lp : lps) {
    json top = json::array();
    for (const auto& [tok, p] : lp.top) {
      top.push_back({{"token", tok}, {"logprob", p}, {"bytes", bytes_of(tok)}});
    }
    content.push_back({{"token", lp.token},
                       {"logprob", lp.logprob},
                       {"bytes", bytes_of(lp.token)},
                       {"top_logprobs", top}});
  }
  return {{"content", content}};
}

json completion_logprobs_json(const std::vector<TokenLogprob>& lps, size_t text_offset) {
  json tokens = json::array(), token_lps = json::array(), tops = json::array(),
       offsets = json::array();
  for (const auto& lp : lps) {
    tokens.push_back(lp.token);
    token_lps.push_back(lp.logprob);
    json top = json::object();
    // Keyed by text: two tokens can print the same (byte tokens that decode to U+FFFD); the
    // list is most likely first, and the most likely keeps the key.
    for (const auto& [tok, p] : lp.top) {
      if (!top.contains(tok)) top[tok] = p;
    }
    tops.push_back(top);
    offsets.push_back(text_offset);
    text_offset += lp.token.size();
  }
  return {{"tokens", tokens},
          {"token_logprobs", token_lps},
          {"top_logprobs", tops},
          {"text_offset", offsets}};
}

json chat_choice_json(size_t index, const json& message, const std::string& finish_reason,
                      const json& logprobs) {
  return {{"index", index},
          {"message", message},
          {"logprobs", logprobs_or_null(logprobs)},
          {"finish_reason", finish_or_null(finish_reason)}};
}

json chat_response_json(const ResponseMeta& m, json choices, const Usage& u) {
  return {{"id", m.id},
          {"object", "chat.completion"},
          {"created", m.created},
          {"model", m.model},
          {"choices", std::move(choices)},
          {"usage", usage_json(u)},
          {"system_fingerprint", nullptr}};
}

json chat_chunk_json(const ResponseMeta& m, const json& delta, const std::string& finish_reason,
                     const json& logprobs, size_t index) {
  json choice = {{"index", index},
                 {"delta", delta},
                 {"logprobs", logprobs_or_null(logprobs)},
                 {"finish_reason", finish_or_null(finish_reason)}};
  return {{"id", m.id},       {"object", "chat.completion.chunk"}, {"created", m.created},
          {"model", m.model}, {"choices", json::array({choice})},  {"system_fingerprint", nullptr}};
}

json chat_message_json(const toolcall::ParsedOutput& msg) {
  json m = {{"role", "assistant"}};
  m["content"] = msg.content.empty() && !msg.calls.empty() ? json(nullptr) : json(msg.content);
  if (!msg.reasoning.empty()) m["reasoning_content"] = msg.reasoning;
  if (!msg.calls.empty()) {
    json calls = json::array();
    for (const auto& c : msg.calls) {
      calls.push_back({{"id", c.id},
                       {"type", "function"},
                       {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    }
    m["tool_calls"] = std::move(calls);
  }
  return m;
}

json tool_call_delta(const toolcall::ToolCallDelta& d) {
  if (d.name.empty()) return {{"index", d.index}, {"function", {{"arguments", d.arguments}}}};
  return {{"index", d.index},
          {"id", d.id},
          {"type", "function"},
          {"function", {{"name", d.name}, {"arguments", d.arguments}}}};
}

std::string chat_finish_reason(const std::string& engine_reason,
                               const toolcall::ParsedOutput& msg) {
  return engine_reason == "stop" && !msg.calls.empty() ? "tool_calls" : engine_reason;
}

json text_choice_json(size_t index, const std::string& text, const std::string& finish_reason,
                      const json& logprobs) {
  return {{"index", index},
          {"text", text},
          {"logprobs", logprobs_or_null(logprobs)},
          {"finish_reason", finish_or_null(finish_reason)}};
}

json text_response_json(const ResponseMeta& m, json choices, const Usage& u) {
  return {{"id", m.id},       {"object", "text_completion"},   {"created", m.created},
          {"model", m.model}, {"choices", std::move(choices)}, {"usage", usage_json(u)}};
}

json text_chunk_json(const ResponseMeta& m, const std::string& text,
                     const std::string& finish_reason, const json& logprobs, size_t index) {
  return {{"id", m.id},
          {"object", "text_completion"},
          {"created", m.created},
          {"model", m.model},
          {"choices", json::array({text_choice_json(index, text, finish_reason, logprobs)})}};
}

json usage_chunk_json(const ResponseMeta& m, bool chat, const Usage& u) {
  return {{"id", m.id},
          {"object", chat ? "chat.completion.chunk" : "text_completion"},
          {"created", m.created},
          {"model", m.model},
          {"choices", json::array()},
          {"usage", usage_json(u)}};
}

}  // namespace baton::server
