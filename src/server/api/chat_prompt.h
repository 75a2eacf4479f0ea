#pragma once
// How a chat request becomes prompt tokens, and how its answer will be read back.
//
// ChatSetup is fixed when the model is attached: the template (--chat-template, else the
// model's own, else a default from default_templates.h), the tool-call format (--tool-call-format,
// else detected from the template), --chat-template-kwargs, and the control-token texts that
// users' text must never turn into. build_chat_prompt() renders one request through it.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "chat/chat_template.h"
#include "chat/protected_strings.h"
#include "server/api/chat_schema.h"
#include "server/http_server.h"
#include "tokenizer/text_codec.h"
#include "toolcall/output_parser.h"

namespace baton::server {

struct ChatSetup {
  std::optional<chat::ChatTemplate> chat_template;
  std::optional<chat::ChatTemplate> tool_use_template;  // the model's tool_use variant, if any
  std::string origin;       // where the template came from, for the startup log
  std::string tool_format;  // toolcall::make_format name
  // The format writes every answer in channels (OutputFormat::answers_in_channels): parse its
  // output even in requests without tools.
  bool answers_in_channels = false;
  nlohmann::ordered_json kwargs = nlohmann::ordered_json::object();
  std::optional<chat::ProtectedStrings> protect;
  std::string bos_text, eos_text;
  bool add_bos = false;  // prepend BOS unless the rendered prompt starts with its text
  bool reasoning = true;
  // The template reads the `developer` role (gpt-oss, the defaults); for the others a developer
  // message is renamed `system`, since many templates drop a role they do not know.
  bool knows_developer = false;
};

// Throws std::runtime_error with the fix when --tool-call-format is unknown or
// --chat-template-kwargs is not a JSON object; needs no model, so `serve` checks before loading.
void check_chat_options(const ChatOptions& opts);

// Throws std::runtime_error with the fix: a template that does not compile, or what
// check_chat_options refuses.
std::shared_ptr<const ChatSetup> make_chat_setup(const ChatOptions& opts,
                                                 const ModelTemplates& model,
                                                 const tokenizer::TextCodec& codec);

struct ChatPrompt {
  std::vector<int32_t> tokens;
  std::string text;  // as rendered (for logs and tests)
  // How to read the answer: null format when the request has no tools (or tool_choice none).
  std::unique_ptr<toolcall::OutputFormat> format;
  toolcall::FormatContext format_context;  // what `format` was made from (another choice's copy)
  toolcall::ReasoningOptions reasoning;
  bool show_special = false;  // the format's markup may be control tokens: decode them as text
};

// Throws ApiError(400) with the template's message when it raises.
ChatPrompt build_chat_prompt(const ChatSetup& setup, const ChatFields& req,
                             const tokenizer::TextCodec& codec);

}  // namespace baton::server
