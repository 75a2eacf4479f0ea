// The connections scenario against the real `baton serve` on a tiny synthetic model: every
// connection is accepted, every stream finishes, and the server's memory figures are read.
#include <gtest/gtest.h>
#include <httplib.h>

#include <cmath>
#include <thread>

#include "bench/mock_server.h"
#include "bench/scenarios.h"
#include "bench/serve_process.h"
#include "support/shared_files.h"

namespace baton::bench {
namespace {

// `baton serve` on a model made by `baton gguf synth`, stopped when the test ends.
class SynthServer {
 public:
  explicit SynthServer(const std::filesystem::path& dir) {
    auto model = (dir / "tiny.gguf").string();
    std::string synth = "'" + baton::testing::baton_binary() + "' gguf synth '" + model +
                        "' --byte-vocab --ctx 256 --threads 1 >/dev/null 2>&1";
    if (std::system(synth.c_str()) != 0) {
      error_ = "baton gguf synth failed";
      return;
    }
    error_ = proc_.start(model,
                         {"--parallel", "4", "--max-connections", "200", "--max-queue", "200"}, 15);
  }

  const std::string& error() const { return error_; }
  std::string url() const { return proc_.url(); }

 private:
  testing::ServeProcess proc_;
  std::string error_;
};

double value(const Phase& p, const std::string& name) {
  for (const auto& f : p.figures) {
    if (f.name == name) return f.value;
  }
  ADD_FAILURE() << "no figure " << name << " in phase " << p.name;
  return NAN;
}

TEST(ConnectionsScenario, FiftyConnectionsAgainstBatonServe) {
  BATON_REQUIRE_BINARY();
  SynthServer srv(baton::testing::scratch_dir());
  ASSERT_TRUE(srv.error().empty()) << srv.error();
  ScenarioOptions opt;
  opt.model = "tiny";
  opt.timeout_s = 15;
  opt.knobs = {{"connections", 50}, {"health-probes", 5}};
  auto r = run_scenario("connections", parse_endpoint(srv.url()), opt,
                        Clock::now() + std::chrono::seconds(40));
  for (const auto& e : r.errors) ADD_FAILURE() << e;
  ASSERT_EQ(r.phases.size(), 2u);
  for (const auto& p : r.phases) {
    EXPECT_EQ(value(p, "connections opened"), 50) << p.name;
    EXPECT_EQ(value(p, "accepted (200)"), 50) << p.name;
    EXPECT_EQ(value(p, "rejected (503)"), 0) << p.name;
    EXPECT_EQ(value(p, "failed or other status"), 0) << p.name;
    EXPECT_GT(value(p, "server RSS before"), 1) << p.name;  // MB
    EXPECT_GT(value(p, "server RSS with them open"), 1) << p.name;
    // Every held connection is a descriptor in the server.
    EXPECT_GE(value(p, "open fds with them open"), value(p, "open fds before") + 40) << p.name;
    EXPECT_FALSE(std::isnan(value(p, "/health max with them open"))) << p.name;
  }
  EXPECT_EQ(value(r.phases[0], "held at the snapshot"), 50);
  EXPECT_EQ(value(r.phases[1], "streams finished ([DONE])"), 50);
  EXPECT_EQ(r.options["connections"], 50);
  EXPECT_EQ(r.options["decode-tokens"], 8);  // the scenario default
}

TEST(ConnectionsScenario, RefusesHttps) {
  ScenarioOptions opt;
  opt.model = "m";
  EXPECT_THROW(run_scenario("connections", parse_endpoint("https://127.0.0.1:1"), opt,
                            Clock::now() + std::chrono::seconds(5)),
               BenchError);
}

}  // namespace
}  // namespace baton::bench
