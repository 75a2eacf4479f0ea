#pragma once
// How a chat answer leaves the server in one API's shapes. Chat completions, text completions,
// the Responses API and Anthropic Messages share everything up to here (template, tool-call
// parsing, constraints, the engine loop); an AnswerWriter turns the parser's deltas and the
// finished answers into that API's SSE events or JSON body. Writers are pure (no I/O, no
// threads): the answer bodies (answer_body.h) drive them, and tests can drive them directly.
//
// A request may run several choices (OpenAI's n, a list of prompts): their deltas arrive
// interleaved, each tagged with its index. APIs with a single answer (Responses, Messages)
// only ever see index 0 and may do all of their closing work in stream_end().
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/api/openai_objects.h"
#include "server/errors.h"
#include "toolcall/output_parser.h"

namespace baton::server {

// One finished choice.
struct ChoiceResult {
  size_t index = 0;
  toolcall::ParsedOutput msg;  // reasoning, content, calls (ids set); as streamed when streamed
  std::string text;            // the raw generated text (after stop strings are cut)
  std::string engine_reason;   // "stop" | "length"; "stop" with calls: the model ran tools
  std::string stop_sequence;   // the stop string that ended it, empty when none did
  Usage usage;                 // this choice's tokens (prompt counted per choice)
  std::vector<TokenLogprob> logprobs;  // when asked for
};

class AnswerWriter {
 public:
  virtual ~AnswerWriter() = default;

  // The prompt's size in tokens (every prompt's, counted once), known before anything is sent.
  virtual void set_prompt_tokens(int32_t tokens) { (void)tokens; }

  // Streamed answers. Each returns SSE bytes to send (possibly empty).
  // Before anything else: e.g. message_start, response.created, a chat role chunk.
  virtual std::string stream_start() = 0;
  // What the output parser made certain since the last call for choice `index` (reasoning,
  // content, call deltas), and the logprobs of the tokens that produced it (when asked for).
  virtual std::string stream_delta(size_t index, const toolcall::OutputDelta& d,
                                   const std::vector<TokenLogprob>& logprobs) = 0;
  // Choice `r.index` ended (others may still run).
  virtual std::string stream_choice_end(const ChoiceResult& r) {
    (void)r;
    return {};
  }
  // Every choice ended; `total` sums their usage (the prompt counted once).
  virtual std::string stream_end(const std::vector<ChoiceResult>& all, const Usage& total) = 0;
  // The request failed after the stream began (engine failure, shutdown).
  virtual std::string stream_error(const ApiError& e) = 0;
  // Nothing was sent for the keepalive period.
  virtual std::string stream_keepalive() { return ": keepalive\n\n"; }

  // A non-streamed answer: the whole body, from the final parse of each choice's whole text.
  virtual nlohmann::json answer_json(const std::vector<ChoiceResult>& all, const Usage& total) = 0;
  // The body of an error answer (the status is e.status).
  virtual nlohmann::json error_body_json(const ApiError& e) { return error_json(e); }
};

}  // namespace baton::server
