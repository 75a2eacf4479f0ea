// libFuzzer entry: any bytes, as one client connection's input, go through the server's request
// path (Beast parser with the server's limits, head checks, routing, auth, the route handlers'
// validation and tokenization; see http_fuzz_app.h) and every answer must keep the invariants of
// check_response. An exception a handler does not turn into an answer aborts, as it would take
// the server's worker thread down.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "http_fuzz_app.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace baton::server;
  static fuzzing::FuzzApp app;
  static const HeadLimits limits = fuzzing::fuzz_limits();
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  PipelineResult result = run_request_pipeline(bytes, limits, app.app(), true);
  for (const auto& r : result.responses) {
    std::string why = fuzzing::check_response(r);
    if (!why.empty()) {
      std::fprintf(stderr, "fuzz_http: invariant broken: %s\n", why.c_str());
      std::abort();
    }
  }
  return 0;
}
