#include "pull/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>
#include <vector>

#include "pull/pull.h"

namespace baton::pull {
namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      throw PullError("libcurl failed to initialise (curl_global_init)");
    }
  });
}

std::string trim(std::string s) {
  auto sp = [](unsigned char c) { return std::isspace(c) != 0; };
  s.erase(s.begin(), std::find_if_not(s.begin(), s.end(), sp));
  s.erase(std::find_if_not(s.rbegin(), s.rend(), sp).base(), s.end());
  return s;
}

struct State {
  const Transfer* t = nullptr;
  std::vector<HttpHead> heads;
  HttpResult* result = nullptr;
  bool head_delivered = false;
  bool streaming = false;
};

bool is_2xx(long s) {
  return s >= 200 && s < 300;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* st = static_cast<State*>(user);
  std::string line = trim(std::string(data, size * n));
  if (line.rfind("HTTP/", 0) == 0) {
    HttpHead h;
    size_t sp = line.find(' ');
    if (sp != std::string::npos) h.status = std::atol(line.c_str() + sp + 1);
    // An interim 1xx answer is replaced by the real one that follows it.
    if (!st->heads.empty() && st->heads.back().status < 200) st->heads.pop_back();
    st->heads.push_back(std::move(h));
  } else if (!line.empty() && !st->heads.empty()) {
    size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      st->heads.back().headers[name] = trim(line.substr(colon + 1));
    }
  }
  return size * n;
}

// Runs on_head once for a 2xx answer; decides whether its body streams or is kept.
bool deliver_head(State& st) {
  if (st.head_delivered) return true;
  st.head_delivered = true;
  if (st.heads.empty()) return true;
  const HttpHead& h = st.heads.back();
  st.streaming = is_2xx(h.status) && st.t->on_body != nullptr;
  if (st.streaming && st.t->on_head && !st.t->on_head(st.heads.front(), h)) {
    st.result->aborted = true;
    return false;
  }
  return true;
}

size_t on_write(char* data, size_t size, size_t n, void* user) {
  auto* st = static_cast<State*>(user);
  const size_t len = size * n;
  if (!deliver_head(*st)) return 0;
  if (st->streaming) {
    if (!st->t->on_body(data, len)) {
      st->result->aborted = true;
      return 0;
    }
    return len;
  }
  std::string& body = st->result->body;
  body.append(data, std::min(len, st->t->body_limit - std::min(body.size(), st->t->body_limit)));
  return len;
}

struct Easy {
  CURL* h = curl_easy_init();
  curl_slist* headers = nullptr;
  ~Easy() {
    curl_slist_free_all(headers);
    curl_easy_cleanup(h);
  }
};

void configure(Easy& e, const Transfer& t, const NetConfig& net, State& st, char* errbuf) {
  CURL* h = e.h;
  curl_easy_setopt(h, CURLOPT_URL, t.url.c_str());
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(h, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(h, CURLOPT_UNRESTRICTED_AUTH, 0L);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_USERAGENT, "baton/0.1.0");
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  // Through an https_proxy, the proxy's CONNECT answer would otherwise pose as the hub's.
  curl_easy_setopt(h, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, net.connect_timeout_s);
  // A stalled transfer (under 1 byte/s for this long) fails as a timeout and is retried.
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, net.stall_timeout_s);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &st);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &st);
  if (t.head_only) curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  if (t.range_from > 0) {
    const std::string range = std::to_string(t.range_from) + "-";
    curl_easy_setopt(h, CURLOPT_RANGE, range.c_str());  // libcurl copies the string
  }
  if (!t.bearer.empty()) {
    e.headers = curl_slist_append(e.headers, ("Authorization: Bearer " + t.bearer).c_str());
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, e.headers);
  }
}

}  // namespace

std::string HttpHead::get(const std::string& lowercase_name) const {
  auto it = headers.find(lowercase_name);
  return it == headers.end() ? std::string() : it->second;
}

HttpResult perform(const Transfer& t, const NetConfig& net) {
  global_init();
  Easy e;
  if (e.h == nullptr) throw PullError("libcurl could not create a transfer (out of memory?)");
  HttpResult r;
  State st;
  st.t = &t;
  st.result = &r;
  char errbuf[CURL_ERROR_SIZE] = {0};
  configure(e, t, net, st, errbuf);
  CURLcode code = curl_easy_perform(e.h);
  if (code == CURLE_OK && !deliver_head(st)) code = CURLE_WRITE_ERROR;
  r.curl_code = code;
  r.error = errbuf[0] != 0 ? std::string(errbuf) : std::string(curl_easy_strerror(code));
  if (!st.heads.empty()) {
    r.first = st.heads.front();
    r.last = st.heads.back();
  }
  char* final_url = nullptr;
  curl_easy_getinfo(e.h, CURLINFO_EFFECTIVE_URL, &final_url);
  if (final_url != nullptr) r.final_url = final_url;
  return r;
}

bool is_transient(const HttpResult& r) {
  if (r.aborted) return false;
  switch (r.curl_code) {
    case CURLE_OK:
      return r.last.status >= 500 || r.last.status == 429;
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
      return true;
    default:
      return false;
  }
}

}  // namespace baton::pull
