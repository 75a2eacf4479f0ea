#pragma once
// The AsyncBody that runs one answer's choices and sends them through an AnswerWriter, for every
// API: as SSE (stream) or as one JSON body. No thread waits on a request: the transport pulls
// whenever the engine loop signals news for any of the choices.
//
// Several choices of the same prompt (OpenAI's n, best_of) prefill it once: the first choice
// of each prompt (its leader) is submitted at once; the others wait until the leader has
// produced its first token (its prompt's KV blocks are then committed to the prefix cache) and
// are submitted then, so each of them computes only the prompt's partial last block.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sched/engine_loop.h"
#include "server/answer/answer_writer.h"
#include "server/http/http_types.h"
#include "tokenizer/text_codec.h"

namespace baton::server {

struct ChoicePlan {
  sched::GenerateRequest request;  // prompt, max_tokens, sampling (its own seed), stop, constraint
  std::shared_ptr<toolcall::OutputParser> parser;  // reads the text as reasoning/content/calls
  size_t group = 0;     // which prompt (a list of prompts gives one group per prompt)
  bool leader = false;  // the first choice of its group: submitted at once
  std::string echo;     // sent before the generated text (completions' echo)
};

struct AnswerPlan {
  std::vector<ChoicePlan> choices;  // in index order; every group starts with its leader
  bool stream = false;
  bool logprobs = false;     // send logprobs (they are also collected for best_of)
  bool single_call = false;  // parallel_tool_calls false: only each choice's first call is sent
  // best_of: keep this many choices per group, those with the highest mean token logprob
  // (0: keep all). Never streamed.
  size_t keep_best = 0;
  // Submits one choice's request (throws ApiError when the queue refuses it).
  std::function<std::shared_ptr<sched::RequestHandle>(sched::GenerateRequest)> submit;
};

// Submits every leader now (an ApiError from `submit` propagates: nothing has been sent yet) and
// returns the body that runs the rest.
std::shared_ptr<AsyncBody> start_answer(AnswerPlan plan, const tokenizer::TextCodec& codec,
                                        std::unique_ptr<AnswerWriter> writer);

}  // namespace baton::server
