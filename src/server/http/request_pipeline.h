#pragma once
// One connection's bytes through what the server runs on them, without a socket: the same steps
// as Connection (request_steps.h: the parser with the server's limits, check_head, the
// application's dispatch, the body, the route handler), request after request while the
// connection stays open (pipelining), leaving out only the I/O, the deadlines and the
// 100-continue write, so that the fuzzer (fuzz/fuzz_http.cpp) and the corpus test run the
// server's own parsing, routing and validation.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "server/http/http_transport.h"

namespace baton::server {

struct PipelineResponse {
  int status = 0;
  std::string content_type;
  std::string body;
  bool async = false;   // the handler answered with an AsyncBody (abandoned here, never pulled)
  bool closes = false;  // the connection closes after this answer
};

struct PipelineResult {
  std::vector<PipelineResponse> responses;
  // The bytes ended inside a request and the client kept the connection open: a live server
  // would now wait for the rest until the head or body deadline (408).
  bool incomplete = false;
};

// `eof`: the client shut down its sending side after `bytes`, so a partial request gets the
// parser's error, as Connection answers it. Otherwise a partial request stays unanswered and
// `incomplete` is set. HttpApp::dispatch and the handlers run on the caller's thread; a
// Dispatch::handle that throws propagates (the transport requires that it never does).
PipelineResult run_request_pipeline(std::string_view bytes, const HeadLimits& limits, HttpApp& app,
                                    bool eof = true);

}  // namespace baton::server
