#include "server/answer/answer_job.h"

#include <fmt/format.h>

#include "constraint/constraint_compiler.h"
#include "server/answer/answer_body.h"
#include "server/answer/stop_condition.h"
#include "server/errors.h"
#include "util/log.h"

namespace baton::server {

namespace {

int32_t resolve_max_tokens(const ServeContext& c, const AnswerJob& job, size_t prompt_tokens) {
  auto prompt = static_cast<int32_t>(prompt_tokens);
  const char* param = job.prompt_param;
  if (prompt == 0) throw bad_request("the prompt is empty after tokenization", param);
  if (prompt >= c.ctx) {
    throw ApiError(
        400,
        fmt::format("the prompt has {} tokens but the context (--ctx) holds {}", prompt, c.ctx),
        param, "", "context_length_exceeded");
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
  return std::min(job.default_max_tokens, room);
}

std::shared_ptr<sched::RequestHandle> submit(const ServeContext& c, sched::GenerateRequest g) {
  try {
    return c.backend.submit(std::move(g));
  } catch (const sched::SubmitError& e) {
    using Code = sched::SubmitError::Code;
    if (e.code == Code::ShuttingDown) throw shutting_down_error();
    if (e.code == Code::QueueFull) {
      ApiError err(
          503, fmt::format("the request queue is full (--max-queue): {}; retry shortly", e.what()),
          "", "", "queue_full");
      err.retry_after_s =
          sched::retry_after_queue_full_s(c.backend.metrics(), c.backend.config().parallel);
      throw err;
    }
    throw bad_request(e.what(), e.code == Code::TooLong ? "max_tokens" : "");
  }
}

// Choice k of a prompt samples with its own stream of randomness, derived from the request's
// seed so that the same request gives the same choices again.
uint64_t choice_seed(uint64_t seed, size_t k) {
  return seed + 0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(k);
}

size_t choices_per_prompt(const AnswerJob& job) {
  const int32_t n = job.common.n;
  const int32_t per_prompt = std::max(n, job.best_of);
  const auto total = static_cast<int64_t>(per_prompt) * static_cast<int64_t>(job.prompts.size());
  if (total > kMaxChoicesPerRequest) {
    throw bad_request(fmt::format("this request asks for {} choices ({} prompt(s) × {}); at most "
                                  "{} fit one request: lower n{} or send the prompts apart",
                                  total, job.prompts.size(), per_prompt, kMaxChoicesPerRequest,
                                  job.best_of > n ? "/best_of" : ""),
                      job.best_of > n ? "best_of" : "n");
  }
  return static_cast<size_t>(per_prompt);
}

}  // namespace

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

ConstraintFactory output_constraints(const ServeContext& c, const CommonRequest& common) {
  if (!common.constraint.active()) return {};
  std::shared_ptr<const grammar::Grammar> compiled;
  try {
    compiled = c.constraints->compile(common.constraint);
  } catch (const constraint::ConstraintError& e) {
    throw bad_request(e);
  }
  return [comp = c.constraints, compiled](int32_t max_tokens) {
    return comp->make(compiled, {}, max_tokens);
  };
}

void take_session(const HttpRequest& req, CommonRequest& common) {
  if (!req.session.empty()) common.session = req.session;
}

std::shared_ptr<AsyncBody> start_answer_job(const ServeContext& c, AnswerJob job,
                                            std::unique_ptr<AnswerWriter> writer) {
  const size_t per_prompt = choices_per_prompt(job);
  AnswerPlan plan;
  plan.stream = job.common.stream;
  plan.logprobs = job.common.sampling.logprobs;
  plan.single_call = job.single_call;
  // One automaton for every choice; each choice's matchers hold only their own state.
  const std::shared_ptr<const StopSet> stop = make_stop_set(job.common.stop);
  plan.keep_best = job.best_of > job.common.n ? static_cast<size_t>(job.common.n) : 0;
  for (size_t g = 0; g < job.prompts.size(); ++g) {
    PromptInput& p = job.prompts[g];
    const int32_t max_tokens = resolve_max_tokens(c, job, p.tokens.size());
    for (size_t k = 0; k < per_prompt; ++k) {
      ChoicePlan cp;
      sched::GenerateRequest& r = cp.request;
      r.prompt = p.tokens;
      r.max_tokens = max_tokens;
      r.sampling = job.common.sampling;
      r.sampling.seed = choice_seed(job.common.sampling.seed, k);
      // best_of ranks the choices by their tokens' logprobs.
      if (plan.keep_best > 0) r.sampling.logprobs = true;
      r.ignore_eos = job.common.ignore_eos;
      r.session = job.common.session;
      // Decodes the choice's text and matches its stop strings, in the engine loop.
      r.stop = make_stop_condition(c.codec, stop, p.tokens, job.show_special);
      if (job.make_constraint) {
        r.constraint = job.make_constraint(max_tokens);
        // Every choice of a prompt has the same constraint and budget: checked once.
        if (k == 0) {
          try {
            constraint::require_room(*r.constraint, max_tokens, "max_tokens",
                                     !job.common.max_tokens.has_value());
          } catch (const constraint::ConstraintError& e) {
            throw bad_request(e);
          }
        }
      }
      cp.parser = job.make_parser();
      cp.group = g;
      cp.leader = k == 0;
      cp.echo = p.echo;
      plan.choices.push_back(std::move(cp));
    }
    log::debug("{} prompt={} max_tokens={} choices={} stream={}", job.what, p.tokens.size(),
               max_tokens, per_prompt, job.common.stream);
  }
  int32_t prompt_tokens = 0;
  for (const auto& p : job.prompts) prompt_tokens += static_cast<int32_t>(p.tokens.size());
  writer->set_prompt_tokens(prompt_tokens);
  plan.submit = [&c](sched::GenerateRequest g) { return submit(c, std::move(g)); };
  return start_answer(std::move(plan), c.codec, std::move(writer));
}

}  // namespace baton::server
