#pragma once
// What every generating request shares once its API's body is read: the model check, each
// prompt's room in the context and max_tokens, the choices (n, best_of, a list of prompts) with
// their own seeds, parsers and constraints, and submission to the engine loop.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "server/answer/answer_writer.h"
#include "server/api/openai_request.h"
#include "server/http/http_types.h"
#include "server/server_routes.h"

namespace baton::server {

// The bounds every API's parser checks a body against (--ctx, --max-tokens-limit, vocabulary).
RequestLimits request_limits(const ServeContext& c);

// 400 model_not_found unless `model` is empty or the served model's id.
void check_model(const ServeContext& c, const std::string& model);

// Makes one choice's constraint (constraints hold per-request state) for an answer of at most
// max_tokens tokens; empty: unconstrained.
using ConstraintFactory = std::function<std::shared_ptr<sched::TokenConstraint>(int32_t)>;

// response_format / grammar / regex of `common`, compiled once (400 when they do not compile).
ConstraintFactory output_constraints(const ServeContext& c, const CommonRequest& common);

struct PromptInput {
  std::vector<int32_t> tokens;
  std::string echo;  // sent before the answer (completions' echo), usually empty
};

struct AnswerJob {
  const char* what = "chat";              // for the log
  const char* prompt_param = "messages";  // the field a prompt error names
  int32_t default_max_tokens = 16;        // without max_tokens (capped by the context)
  CommonRequest common;                   // common.n choices per prompt
  std::vector<PromptInput> prompts;
  int32_t best_of = 0;  // > n: run this many per prompt and keep the n most likely
  ConstraintFactory make_constraint;
  std::function<std::shared_ptr<toolcall::OutputParser>()> make_parser;
  bool single_call = false;
  bool show_special = false;
};

// The session named in the request's headers wins over the body's prompt_cache_key: it is what
// a proxy in front routes on.
void take_session(const HttpRequest& req, CommonRequest& common);

// Checks every prompt against the context, submits the first choice of each (ApiError when
// refused: a prompt over the context, a full queue) and returns the body that runs them all.
std::shared_ptr<AsyncBody> start_answer_job(const ServeContext& c, AnswerJob job,
                                            std::unique_ptr<AnswerWriter> writer);

}  // namespace baton::server
