#include "pull/pull.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>

#include "pull/download.h"
#include "pull/http_client.h"
#include "pull/hub_listing.h"
#include "pull/model_ref.h"
#include "pull/progress.h"

namespace baton::pull {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

template <typename... Args>
void note(const PullOptions& o, fmt::format_string<Args...> f, Args&&... args) {
  if (o.quiet || o.log == nullptr) return;
  std::fprintf(o.log, "%s\n", fmt::format(f, std::forward<Args>(args)...).c_str());
  std::fflush(o.log);
}

Remote remote_for(const PullOptions& o, const std::string& url) {
  Remote r;
  r.target.url = url;
  r.target.endpoint = o.endpoint;
  r.target.revision = o.revision;
  // The token is the hub's: never handed to a URL on another origin.
  if (!o.token.empty() && same_origin(url, o.endpoint)) {
    r.bearer = o.token;
    r.target.token = true;
  }
  return r;
}

// GET /api/models/REPO/tree/REVISION, then the file that --quant (or the repo's only GGUF) names.
std::string choose_file(const PullOptions& o, const std::string& repo) {
  Remote r = remote_for(o, tree_url(o.endpoint, repo, o.revision));
  r.target.what = repo;
  r.target.repo = repo;
  Transfer t;
  t.url = r.target.url;
  t.bearer = r.bearer;
  t.body_limit = 64u << 20;
  HttpResult res = perform(t, NetConfig{o.connect_timeout_s, o.stall_timeout_s});
  if (res.curl_code != 0) throw PullError(network_error_message(r.target, res, 1));
  if (res.last.status != 200) throw PullError(http_error_message(r.target, res));
  return pick_gguf(parse_tree(res.body), o.quant, repo);
}

// A copy already in the cache is kept when the remote has the same size. Without an answer
// (offline, say) it is kept too, with a warning: serving what is there beats failing.
bool cached_copy_current(const Remote& r, const std::filesystem::path& path, const PullOptions& o) {
  std::error_code ec;
  const uint64_t have = std::filesystem::file_size(path, ec);
  if (ec) return false;
  RemoteSize remote = remote_size(r, o);
  if (!remote.size) {
    note(o, "warning: could not check {} against the remote ({}); using the cached copy",
         path.string(), remote.why);
    return true;
  }
  if (*remote.size == have) {
    note(o, "{} is already in the cache ({})", path.string(), format_bytes(have));
    return true;
  }
  note(o, "the cached {} is {}, the remote {}: downloading it again", path.string(),
       format_bytes(have), format_bytes(*remote.size));
  return false;
}

}  // namespace

std::filesystem::path default_cache_dir() {
  if (std::string c = env("BATON_CACHE"); !c.empty()) return c;
  if (std::string x = env("XDG_CACHE_HOME"); !x.empty()) {
    return std::filesystem::path(x) / "baton" / "models";
  }
  if (std::string h = env("HOME"); !h.empty()) {
    return std::filesystem::path(h) / ".cache" / "baton" / "models";
  }
  throw PullError("no cache folder: set BATON_CACHE (or HOME) to where models should go");
}

PullOptions options_from_env() {
  PullOptions o;
  if (std::string e = env("HF_ENDPOINT"); !e.empty()) {
    while (!e.empty() && e.back() == '/') e.pop_back();
    o.endpoint = e;
  }
  o.token = env("HF_TOKEN");
  o.cache = default_cache_dir();
  o.log = stderr;
  o.log_is_tty = ::isatty(STDERR_FILENO) == 1;
  return o;
}

std::filesystem::path pull(const std::string& what, const PullOptions& o) {
  try {
    parse_url(o.endpoint);
  } catch (const PullError&) {
    throw PullError(
        fmt::format("HF_ENDPOINT '{}' is not an http(s) URL; unset it to use "
                    "https://huggingface.co",
                    o.endpoint));
  }
  for (unsigned char c : o.token) {
    if (c < 0x21 || c == 0x7f) {  // it goes into a header line verbatim
      throw PullError("HF_TOKEN holds spaces or control characters; set it to the token alone");
    }
  }
  ModelRef ref = parse_ref(what);
  if (!o.quant.empty() && ref.kind != ModelRef::Kind::HubRepo) {
    throw PullError(
        fmt::format("--quant picks a file of a repo: give the repo alone (e.g. "
                    "owner/name --quant {}), or drop --quant when naming the file",
                    o.quant));
  }
  if (ref.kind == ModelRef::Kind::Url && o.revision != "main") {
    throw PullError("--revision applies to hub references (REPO or REPO/FILE), not to URLs");
  }
  std::filesystem::path path;
  Remote r;
  if (ref.kind == ModelRef::Kind::Url) {
    path = url_cache_path(o.cache, ref.url);
    r = remote_for(o, ref.url);
    r.target.what = ref.url;
  } else {
    std::string file = ref.kind == ModelRef::Kind::HubFile ? ref.file : choose_file(o, ref.repo);
    check_relative_path(file, "file");  // names from the hub's listing are checked too
    path = hub_cache_path(o.cache, ref.repo, o.revision, file);
    r = remote_for(o, resolve_url(o.endpoint, ref.repo, o.revision, file));
    r.hub = true;
    r.target.what = ref.repo + "/" + file;
    r.target.repo = ref.repo;
    r.target.file = file;
  }
  if (std::filesystem::exists(path) && cached_copy_current(r, path, o)) return path;
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) {
    throw PullError(fmt::format("cannot create {} ({}); set BATON_CACHE to a writable folder",
                                path.parent_path().string(), ec.message()));
  }
  download(r, path, o);
  return path;
}

}  // namespace baton::pull
