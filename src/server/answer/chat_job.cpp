// A chat request from ChatRequest to a running answer (chat_job.h), and the pieces text
// completions share with it: limits, the model check, max_tokens, submission, choices.
#include "server/answer/chat_job.h"

#include <fmt/format.h>

#include "constraint/constraint_compiler.h"
#include "constraint/triggered_constraint.h"
#include "server/answer/answer_body.h"
#include "server/answer/answer_job.h"
#include "server/answer/tool_grammar.h"
#include "server/errors.h"
#include "util/log.h"

namespace baton::server {

namespace {

// tool_choice "required" or named: the answer is constrained to the model's call markup.
std::shared_ptr<const grammar::Grammar> forced_call_grammar(const ServeContext& c,
                                                            const CommonRequest& common,
                                                            const ChatFields& chat,
                                                            const ChatPrompt& prompt) {
  if (common.constraint.active()) {
    throw bad_request(fmt::format("'{}' cannot be combined with a forced tool_choice: the answer "
                                  "is a tool call; use tool_choice \"auto\" or drop '{}'",
                                  common.constraint.field, common.constraint.field),
                      common.constraint.field);
  }
  std::string gbnf;
  try {
    gbnf = forced_call_gbnf(*prompt.format, chat, prompt.reasoning);
  } catch (const grammar::GrammarError& e) {
    throw ApiError(400, fmt::format("'tools': {}", e.what()), "tools", "invalid_request_error",
                   "invalid_grammar");
  }
  if (gbnf.empty()) {
    // The call is still asked for by the prompt and parsed as before, only not enforced.
    log::info(
        "tool_choice {} in the '{}' tool-call format is not enforced by a grammar (no tool's "
        "name can be written in that format's call markup)",
        chat.tool_choice == ToolChoice::Named ? "named" : "required", prompt.format->name());
    return nullptr;
  }
  try {
    return c.constraints->compile_gbnf(gbnf, "tools");
  } catch (const constraint::ConstraintError& e) {
    throw bad_request(e);
  }
}

// tool_choice "auto": once the model opens a call, the call is held to the call grammar.
// Never fails the request: a format without a grammar, or tools it cannot compile, stay free.
ConstraintFactory auto_call_constraints(const ServeContext& c, const ChatFields& chat,
                                        const ChatPrompt& prompt) {
  const toolcall::OutputFormat& format = *prompt.format;
  try {
    const std::string gbnf = auto_call_gbnf(format, chat);
    if (gbnf.empty()) return {};
    constraint::TriggeredConstraint::Reasoning thinking;
    if (prompt.reasoning.enabled) {
      thinking = {prompt.reasoning.open, prompt.reasoning.close, prompt.reasoning.starts_open};
    }
    auto compiled = c.constraints->compile_gbnf(gbnf, "tools");
    auto vocab = c.constraints->vocab(format.markers());
    return [trigger = format.call_trigger(), compiled, vocab, thinking](int32_t) {
      return std::make_shared<constraint::TriggeredConstraint>(trigger, compiled, vocab, thinking);
    };
  } catch (const std::exception& e) {
    log::info("tool calls in the '{}' format are not constrained: {}", format.name(), e.what());
    return {};
  }
}

// What constrains each choice of this chat request (none: an empty factory).
ConstraintFactory chat_constraints(const ServeContext& c, const CommonRequest& common,
                                   const ChatFields& chat, const ChatPrompt& prompt) {
  const bool forced =
      chat.tool_choice == ToolChoice::Required || chat.tool_choice == ToolChoice::Named;
  if (forced && prompt.format) {
    auto compiled = forced_call_grammar(c, common, chat, prompt);
    if (!compiled) return {};
    auto markers = prompt.format->markers();
    return [comp = c.constraints, compiled, markers](int32_t max_tokens) {
      return comp->make(compiled, markers, max_tokens);
    };
  }
  const bool free_calls = chat.tool_choice == ToolChoice::Auto && !chat.tools.empty();
  if (free_calls && prompt.format && !common.constraint.active()) {
    return auto_call_constraints(c, chat, prompt);
  }
  return output_constraints(c, common);
}

}  // namespace

void run_chat(const ServeContext& c, ChatRequest chat, std::unique_ptr<AnswerWriter> writer,
              HttpResponse& res) {
  check_model(c, chat.common.model);
  ChatPrompt prompt = build_chat_prompt(*c.chat, chat.chat, c.codec);
  AnswerJob job;
  job.what = "chat";
  job.prompt_param = "messages";
  job.default_max_tokens = c.opts.max_tokens_limit;  // chat answers run until the model stops
  job.make_constraint = chat_constraints(c, chat.common, chat.chat, prompt);
  job.common = std::move(chat.common);
  job.single_call = !chat.chat.parallel_tool_calls;
  job.show_special = prompt.show_special;
  const std::string format = prompt.format ? c.chat->tool_format : "";
  job.make_parser = [format, fc = prompt.format_context, reasoning = prompt.reasoning] {
    return std::make_shared<toolcall::OutputParser>(
        format.empty() ? nullptr : toolcall::make_format(format, fc), reasoning);
  };
  job.prompts.push_back({std::move(prompt.tokens), ""});
  res.async = start_answer_job(c, std::move(job), std::move(writer));
}

int32_t count_chat_prompt_tokens(const ServeContext& c, const ChatFields& chat) {
  return static_cast<int32_t>(build_chat_prompt(*c.chat, chat, c.codec).tokens.size());
}

}  // namespace baton::server
