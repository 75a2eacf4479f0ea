#include "bench/openai_client.h"

#include <httplib.h>

#include <algorithm>

#include "bench/sse_parser.h"

namespace baton::bench {
namespace {

std::string clip(std::string s, std::size_t n = 300) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\r', ' ');
  if (s.size() > n) s = s.substr(0, n) + "...";
  return s;
}

std::string api_path(const Endpoint& ep, const char* tail) {
  return ep.base_path + tail;
}

std::unique_ptr<httplib::Client> make_client(const Endpoint& ep, double timeout_s) {
  auto cli = std::make_unique<httplib::Client>(ep.host_port);
  auto secs = [](double s) { return std::chrono::milliseconds(static_cast<long>(s * 1000)); };
  cli->set_connection_timeout(secs(ep.connect_timeout_s));
  cli->set_read_timeout(secs(timeout_s));
  cli->set_write_timeout(secs(timeout_s));
  cli->set_keep_alive(false);
  if (!ep.api_key.empty()) cli->set_bearer_token_auth(ep.api_key.c_str());
  return cli;
}

std::string transport_error(const Endpoint& ep, httplib::Error e, const std::string& path) {
  if (e == httplib::Error::Connection) {
    return "cannot connect to " + ep.url + " (connection refused or unreachable; is the server " +
           "running and is --url right?)";
  }
  return "request to " + ep.url + path + " failed: " + httplib::to_string(e);
}

// The message inside an OpenAI-style error body, else the body itself.
std::string error_message(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("error")) {
    const auto& e = j["error"];
    if (e.is_object() && e.contains("message") && e["message"].is_string()) {
      return e["message"].get<std::string>();
    }
    if (e.is_string()) return e.get<std::string>();
  }
  return clip(body);
}

std::optional<long> as_long(const nlohmann::json& j, const char* key) {
  if (j.is_object() && j.contains(key) && j[key].is_number()) return j[key].get<long>();
  return std::nullopt;
}

void apply_usage(const nlohmann::json& j, Usage& u) {
  if (j.contains("usage") && j["usage"].is_object()) {
    const auto& usage = j["usage"];
    if (auto v = as_long(usage, "prompt_tokens")) u.prompt_tokens = v;
    if (auto v = as_long(usage, "completion_tokens")) u.completion_tokens = v;
    if (usage.contains("prompt_tokens_details")) {
      if (auto v = as_long(usage["prompt_tokens_details"], "cached_tokens")) u.cached_tokens = v;
    }
  }
  // llama-server reports its prefix-cache hit in timings.cache_n instead.
  if (!u.cached_tokens && j.contains("timings")) {
    if (auto v = as_long(j["timings"], "cache_n")) u.cached_tokens = v;
  }
}

std::string choice_text(const nlohmann::json& choice, bool chat) {
  auto str = [](const nlohmann::json& o, const char* k) -> std::string {
    return o.is_object() && o.contains(k) && o[k].is_string() ? o[k].get<std::string>() : "";
  };
  if (!chat) return str(choice, "text");
  if (!choice.contains("delta")) return "";
  const auto& d = choice["delta"];
  std::string t = str(d, "content");
  return t.empty() ? str(d, "reasoning_content") : t;
}

std::string fmt_timeout(const Endpoint& ep, const std::string& path, double timeout_s) {
  return "request to " + ep.url + path + " timed out (--timeout-s " +
         std::to_string(static_cast<long>(timeout_s)) + " or the run limit --run-limit-s)";
}

}  // namespace

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

Endpoint parse_endpoint(const std::string& url, const std::string& api_key) {
  Endpoint ep;
  ep.url = url;
  ep.api_key = api_key;
  auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos) {
    throw BenchError("--url '" + url + "' needs a scheme, e.g. http://127.0.0.1:8080");
  }
  std::string scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") {
    throw BenchError("--url '" + url + "': scheme must be http or https");
  }
  auto path_start = url.find('/', scheme_end + 3);
  ep.host_port = url.substr(0, path_start);
  if (ep.host_port.size() <= scheme_end + 3) {
    throw BenchError("--url '" + url + "' has no host, e.g. http://127.0.0.1:8080");
  }
  std::string path = path_start == std::string::npos ? "" : url.substr(path_start);
  while (!path.empty() && path.back() == '/') path.pop_back();
  if (path.size() >= 3 && path.compare(path.size() - 3, 3, "/v1") == 0)
    path.resize(path.size() - 3);
  ep.base_path = path;
  return ep;
}

nlohmann::json request_body(const StreamRequest& req) {
  nlohmann::json body = {{"model", req.model}, {"max_tokens", req.max_tokens},
                         {"stream", true},     {"temperature", 0},
                         {"ignore_eos", true}, {"stream_options", {{"include_usage", true}}}};
  if (req.chat) {
    body["messages"] = req.messages;
  } else {
    body["prompt"] = req.prompt;
  }
  return body;
}

bool apply_event(const std::string& data, bool chat, RequestRecord& rec) {
  auto j = nlohmann::json::parse(data, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    rec.errors.push_back("unparseable SSE event: " + clip(data, 120));
    return false;
  }
  if (j.contains("error")) {
    rec.errors.push_back("server error in stream: " + error_message(data));
    return false;
  }
  apply_usage(j, rec.usage);
  if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty()) return false;
  std::string text = choice_text(j["choices"][0], chat);
  rec.text += text;
  return !text.empty();
}

namespace {

// Receives the response body as it arrives and timestamps every piece of it.
struct StreamSink {
  RequestRecord& rec;
  bool chat;
  Clock::time_point t0, give_up;
  Progress* progress;
  SseParser parser;
  std::string body_head;  // first bytes, to quote in error messages
  bool timed_out = false;

  bool receive(const char* data, std::size_t n) {
    double now = ms_since(t0);
    if (rec.first_byte_ms < 0) {
      rec.first_byte_ms = now;
      std::string_view v(data, n);
      auto first = v.find_first_not_of(" \r\n");
      rec.first_byte_was_comment = first != std::string_view::npos && v[first] == ':';
    }
    if (body_head.size() < 2048) body_head.append(data, std::min<std::size_t>(n, 2048));
    if (rec.http_status == 200) handle(parser.feed(std::string_view(data, n)), now);
    if (Clock::now() >= give_up) {
      timed_out = true;
      return false;
    }
    return true;
  }

  void handle(const std::vector<SseEvent>& events, double now) {
    for (const auto& e : events) {
      if (rec.first_event_ms < 0) rec.first_event_ms = now;
      if (apply_event(e.data, chat, rec)) {
        if (rec.first_token_ms < 0) rec.first_token_ms = now;
        rec.token_ms.push_back(now);
        if (progress) progress->tokens.store(static_cast<long>(rec.token_ms.size()));
      }
    }
  }
};

}  // namespace

RequestRecord stream_request(const Endpoint& ep, const StreamRequest& req, Clock::time_point t0,
                             Clock::time_point deadline, Progress* progress) {
  RequestRecord rec;
  rec.label = req.label;
  rec.max_tokens = req.max_tokens;
  rec.prompt_tokens_requested = req.prompt_tokens_requested;
  if (Clock::now() >= deadline) {
    rec.errors.push_back("not sent: the run limit (--run-limit-s) was already reached");
    if (progress) progress->finished.store(true);
    return rec;
  }
  auto give_up = std::min(
      deadline, Clock::now() + std::chrono::milliseconds(static_cast<long>(req.timeout_s * 1000)));
  double budget_s = std::max(0.001, std::chrono::duration<double>(give_up - Clock::now()).count());
  // The idle read timeout outlasts the budget a little, so a silent server is reported as
  // a timeout (now past give_up) rather than as a read error.
  auto cli = make_client(ep, budget_s + 0.1);
  StreamSink sink{rec, req.chat, t0, give_up, progress, {}, {}, false};

  httplib::Request hr;
  hr.method = "POST";
  hr.path = api_path(ep, req.chat ? "/v1/chat/completions" : "/v1/completions");
  hr.set_header("Content-Type", "application/json");
  hr.set_header("Accept", "text/event-stream");
  for (const auto& [name, value] : req.headers) hr.set_header(name, value);
  hr.body = request_body(req).dump();
  hr.response_handler = [&](const httplib::Response& r) {
    rec.http_status = r.status;
    return true;
  };
  hr.content_receiver = [&](const char* d, std::size_t n, uint64_t, uint64_t) {
    return sink.receive(d, n);
  };
  rec.send_ms = ms_since(t0);
  if (progress) progress->send_ms.store(rec.send_ms);
  auto res = cli->send(hr);
  if (rec.http_status == 200) sink.handle(sink.parser.finish(), ms_since(t0));
  rec.end_ms = ms_since(t0);

  if (sink.timed_out || (!res && Clock::now() >= give_up)) {
    rec.errors.push_back(fmt_timeout(ep, hr.path, req.timeout_s));
  } else if (!res) {
    rec.errors.push_back(transport_error(ep, res.error(), hr.path));
  } else if (rec.http_status != 200) {
    rec.errors.push_back("server returned HTTP " + std::to_string(rec.http_status) + " for " +
                         hr.path + ": " + error_message(sink.body_head));
  } else if (rec.first_event_ms < 0 && !sink.body_head.empty() && sink.body_head[0] == '{') {
    rec.errors.push_back("server answered " + hr.path +
                         " without streaming: " + clip(sink.body_head, 200));
  } else if (rec.token_ms.empty() && rec.errors.empty()) {
    rec.errors.push_back("stream from " + hr.path + " ended without any token");
  }
  if (progress) progress->finished.store(true);
  return rec;
}

std::string first_model_id(const Endpoint& ep, double timeout_s) {
  auto cli = make_client(ep, timeout_s);
  std::string path = api_path(ep, "/v1/models");
  auto res = cli->Get(path.c_str());
  if (!res) throw BenchError(transport_error(ep, res.error(), path));
  if (res->status != 200) {
    throw BenchError("server returned HTTP " + std::to_string(res->status) + " for " + path + ": " +
                     error_message(res->body) + " (pass --model to skip this lookup)");
  }
  auto j = nlohmann::json::parse(res->body, nullptr, false);
  if (j.is_object() && j.contains("data") && j["data"].is_array() && !j["data"].empty() &&
      j["data"][0].contains("id") && j["data"][0]["id"].is_string()) {
    return j["data"][0]["id"].get<std::string>();
  }
  throw BenchError(ep.url + path + " lists no model (expected {\"data\":[{\"id\":...}]}); pass " +
                   "--model NAME");
}

std::optional<std::string> fetch_metrics(const Endpoint& ep, double timeout_s) {
  auto cli = make_client(ep, timeout_s);
  auto res = cli->Get(api_path(ep, "/metrics").c_str());
  if (!res || res->status != 200) return std::nullopt;
  return std::move(res->body);
}

std::optional<double> find_sample(const std::string& body, const std::string& sample) {
  for (size_t at = 0; (at = body.find(sample, at)) != std::string::npos; at += sample.size()) {
    bool line_start = at == 0 || body[at - 1] == '\n';
    size_t end = at + sample.size();
    if (!line_start || end >= body.size() || body[end] != ' ') continue;
    try {
      return std::stod(body.substr(end + 1, body.find('\n', end) - end - 1));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<double> metric_sample(const Endpoint& ep, const std::string& sample,
                                    double timeout_s) {
  auto body = fetch_metrics(ep, timeout_s);
  return body ? find_sample(*body, sample) : std::nullopt;
}

std::optional<uint64_t> read_live_events(const Endpoint& ep, const std::atomic<bool>& stop) {
  // The stream sends a status snapshot every 250 ms, so the receiver sees `stop` soon.
  auto cli = make_client(ep, 10);
  uint64_t bytes = 0;
  int status = 0;
  auto res = cli->Get(
      api_path(ep, "/events").c_str(),
      [&](const httplib::Response& r) {
        status = r.status;
        return r.status == 200;
      },
      [&](const char*, size_t n) {
        bytes += n;
        return !stop.load();
      });
  if (status != 200) return std::nullopt;
  return bytes;
}

std::vector<double> health_latencies_ms(const Endpoint& ep, long n, double timeout_s) {
  auto cli = make_client(ep, timeout_s);
  cli->set_keep_alive(true);  // one ordinary connection, as a load balancer's checker would use
  std::string path = api_path(ep, "/health");
  std::vector<double> out;
  for (long i = 0; i < n; ++i) {
    auto t = Clock::now();
    auto res = cli->Get(path.c_str());
    if (res && res->status == 200) out.push_back(ms_since(t));
  }
  return out;
}

}  // namespace baton::bench
