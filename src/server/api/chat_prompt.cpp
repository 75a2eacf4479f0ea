#include "server/api/chat_prompt.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <stdexcept>

#include "server/api/default_templates.h"
#include "server/errors.h"
#include "util/json_depth.h"

namespace baton::server {

using ojson = nlohmann::ordered_json;

namespace {

chat::ChatTemplate compile(const std::string& source, const std::string& origin) {
  try {
    return chat::ChatTemplate::from_text(source);
  } catch (const chat::TemplateError& e) {
    throw std::runtime_error(
        fmt::format("{} does not compile: {} (fix it, or pass another with "
                    "--chat-template FILE)",
                    origin, e.what()));
  }
}

// The server's kwargs as an object; throws when --chat-template-kwargs is not one.
ojson kwargs_object(const std::string& text) {
  if (text.empty()) return ojson::object();
  ojson kw;
  if (util::parse_json_text(text, kw) == util::JsonText::too_deep) {
    throw std::runtime_error(
        fmt::format("--chat-template-kwargs nests deeper than {} levels; pass a flatter object",
                    util::kMaxJsonDepth));
  }
  if (kw.is_discarded() || !kw.is_object()) {
    throw std::runtime_error(
        "--chat-template-kwargs must be a JSON object, e.g. '{\"enable_thinking\": false}'");
  }
  return kw;
}

// Local time as ISO 8601, for strftime_now() in templates that print today's date.
std::string now_iso() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

}  // namespace

void check_chat_options(const ChatOptions& opts) {
  kwargs_object(opts.template_kwargs);
  const auto& format = opts.tool_call_format;
  if (!format.empty() && toolcall::make_format(format, {}) == nullptr) {
    throw std::runtime_error(fmt::format("--tool-call-format '{}' is unknown; use one of: {}",
                                         format, fmt::join(toolcall::format_names(), ", ")));
  }
}

std::shared_ptr<const ChatSetup> make_chat_setup(const ChatOptions& opts,
                                                 const ModelTemplates& model,
                                                 const tokenizer::TextCodec& codec) {
  auto s = std::make_shared<ChatSetup>();
  std::string source;
  if (!opts.template_text.empty()) {
    source = opts.template_text;
    s->origin = "--chat-template";
  } else if (!model.chat.empty()) {
    source = model.chat;
    s->origin = "the model's tokenizer.chat_template";
  } else if (codec.has_token("<|im_start|>")) {
    source = kDefaultChatmlTemplate;
    s->origin = "the default ChatML template (the model has none)";
  } else {
    source = kDefaultTranscriptTemplate;
    s->origin = "the default transcript template (the model has none)";
  }
  s->chat_template = compile(source, s->origin);
  if (opts.template_text.empty() && !model.tool_use.empty()) {
    s->tool_use_template = compile(model.tool_use, "the model's tokenizer.chat_template.tool_use");
  }
  check_chat_options(opts);
  s->tool_format =
      !opts.tool_call_format.empty()
          ? opts.tool_call_format
          : toolcall::detect_format(s->tool_use_template ? s->tool_use_template->source() : source);
  auto format = toolcall::make_format(s->tool_format, {});
  s->answers_in_channels = format != nullptr && format->answers_in_channels();
  s->kwargs = kwargs_object(opts.template_kwargs);
  s->protect.emplace(codec.control_texts());
  s->bos_text = codec.bos_text();
  s->eos_text = codec.eos_text();
  s->add_bos = codec.default_add_bos();
  s->reasoning = opts.reasoning;
  s->knows_developer = source.find("developer") != std::string::npos &&
                       (model.tool_use.empty() || !opts.template_text.empty() ||
                        model.tool_use.find("developer") != std::string::npos);
  return s;
}

namespace {

// The template's variables: kwargs first (server, then request), then the fixed keys, so a
// request cannot replace `messages` through chat_template_kwargs.
ojson render_context(const ChatSetup& setup, const ChatFields& req, bool with_tools) {
  ojson ctx = setup.kwargs;
  for (auto& [k, v] : req.template_kwargs.items()) ctx[k] = v;
  ctx["messages"] = req.messages;
  if (!setup.knows_developer) {
    for (auto& m : ctx["messages"]) {
      if (m.value("role", "") == "developer") m["role"] = "system";
    }
  }
  if (with_tools) {
    if (req.tool_choice == ToolChoice::Named) {
      ojson only = ojson::array();
      for (const auto& t : req.tools) {
        if (t["function"]["name"] == req.tool_choice_name) only.push_back(t);
      }
      ctx["tools"] = std::move(only);
    } else {
      ctx["tools"] = req.tools;
    }
  }
  setup.protect->protect(ctx);
  ctx["add_generation_prompt"] = true;
  ctx["bos_token"] = setup.bos_text;
  ctx["eos_token"] = setup.eos_text;
  return ctx;
}

}  // namespace

ChatPrompt build_chat_prompt(const ChatSetup& setup, const ChatFields& req,
                             const tokenizer::TextCodec& codec) {
  const bool tools = !req.tools.empty() && req.tool_choice != ToolChoice::None;
  const chat::ChatTemplate& tpl =
      tools && setup.tool_use_template ? *setup.tool_use_template : *setup.chat_template;
  std::string rendered;
  try {
    chat::RenderOptions ro;
    ro.now = now_iso();
    rendered = tpl.render(render_context(setup, req, tools), ro);
  } catch (const chat::TemplateBudgetError& e) {
    // The template misbehaved, not the request: the operator fixes it with --chat-template.
    throw ApiError(500,
                   fmt::format("the chat template ({}) was stopped: {}; serve a fixed one with "
                               "--chat-template FILE",
                               setup.origin, e.what()),
                   "messages", "server_error", "chat_template_budget");
  } catch (const chat::TemplateError& e) {
    throw ApiError(400, fmt::format("the chat template rejected these messages: {}", e.what()),
                   "messages", "invalid_request_error", "chat_template_error");
  }
  auto restored = setup.protect->restore(rendered);
  ChatPrompt p;
  const bool add_bos =
      setup.add_bos && !setup.bos_text.empty() && !restored.text.starts_with(setup.bos_text);
  p.tokens = codec.encode_rendered(restored.text, add_bos, restored.literal);
  p.text = std::move(restored.text);
  if (tools || setup.answers_in_channels) {
    toolcall::FormatContext fc;
    if (tools) fc.tools = req.tools;
    fc.prompt_tail = p.text.substr(p.text.size() - std::min<size_t>(p.text.size(), 256));
    p.format = toolcall::make_format(setup.tool_format, fc);
    p.format_context = std::move(fc);
    p.show_special = p.format != nullptr;
  }
  p.reasoning.enabled = setup.reasoning;
  p.reasoning.starts_open =
      setup.reasoning && toolcall::prompt_opens_reasoning(p.text, p.reasoning);
  return p;
}

}  // namespace baton::server
