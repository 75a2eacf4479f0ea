#pragma once
// The one-line messages for failed transfers: what went wrong and what to do about it.
#include <string>

#include "pull/http_client.h"

namespace baton::pull {

// Where a transfer was going, for the messages.
struct Target {
  std::string what;      // as the user wrote it, or the resolved REPO/FILE
  std::string url;       // the first URL asked
  std::string endpoint;  // the hub (for the links to its pages)
  std::string repo;      // empty for plain URLs
  std::string file;      // empty for the repo listing
  std::string revision;
  bool token = false;  // HF_TOKEN was sent
};

// For an answer with a status >= 400 (or another non-2xx the caller cannot use).
std::string http_error_message(const Target& t, const HttpResult& r);

// For a libcurl failure (no usable answer). attempts: how many were made.
std::string network_error_message(const Target& t, const HttpResult& r, int attempts);

}  // namespace baton::pull
