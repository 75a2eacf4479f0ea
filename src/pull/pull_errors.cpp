#include "pull/pull_errors.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include "pull/model_ref.h"

namespace baton::pull {
namespace {

std::string hub_note(const HttpResult& r) {
  std::string m = r.last.get("x-error-message");
  return m.empty() ? "" : fmt::format(" (the hub says: {})", m);
}

std::string not_found(const Target& t, const HttpResult& r) {
  if (t.repo.empty()) {
    return fmt::format("{}: 404 Not Found; check the URL", t.url);
  }
  const std::string code = r.last.get("x-error-code");
  const std::string page = fmt::format("{}/{}", t.endpoint, t.repo);
  if (code == "RepoNotFound") {
    return fmt::format(
        "{}: repository {} does not exist (or is private: set HF_TOKEN); check "
        "the name at {}",
        t.what, t.repo, page);
  }
  if (code == "RevisionNotFound") {
    return fmt::format("{}: revision '{}' does not exist in {}; see its branches at {}/tree",
                       t.what, t.revision, t.repo, page);
  }
  if (code == "EntryNotFound") {
    return fmt::format("{}: {} has no file '{}' at revision '{}'; see its files at {}/tree/{}",
                       t.what, t.repo, t.file, t.revision, page, t.revision);
  }
  return fmt::format(
      "{}: 404 Not Found: the repository {}, the file '{}' or the revision '{}' "
      "does not exist{}; check them at {}",
      t.what, t.repo, t.file, t.revision, hub_note(r), page);
}

std::string denied(const Target& t, const HttpResult& r) {
  const long s = r.last.status;
  const std::string tokens = t.endpoint + "/settings/tokens";
  if (t.repo.empty()) {
    return fmt::format(
        "{}: {} {}: the server wants credentials that baton does not send "
        "(HF_TOKEN goes to the hub only); download it another way",
        t.url, s, s == 401 ? "Unauthorized" : "Forbidden");
  }
  const std::string page = fmt::format("{}/{}", t.endpoint, t.repo);
  // The hub answers 401, not 404, for a repo it will not admit exists to this caller.
  if (r.last.get("x-error-code") == "RepoNotFound") {
    return fmt::format("{}: {} {}: {} does not exist or is private; check the name at {}{}", t.what,
                       s, s == 401 ? "Unauthorized" : "Forbidden", t.repo, page,
                       t.token ? ", and that HF_TOKEN can read it"
                               : ", or set HF_TOKEN to a token that can read it");
  }
  if (!t.token) {
    return fmt::format(
        "{}: {} {}: {} may be gated or private{}; accept its terms at {} and set "
        "HF_TOKEN to an access token from {}",
        t.what, s, s == 401 ? "Unauthorized" : "Forbidden", t.repo, hub_note(r), page, tokens);
  }
  if (s == 401) {
    return fmt::format(
        "{}: 401 Unauthorized: the hub refused HF_TOKEN{}; check that it is a "
        "valid token from {}",
        t.what, hub_note(r), tokens);
  }
  return fmt::format(
      "{}: 403 Forbidden: HF_TOKEN lacks access to {}{}; accept the model's terms "
      "at {} with the token's account, or use a token with read access ({})",
      t.what, t.repo, hub_note(r), page, tokens);
}

}  // namespace

std::string http_error_message(const Target& t, const HttpResult& r) {
  const long s = r.last.status;
  if (s == 404) return not_found(t, r);
  if (s == 401 || s == 403) return denied(t, r);
  std::string host;
  try {
    host = parse_url(r.final_url.empty() ? t.url : r.final_url).host;
  } catch (...) {
    host = t.url;
  }
  if (s >= 500 || s == 429) {
    return fmt::format("{}: {} answered HTTP {}{} after every retry; try again later", t.what, host,
                       s, hub_note(r));
  }
  return fmt::format("{}: {} answered HTTP {}{}; check the model reference and --revision", t.what,
                     host, s, hub_note(r));
}

std::string network_error_message(const Target& t, const HttpResult& r, int attempts) {
  std::string host;
  try {
    host = parse_url(t.url).host;
  } catch (...) {
    host = t.url;
  }
  switch (r.curl_code) {
    case CURLE_COULDNT_RESOLVE_HOST:
      return fmt::format(
          "{}: cannot resolve {} ({}); check the network connection and DNS, or "
          "HF_ENDPOINT",
          t.what, host, r.error);
    case CURLE_COULDNT_RESOLVE_PROXY:
      return fmt::format("{}: cannot resolve the proxy ({}); check https_proxy / http_proxy",
                         t.what, r.error);
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CONNECT_ERROR:
      return fmt::format(
          "{}: TLS connection to {} failed ({}); check the system clock and the "
          "CA certificates (apt-get install ca-certificates)",
          t.what, host, r.error);
    case CURLE_TOO_MANY_REDIRECTS:
      return fmt::format("{}: more than 10 redirects ({}); the server loops", t.what, r.error);
    case CURLE_UNSUPPORTED_PROTOCOL:
      return fmt::format("{}: a redirect left http(s) ({}); baton follows http and https only",
                         t.what, r.error);
    default:
      return fmt::format(
          "{}: download failed after {} attempt{} ({}); check the network "
          "connection (and https_proxy if you use one), then run the same "
          "command again: it resumes",
          t.what, attempts, attempts == 1 ? "" : "s", r.error);
  }
}

}  // namespace baton::pull
