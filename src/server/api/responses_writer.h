#pragma once
// The AnswerWriter of the Responses API (POST /v1/responses).
//  - Streamed: named SSE events (`event: <type>` + `data: {json}`), each with its type and a
//    sequence_number counting from 0: response.created and response.in_progress; then per
//    output item, in the order the model produces them, response.output_item.added, its parts
//    and deltas, and response.output_item.done:
//      reasoning:     content_part.added (reasoning_text), reasoning_text.delta/.done,
//                     content_part.done;
//      message:       content_part.added (output_text), output_text.delta/.done,
//                     content_part.done;
//      function_call: function_call_arguments.delta/.done;
//    and last response.completed, or response.incomplete (max_output_tokens) or
//    response.failed (the request failed after the stream began). No [DONE].
//  - Not streamed: the response object, as response.completed carries it.
// The model's thinking is a reasoning item with its text as reasoning_text content (an empty
// summary: nothing here summarises it). Only choice 0 exists.
#include <string>
#include <vector>

#include "server/answer/answer_writer.h"
#include "server/api/responses_request.h"

namespace baton::server {

class ResponsesWriter : public AnswerWriter {
 public:
  // meta: the response id ("resp_…"), created_at and the served model's id.
  ResponsesWriter(ResponseMeta meta, ResponsesEcho echo);

  std::string stream_start() override;
  std::string stream_delta(size_t index, const toolcall::OutputDelta& d,
                           const std::vector<TokenLogprob>& logprobs) override;
  std::string stream_end(const std::vector<ChoiceResult>& all, const Usage& total) override;
  std::string stream_error(const ApiError& e) override;
  nlohmann::json answer_json(const std::vector<ChoiceResult>& all, const Usage& total) override;

 private:
  enum class Kind { Reasoning, Message, Call };
  struct Item {
    Item(Kind k, std::string text_ = {}, std::string call_id_ = {}, std::string name_ = {},
         size_t call_index_ = 0);
    Kind kind;
    std::string id;    // rs_…, msg_…, fc_…
    std::string text;  // reasoning or message text, or a call's arguments
    std::string call_id, name;
    size_t call_index = 0;
    bool done = false;
    std::string status = "in_progress";  // completed or incomplete once done
  };

  std::string event(const std::string& type, nlohmann::json body);
  // The item the next delta of `kind` goes to: the last one when it matches, else a new one
  // (the open item is closed first).
  Item& open(Item fresh, std::string& out);
  std::string add_item(Item item);
  std::string close(Item& item, const std::string& status);
  std::string close_open(const std::string& status);
  // The item as output_item.added shows it (empty) or as it ended.
  nlohmann::json item_json(const Item& item, bool added) const;
  nlohmann::json response_json(const std::string& status, const nlohmann::json& output) const;
  nlohmann::json final_response(const std::string& engine_reason, const Usage& usage,
                                const nlohmann::json& output) const;

  ResponseMeta meta_;
  ResponsesEcho echo_;
  int64_t sequence_ = 0;
  std::vector<Item> items_;
};

// Responses usage: {input_tokens, input_tokens_details: {cached_tokens}, output_tokens,
// output_tokens_details: {reasoning_tokens}, total_tokens}.
nlohmann::json responses_usage_json(const Usage& u);

}  // namespace baton::server
