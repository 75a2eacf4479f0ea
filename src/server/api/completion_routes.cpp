// POST /v1/chat/completions and /v1/completions: parse → tokenize → run the choices → stream or
// collect them in OpenAI's shapes.
#include <ctime>

#include "server/answer/chat_job.h"
#include "server/api/openai_writers.h"

namespace baton::server {

namespace {

OpenAiAnswer openai_answer(const ServeContext& c, const char* id_prefix,
                           const CommonRequest& common, size_t n_choices) {
  return {{make_response_id(id_prefix), static_cast<int64_t>(std::time(nullptr)), c.opts.model_id},
          n_choices,
          common.include_usage};
}

}  // namespace

void handle_chat(const ServeContext& c, const HttpRequest& req, HttpResponse& res) {
  ChatRequest chat = parse_chat_request(req.body, request_limits(c));
  take_session(req, chat.common);
  auto writer = make_chat_writer(
      openai_answer(c, "chatcmpl-", chat.common, static_cast<size_t>(chat.common.n)));
  run_chat(c, std::move(chat), std::move(writer), res);
}

void handle_completion(const ServeContext& c, const HttpRequest& req, HttpResponse& res) {
  CompletionRequest cr = parse_completion_request(req.body, request_limits(c));
  take_session(req, cr.common);
  check_model(c, cr.common.model);
  AnswerJob job;
  job.what = "completion";
  job.prompt_param = "prompt";
  job.best_of = cr.best_of;
  job.make_constraint = output_constraints(c, cr.common);
  job.make_parser = [] {
    // Text completions have no markup to read: the text is the content.
    toolcall::ReasoningOptions plain;
    plain.enabled = false;
    return std::make_shared<toolcall::OutputParser>(nullptr, plain);
  };
  for (auto& p : cr.prompts) {
    PromptInput in;
    in.tokens = p.is_tokens ? std::move(p.tokens)
                            : c.codec.encode(p.text, c.codec.default_add_bos(), false);
    if (cr.echo) in.echo = p.is_tokens ? c.codec.decode(in.tokens) : p.text;
    job.prompts.push_back(std::move(in));
  }
  const size_t n_choices = job.prompts.size() * static_cast<size_t>(cr.common.n);
  job.common = std::move(cr.common);
  auto writer = make_text_writer(openai_answer(c, "cmpl-", job.common, n_choices));
  res.async = start_answer_job(c, std::move(job), std::move(writer));
}

}  // namespace baton::server
