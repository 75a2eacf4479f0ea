#pragma once
// What `baton pull` was asked for, the URLs it maps to on the hub, and where it lives in the
// cache. Pure functions over strings (the URL parser is libcurl's).
#include <filesystem>
#include <string>
#include <string_view>

namespace baton::pull {

struct ModelRef {
  enum class Kind { HubFile, HubRepo, Url };
  Kind kind = Kind::HubFile;
  std::string repo;  // "owner/name" (hub kinds)
  std::string file;  // path inside the repo (HubFile)
  std::string url;   // Url
};

// "owner/name/path/file.gguf", "owner/name" or "http(s)://...". Throws PullError with the
// accepted forms when the argument is none of them, or a path could escape the cache.
ModelRef parse_ref(std::string_view what);

// The parts of an http(s) URL that matter here, from libcurl's URL parser.
struct UrlParts {
  std::string scheme;  // lowercase
  std::string host;    // lowercase
  std::string port;    // explicit or the scheme's default
  std::string path;    // decoded, starts with '/'
};
UrlParts parse_url(const std::string& url);  // throws PullError

// Same scheme, host and port: the hub's token may be sent there.
bool same_origin(const std::string& a, const std::string& b);

// Percent-encodes everything but unreserved characters (and '/' when keep_slash).
std::string url_encode(std::string_view s, bool keep_slash);

std::string resolve_url(const std::string& endpoint, const std::string& repo,
                        const std::string& revision, const std::string& file);
std::string tree_url(const std::string& endpoint, const std::string& repo,
                     const std::string& revision);

// <cache>/<owner>/<name>/<file> for the main revision, <cache>/<owner>/<name>@<rev>/<file>
// otherwise ('/' in a revision becomes '-'); <cache>/urls/<host>[_<port>]/<path> for a URL.
std::filesystem::path hub_cache_path(const std::filesystem::path& cache, const std::string& repo,
                                     const std::string& revision, const std::string& file);
std::filesystem::path url_cache_path(const std::filesystem::path& cache, const std::string& url);

// Throws PullError unless every '/'-separated part of `path` is a plain file or folder name.
void check_relative_path(std::string_view path, std::string_view what);

}  // namespace baton::pull
