#include "server/api/anthropic_writer.h"

#include <algorithm>
#include <string_view>

#include "server/http/sse.h"
#include "util/json_depth.h"

namespace baton::server {

using nlohmann::json;

namespace {

// Anthropic signs thinking blocks and checks the signature when a client sends a block back.
// Nothing here checks it (returned thinking is read as plain reasoning), but clients keep and
// return the field, and some take a thinking block without one for an unfinished block.
constexpr const char* kThinkingSignature = "baton-unsigned";

bool all_space(std::string_view s) {
  return s.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

json anthropic_usage(const Usage& u) {
  const int32_t cached = std::clamp(u.cached_tokens, 0, u.prompt_tokens);
  return {{"input_tokens", u.prompt_tokens - cached},
          {"cache_creation_input_tokens", 0},
          {"cache_read_input_tokens", cached},
          {"output_tokens", u.completion_tokens}};
}

// A finished call's arguments are a JSON object; anything else (a call cut short by max_tokens
// while streaming) has no object to show, so its input is empty.
json tool_input(const std::string& arguments) {
  json v = util::parse_json_bounded<json>(arguments);
  return v.is_object() ? v : json::object();
}

json stop_sequence_of(const std::vector<ChoiceResult>& all) {
  if (all.empty() || anthropic_stop_reason(all.front()) != "stop_sequence") return nullptr;
  return all.front().stop_sequence;
}

}  // namespace

std::string anthropic_stop_reason(const ChoiceResult& r) {
  if (r.engine_reason == "length") return "max_tokens";
  if (!r.msg.calls.empty()) return "tool_use";
  if (!r.stop_sequence.empty()) return "stop_sequence";
  return "end_turn";
}

std::string AnthropicWriter::stream_start() {
  json message = {{"id", a_.id},
                  {"type", "message"},
                  {"role", "assistant"},
                  {"model", a_.model},
                  {"content", json::array()},
                  {"stop_reason", nullptr},
                  {"stop_sequence", nullptr},
                  // Which prompt tokens the cache holds is known only at the end (message_delta).
                  {"usage", anthropic_usage(Usage{prompt_tokens_, 0, 0})}};
  return sse_event("message_start", {{"type", "message_start"}, {"message", std::move(message)}});
}

std::string AnthropicWriter::stream_delta(size_t, const toolcall::OutputDelta& d,
                                          const std::vector<TokenLogprob>&) {
  std::string out;
  if (!d.reasoning.empty()) {
    if (open_ != Block::Thinking) {
      out +=
          open_block(Block::Thinking, {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}});
    }
    out += block_delta({{"type", "thinking_delta"}, {"thinking", d.reasoning}});
  }
  if (!d.content.empty()) {
    // Models put blank lines between their thinking, text and calls; a text block holding only
    // those would show up in clients as an empty paragraph.
    std::string text = held_space_ + d.content;
    held_space_.clear();
    if (open_ != Block::Text && all_space(text)) {
      held_space_ = std::move(text);
    } else {
      if (open_ != Block::Text) out += open_block(Block::Text, {{"type", "text"}, {"text", ""}});
      out += block_delta({{"type", "text_delta"}, {"text", std::move(text)}});
    }
  }
  for (const auto& call : d.calls) {
    if (open_ != Block::ToolUse || call.index != open_call_) {
      out += open_block(
          Block::ToolUse,
          {{"type", "tool_use"}, {"id", call.id}, {"name", call.name}, {"input", json::object()}});
      open_call_ = call.index;
    }
    if (!call.arguments.empty()) {
      out += block_delta({{"type", "input_json_delta"}, {"partial_json", call.arguments}});
    }
  }
  return out;
}

std::string AnthropicWriter::stream_end(const std::vector<ChoiceResult>& all, const Usage& total) {
  std::string out = close_block();
  const std::string reason = all.empty() ? "end_turn" : anthropic_stop_reason(all.front());
  out += sse_event("message_delta",
                   {{"type", "message_delta"},
                    {"delta", {{"stop_reason", reason}, {"stop_sequence", stop_sequence_of(all)}}},
                    {"usage", anthropic_usage(total)}});
  out += sse_event("message_stop", {{"type", "message_stop"}});
  return out;
}

std::string AnthropicWriter::stream_error(const ApiError& e) {
  return sse_event("error", anthropic_error_json(e));
}

std::string AnthropicWriter::stream_keepalive() {
  return sse_event("ping", {{"type", "ping"}});
}

json AnthropicWriter::answer_json(const std::vector<ChoiceResult>& all, const Usage& total) {
  json content = json::array();
  std::string reason = "end_turn";
  if (!all.empty()) {
    const ChoiceResult& r = all.front();
    if (!r.msg.reasoning.empty()) {
      content.push_back(
          {{"type", "thinking"}, {"thinking", r.msg.reasoning}, {"signature", kThinkingSignature}});
    }
    if (!all_space(r.msg.content)) content.push_back({{"type", "text"}, {"text", r.msg.content}});
    for (const auto& call : r.msg.calls) {
      content.push_back({{"type", "tool_use"},
                         {"id", call.id},
                         {"name", call.name},
                         {"input", tool_input(call.arguments)}});
    }
    reason = anthropic_stop_reason(r);
  }
  return {{"id", a_.id},
          {"type", "message"},
          {"role", "assistant"},
          {"model", a_.model},
          {"content", std::move(content)},
          {"stop_reason", reason},
          {"stop_sequence", stop_sequence_of(all)},
          {"usage", anthropic_usage(total)}};
}

json AnthropicWriter::error_body_json(const ApiError& e) {
  return anthropic_error_json(e);
}

std::string AnthropicWriter::open_block(Block kind, json content_block) {
  std::string out = close_block();
  held_space_.clear();
  open_ = kind;
  out += sse_event("content_block_start", {{"type", "content_block_start"},
                                           {"index", next_index_},
                                           {"content_block", std::move(content_block)}});
  ++next_index_;
  return out;
}

std::string AnthropicWriter::close_block() {
  if (open_ == Block::None) return {};
  std::string out;
  if (open_ == Block::Thinking) {
    out += block_delta({{"type", "signature_delta"}, {"signature", kThinkingSignature}});
  }
  out +=
      sse_event("content_block_stop", {{"type", "content_block_stop"}, {"index", next_index_ - 1}});
  open_ = Block::None;
  return out;
}

std::string AnthropicWriter::block_delta(json delta) const {
  return sse_event(
      "content_block_delta",
      {{"type", "content_block_delta"}, {"index", next_index_ - 1}, {"delta", std::move(delta)}});
}

}  // namespace baton::server
