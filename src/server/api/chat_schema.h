#pragma once
// The chat-specific fields of a /v1/chat/completions body, read from the body's JSON with its
// key order kept (templates see key order: `tojson` of a tool's parameters, `items()`), and
// normalised to what Hugging Face chat templates expect:
//  - messages: role, content as a string (text parts joined; null → ""), assistant tool_calls
//    as {id, type, function: {name, arguments}} with arguments parsed from their JSON string
//    into an object (as transformers passes them), tool messages with tool_call_id / name,
//    assistant reasoning_content, and a message's `name`;
//  - tools: function tools as given, checked;
//  - tool_choice, parallel_tool_calls and chat_template_kwargs.
// Every rejection is an ApiError(400) naming the field.
#include <nlohmann/json.hpp>
#include <string>

namespace baton::server {

enum class ToolChoice { Auto, None, Required, Named };

struct ChatFields {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  nlohmann::ordered_json tools = nlohmann::ordered_json::array();  // empty: no tools
  ToolChoice tool_choice = ToolChoice::Auto;
  std::string tool_choice_name;  // ToolChoice::Named
  bool parallel_tool_calls = true;
  nlohmann::ordered_json template_kwargs = nlohmann::ordered_json::object();
  size_t text_bytes = 0;  // message contents, arguments and tool JSON: the prompt-size bound
};

ChatFields parse_chat_fields(const nlohmann::ordered_json& body);

}  // namespace baton::server
