#include "bench/mock_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sstream>

namespace baton::bench::testing {
namespace {

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> w;
  for (std::string x; in >> x;) w.push_back(x);
  return w;
}

std::string prompt_of(const nlohmann::json& body, bool chat) {
  if (!chat) return body.value("prompt", "");
  std::string all;
  for (const auto& m : body["messages"]) all += m.value("content", "") + "\n";
  return all;
}

std::string sse(const nlohmann::json& j) {
  return "data: " + j.dump() + "\n\n";
}

nlohmann::json token_chunk(const std::string& text, bool chat) {
  if (chat) return {{"choices", {{{"index", 0}, {"delta", {{"content", text}}}}}}};
  return {{"choices", {{{"index", 0}, {"text", text}}}}};
}

}  // namespace

MockServer::MockServer(MockConfig cfg) : cfg_(std::move(cfg)) {
  server_.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    nlohmann::json j = {{"object", "list"}, {"data", {{{"id", cfg_.model}, {"object", "model"}}}}};
    res.set_content(j.dump(), "application/json");
  });
  server_.Post("/v1/completions",
               [this](const httplib::Request& q, httplib::Response& r) { generate(q, r, false); });
  server_.Post("/v1/chat/completions",
               [this](const httplib::Request& q, httplib::Response& r) { generate(q, r, true); });
  port_ = server_.bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

MockServer::~MockServer() {
  stopping_ = true;
  server_.stop();
  thread_.join();
}

std::vector<std::map<std::string, std::string>> MockServer::session_headers() const {
  std::lock_guard lock(mu_);
  return session_headers_;
}

std::vector<nlohmann::json> MockServer::bodies() const {
  std::lock_guard lock(mu_);
  return bodies_;
}

long MockServer::cached_prefix_words(const std::vector<std::string>& words) {
  std::size_t best = 0;
  for (const auto& p : seen_prompts_) {
    std::size_t n = 0;
    while (n < p.size() && n < words.size() && p[n] == words[n]) ++n;
    best = std::max(best, n);
  }
  seen_prompts_.push_back(words);
  return static_cast<long>(best);
}

void MockServer::generate(const httplib::Request& req, httplib::Response& res, bool chat) {
  auto body = nlohmann::json::parse(req.body, nullptr, false);
  long cached = 0;
  auto words = split_words(body.is_object() ? prompt_of(body, chat) : "");
  {
    std::lock_guard lock(mu_);
    bodies_.push_back(body);
    auto& seen = session_headers_.emplace_back();
    for (const char* name :
         {"x-session-affinity", "x-opencode-session", "x-claude-code-session-id", "session_id"}) {
      if (req.has_header(name)) seen[name] = req.get_header_value(name);
    }
    cached = cached_prefix_words(words);
  }
  if (cfg_.http_error) {
    res.status = cfg_.http_error;
    res.set_content(R"({"error":{"message":"mock failure for the test","type":"server_error"}})",
                    "application/json");
    return;
  }
  long max_tokens = body.value("max_tokens", 16L);
  if (cfg_.no_stream) {
    res.set_content(R"({"choices":[{"text":"whole answer"}]})", "application/json");
    return;
  }
  long prompt_words = static_cast<long>(words.size());
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, chat, max_tokens, prompt_words, cached](std::size_t, httplib::DataSink& sink) {
        std::unique_lock<std::mutex> serial(serial_, std::defer_lock);
        if (cfg_.keepalive_first) sink.write(": keepalive\n\n", 13);
        if (cfg_.one_at_a_time) serial.lock();
        for (int waited = 0; waited < cfg_.stall_ms && !stopping_; waited += 5) {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        std::this_thread::sleep_for(
            std::chrono::microseconds(cfg_.prefill_us_per_word * (prompt_words - cached)));
        if (chat) {
          // OpenAI's first chat chunk carries only the role: an event that is not a token.
          std::string role = sse({{"choices", {{{"delta", {{"role", "assistant"}}}}}}});
          sink.write(role.data(), role.size());
        }
        for (long i = 0; i < max_tokens && !stopping_; ++i) {
          if (i > 0) std::this_thread::sleep_for(std::chrono::microseconds(cfg_.token_delay_us));
          std::string s = sse(token_chunk(" tok" + std::to_string(i), chat));
          if (!sink.write(s.data(), s.size())) return false;
        }
        nlohmann::json usage = {{"prompt_tokens", prompt_words}, {"completion_tokens", max_tokens}};
        if (cfg_.report_cached) usage["prompt_tokens_details"] = {{"cached_tokens", cached}};
        std::string tail =
            sse({{"choices", nlohmann::json::array()}, {"usage", usage}}) + "data: [DONE]\n\n";
        sink.write(tail.data(), tail.size());
        sink.done();
        return true;
      });
}

int closed_port() {
  // Bind an ephemeral port without listening, note it, and release it: connecting is refused.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

}  // namespace baton::bench::testing
