#pragma once
// Downloading one remote file into the cache: resume, retries, checks, atomic placement.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "pull/pull.h"
#include "pull/pull_errors.h"

namespace baton::pull {

struct Remote {
  Target target;
  std::string bearer;  // "" or HF_TOKEN, for the target's origin only
  bool hub = false;    // a hub resolve URL: its own 64-hex ETag is the file's SHA-256
};

// "" unless `etag` (quotes and W/ stripped) is a 64-hex SHA-256; then that, lowercase.
std::string sha256_from_etag(std::string etag);

struct RemoteSize {
  std::optional<uint64_t> size;  // empty: the remote did not say, or could not be asked
  std::string why;               // when empty: the reason
};

// HEAD (following redirects): X-Linked-Size of the hub's answer, else the final Content-Length.
RemoteSize remote_size(const Remote& r, const PullOptions& o);

// Downloads into final_path + ".part" (resuming what is there), checks the SHA-256 (when the
// remote publishes it) and the GGUF header, then renames it to final_path. Throws PullError.
void download(const Remote& r, const std::filesystem::path& final_path, const PullOptions& o);

}  // namespace baton::pull
