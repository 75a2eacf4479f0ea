#pragma once
// One HTTP(S) transfer over libcurl, following redirects, with the head of every response in
// the chain kept: the hub publishes a file's hash and size on its redirect to the CDN, not on
// the CDN's answer.
#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace baton::pull {

struct HttpHead {
  long status = 0;
  std::map<std::string, std::string> headers;  // names lowercased; a repeated name keeps the last
  std::string get(const std::string& lowercase_name) const;
};

struct HttpResult {
  HttpHead first;        // the first response (the hub's own, before any redirect)
  HttpHead last;         // the response whose body was transferred
  std::string body;      // the body when not streamed, or the start of a non-2xx body
  int curl_code = 0;     // CURLE_OK or the libcurl error
  std::string error;     // libcurl's message for curl_code
  bool aborted = false;  // on_head or on_body said stop
  std::string final_url;
};

struct NetConfig {
  long connect_timeout_s = 30;
  long stall_timeout_s = 60;
};

struct Transfer {
  std::string url;
  // "Authorization: Bearer" value, sent to the URL's origin only: libcurl drops it when a
  // redirect leaves for another host, port or scheme (CURLOPT_UNRESTRICTED_AUTH stays off).
  std::string bearer;
  bool head_only = false;
  uint64_t range_from = 0;  // > 0: ask for bytes from here on
  // Streaming: called with the first and the final head of a 2xx answer before its first body
  // byte (or at the end when the body is empty); then on_body gets the bytes. Either returning
  // false aborts. Without them (or for non-2xx answers), up to body_limit bytes are kept in
  // HttpResult::body.
  std::function<bool(const HttpHead& first, const HttpHead& last)> on_head;
  std::function<bool(const char*, size_t)> on_body;
  size_t body_limit = 64 * 1024;
};

HttpResult perform(const Transfer& t, const NetConfig& net);

// True for failures worth another attempt: the connection dropped, timed out or could not be
// made, or the server said 5xx / 429.
bool is_transient(const HttpResult& r);

}  // namespace baton::pull
