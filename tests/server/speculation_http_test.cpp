// --speculate (suffix on the story model, ngram on the random one) through HTTP on a real trained
// model (stories260K, which repeats itself as
// small story models do): every answer's bytes, finish reason and logprobs are the same as
// without speculation, greedy and sampled (temperature 1, top-p, many seeds), under a grammar,
// with stop strings, from concurrent clients; and drafts were made and kept along the way.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "support/shared_files.h"
#include "support/time_budget.h"

extern char** environ;

namespace baton::server::testing {
namespace {

using nlohmann::json;

class Serve {
 public:
  Serve(const std::string& model, std::vector<std::string> extra) {
    int probe = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ::bind(probe, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::getsockname(probe, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    ::close(probe);
    std::vector<std::string> args = {
        baton::testing::baton_binary(), "serve",     "-m", model,        "--port",
        std::to_string(port_),          "--threads", "1",  "--parallel", "4"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    ::posix_spawn_file_actions_init(&fa);
    ::posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    ::posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    if (::posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ) != 0) pid_ = 0;
    ::posix_spawn_file_actions_destroy(&fa);
  }
  ~Serve() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int st = 0;
    ::waitpid(pid_, &st, 0);
  }
  bool ready() const {
    httplib::Client c("127.0.0.1", port_);
    const auto until = std::chrono::steady_clock::now() + baton::testing::kSlowWait;
    while (std::chrono::steady_clock::now() < until) {
      if (auto r = c.Get("/health"); r && r->status == 200) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  json post(const json& body) const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(std::chrono::seconds(120));
    auto r = c.Post("/v1/completions", body.dump(), "application/json");
    if (!r) return {{"transport_error", httplib::to_string(r.error())}};
    json j = json::parse(r->body, nullptr, false);
    j["http_status"] = r->status;
    return j;
  }
  double metric(const std::string& name) const {
    httplib::Client c("127.0.0.1", port_);
    auto r = c.Get("/metrics");
    std::smatch m;
    if (r && std::regex_search(r->body, m, std::regex("\n" + name + " ([0-9.e+]+)"))) {
      return std::stod(m[1]);
    }
    return -1;
  }

 private:
  pid_t pid_ = 0;
  int port_ = 0;
};

// The requests: prompts that a story model continues by repeating itself, each greedy, sampled,
// sampled under a grammar and with stop strings and logprobs, over seeds.
std::vector<json> requests(int seeds) {
  const std::vector<std::string> prompts = {
      "Once upon a time, there was a little girl named Lily. She loved to play outside. Once "
      "upon a time, there was a little girl named",
      "The cat sat on the mat. The dog sat on the log. The cat sat on the",
      "Tom and Sue went to the park. They played with a ball. Tom and Sue",
      "One day, a big bird flew to the tree. The big bird"};
  std::vector<json> out;
  for (const auto& p : prompts) {
    for (int seed = 0; seed < seeds; ++seed) {
      json base = {{"prompt", p}, {"max_tokens", 48}, {"seed", seed}};
      if (seed < 2) {
        json greedy = base;
        greedy["temperature"] = 0;
        out.push_back(greedy);
      }
      json sampled = base;
      sampled["temperature"] = 1.0;
      sampled["top_p"] = 0.9;
      out.push_back(sampled);
      json grammar = sampled;
      grammar["grammar"] = "root ::= ([a-z ]+ \".\")+";
      out.push_back(grammar);
      json stops = sampled;
      stops["stop"] = {"Lily", "park."};
      stops["logprobs"] = 2;
      out.push_back(stops);
    }
  }
  return out;
}

struct Compared {
  size_t stopped = 0;  // answers a stop string ended
  double drafted = 0, accepted = 0;
};

// Sends `reqs` to a server with and one without speculation and compares every answer.
Compared compare(const std::string& model, const std::vector<json>& reqs, const std::string& mode) {
  Compared out;
  Serve plain(model, {});
  Serve spec(model, {"--speculate", mode, "--draft-max", "6"});
  EXPECT_TRUE(plain.ready());
  EXPECT_TRUE(spec.ready());
  std::vector<json> want(reqs.size()), got(reqs.size());
  // Four clients at once, so drafts ride in steps beside other requests' rows.
  auto run = [&](const Serve& s, std::vector<json>& into) {
    std::vector<std::thread> clients;
    for (int t = 0; t < 4; ++t) {
      clients.emplace_back([&, t] {
        for (size_t i = static_cast<size_t>(t); i < reqs.size(); i += 4) into[i] = s.post(reqs[i]);
      });
    }
    for (auto& c : clients) c.join();
  };
  run(plain, want);
  run(spec, got);
  for (size_t i = 0; i < reqs.size(); ++i) {
    SCOPED_TRACE(reqs[i].dump());
    EXPECT_EQ(want[i]["http_status"], 200) << want[i].dump();
    EXPECT_EQ(got[i]["http_status"], 200) << got[i].dump();
    const json& a = want[i]["choices"][0];
    const json& b = got[i]["choices"][0];
    EXPECT_EQ(b["text"], a["text"]);
    EXPECT_EQ(b["finish_reason"], a["finish_reason"]);
    EXPECT_EQ(b["logprobs"], a["logprobs"]);
    EXPECT_EQ(got[i]["usage"]["completion_tokens"], want[i]["usage"]["completion_tokens"]);
    if (reqs[i].contains("stop") && a["finish_reason"] == "stop") ++out.stopped;
  }
  out.drafted = spec.metric("baton_spec_drafted_tokens_total");
  out.accepted = spec.metric("baton_spec_accepted_tokens_total");
  EXPECT_EQ(plain.metric("baton_spec_drafted_tokens_total"), 0);
  return out;
}

TEST(SpeculationHttp, AStoryModelsAnswersAreTheSameBytesWithAndWithoutDrafts) {
  BATON_REQUIRE_BINARY();
  BATON_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const Compared c = compare(model.string(), requests(10), "suffix");
  EXPECT_GT(c.stopped, 0u) << "a stop string ended some answers";
  // How many are made follows the fitted step cost (on a model this small a row is a good part of
  // a step), but every request drafts at least once and about half of the drafts are right.
  EXPECT_GT(c.accepted, 20) << "drafts were kept (" << c.drafted << " drafted)";
  EXPECT_LT(c.accepted, c.drafted) << "and some were dropped";
}

// Random weights on the Llama-2 vocabulary: drafts are mostly wrong, and dropping them must
// leave no trace either.
TEST(SpeculationHttp, ARandomModelsAnswersAreTheSameBytesWithAndWithoutDrafts) {
  BATON_REQUIRE_BINARY();
  BATON_REQUIRE_SHARED(model, "models/llama-2-tiny-random.gguf");
  const Compared c = compare(model.string(), requests(3), "ngram");
  EXPECT_GT(c.drafted, 0) << "drafts were made";
}

}  // namespace
}  // namespace baton::server::testing
