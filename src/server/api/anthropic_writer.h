#pragma once
// The AnswerWriter of Anthropic's Messages API (one answer: only choice 0).
//  - Streamed: `event: <type>` SSE events: message_start (the message with empty content and
//    stop_reason null), then per content block content_block_start, content_block_delta
//    (text_delta, thinking_delta then signature_delta, input_json_delta) and
//    content_block_stop, with block indices counting up from 0; then message_delta (stop_reason,
//    stop_sequence, usage) and message_stop. `event: ping` while nothing else is sent; an
//    `event: error` when the request fails after the stream began.
//  - Not streamed: the message object, its content blocks thinking, text and tool_use (with
//    `input` parsed from the call's arguments).
//
// Usage follows Anthropic's split: input_tokens counts the prompt tokens that were computed,
// cache_read_input_tokens those found in the prefix cache (their sum is the prompt).
#include <nlohmann/json.hpp>
#include <string>

#include "server/answer/answer_writer.h"

namespace baton::server {

struct AnthropicAnswer {
  std::string id;     // msg_…
  std::string model;  // the model the client named
};

// stop_reason of a finished answer: max_tokens, tool_use, stop_sequence or end_turn.
std::string anthropic_stop_reason(const ChoiceResult& r);

class AnthropicWriter : public AnswerWriter {
 public:
  explicit AnthropicWriter(AnthropicAnswer a) : a_(std::move(a)) {}

  void set_prompt_tokens(int32_t tokens) override { prompt_tokens_ = tokens; }
  std::string stream_start() override;
  std::string stream_delta(size_t index, const toolcall::OutputDelta& d,
                           const std::vector<TokenLogprob>& logprobs) override;
  std::string stream_end(const std::vector<ChoiceResult>& all, const Usage& total) override;
  std::string stream_error(const ApiError& e) override;
  std::string stream_keepalive() override;

  nlohmann::json answer_json(const std::vector<ChoiceResult>& all, const Usage& total) override;
  nlohmann::json error_body_json(const ApiError& e) override;

 private:
  enum class Block { None, Thinking, Text, ToolUse };
  std::string open_block(Block kind, nlohmann::json content_block);
  std::string close_block();
  std::string block_delta(nlohmann::json delta) const;

  AnthropicAnswer a_;
  int32_t prompt_tokens_ = 0;
  Block open_ = Block::None;
  size_t next_index_ = 0;   // the index the next content block gets
  size_t open_call_ = 0;    // the parser's call index of the open tool_use block
  std::string held_space_;  // whitespace-only content not yet known to begin a text block
};

}  // namespace baton::server
