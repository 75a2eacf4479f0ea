#pragma once
// Checks on a request head, before any body byte is read: framing (one unambiguous body length,
// no content coding), size limits, and the API key. Pure functions, so the hostile-input tests
// and the fuzzer exercise exactly what the server runs.
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/message.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "server/errors.h"

namespace baton::server {

struct HeadLimits {
  size_t max_target_bytes = 8 * 1024;  // request-target (path + query); 414 past it
  size_t max_head_bytes = 64 * 1024;   // request line + all header lines; 431 past it
  uint64_t max_body_bytes = 8u << 20;  // --max-body-mb; 413 past it
};

using RequestHead = boost::beast::http::request_header<boost::beast::http::fields>;

// The error for a head that must not be served (and after which the connection closes), or
// nullopt. Covers: HTTP version, target length, duplicate or invalid Content-Length,
// Content-Length with Transfer-Encoding, codings other than chunked, a body without a length
// (411), a declared length over the limit (413), Content-Encoding other than identity (415).
std::optional<ApiError> check_head(const RequestHead& head, const HeadLimits& limits);

// The status and message for a parser error while reading the head or body.
// `start_line_parsed` tells an over-long request line (414) from too many headers (431).
ApiError parse_error(const boost::beast::error_code& ec, bool start_line_parsed,
                     const HeadLimits& limits);

// "Authorization: Bearer KEY" (scheme case-insensitive, as RFC 9110 says) or "x-api-key: KEY";
// compared in constant time so response timing does not reveal the key.
bool api_key_matches(const boost::beast::http::fields& fields, const std::string& key);
bool constant_time_equal(std::string_view a, std::string_view b);

// The session a request names in its headers, the first of x-session-affinity (OpenCode and
// proxies), x-opencode-session, x-claude-code-session-id and session_id (Codex); empty when none.
// Printable ASCII only and at most kMaxSessionKey bytes, so it is safe in a log line and JSON.
inline constexpr size_t kMaxSessionKey = 128;
std::string session_key(const boost::beast::http::fields& fields);
// The same cleaning for a session named in a body (prompt_cache_key).
std::string clean_session_key(std::string_view raw);

// The path part of a request-target ("/v1/models?x=1" → "/v1/models").
std::string_view target_path(std::string_view target);
// Percent-decodes one path segment; nullopt when an escape is malformed.
std::optional<std::string> percent_decode(std::string_view s);

}  // namespace baton::server
