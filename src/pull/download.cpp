#include "pull/download.h"

#include <fmt/format.h>

#include <cctype>
#include <thread>

#include "pull/http_client.h"
#include "pull/model_ref.h"
#include "pull/part_file.h"
#include "pull/progress.h"

namespace baton::pull {
namespace {

std::optional<uint64_t> parse_u64(const std::string& s) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

struct ContentRange {
  std::optional<uint64_t> start;  // empty for "bytes */N"
  std::optional<uint64_t> total;  // empty for ".../*"
};

// "bytes 100-199/1000" or "bytes */1000" (RFC 9110 14.4).
ContentRange parse_content_range(const std::string& v) {
  ContentRange cr;
  if (v.rfind("bytes ", 0) != 0) return cr;
  size_t dash = v.find('-', 6), slash = v.find('/', 6);
  if (slash == std::string::npos) return cr;
  if (dash != std::string::npos && dash < slash) cr.start = parse_u64(v.substr(6, dash - 6));
  cr.total = parse_u64(v.substr(slash + 1));
  return cr;
}

template <typename... Args>
void note(const PullOptions& o, fmt::format_string<Args...> f, Args&&... args) {
  if (o.quiet || o.log == nullptr) return;
  std::fprintf(o.log, "%s\n", fmt::format(f, std::forward<Args>(args)...).c_str());
  std::fflush(o.log);
}

NetConfig net_of(const PullOptions& o) {
  return NetConfig{o.connect_timeout_s, o.stall_timeout_s};
}

class Downloader {
 public:
  Downloader(const Remote& r, const std::filesystem::path& final_path, const PullOptions& o)
      : r_(r),
        final_(final_path),
        o_(o),
        part_(final_path),
        progress_(o.quiet ? nullptr : o.log, o.log_is_tty) {}

  void run() {
    try {
      transfer();
      finish();
    } catch (...) {
      if (!placed_ && part_.size() == 0) part_.remove();  // no empty .part left behind
      throw;
    }
  }

 private:
  void transfer();
  bool on_head(const HttpHead& first, const HttpHead& last);
  bool on_body(const char* data, size_t n);
  void learn(const HttpHead& first);
  bool complete_after_416(const HttpResult& res);
  std::string failure(const HttpResult& res, int attempts, bool short_body) const;
  void finish();
  [[noreturn]] void fail_file(const std::string& why) {
    progress_.finish();
    part_.remove();
    throw PullError(fmt::format("{}: {}; nothing was kept", r_.target.what, why));
  }

  const Remote& r_;
  std::filesystem::path final_;
  const PullOptions& o_;
  PartFile part_;
  Progress progress_;
  std::string expected_sha_;
  uint64_t total_ = 0;
  bool magic_checked_ = false;
  bool restart_ = false;  // a 206 did not start where asked: start over without Range
  bool placed_ = false;
  std::string bad_file_;  // the bytes are not a model: delete them
  std::string fatal_;     // stop, but keep the .part (disk full, ...)
};

void Downloader::learn(const HttpHead& first) {
  std::string sha = sha256_from_etag(first.get("x-linked-etag"));
  if (sha.empty() && r_.hub) sha = sha256_from_etag(first.get("etag"));
  if (!sha.empty()) expected_sha_ = sha;
  if (auto size = parse_u64(first.get("x-linked-size")); size && total_ == 0) total_ = *size;
}

bool Downloader::on_head(const HttpHead& first, const HttpHead& last) {
  try {
    learn(first);
    if (last.status == 206) {
      ContentRange cr = parse_content_range(last.get("content-range"));
      if (cr.start.value_or(UINT64_MAX) != part_.size()) {
        restart_ = true;
        return false;
      }
      if (cr.total) total_ = *cr.total;
    } else if (last.status == 200) {
      if (part_.size() > 0) {
        note(o_,
             "the server ignored the request to resume at byte {}; downloading from the "
             "start",
             part_.size());
        part_.truncate();
      }
      if (auto len = parse_u64(last.get("content-length"))) total_ = *len;
    } else {
      fatal_ = fmt::format("the server answered HTTP {} without the file", last.status);
      return false;
    }
    if (total_ > part_.size()) {
      std::error_code ec;
      auto space = std::filesystem::space(final_.parent_path(), ec);
      if (!ec && space.available < total_ - part_.size()) {
        fatal_ = fmt::format(
            "not enough disk space in {}: {} more needed, {} free; free some "
            "or set BATON_CACHE to another disk",
            final_.parent_path().string(), format_bytes(total_ - part_.size()),
            format_bytes(space.available));
        return false;
      }
    }
    magic_checked_ = part_.size() >= 8;
    progress_.start(part_.size(), total_);
    return true;
  } catch (const std::exception& e) {  // never through libcurl's C frames
    fatal_ = e.what();
    return false;
  }
}

bool Downloader::on_body(const char* data, size_t n) {
  try {
    part_.append(data, n);
    if (!magic_checked_ && part_.size() >= 8) {
      magic_checked_ = true;
      bad_file_ = gguf_header_problem(part_.first_bytes(32));
      if (!bad_file_.empty()) return false;
    }
    progress_.update(part_.size());
    return true;
  } catch (const std::exception& e) {
    fatal_ = e.what();
    return false;
  }
}

// 416: nothing at or past our offset. The .part is complete when its size is the file's size.
bool Downloader::complete_after_416(const HttpResult& res) {
  ContentRange cr = parse_content_range(res.last.get("content-range"));
  uint64_t total = cr.total.value_or(total_);
  if (part_.size() > 0 && total == part_.size()) {
    total_ = total;
    return true;
  }
  note(o_,
       "the partial download ({}) does not fit the remote file ({}); downloading from the "
       "start",
       format_bytes(part_.size()), total ? format_bytes(total) : "size unknown");
  part_.truncate();
  return false;
}

std::string Downloader::failure(const HttpResult& res, int attempts, bool short_body) const {
  if (short_body) {
    return fmt::format(
        "{}: the server sent {} of {} bytes, {} times; run the same command "
        "again: it resumes",
        r_.target.what, part_.size(), total_, attempts);
  }
  return res.curl_code == 0 ? http_error_message(r_.target, res)
                            : network_error_message(r_.target, res, attempts);
}

void Downloader::transfer() {
  int failures = 0, restarts = 0;
  auto delay = o_.retry_delay;
  note(o_, "downloading {}{}", r_.target.url,
       part_.size() > 0 ? fmt::format(" (resuming at {})", format_bytes(part_.size())) : "");
  for (int attempt = 1;; ++attempt) {
    const uint64_t before = part_.size();
    Transfer t;
    t.url = r_.target.url;
    t.bearer = r_.bearer;
    t.range_from = part_.size();
    t.on_head = [this](const HttpHead& f, const HttpHead& l) { return on_head(f, l); };
    t.on_body = [this](const char* d, size_t n) { return on_body(d, n); };
    HttpResult res = perform(t, net_of(o_));
    learn(res.first);
    if (!bad_file_.empty()) fail_file(bad_file_);
    if (!fatal_.empty()) {
      progress_.finish();
      throw PullError(fmt::format("{}: {}", r_.target.what, fatal_));
    }
    const long status = res.last.status;
    const bool answered = res.curl_code == 0;
    if (restart_ || (answered && status == 416 && !complete_after_416(res))) {
      restart_ = false;
      part_.truncate();
      if (++restarts > 2) {
        progress_.finish();
        throw PullError(
            fmt::format("{}: the server keeps answering with the wrong byte ranges; "
                        "try again later",
                        r_.target.what));
      }
      continue;
    }
    if (answered && status == 416) return;
    if (answered && status >= 200 && status < 300 && (total_ == 0 || part_.size() == total_)) {
      progress_.finish();
      return;
    }
    const bool short_body = answered && status >= 200 && status < 300;
    if (!short_body && !is_transient(res)) {
      progress_.finish();
      throw PullError(failure(res, attempt, false));
    }
    if (part_.size() > before) {  // progress was made: a fresh retry budget
      failures = 0;
      delay = o_.retry_delay;
    }
    progress_.finish();
    if (failures >= o_.retries) throw PullError(failure(res, attempt, short_body));
    ++failures;
    note(o_, "interrupted at {} ({}); retrying in {} ({} of {})", format_bytes(part_.size()),
         short_body ? "the body ended early"
         : answered ? fmt::format("HTTP {}", status)
                    : res.error,
         format_duration(std::chrono::duration<double>(delay).count()), failures, o_.retries);
    std::this_thread::sleep_for(delay);
    delay *= 2;
  }
}

void Downloader::finish() {
  std::string problem = gguf_header_problem(part_.first_bytes(32));
  if (!problem.empty()) fail_file(problem);
  if (!expected_sha_.empty()) {
    const std::string got = part_.sha256();
    if (got != expected_sha_) {
      fail_file(
          fmt::format("SHA-256 mismatch: the hub publishes {}, the downloaded bytes hash "
                      "to {}; the download was deleted, run the same command again to "
                      "fetch it afresh",
                      expected_sha_, got));
    }
  }
  const uint64_t size = part_.size();
  part_.place(final_);
  placed_ = true;
  note(o_, "saved {} ({}, {})", final_.string(), format_bytes(size),
       expected_sha_.empty() ? "no published SHA-256 to check" : "SHA-256 verified");
}

}  // namespace

std::string sha256_from_etag(std::string etag) {
  if (etag.rfind("W/", 0) == 0) etag.erase(0, 2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  if (etag.size() != 64) return "";
  for (char& c : etag) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return "";
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return etag;
}

RemoteSize remote_size(const Remote& r, const PullOptions& o) {
  Transfer t;
  t.url = r.target.url;
  t.bearer = r.bearer;
  t.head_only = true;
  HttpResult res = perform(t, net_of(o));
  RemoteSize out;
  if (res.curl_code != 0) {
    out.why = res.error;
  } else if (res.last.status < 200 || res.last.status >= 300) {
    out.why = http_error_message(r.target, res);
  } else if (auto s = parse_u64(res.first.get("x-linked-size"))) {
    out.size = s;
  } else if (auto len = parse_u64(res.last.get("content-length"))) {
    out.size = len;
  } else {
    out.why = "the server gave no size";
  }
  return out;
}

void download(const Remote& r, const std::filesystem::path& final_path, const PullOptions& o) {
  Downloader(r, final_path, o).run();
}

}  // namespace baton::pull
