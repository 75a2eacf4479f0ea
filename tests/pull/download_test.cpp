// pull() against the fake hub: redirects, hashes, resume, Range quirks, errors, the token.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "pull/fake_hub.h"
#include "pull/part_file.h"
#include "pull/pull.h"
#include "support/read_file.h"
#include "support/shared_files.h"

namespace baton::pull {
namespace {

using testing::FakeHub;
using testing::gguf_bytes;
namespace fs = std::filesystem;

class PullTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ = baton::testing::scratch_dir() / "cache";
    log_ = open_memstream(&log_buf_, &log_len_);
    o_.endpoint = hub_.endpoint();
    o_.cache = cache_;
    o_.log = log_;
    o_.retry_delay = std::chrono::milliseconds(0);
  }
  void TearDown() override {
    std::fclose(log_);
    std::free(log_buf_);
  }
  std::string log() {
    std::fflush(log_);
    return std::string(log_buf_, log_len_);
  }
  // The PullError's message, or "" when pull succeeded.
  std::string pull_error(const std::string& what) {
    try {
      pull(what, o_);
    } catch (const PullError& e) {
      return e.what();
    }
    return "";
  }
  fs::path hub_path(const std::string& rel) { return cache_ / rel; }

  FakeHub hub_;
  fs::path cache_;
  PullOptions o_;
  std::FILE* log_ = nullptr;
  char* log_buf_ = nullptr;
  size_t log_len_ = 0;
};

TEST_F(PullTest, FollowsTheRedirectAndVerifiesTheHash) {
  const std::string bytes = gguf_bytes(300000);
  hub_.add("org/model-GGUF", "model-Q4_K_M.gguf", bytes);
  fs::path got = pull("org/model-GGUF/model-Q4_K_M.gguf", o_);
  EXPECT_EQ(got, hub_path("org/model-GGUF/model-Q4_K_M.gguf"));
  EXPECT_EQ(baton::testing::read_file(got), bytes);
  EXPECT_FALSE(fs::exists(got.string() + ".part"));
  EXPECT_EQ(hub_.seen("hub", "GET").size(), 1u);
  EXPECT_EQ(hub_.seen("cdn", "GET").size(), 1u);
  EXPECT_NE(log().find("SHA-256 verified"), std::string::npos) << log();
}

TEST_F(PullTest, NonTerminalProgressIsPlainLinesAtTenPercentSteps) {
  hub_.add("o/m", "m.gguf", gguf_bytes(4 << 20));
  pull("o/m/m.gguf", o_);
  const std::string text = log();
  EXPECT_EQ(text.find('\r'), std::string::npos);
  int lines = 0;
  for (size_t p = 0; (p = text.find("progress: ", p)) != std::string::npos; ++p) ++lines;
  EXPECT_GE(lines, 1);
  EXPECT_LE(lines, 11);
  EXPECT_NE(text.find("4.0 MiB / 4.0 MiB  100.0%"), std::string::npos) << text;
}

TEST_F(PullTest, TerminalProgressRedrawsOneLine) {
  hub_.add("o/m", "m.gguf", gguf_bytes(100000));
  o_.log_is_tty = true;
  pull("o/m/m.gguf", o_);
  EXPECT_NE(log().find("\r97.7 KiB / 97.7 KiB  100.0%"), std::string::npos) << log();
}

TEST_F(PullTest, QuietPrintsNothing) {
  hub_.add("o/m", "m.gguf", gguf_bytes(1000));
  o_.quiet = true;
  pull("o/m/m.gguf", o_);
  EXPECT_EQ(log(), "");
}

TEST_F(PullTest, ResumesAfterADroppedConnectionWithRange) {
  const std::string bytes = gguf_bytes(200000);
  hub_.add("o/m", "m.gguf", bytes).drop_once = true;
  fs::path got = pull("o/m/m.gguf", o_);
  EXPECT_EQ(baton::testing::read_file(got), bytes);
  auto cdn = hub_.seen("cdn", "GET");
  ASSERT_EQ(cdn.size(), 2u);
  EXPECT_EQ(cdn[0].range, "");
  EXPECT_EQ(cdn[1].range, "bytes=100000-");
  EXPECT_NE(log().find("interrupted at"), std::string::npos) << log();
}

TEST_F(PullTest, ASecondRunResumesTheLeftoverPart) {
  const std::string bytes = gguf_bytes(200000);
  hub_.add("o/m", "m.gguf", bytes).drop_once = true;
  o_.retries = 0;
  std::string err = pull_error("o/m/m.gguf");
  EXPECT_NE(err.find("run the same command again: it resumes"), std::string::npos) << err;
  const fs::path part = hub_path("o/m/m.gguf.part");
  ASSERT_TRUE(fs::exists(part));
  EXPECT_EQ(fs::file_size(part), 100000u);
  EXPECT_FALSE(fs::exists(hub_path("o/m/m.gguf")));
  fs::path got = pull("o/m/m.gguf", o_);
  EXPECT_EQ(baton::testing::read_file(got), bytes);
  EXPECT_FALSE(fs::exists(part));
  auto cdn = hub_.seen("cdn", "GET");
  ASSERT_EQ(cdn.size(), 2u);
  EXPECT_EQ(cdn[1].range, "bytes=100000-");
}

TEST_F(PullTest, ServerIgnoringRangeRestartsFromZero) {
  const std::string bytes = gguf_bytes(50000);
  hub_.add("o/m", "m.gguf", bytes).ignore_range = true;
  fs::create_directories(hub_path("o/m"));
  std::ofstream(hub_path("o/m/m.gguf.part"), std::ios::binary) << std::string(1000, 'x');
  fs::path got = pull("o/m/m.gguf", o_);
  EXPECT_EQ(baton::testing::read_file(got),
            bytes);  // the stale 1000 bytes were dropped, not kept in front
  auto cdn = hub_.seen("cdn", "GET");
  ASSERT_EQ(cdn.size(), 1u);
  EXPECT_EQ(cdn[0].range, "bytes=1000-");
  EXPECT_NE(log().find("ignored the request to resume"), std::string::npos) << log();
}

TEST_F(PullTest, A416ForACompletePartKeepsIt) {
  const std::string bytes = gguf_bytes(50000);
  hub_.add("o/m", "m.gguf", bytes);
  fs::create_directories(hub_path("o/m"));
  std::ofstream(hub_path("o/m/m.gguf.part"), std::ios::binary) << bytes;
  fs::path got = pull("o/m/m.gguf", o_);
  EXPECT_EQ(baton::testing::read_file(got), bytes);
  auto cdn = hub_.seen("cdn", "GET");
  ASSERT_EQ(cdn.size(), 1u);
  EXPECT_EQ(cdn[0].range, "bytes=50000-");
  EXPECT_NE(log().find("SHA-256 verified"), std::string::npos) << log();
}

TEST_F(PullTest, A416ForAnOversizedPartStartsOver) {
  const std::string bytes = gguf_bytes(50000);
  hub_.add("o/m", "m.gguf", bytes);
  fs::create_directories(hub_path("o/m"));
  std::ofstream(hub_path("o/m/m.gguf.part"), std::ios::binary) << bytes << "extra";
  fs::path got = pull("o/m/m.gguf", o_);
  EXPECT_EQ(baton::testing::read_file(got), bytes);
  auto cdn = hub_.seen("cdn", "GET");
  ASSERT_EQ(cdn.size(), 2u);
  EXPECT_EQ(cdn[1].range, "");
}

// A wrong hash deletes the .part too: its bytes cannot be trusted for a resume.
TEST_F(PullTest, WrongHashFailsAndKeepsNothing) {
  hub_.add("o/m", "m.gguf", gguf_bytes(50000)).published_sha = std::string(64, 'e');
  std::string err = pull_error("o/m/m.gguf");
  EXPECT_NE(err.find("SHA-256 mismatch"), std::string::npos) << err;
  EXPECT_NE(err.find(std::string(64, 'e')), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(hub_path("o/m/m.gguf")));
  EXPECT_FALSE(fs::exists(hub_path("o/m/m.gguf.part")));
}

TEST_F(PullTest, NonGgufIsRefusedAndDeleted) {
  hub_.add("o/m", "m.gguf", "<!DOCTYPE html><html><body>Sign in</body></html>");
  std::string err = pull_error("o/m/m.gguf");
  EXPECT_NE(err.find("not a GGUF file"), std::string::npos) << err;
  EXPECT_NE(err.find("<!DOCTYPE html>"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(hub_path("o/m/m.gguf")));
  EXPECT_FALSE(fs::exists(hub_path("o/m/m.gguf.part")));
}

TEST_F(PullTest, NotFoundSaysWhichPart) {
  hub_.add("o/m", "m.gguf", gguf_bytes(100));
  EXPECT_NE(pull_error("o/nope/m.gguf").find("repository o/nope does not exist"),
            std::string::npos);
  EXPECT_NE(pull_error("o/m/other.gguf").find("has no file 'other.gguf'"), std::string::npos);
  o_.revision = "v2";
  EXPECT_NE(pull_error("o/m/m.gguf").find("revision 'v2' does not exist"), std::string::npos);
  EXPECT_FALSE(fs::exists(hub_path("o/m/other.gguf.part")));  // no empty leftovers
}

TEST_F(PullTest, GatedRepoNeedsTheToken) {
  hub_.add("o/gated", "m.gguf", gguf_bytes(5000));
  hub_.gate("o/gated", "hf_secret");
  std::string err = pull_error("o/gated/m.gguf");
  EXPECT_NE(err.find("401"), std::string::npos) << err;
  EXPECT_NE(err.find("set HF_TOKEN"), std::string::npos) << err;
  EXPECT_EQ(hub_.seen("hub", "GET").back().auth, "");
  o_.token = "hf_wrong";
  err = pull_error("o/gated/m.gguf");
  EXPECT_NE(err.find("403"), std::string::npos) << err;
  EXPECT_NE(err.find("HF_TOKEN lacks access"), std::string::npos) << err;
  o_.token = "hf_secret";
  EXPECT_EQ(pull_error("o/gated/m.gguf"), "");
  EXPECT_EQ(hub_.seen("hub", "GET").back().auth, "Bearer hf_secret");
  // The CDN is another origin (port): the token never goes there.
  for (const auto& r : hub_.seen()) {
    if (r.server == "cdn") {
      EXPECT_EQ(r.auth, "") << r.path;
    }
  }
}

TEST_F(PullTest, UrlsGetTheTokenOnlyOnTheHubsOrigin) {
  const std::string bytes = gguf_bytes(5000);
  hub_.add("o/m", "m.gguf", bytes);
  o_.token = "hf_secret";
  fs::path got = pull(hub_.cdn_url_of("o/m", "m.gguf"), o_);
  EXPECT_EQ(baton::testing::read_file(got), bytes);
  EXPECT_EQ(got.parent_path().parent_path(),
            cache_ / "urls" / ("127.0.0.1_" + std::to_string(hub_.cdn_port())));
  EXPECT_EQ(hub_.seen("cdn", "GET").at(0).auth, "");
  got = pull(hub_.endpoint() + "/o/m/resolve/main/m.gguf", o_);
  EXPECT_EQ(baton::testing::read_file(got), bytes);
  EXPECT_EQ(hub_.seen("hub", "GET").at(0).auth, "Bearer hf_secret");
  EXPECT_EQ(hub_.seen("cdn", "GET").at(1).auth, "");
  EXPECT_NE(log().find("SHA-256 verified"), std::string::npos);  // X-Linked-ETag on URLs too
}

TEST_F(PullTest, QuantPicksFromTheListing) {
  hub_.add("o/m-GGUF", "m-Q4_K_M.gguf", gguf_bytes(3000, 'b'));
  hub_.add("o/m-GGUF", "m-Q8_0.gguf", gguf_bytes(6000, 'c'));
  hub_.add("o/m-GGUF", "README.md", "# model");
  o_.quant = "q8_0";
  fs::path got = pull("o/m-GGUF", o_);
  EXPECT_EQ(got, hub_path("o/m-GGUF/m-Q8_0.gguf"));
  EXPECT_EQ(baton::testing::read_file(got), gguf_bytes(6000, 'c'));
  EXPECT_EQ(hub_.seen("hub", "GET")[0].path, "/api/models/o/m-GGUF/tree/main");
  o_.quant = "Q5_K_M";
  std::string err = pull_error("o/m-GGUF");
  EXPECT_NE(err.find("no GGUF file for --quant Q5_K_M; it has: Q4_K_M, Q8_0"), std::string::npos)
      << err;
  o_.quant = "";
  err = pull_error("o/m-GGUF");
  EXPECT_NE(err.find("choose one with --quant"), std::string::npos) << err;
}

TEST_F(PullTest, CachedCopyOfTheSameSizeIsKept) {
  hub_.add("o/m", "m.gguf", gguf_bytes(5000));
  pull("o/m/m.gguf", o_);
  pull("o/m/m.gguf", o_);
  EXPECT_EQ(hub_.seen("cdn", "GET").size(), 1u);
  EXPECT_EQ(hub_.seen("hub", "HEAD").size(), 1u);
  EXPECT_NE(log().find("already in the cache"), std::string::npos) << log();
  hub_.add("o/m", "m.gguf", gguf_bytes(6000));  // the remote changed size: fetched again
  fs::path got = pull("o/m/m.gguf", o_);
  EXPECT_EQ(baton::testing::read_file(got), gguf_bytes(6000));
  EXPECT_EQ(hub_.seen("cdn", "GET").size(), 2u);
}

TEST_F(PullTest, FileServedByTheHubItselfHasNoHashToCheck) {
  hub_.add("o/m", "small.gguf", gguf_bytes(2000)).lfs = false;
  fs::path got = pull("o/m/small.gguf", o_);
  EXPECT_EQ(baton::testing::read_file(got), gguf_bytes(2000));
  EXPECT_NE(log().find("no published SHA-256"), std::string::npos) << log();
}

TEST_F(PullTest, ASecondPullOfTheSameFileWaitsItsTurn) {
  hub_.add("o/m", "m.gguf", gguf_bytes(5000));
  fs::create_directories(hub_path("o/m"));
  {
    PartFile busy(hub_path("o/m/m.gguf"));  // holds the lock as a running pull does
    EXPECT_NE(pull_error("o/m/m.gguf").find("another baton pull is downloading"),
              std::string::npos);
  }
  EXPECT_EQ(pull_error("o/m/m.gguf"), "");
}

TEST_F(PullTest, BadEndpointOrTokenIsNamed) {
  o_.token = "hf_x\r\nX-Injected: 1";
  EXPECT_NE(pull_error("o/m/m.gguf").find("HF_TOKEN holds spaces"), std::string::npos);
  o_.token = "";
  o_.endpoint = "huggingface.co";
  EXPECT_NE(pull_error("o/m/m.gguf").find("HF_ENDPOINT 'huggingface.co'"), std::string::npos);
}

TEST_F(PullTest, QuantOrRevisionWhereTheyDoNotApply) {
  o_.quant = "Q4_K_M";
  EXPECT_NE(pull_error("o/m/m.gguf").find("--quant picks a file of a repo"), std::string::npos);
  o_.quant = "";
  o_.revision = "v1";
  EXPECT_NE(pull_error(hub_.cdn_url_of("o/m", "m.gguf")).find("--revision applies"),
            std::string::npos);
}

// Restores one environment variable when the scope ends.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~ScopedEnv() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST_F(PullTest, CacheFolderFromTheEnvironment) {
  ScopedEnv cache("BATON_CACHE", nullptr), xdg("XDG_CACHE_HOME", "/xdg"), home("HOME", "/home/u");
  EXPECT_EQ(default_cache_dir(), fs::path("/xdg/baton/models"));
  {
    ScopedEnv no_xdg("XDG_CACHE_HOME", nullptr);
    EXPECT_EQ(default_cache_dir(), fs::path("/home/u/.cache/baton/models"));
    ScopedEnv no_home("HOME", nullptr);
    EXPECT_THROW(default_cache_dir(), PullError);
  }
  ScopedEnv set("BATON_CACHE", "/somewhere");
  EXPECT_EQ(default_cache_dir(), fs::path("/somewhere"));
}

TEST_F(PullTest, OptionsFromTheEnvironment) {
  ScopedEnv endpoint("HF_ENDPOINT", (hub_.endpoint() + "/").c_str());
  ScopedEnv cache("BATON_CACHE", cache_.c_str()), token("HF_TOKEN", "hf_env");
  PullOptions o = options_from_env();
  EXPECT_EQ(o.endpoint, hub_.endpoint());
  EXPECT_EQ(o.cache, cache_);
  EXPECT_EQ(o.token, "hf_env");
}

}  // namespace
}  // namespace baton::pull
