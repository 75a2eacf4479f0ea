#include "server/http/request_head.h"

#include <fmt/format.h>

#include <boost/beast/core/detail/base64.hpp>
#include <boost/beast/http/error.hpp>

#include "util/ascii.h"

namespace baton::server {

namespace http = boost::beast::http;

namespace {

using util::iequals;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

ApiError framing_error(const std::string& message, const char* code) {
  return ApiError(400, message, "", "invalid_request_error", code);
}

std::optional<uint64_t> parse_length(std::string_view v) {
  v = trim(v);
  if (v.empty() || v.size() > 19) return std::nullopt;
  uint64_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

// Content-Length: exactly one field with one decimal value. Returns the error or the length.
std::optional<ApiError> check_content_length(const RequestHead& head, const HeadLimits& limits,
                                             bool& has_length) {
  size_t n_fields = head.count(http::field::content_length);
  has_length = n_fields > 0;
  if (n_fields == 0) return std::nullopt;
  if (n_fields > 1) {
    return framing_error("the request has more than one Content-Length header; send one",
                         "duplicate_content_length");
  }
  auto len = parse_length(head[http::field::content_length]);
  if (!len) {
    return framing_error("Content-Length must be one decimal number", "invalid_content_length");
  }
  if (*len > limits.max_body_bytes) {
    return ApiError(413,
                    fmt::format("request body is {} bytes, over the limit of {} MB (--max-body-mb)",
                                *len, limits.max_body_bytes >> 20),
                    "", "invalid_request_error", "body_too_large");
  }
  return std::nullopt;
}

std::optional<ApiError> check_codings(const RequestHead& head, bool has_length, bool& chunked) {
  size_t n_te = head.count(http::field::transfer_encoding);
  chunked = false;
  if (n_te > 0) {
    if (has_length) {
      return framing_error("Content-Length together with Transfer-Encoding is ambiguous; send one",
                           "conflicting_framing");
    }
    std::string_view te = trim(head[http::field::transfer_encoding]);
    if (n_te > 1 || !iequals(te, "chunked")) {
      return ApiError(501,
                      fmt::format("Transfer-Encoding '{}' is not supported; send 'chunked' or a "
                                  "Content-Length",
                                  std::string(te.substr(0, 64))),
                      "", "invalid_request_error", "unsupported_transfer_encoding");
    }
    chunked = true;
  }
  for (const auto& f : head) {
    if (f.name() != http::field::content_encoding) continue;
    std::string_view v = trim(f.value());
    if (!v.empty() && !iequals(v, "identity")) {
      return ApiError(415,
                      fmt::format("Content-Encoding '{}' is not accepted; send the body "
                                  "uncompressed",
                                  std::string(v.substr(0, 64))),
                      "", "invalid_request_error", "unsupported_content_encoding");
    }
  }
  return std::nullopt;
}

bool method_carries_body(http::verb v) {
  return v == http::verb::post || v == http::verb::put || v == http::verb::patch;
}

}  // namespace

std::optional<ApiError> check_head(const RequestHead& head, const HeadLimits& limits) {
  if (head.version() != 10 && head.version() != 11) {
    return ApiError(505, "only HTTP/1.0 and HTTP/1.1 are served", "", "invalid_request_error",
                    "http_version_not_supported");
  }
  if (head.target().size() > limits.max_target_bytes) {
    return ApiError(414, fmt::format("the request URL is over {} bytes", limits.max_target_bytes),
                    "", "invalid_request_error", "uri_too_long");
  }
  if (head.target().empty() || head.target().front() != '/') {
    return framing_error("the request target must be a path starting with '/'", "bad_target");
  }
  bool has_length = false;
  if (auto e = check_content_length(head, limits, has_length)) return e;
  bool chunked = false;
  if (auto e = check_codings(head, has_length, chunked)) return e;
  if (method_carries_body(head.method()) && !has_length && !chunked) {
    return ApiError(411, "a request body needs a Content-Length (or chunked transfer coding)", "",
                    "invalid_request_error", "length_required");
  }
  return std::nullopt;
}

ApiError parse_error(const boost::beast::error_code& ec, bool start_line_parsed,
                     const HeadLimits& limits) {
  if (ec == http::error::header_limit) {
    if (!start_line_parsed) {
      return ApiError(414, fmt::format("the request URL is over {} bytes", limits.max_target_bytes),
                      "", "invalid_request_error", "uri_too_long");
    }
    return ApiError(
        431, fmt::format("the request headers are over {} KB in all", limits.max_head_bytes >> 10),
        "", "invalid_request_error", "headers_too_large");
  }
  if (ec == http::error::body_limit) {
    return ApiError(413,
                    fmt::format("request body is over the limit of {} MB (--max-body-mb)",
                                limits.max_body_bytes >> 20),
                    "", "invalid_request_error", "body_too_large");
  }
  if (ec == http::error::bad_version) {
    return ApiError(505, "only HTTP/1.0 and HTTP/1.1 are served", "", "invalid_request_error",
                    "http_version_not_supported");
  }
  if (ec == http::error::multiple_content_length || ec == http::error::bad_content_length) {
    return framing_error("the request has a conflicting or invalid Content-Length",
                         "invalid_content_length");
  }
  if (ec == http::error::bad_chunk || ec == http::error::bad_chunk_extension) {
    return framing_error("the chunked request body is malformed", "bad_chunk");
  }
  return framing_error(fmt::format("malformed HTTP request: {}", ec.message()), "bad_request");
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  // Length is not secret (keys have public formats); the content is.
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  size_t n = a.size() < b.size() ? a.size() : b.size();
  for (size_t i = 0; i < n; ++i) {
    diff |= static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i]);
  }
  return diff == 0;
}

// The password of HTTP Basic credentials ("user:password" in base64): what a browser sends for
// the live view once its user has typed the key; empty when they do not decode.
static std::string basic_password(std::string_view encoded) {
  namespace b64 = boost::beast::detail::base64;
  if (encoded.size() > 4096) return {};
  // The decoder stops at the padding; anything else it stops at is not base64.
  while (!encoded.empty() && encoded.back() == '=') encoded.remove_suffix(1);
  // Room for a final group without its padding too (decoded_size counts whole groups only).
  std::string decoded((encoded.size() + 3) / 4 * 3, '\0');
  auto [written, read] = b64::decode(decoded.data(), encoded.data(), encoded.size());
  if (read != encoded.size()) return {};
  decoded.resize(written);
  const size_t colon = decoded.find(':');
  return colon == std::string::npos ? std::string() : decoded.substr(colon + 1);
}

bool api_key_matches(const http::fields& fields, const std::string& key) {
  bool ok = false;
  for (const auto& f : fields) {
    std::string_view v = trim(f.value());
    if (f.name() == http::field::authorization) {
      size_t sp = v.find(' ');
      if (sp != std::string_view::npos && iequals(v.substr(0, sp), "bearer")) {
        ok |= constant_time_equal(trim(v.substr(sp + 1)), key);
      } else if (sp != std::string_view::npos && iequals(v.substr(0, sp), "basic")) {
        ok |= constant_time_equal(basic_password(trim(v.substr(sp + 1))), key);
      }
    } else if (iequals(f.name_string(), "x-api-key")) {
      ok |= constant_time_equal(v, key);
    }
  }
  return ok;
}

std::string clean_session_key(std::string_view raw) {
  std::string out;
  for (char c : trim(raw)) {
    if (out.size() == kMaxSessionKey) break;
    if (c > ' ' && c < 0x7f) out.push_back(c);
  }
  return out;
}

std::string session_key(const http::fields& fields) {
  for (const char* name :
       {"x-session-affinity", "x-opencode-session", "x-claude-code-session-id", "session_id"}) {
    auto it = fields.find(name);
    if (it == fields.end()) continue;
    std::string key = clean_session_key(it->value());
    if (!key.empty()) return key;
  }
  return "";
}

std::string_view target_path(std::string_view target) {
  size_t q = target.find_first_of("?#");
  return q == std::string_view::npos ? target : target.substr(0, q);
}

std::optional<std::string> percent_decode(std::string_view s) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    int hi = hex(s[i + 1]), lo = hex(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

}  // namespace baton::server
