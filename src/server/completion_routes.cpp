// POST /v1/chat/completions and /v1/completions: parse → tokenize → submit → stream or collect.
#include <fmt/format.h>

#include <chrono>
#include <ctime>

#include "server/errors.h"
#include "server/generation.h"
#include "server/server_routes.h"
#include "server/stop_condition.h"
#include "server/stream_writer.h"
#include "server/tool_grammar.h"
#include "server/triggered_constraint.h"
#include "util/log.h"

namespace baton::server {

using nlohmann::json;

namespace {

struct Job {
  bool chat = true;
  CommonRequest common;
  std::vector<int32_t> prompt;
  std::shared_ptr<toolcall::OutputParser> parser;  // chat only
  bool show_special = false;
  bool single_call = false;
  std::shared_ptr<sched::TokenConstraint> constraint;
};

RequestLimits request_limits(const ServeContext& c) {
  RequestLimits l;
  l.max_tokens_limit = c.opts.max_tokens_limit;
  l.n_vocab = c.codec.n_vocab();
  l.ctx = c.ctx;
  l.max_array_items = static_cast<size_t>(c.ctx);
  l.max_prompt_bytes = static_cast<size_t>(c.ctx) * c.codec.max_token_bytes();
  return l;
}

void check_model(const ServeContext& c, const std::string& model) {
  if (!model.empty() && model != c.opts.model_id) {
    throw ApiError(400,
                   fmt::format("model '{}' is not served here; this server serves '{}' "
                               "(omit 'model' or use that id)",
                               model, c.opts.model_id),
                   "model", "invalid_request_error", "model_not_found");
  }
}

int32_t resolve_max_tokens(const ServeContext& c, const Job& job) {
  auto prompt = static_cast<int32_t>(job.prompt.size());
  const char* prompt_param = job.chat ? "messages" : "prompt";
  if (prompt == 0) throw bad_request("the prompt is empty after tokenization", prompt_param);
  if (prompt >= c.ctx) {
    throw ApiError(
        400,
        fmt::format("the prompt has {} tokens but the context (--ctx) holds {}", prompt, c.ctx),
        prompt_param, "", "context_length_exceeded");
  }
  int32_t room = c.ctx - prompt;
  if (job.common.max_tokens) {
    int32_t want = *job.common.max_tokens;
    if (want > room) {
      throw ApiError(400,
                     fmt::format("prompt ({} tokens) + max_tokens ({}) = {} is over the "
                                 "context of {} tokens (--ctx); lower max_tokens to at most {}",
                                 prompt, want, prompt + want, c.ctx, room),
                     "max_tokens", "", "context_length_exceeded");
    }
    return want;
  }
  // Chat answers run until the model stops; text completions default to 16 tokens like OpenAI.
  return std::min(job.chat ? c.opts.max_tokens_limit : 16, room);
}

std::shared_ptr<sched::RequestHandle> submit(const ServeContext& c, const Job& job,
                                             int32_t max_tokens) {
  sched::GenerateRequest g;
  g.prompt = job.prompt;
  g.max_tokens = max_tokens;
  g.sampling = job.common.sampling;
  g.ignore_eos = job.common.ignore_eos;
  g.stop = make_stop_condition(c.codec, job.common.stop, job.prompt);
  g.constraint = job.constraint;
  try {
    return c.backend.submit(std::move(g));
  } catch (const sched::SubmitError& e) {
    using Code = sched::SubmitError::Code;
    if (e.code == Code::QueueFull || e.code == Code::ShuttingDown) {
      bool full = e.code == Code::QueueFull;
      ApiError err(503,
                   full ? fmt::format("the request queue is full (--max-queue): {}; retry "
                                      "shortly",
                                      e.what())
                        : "the server is shutting down; retry on another instance",
                   "", "", full ? "queue_full" : "shutting_down");
      err.retry_after_s = full ? 1 : 5;
      throw err;
    }
    throw bad_request(e.what(), e.code == Code::TooLong ? "max_tokens" : "");
  }
}

void run_job(const ServeContext& c, Job job, HttpResponse& res) {
  check_model(c, job.common.model);
  if (job.common.constraint.active() && !job.constraint) {
    job.constraint = c.constraints->make(c.constraints->compile(job.common.constraint));
  }
  int32_t max_tokens = resolve_max_tokens(c, job);
  auto handle = submit(c, job, max_tokens);
  auto gen = std::make_unique<Generation>(
      handle, c.codec, job.common.stop, job.common.sampling.logprobs, job.prompt, job.show_special);
  ResponseMeta meta{make_response_id(job.chat ? "chatcmpl-" : "cmpl-"),
                    static_cast<int64_t>(std::time(nullptr)), c.opts.model_id};
  log::debug("req={} {} prompt={} max_tokens={} stream={}", handle->id(),
             job.chat ? "chat" : "completion", job.prompt.size(), max_tokens, job.common.stream);
  StreamJob sj{job.chat, job.common.include_usage, job.common.sampling.logprobs,
               meta,     std::move(job.parser),    job.single_call};
  res.async = job.common.stream ? make_sse_body(handle, std::move(gen), std::move(sj))
                                : make_json_body(handle, std::move(gen), std::move(sj));
}

// tool_choice "required" or named: the answer is constrained to the model's call markup.
std::shared_ptr<sched::TokenConstraint> forced_call_constraint(const ServeContext& c,
                                                               const Job& job,
                                                               const ChatFields& chat,
                                                               const ChatPrompt& prompt) {
  if (job.common.constraint.active()) {
    throw bad_request(fmt::format("'{}' cannot be combined with a forced tool_choice: the answer "
                                  "is a tool call; use tool_choice \"auto\" or drop '{}'",
                                  job.common.constraint.field, job.common.constraint.field),
                      job.common.constraint.field);
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
        "tool_choice {} in the '{}' tool-call format is not enforced by a grammar (no call "
        "grammar for that format yet)",
        chat.tool_choice == ToolChoice::Named ? "named" : "required", prompt.format->name());
    return nullptr;
  }
  return c.constraints->make(c.constraints->compile_gbnf(gbnf, "tools"), prompt.format->markers());
}

// tool_choice "auto": once the model opens a call, the call is held to the call grammar.
// Never fails the request: a format without a grammar, or tools it cannot compile, stay free.
std::shared_ptr<sched::TokenConstraint> auto_call_constraint(const ServeContext& c,
                                                             const ChatFields& chat,
                                                             const ChatPrompt& prompt) {
  const toolcall::OutputFormat& format = *prompt.format;
  try {
    const std::string gbnf = auto_call_gbnf(format, chat);
    if (gbnf.empty()) return nullptr;
    TriggeredConstraint::Reasoning thinking;
    if (prompt.reasoning.enabled) {
      thinking = {prompt.reasoning.open, prompt.reasoning.close, prompt.reasoning.starts_open};
    }
    return std::make_shared<TriggeredConstraint>(
        format.call_trigger(), c.constraints->compile_gbnf(gbnf, "tools"),
        c.constraints->vocab(format.markers()), std::move(thinking));
  } catch (const std::exception& e) {
    log::info("tool calls in the '{}' format are not constrained: {}", format.name(), e.what());
    return nullptr;
  }
}

}  // namespace

void handle_chat(const ServeContext& c, const HttpRequest& req, HttpResponse& res) {
  RequestLimits limits = request_limits(c);
  ChatRequest chat = parse_chat_request(req.body, limits);
  Job job;
  job.chat = true;
  job.common = std::move(chat.common);
  ChatPrompt prompt = build_chat_prompt(*c.chat, chat.chat, c.codec);
  job.prompt = std::move(prompt.tokens);
  job.show_special = prompt.show_special;
  job.single_call = !chat.chat.parallel_tool_calls;
  const bool forced =
      chat.chat.tool_choice == ToolChoice::Required || chat.chat.tool_choice == ToolChoice::Named;
  if (forced && prompt.format) job.constraint = forced_call_constraint(c, job, chat.chat, prompt);
  const bool free_calls = chat.chat.tool_choice == ToolChoice::Auto && !chat.chat.tools.empty();
  if (free_calls && prompt.format && !job.common.constraint.active()) {
    job.constraint = auto_call_constraint(c, chat.chat, prompt);
  }
  job.parser = std::make_shared<toolcall::OutputParser>(std::move(prompt.format), prompt.reasoning);
  run_job(c, std::move(job), res);
}

void handle_completion(const ServeContext& c, const HttpRequest& req, HttpResponse& res) {
  RequestLimits limits = request_limits(c);
  CompletionRequest cr = parse_completion_request(req.body, limits);
  Job job;
  job.chat = false;
  job.common = std::move(cr.common);
  job.prompt = cr.prompt_is_tokens
                   ? std::move(cr.prompt_tokens)
                   : c.codec.encode(cr.prompt_text, c.codec.default_add_bos(), false);
  run_job(c, std::move(job), res);
}

}  // namespace baton::server
