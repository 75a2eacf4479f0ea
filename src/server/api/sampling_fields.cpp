#include "server/api/sampling_fields.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "server/api/json_fields.h"
#include "server/errors.h"

namespace baton::server {

using json = RequestJson;  // the request document

namespace {

constexpr double kMaxBias = 100;

// A token id written as OpenAI writes it: decimal digits only.
bool parse_id(const std::string& key, int64_t& id) {
  if (key.empty() || key.size() > 10) return false;
  id = 0;
  for (char ch : key) {
    if (ch < '0' || ch > '9') return false;
    id = id * 10 + (ch - '0');
  }
  return true;
}

// What a field must be for it to ask for nothing (the sampler it names off).
enum class Neutral { One, Zero, NotPositive, MinusOne, False, Empty };

struct Unserved {
  const char* key;
  Neutral neutral;
  const char* instead;  // what to send instead, or what the neutral value is
};

// Other servers' (llama.cpp's, vLLM's) fields that change which tokens come out. This server
// has none of these samplers; a client that sets one would otherwise get a different answer
// than it asked for without a word.
constexpr Unserved kUnservedSampling[] = {
    {"typical_p", Neutral::One, "leave it out or set it to 1"},
    {"tfs_z", Neutral::One, "leave it out or set it to 1"},
    {"mirostat", Neutral::Zero, "leave it out or set it to 0"},
    {"xtc_probability", Neutral::Zero, "leave it out or set it to 0"},
    {"dry_multiplier", Neutral::Zero, "leave it out or set it to 0"},
    {"dynatemp_range", Neutral::Zero, "leave it out or set it to 0"},
    {"top_n_sigma", Neutral::NotPositive, "leave it out or set it to -1"},
    {"min_tokens", Neutral::Zero, "leave it out or set it to 0"},
    {"n_probs", Neutral::Zero, "use 'logprobs' / 'top_logprobs'"},
    {"n_predict", Neutral::MinusOne, "use 'max_tokens'"},
    {"use_beam_search", Neutral::False, "leave it out or set it to false"},
    {"include_stop_str_in_output", Neutral::False, "leave it out or set it to false"},
    {"stop_token_ids", Neutral::Empty, "use 'stop' with the tokens' text"},
    {"bad_words", Neutral::Empty, "use 'logit_bias' with -100 on their tokens"},
    {"allowed_token_ids", Neutral::Empty, "use 'logit_bias' or 'grammar'"},
};

bool is_neutral(const json& v, Neutral n) {
  if (v.is_null()) return true;
  switch (n) {
    case Neutral::One:
      return v.is_number() && v.get<double>() == 1.0;
    case Neutral::Zero:
      return v.is_number() && v.get<double>() == 0.0;
    case Neutral::NotPositive:
      return v.is_number() && v.get<double>() <= 0.0;
    case Neutral::MinusOne:
      return v.is_number() && v.get<double>() == -1.0;
    case Neutral::False:
      return v.is_boolean() && !v.get<bool>();
    case Neutral::Empty:
      return v.is_array() && v.empty();
  }
  return false;
}

void refuse_unserved_sampling(const json& obj) {
  for (const auto& u : kUnservedSampling) {
    auto it = obj.find(u.key);
    if (it == obj.end() || is_neutral(*it, u.neutral)) continue;
    throw bad_request(fmt::format("'{}' is not supported by this server (its answer would not "
                                  "follow it); {}",
                                  u.key, u.instead),
                      u.key);
  }
}

}  // namespace

void parse_basic_sampling(const json& obj, const SamplingFields& api, engine::SamplingParams& sp) {
  if (auto v = fields::number(obj, "temperature", 0, api.temperature_max)) {
    sp.temperature = static_cast<float>(*v);
  }
  if (auto v = fields::number(obj, "top_p", 0, 1)) sp.top_p = static_cast<float>(*v);
  if (!api.top_k) return;
  if (auto v = fields::integer(obj, "top_k", 0, 1 << 20)) sp.top_k = static_cast<int32_t>(*v);
}

std::shared_ptr<const engine::LogitBias> parse_logit_bias(const json& obj, int32_t n_vocab) {
  auto it = obj.find("logit_bias");
  if (it == obj.end() || it->is_null()) return nullptr;
  if (!it->is_object()) {
    throw bad_request(
        "'logit_bias' must be an object mapping token ids (as strings) to numbers "
        "from -100 to 100, got " +
            fields::type_name(*it),
        "logit_bias");
  }
  if (it->empty()) return nullptr;
  auto bias = std::make_shared<engine::LogitBias>();
  bias->reserve(it->size());
  for (const auto& [key, value] : it->items()) {
    int64_t id = 0;
    if (!parse_id(key, id)) {
      throw bad_request(fmt::format("'logit_bias' keys must be token ids written in decimal, got "
                                    "'{}'",
                                    key.substr(0, 64)),
                        "logit_bias");
    }
    if (n_vocab > 0 && id >= n_vocab) {
      throw bad_request(
          fmt::format("'logit_bias' names token {}, outside the vocabulary [0, {})", id, n_vocab),
          "logit_bias");
    }
    if (!value.is_number() || !std::isfinite(value.get<double>()) ||
        std::fabs(value.get<double>()) > kMaxBias) {
      throw bad_request(fmt::format("'logit_bias' values must be numbers from -100 to 100; token "
                                    "{} has {}",
                                    id, value.dump().substr(0, 64)),
                        "logit_bias");
    }
    bias->emplace_back(static_cast<int32_t>(id), static_cast<float>(value.get<double>()));
  }
  std::sort(bias->begin(), bias->end());
  // Distinct keys can still name one token twice ("7" and "07").
  for (size_t i = 1; i < bias->size(); ++i) {
    if ((*bias)[i].first == (*bias)[i - 1].first) {
      throw bad_request(fmt::format("'logit_bias' names token {} twice", (*bias)[i].first),
                        "logit_bias");
    }
  }
  return bias;
}

void parse_extra_sampling(const json& obj, int32_t n_vocab, engine::SamplingParams& sp) {
  sp.logit_bias = parse_logit_bias(obj, n_vocab);
  // llama.cpp's names for the repetition penalty and its window; -1: the whole sequence.
  if (auto v = fields::number(obj, "repeat_penalty", 0.01, 10)) {
    sp.repetition_penalty = static_cast<float>(*v);
  }
  if (auto v = fields::integer(obj, "repeat_last_n", -1, 1 << 20)) {
    sp.penalty_last_n = static_cast<int32_t>(*v);
  }
  refuse_unserved_sampling(obj);
}

void refuse_unserved_chat_fields(const json& obj) {
  const auto given = [&](const char* key) {
    auto it = obj.find(key);
    return it != obj.end() && !it->is_null() ? &*it : nullptr;
  };
  if (const json* f = given("functions"); f && !(f->is_array() && f->empty())) {
    throw bad_request(
        "'functions' (legacy function calling) is not supported; send the functions "
        "as 'tools' ({\"type\": \"function\", \"function\": {...}}) and choose with "
        "'tool_choice'",
        "functions");
  }
  if (const json* f = given("function_call");
      f && !(f->is_string() && (*f == "auto" || *f == "none"))) {
    throw bad_request(
        "'function_call' (legacy function calling) is not supported; use "
        "'tool_choice'",
        "function_call");
  }
  if (given("audio")) {
    throw bad_request("'audio' is not supported: this server answers in text only", "audio");
  }
  if (const json* m = given("modalities")) {
    bool text_only = m->is_array();
    for (const auto& x : *m) text_only = text_only && x == "text";
    if (!text_only) {
      throw bad_request("'modalities' may only be [\"text\"]: this server answers in text only",
                        "modalities");
    }
  }
  if (given("web_search_options")) {
    throw bad_request(
        "'web_search_options' is not supported: nothing here searches the web; run "
        "the search in the client and send its results as messages or tool results",
        "web_search_options");
  }
  if (const json* v = given("verbosity"); v && *v != "medium") {
    throw bad_request(
        "'verbosity' is not supported beyond \"medium\" (the model's own length); "
        "ask for a length in the messages instead",
        "verbosity");
  }
}

void apply_reasoning_effort(const json& obj, nlohmann::ordered_json& template_kwargs) {
  auto v = fields::string(obj, "reasoning_effort");
  if (!v) return;
  // gpt-oss style templates read the effort from this variable (as the Responses API passes
  // reasoning.effort); a template that has no such setting renders without it.
  if (!template_kwargs.contains("reasoning_effort")) template_kwargs["reasoning_effort"] = *v;
}

}  // namespace baton::server
