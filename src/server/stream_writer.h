#pragma once
// Streams one generation as SSE through httplib's chunked content provider: a role chunk (chat),
// content chunks as text becomes safe to send, ": keepalive" comments while nothing else is
// sent (queued, prefilling), the finish chunk, the usage chunk (include_usage) and [DONE].
// A failed write or a closed client socket cancels the request.
#include <httplib.h>

#include <memory>

#include "server/generation.h"
#include "server/openai_schema.h"

namespace baton::server {

struct StreamJob {
  bool chat = true;
  bool include_usage = false;
  bool logprobs = false;
  ResponseMeta meta;
  double keepalive_s = 5;
};

void start_stream(httplib::Response& res, std::unique_ptr<Generation> gen, StreamJob job);

}  // namespace baton::server
