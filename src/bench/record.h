#pragma once
// The raw timings of one streamed request, as the bench observed them. All times are
// milliseconds since the scenario started (a steady clock), so requests of one run line up.
#include <optional>
#include <string>
#include <vector>

namespace baton::bench {

struct Usage {
  std::optional<long> prompt_tokens;
  std::optional<long> completion_tokens;
  std::optional<long> cached_tokens;  // prompt_tokens_details.cached_tokens or timings.cache_n
};

struct RequestRecord {
  std::string label;
  long prompt_tokens_requested = 0;  // what the scenario asked for, in its own token estimate
  long max_tokens = 0;
  double send_ms = -1;
  double first_byte_ms = -1;   // first byte of the response body (any SSE line)
  double first_event_ms = -1;  // first SSE data event (may carry no text)
  double first_token_ms = -1;  // first event with non-empty text
  std::vector<double> token_ms;
  double end_ms = -1;
  bool first_byte_was_comment = false;  // server sent keepalive comments before any data
  int http_status = 0;
  Usage usage;
  std::string text;                 // concatenated generated text (agents feed it back)
  std::vector<std::string> errors;  // one line each; empty when the request succeeded

  bool ok() const { return errors.empty(); }
  // Send → first sign of life from the server's scheduler. When the server sends keepalive
  // comments before it has really started, that sign is meaningless, so fall back to TTFT.
  double queue_wait_ms() const;
  bool queue_wait_is_fallback() const;
  double ttft_ms() const { return first_token_ms >= 0 ? first_token_ms - send_ms : -1; }
  double total_ms() const { return end_ms >= 0 ? end_ms - send_ms : -1; }
};

}  // namespace baton::bench
