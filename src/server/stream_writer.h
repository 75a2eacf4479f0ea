#pragma once
// The two ways an answer leaves the server while its request runs, as AsyncBody objects the
// transport pumps on the request's events (no thread waits on a request):
//  - SSE: a role chunk (chat), content chunks as text becomes safe to send, ": keepalive"
//    comments while nothing else is sent (queued, prefilling), the finish chunk, the usage chunk
//    (include_usage) and [DONE]; a request that fails or is cut by shutdown gets an error event
//    and [DONE].
//  - JSON: the whole answer once the request ends (or its error status).
// The transport calls abandon() when the client leaves or stalls: the request is cancelled.
#include <memory>

#include "server/generation.h"
#include "server/http_types.h"
#include "server/openai_schema.h"
#include "toolcall/output_parser.h"

namespace baton::server {

struct StreamJob {
  bool chat = true;
  bool include_usage = false;
  bool logprobs = false;
  ResponseMeta meta;
  // Chat: reads the generated text as reasoning, content and tool calls (null for completions).
  std::shared_ptr<toolcall::OutputParser> parser;
  // parallel_tool_calls false: only the first call is sent (later ones are dropped).
  bool single_call = false;
};

std::shared_ptr<AsyncBody> make_sse_body(std::shared_ptr<sched::RequestHandle> handle,
                                         std::unique_ptr<Generation> gen, StreamJob job);
std::shared_ptr<AsyncBody> make_json_body(std::shared_ptr<sched::RequestHandle> handle,
                                          std::unique_ptr<Generation> gen, StreamJob job);

}  // namespace baton::server
