#include "server/api/openai_request.h"

#include <fmt/format.h>

#include "server/answer/stop_set.h"
#include "server/api/constraint_fields.h"
#include "server/api/json_fields.h"
#include "server/api/sampling_fields.h"
#include "server/errors.h"
#include "server/http/request_head.h"
#include "util/json_depth.h"

namespace baton::server {

using json = RequestJson;  // the request document

namespace {

constexpr size_t kMaxStops = 4;

void parse_stop(const json& obj, CommonRequest& out) {
  auto it = obj.find("stop");
  if (it == obj.end() || it->is_null()) return;
  if (it->is_string()) {
    out.stop.push_back(it->get<std::string>());
  } else if (it->is_array()) {
    if (it->size() > kMaxStops) {
      throw bad_request(
          fmt::format("'stop' may hold at most {} strings, got {}", kMaxStops, it->size()), "stop");
    }
    for (const auto& s : *it) {
      if (!s.is_string()) throw bad_request("'stop' entries must be strings", "stop");
      out.stop.push_back(s.get<std::string>());
    }
  } else {
    throw bad_request(
        "'stop' must be a string or an array of strings, got " + fields::type_name(*it), "stop");
  }
  for (const auto& s : out.stop) {
    if (s.empty()) throw bad_request("'stop' strings must not be empty", "stop");
  }
  check_stop_bytes(out.stop, "stop");
}

void parse_sampling(const json& obj, engine::SamplingParams& sp) {
  parse_basic_sampling(obj, kOpenAiSampling, sp);
  if (auto v = fields::number(obj, "min_p", 0, 1)) sp.min_p = static_cast<float>(*v);
  if (auto v = fields::number(obj, "presence_penalty", -2, 2)) {
    sp.presence_penalty = static_cast<float>(*v);
  }
  if (auto v = fields::number(obj, "frequency_penalty", -2, 2)) {
    sp.frequency_penalty = static_cast<float>(*v);
  }
  if (auto v = fields::number(obj, "repetition_penalty", 0.01, 10)) {
    sp.repetition_penalty = static_cast<float>(*v);
  }
  if (auto v = fields::integer(obj, "seed", INT64_MIN, INT64_MAX)) {
    sp.seed = static_cast<uint64_t>(*v);
  }
}

void parse_common(const json& obj, const RequestLimits& limits, CommonRequest& out) {
  if (auto v = fields::string(obj, "model")) out.model = *v;
  if (auto v = fields::boolean(obj, "stream")) out.stream = *v;
  if (auto it = obj.find("stream_options"); it != obj.end() && !it->is_null()) {
    if (!it->is_object()) throw bad_request("'stream_options' must be an object", "stream_options");
    if (!out.stream) {
      throw bad_request("'stream_options' is only allowed when 'stream' is true", "stream_options");
    }
    if (auto v = fields::boolean(*it, "include_usage")) out.include_usage = *v;
  }
  for (const char* key : {"max_tokens", "max_completion_tokens"}) {
    if (auto v = fields::integer(obj, key, 1, INT32_MAX)) {
      if (*v > limits.max_tokens_limit) {
        throw bad_request(fmt::format("'{}' is {}, over this server's limit of {} "
                                      "(--max-tokens-limit)",
                                      key, *v, limits.max_tokens_limit),
                          key);
      }
      out.max_tokens = static_cast<int32_t>(*v);
    }
  }
  if (auto v = fields::integer(obj, "n", 1, kMaxChoicesPerRequest)) {
    out.n = static_cast<int32_t>(*v);
  }
  parse_sampling(obj, out.sampling);
  parse_extra_sampling(obj, limits.n_vocab, out.sampling);
  parse_stop(obj, out);
  if (auto v = fields::boolean(obj, "ignore_eos")) out.ignore_eos = *v;
  if (auto v = fields::string(obj, "user")) out.user = *v;
  if (auto v = fields::string(obj, "prompt_cache_key")) out.session = clean_session_key(*v);
  out.constraint = parse_constraint_fields(obj);
}

}  // namespace

void check_prompt_bytes(size_t bytes, const RequestLimits& limits, const char* param) {
  if (limits.max_prompt_bytes == 0 || bytes <= limits.max_prompt_bytes) return;
  throw ApiError(400,
                 fmt::format("the prompt text is {} bytes, more than the context (--ctx) of {} "
                             "tokens can hold",
                             bytes, limits.ctx),
                 param, "invalid_request_error", "context_length_exceeded");
}

ChatRequest parse_chat_request(const std::string& body, const RequestLimits& limits) {
  const json obj = parse_json_object(body, limits.max_array_items, limits.ctx);
  ChatRequest out;
  parse_common(obj, limits, out.common);
  bool logprobs = fields::boolean(obj, "logprobs").value_or(false);
  auto top = fields::integer(obj, "top_logprobs", 0, 20);
  if (top && !logprobs) {
    throw bad_request("'top_logprobs' needs 'logprobs': true", "top_logprobs");
  }
  out.common.sampling.logprobs = logprobs;
  out.common.sampling.top_logprobs = static_cast<int32_t>(top.value_or(0));
  out.chat = parse_chat_fields(obj);
  refuse_unserved_chat_fields(obj);
  apply_reasoning_effort(obj, out.chat.template_kwargs);
  check_prompt_bytes(out.chat.text_bytes, limits, "messages");
  return out;
}

static CompletionPrompt token_prompt(const json& p, const RequestLimits& limits) {
  if (p.empty()) throw bad_request("'prompt' token arrays must not be empty", "prompt");
  CompletionPrompt out;
  out.is_tokens = true;
  for (const auto& t : p) {
    if (!t.is_number_integer()) throw bad_request("'prompt' token ids must be integers", "prompt");
    int64_t id = t.get<int64_t>();
    if (id < 0 || (limits.n_vocab > 0 && id >= limits.n_vocab)) {
      throw bad_request(
          fmt::format("'prompt' token id {} is outside the vocabulary [0, {})", id, limits.n_vocab),
          "prompt");
    }
    out.tokens.push_back(static_cast<int32_t>(id));
  }
  return out;
}

static CompletionPrompt text_prompt(const json& p, const RequestLimits& limits) {
  check_prompt_bytes(p.get_ref<const std::string&>().size(), limits, "prompt");
  return {false, p.get<std::string>(), {}};
}

// A string, an array of token ids, or a list of either (one group of choices per prompt).
static void parse_prompt(const json& obj, const RequestLimits& limits, CompletionRequest& out) {
  auto it = obj.find("prompt");
  if (it == obj.end() || it->is_null()) throw bad_request("'prompt' is required", "prompt");
  const json& p = *it;
  if (p.is_string()) {
    out.prompts.push_back(text_prompt(p, limits));
    return;
  }
  const auto wrong = [&] {
    return bad_request(
        "'prompt' must be a string, an array of token ids, or an array of those, "
        "got " +
            fields::type_name(p),
        "prompt");
  };
  if (!p.is_array()) throw wrong();
  if (p.empty()) throw bad_request("'prompt' must not be an empty array", "prompt");
  if (p[0].is_number()) {
    out.prompts.push_back(token_prompt(p, limits));
    return;
  }
  if (p.size() > static_cast<size_t>(kMaxChoicesPerRequest)) {
    throw bad_request(fmt::format("'prompt' lists {} prompts; at most {} fit one request", p.size(),
                                  kMaxChoicesPerRequest),
                      "prompt");
  }
  for (const auto& one : p) {
    if (one.is_string()) {
      out.prompts.push_back(text_prompt(one, limits));
    } else if (one.is_array()) {
      out.prompts.push_back(token_prompt(one, limits));
    } else {
      throw bad_request("'prompt' list entries must be strings or arrays of token ids, got " +
                            fields::type_name(one),
                        "prompt");
    }
  }
}

CompletionRequest parse_completion_request(const std::string& body, const RequestLimits& limits) {
  const json obj = parse_json_object(body, limits.max_array_items, limits.ctx);
  CompletionRequest out;
  parse_common(obj, limits, out.common);
  parse_prompt(obj, limits, out);
  out.echo = fields::boolean(obj, "echo").value_or(false);
  if (fields::string(obj, "suffix")) throw bad_request("'suffix' is not supported", "suffix");
  if (auto v = fields::integer(obj, "logprobs", 0, 20)) {
    if (out.echo) {
      throw bad_request(
          "'echo' with 'logprobs' is not supported (the prompt's tokens are not "
          "scored); drop one of them",
          "logprobs");
    }
    out.common.sampling.logprobs = true;
    out.common.sampling.top_logprobs = static_cast<int32_t>(*v);
  }
  if (auto v = fields::integer(obj, "best_of", 1, kMaxChoicesPerRequest)) {
    if (*v < out.common.n) {
      throw bad_request(fmt::format("'best_of' ({}) must be at least 'n' ({})", *v, out.common.n),
                        "best_of");
    }
    if (*v > out.common.n && out.common.stream) {
      throw bad_request(
          "'best_of' larger than 'n' cannot be streamed (the best are known only "
          "at the end); set stream false or best_of = n",
          "best_of");
    }
    out.best_of = static_cast<int32_t>(*v);
  }
  return out;
}

}  // namespace baton::server
