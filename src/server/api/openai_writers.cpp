#include "server/api/openai_writers.h"

#include "server/http/sse.h"

namespace baton::server {

using nlohmann::json;

namespace {

// What chat and text completions end with alike: the usage chunk when asked for, and [DONE].
class OpenAiWriter : public AnswerWriter {
 public:
  OpenAiWriter(OpenAiAnswer a, bool chat) : a_(std::move(a)), chat_(chat) {}

  std::string stream_end(const std::vector<ChoiceResult>&, const Usage& total) override {
    std::string out;
    if (a_.include_usage) out += sse_data(usage_chunk_json(a_.meta, chat_, total));
    return out + sse_done();
  }

  std::string stream_error(const ApiError& e) override {
    return sse_data(error_json(e)) + sse_done();
  }

 protected:
  OpenAiAnswer a_;
  bool chat_;
};

class ChatWriter : public OpenAiWriter {
 public:
  explicit ChatWriter(OpenAiAnswer a) : OpenAiWriter(std::move(a), true) {}

  std::string stream_start() override {
    std::string out;
    for (size_t i = 0; i < a_.n_choices; ++i) {
      out += sse_data(
          chat_chunk_json(a_.meta, {{"role", "assistant"}, {"content", ""}}, "", nullptr, i));
    }
    return out;
  }

  // One chunk per kind of delta; logprobs ride on the first (or on an empty content chunk
  // while the parser holds the text back).
  std::string stream_delta(size_t index, const toolcall::OutputDelta& od,
                           const std::vector<TokenLogprob>& logprobs) override {
    std::string out;
    json lp = logprobs.empty() ? json() : chat_logprobs_json(logprobs);
    auto emit = [&](json delta) {
      out += sse_data(chat_chunk_json(a_.meta, delta, "", lp, index));
      lp = nullptr;
    };
    if (!od.reasoning.empty()) emit({{"reasoning_content", od.reasoning}});
    if (!od.content.empty()) emit({{"content", od.content}});
    for (const auto& call : od.calls) emit({{"tool_calls", json::array({tool_call_delta(call)})}});
    if (!lp.is_null()) emit({{"content", ""}});
    return out;
  }

  std::string stream_choice_end(const ChoiceResult& r) override {
    return sse_data(chat_chunk_json(a_.meta, json::object(),
                                    chat_finish_reason(r.engine_reason, r.msg), nullptr, r.index));
  }

  json answer_json(const std::vector<ChoiceResult>& all, const Usage& total) override {
    json choices = json::array();
    for (const auto& r : all) {
      choices.push_back(chat_choice_json(
          r.index, chat_message_json(r.msg), chat_finish_reason(r.engine_reason, r.msg),
          r.logprobs.empty() ? json() : chat_logprobs_json(r.logprobs)));
    }
    return chat_response_json(a_.meta, std::move(choices), total);
  }
};

class TextWriter : public OpenAiWriter {
 public:
  explicit TextWriter(OpenAiAnswer a)
      : OpenAiWriter(std::move(a), false), offsets_(a_.n_choices, 0) {}

  std::string stream_start() override { return {}; }

  std::string stream_delta(size_t index, const toolcall::OutputDelta& od,
                           const std::vector<TokenLogprob>& logprobs) override {
    if (od.content.empty() && logprobs.empty()) return {};
    json lp = logprobs.empty() ? json() : completion_logprobs_json(logprobs, offsets_[index]);
    offsets_[index] += od.content.size();
    return sse_data(text_chunk_json(a_.meta, od.content, "", lp, index));
  }

  std::string stream_choice_end(const ChoiceResult& r) override {
    return sse_data(text_chunk_json(a_.meta, "", r.engine_reason, nullptr, r.index));
  }

  json answer_json(const std::vector<ChoiceResult>& all, const Usage& total) override {
    json choices = json::array();
    for (const auto& r : all) {
      choices.push_back(
          text_choice_json(r.index, r.text, r.engine_reason,
                           r.logprobs.empty() ? json() : completion_logprobs_json(r.logprobs, 0)));
    }
    return text_response_json(a_.meta, std::move(choices), total);
  }

 private:
  std::vector<size_t> offsets_;
};

}  // namespace

std::unique_ptr<AnswerWriter> make_chat_writer(OpenAiAnswer a) {
  return std::make_unique<ChatWriter>(std::move(a));
}

std::unique_ptr<AnswerWriter> make_text_writer(OpenAiAnswer a) {
  return std::make_unique<TextWriter>(std::move(a));
}

}  // namespace baton::server
