#include "pull/model_ref.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <cctype>
#include <memory>
#include <vector>

#include "pull/pull.h"
#include "util/ascii.h"

namespace baton::pull {
namespace {

constexpr const char* kForms =
    "expected REPO/FILE.gguf (e.g. Qwen/Qwen2.5-0.5B-Instruct-GGUF/"
    "qwen2.5-0.5b-instruct-q4_k_m.gguf), REPO with --quant (e.g. "
    "Qwen/Qwen2.5-0.5B-Instruct-GGUF --quant Q4_K_M) or an https:// URL";

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

// Hub names are letters, digits, '-', '_' and '.', so a repo can never name a path outside.
bool valid_repo_part(std::string_view s) {
  if (s.empty() || s == "." || s == ".." || s.size() > 96) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return false;
    }
  }
  return true;
}

struct UrlHandle {
  CURLU* u = curl_url();
  ~UrlHandle() { curl_url_cleanup(u); }
  std::string get(CURLUPart part, unsigned flags = 0) const {
    char* v = nullptr;
    if (curl_url_get(u, part, &v, flags) != CURLUE_OK || v == nullptr) return "";
    std::string s(v);
    curl_free(v);
    return s;
  }
};

}  // namespace

void check_relative_path(std::string_view path, std::string_view what) {
  for (std::string_view part : split(path, '/')) {
    bool bad = part.empty() || part == "." || part == "..";
    for (char c : part) bad = bad || static_cast<unsigned char>(c) < 0x20 || c == '\\';
    if (bad) {
      throw PullError(
          fmt::format("{} '{}' is not a plain relative path (empty, '.' or '..' "
                      "parts, or control characters); give the file's path as the "
                      "hub lists it",
                      what, path));
    }
  }
}

ModelRef parse_ref(std::string_view what) {
  ModelRef r;
  if (what.starts_with("http://") || what.starts_with("https://")) {
    r.kind = ModelRef::Kind::Url;
    r.url = std::string(what);
    parse_url(r.url);  // validates now, so a typo fails before any connection
    return r;
  }
  if (what.find("://") != std::string_view::npos) {
    throw PullError(
        fmt::format("'{}': only http:// and https:// URLs are supported; {}", what, kForms));
  }
  auto parts = split(what, '/');
  if (parts.size() < 2 || !valid_repo_part(parts[0]) || !valid_repo_part(parts[1])) {
    throw PullError(fmt::format("'{}' is not a model reference: {}", what, kForms));
  }
  r.repo = fmt::format("{}/{}", parts[0], parts[1]);
  if (parts.size() == 2) {
    r.kind = ModelRef::Kind::HubRepo;
    return r;
  }
  r.kind = ModelRef::Kind::HubFile;
  r.file = std::string(what.substr(r.repo.size() + 1));
  check_relative_path(r.file, "file");
  return r;
}

UrlParts parse_url(const std::string& url) {
  UrlHandle h;
  if (h.u == nullptr) throw PullError("out of memory parsing a URL");
  if (curl_url_set(h.u, CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) {
    throw PullError(fmt::format("'{}' is not a valid URL; {}", url, kForms));
  }
  UrlParts p;
  p.scheme = util::ascii_lower(h.get(CURLUPART_SCHEME));
  p.host = util::ascii_lower(h.get(CURLUPART_HOST));
  p.port = h.get(CURLUPART_PORT, CURLU_DEFAULT_PORT);
  p.path = h.get(CURLUPART_PATH, CURLU_URLDECODE);
  if ((p.scheme != "http" && p.scheme != "https") || p.host.empty()) {
    throw PullError(fmt::format("'{}': only http:// and https:// URLs are supported", url));
  }
  if (p.path.empty()) p.path.push_back('/');
  return p;
}

bool same_origin(const std::string& a, const std::string& b) {
  UrlParts x = parse_url(a), y = parse_url(b);
  return x.scheme == y.scheme && x.host == y.host && x.port == y.port;
}

std::string url_encode(std::string_view s, bool keep_slash) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

std::string resolve_url(const std::string& endpoint, const std::string& repo,
                        const std::string& revision, const std::string& file) {
  return fmt::format("{}/{}/resolve/{}/{}", endpoint, repo, url_encode(revision, false),
                     url_encode(file, true));
}

std::string tree_url(const std::string& endpoint, const std::string& repo,
                     const std::string& revision) {
  return fmt::format("{}/api/models/{}/tree/{}?recursive=true", endpoint, repo,
                     url_encode(revision, false));
}

std::filesystem::path hub_cache_path(const std::filesystem::path& cache, const std::string& repo,
                                     const std::string& revision, const std::string& file) {
  std::string dir = repo;
  if (revision != "main") {
    std::string rev = revision;
    for (char& c : rev) c = c == '/' ? '-' : c;
    check_relative_path(rev, "--revision");
    dir += "@" + rev;
  }
  return cache / dir / file;
}

std::filesystem::path url_cache_path(const std::filesystem::path& cache, const std::string& url) {
  UrlParts p = parse_url(url);
  std::string rel = p.path.substr(1);
  if (rel.empty() || rel.back() == '/') {
    throw PullError(fmt::format("the URL '{}' names no file (its path ends with '/')", url));
  }
  check_relative_path(rel, "URL path");
  const bool default_port =
      (p.scheme == "https" && p.port == "443") || (p.scheme == "http" && p.port == "80");
  std::string host = default_port ? p.host : p.host + "_" + p.port;
  check_relative_path(host, "URL host");
  return cache / "urls" / host / rel;
}

}  // namespace baton::pull
