// The pure parts of pull: references, cache paths, quant choice, hashes, progress text.
#include <gtest/gtest.h>

#include "pull/cache_list.h"
#include "pull/download.h"
#include "pull/hub_listing.h"
#include "pull/model_ref.h"
#include "pull/part_file.h"
#include "pull/progress.h"
#include "pull/pull.h"
#include "pull/pull_errors.h"

namespace baton::pull {
namespace {

TEST(PullRef, ParsesRepoFileRepoAndUrl) {
  ModelRef f = parse_ref("Qwen/Qwen2.5-0.5B-Instruct-GGUF/sub/q4.gguf");
  EXPECT_EQ(f.kind, ModelRef::Kind::HubFile);
  EXPECT_EQ(f.repo, "Qwen/Qwen2.5-0.5B-Instruct-GGUF");
  EXPECT_EQ(f.file, "sub/q4.gguf");
  ModelRef r = parse_ref("owner/name");
  EXPECT_EQ(r.kind, ModelRef::Kind::HubRepo);
  EXPECT_EQ(r.repo, "owner/name");
  ModelRef u = parse_ref("https://example.com/a/b.gguf?x=1");
  EXPECT_EQ(u.kind, ModelRef::Kind::Url);
}

TEST(PullRef, RefusesWhatCouldEscapeTheCache) {
  for (const char* bad : {"name", "owner/..", "../x/y.gguf", "o/n/../../etc/passwd", "o/n//x",
                          "o/n/x/", "ftp://host/x.gguf", "o w/n/x.gguf", "o/n/."}) {
    EXPECT_THROW(parse_ref(bad), PullError) << bad;
  }
  try {
    parse_ref("justaname");
    FAIL();
  } catch (const PullError& e) {
    EXPECT_NE(std::string(e.what()).find("--quant"), std::string::npos) << e.what();
  }
}

TEST(PullRef, UrlsAndCachePaths) {
  EXPECT_EQ(resolve_url("https://h.co", "o/n", "main", "dir/a b.gguf"),
            "https://h.co/o/n/resolve/main/dir/a%20b.gguf");
  EXPECT_EQ(resolve_url("https://h.co", "o/n", "refs/pr/1", "a.gguf"),
            "https://h.co/o/n/resolve/refs%2Fpr%2F1/a.gguf");
  EXPECT_EQ(tree_url("https://h.co", "o/n", "main"),
            "https://h.co/api/models/o/n/tree/main?recursive=true");
  EXPECT_EQ(hub_cache_path("/c", "o/n", "main", "d/a.gguf"), "/c/o/n/d/a.gguf");
  EXPECT_EQ(hub_cache_path("/c", "o/n", "refs/pr/1", "a.gguf"), "/c/o/n@refs-pr-1/a.gguf");
  EXPECT_EQ(url_cache_path("/c", "https://Example.com/x/m%20a.gguf?sig=1"),
            "/c/urls/example.com/x/m a.gguf");
  EXPECT_EQ(url_cache_path("/c", "http://127.0.0.1:8080/m.gguf"), "/c/urls/127.0.0.1_8080/m.gguf");
  EXPECT_THROW(url_cache_path("/c", "https://example.com/dir/"), PullError);
  EXPECT_THROW(url_cache_path("/c", "https://example.com/a/%2e%2e/%2e%2e/x"), PullError);
  EXPECT_TRUE(same_origin("https://h.co/a", "https://H.co:443/b"));
  EXPECT_FALSE(same_origin("https://h.co/a", "https://cdn.h.co/a"));
  EXPECT_FALSE(same_origin("http://127.0.0.1:1/a", "http://127.0.0.1:2/a"));
}

TEST(PullQuant, ReadsTheQuantizationFromFileNames) {
  EXPECT_EQ(quant_of("qwen2.5-0.5b-instruct-q4_k_m.gguf"), "Q4_K_M");
  EXPECT_EQ(quant_of("Llama-3.2-1B-Instruct-IQ2_XXS.gguf"), "IQ2_XXS");
  EXPECT_EQ(quant_of("model.Q8_0.gguf"), "Q8_0");
  EXPECT_EQ(quant_of("sub/gemma-bf16.gguf"), "BF16");
  EXPECT_EQ(quant_of("qwen2.5-0.5b-instruct-fp16.gguf"), "FP16");
  EXPECT_EQ(quant_of("stories260K.gguf"), "");
}

std::vector<RepoFile> repo_files() {
  return {{"README.md", 10},
          {"m-Q4_K_M.gguf", 1},
          {"m-Q4_K_S.gguf", 1},
          {"m-Q8_0.gguf", 1},
          {"mmproj-m-F16.gguf", 1},
          {"m-F16.gguf", 1},
          {"big/m-Q2_K-00001-of-00002.gguf", 1},
          {"big/m-Q2_K-00002-of-00002.gguf", 1}};
}

std::string pick_error(std::string_view quant) {
  try {
    pick_gguf(repo_files(), quant, "o/m");
  } catch (const PullError& e) {
    return e.what();
  }
  return "";
}

TEST(PullQuant, PicksOneFileOrSaysWhatThereIs) {
  EXPECT_EQ(pick_gguf(repo_files(), "q4_k_m", "o/m"), "m-Q4_K_M.gguf");
  EXPECT_EQ(pick_gguf(repo_files(), "F16", "o/m"), "m-F16.gguf");  // never the projector
  std::string none = pick_error("Q5_K_M");
  EXPECT_NE(none.find("Q4_K_M, Q4_K_S, Q8_0"), std::string::npos) << none;
  std::string several = pick_error("Q4_K");
  EXPECT_NE(several.find("m-Q4_K_M.gguf, m-Q4_K_S.gguf"), std::string::npos) << several;
  EXPECT_NE(pick_error("Q2_K").find("splits this model"), std::string::npos);
  EXPECT_NE(pick_error("").find("--quant"), std::string::npos);
  EXPECT_EQ(pick_gguf({{"only.gguf", 1}, {"x.txt", 1}}, "", "o/m"), "only.gguf");
  EXPECT_THROW(pick_gguf({{"x.txt", 1}}, "", "o/m"), PullError);
}

TEST(PullQuant, ParsesTheTreeListing) {
  auto files = parse_tree(
      R"([{"type":"file","path":"a.gguf","size":12,"lfs":{"oid":"x"}},
          {"type":"directory","path":"d"},{"type":"file","path":"d/b.gguf","size":3}])");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].path, "a.gguf");
  EXPECT_EQ(files[0].size, 12u);
  EXPECT_EQ(files[1].path, "d/b.gguf");
  EXPECT_THROW(parse_tree("<html>"), PullError);
}

TEST(PullHash, EtagsThatAreSha256) {
  const std::string h(64, 'a');
  EXPECT_EQ(sha256_from_etag("\"" + h + "\""), h);
  EXPECT_EQ(sha256_from_etag("W/\"" + std::string(64, 'B') + "\""), std::string(64, 'b'));
  EXPECT_EQ(sha256_from_etag("\"0123456789abcdef0123456789abcdef01234567\""), "");  // git sha1
  EXPECT_EQ(sha256_from_etag("\"" + std::string(63, 'a') + "g\""), "");
}

TEST(PullHash, GgufHeaderCheck) {
  EXPECT_EQ(gguf_header_problem(std::string("GGUF\x03\x00\x00\x00", 8)), "");
  EXPECT_EQ(gguf_header_problem(std::string("GGUF\x02\x00\x00\x00", 8)), "");
  EXPECT_NE(gguf_header_problem("<!DOCTYPE html><html>").find("<!DOCTYPE html>"),
            std::string::npos);
  EXPECT_NE(gguf_header_problem(std::string("GGUF\x01\x00\x00\x00", 8)).find("version 1"),
            std::string::npos);
  EXPECT_NE(gguf_header_problem("GGU"), "");
}

TEST(PullProgress, Text) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(3ull << 30), "3.00 GiB");
  EXPECT_EQ(format_duration(65), "1m05s");
  EXPECT_EQ(format_duration(3700), "1h01m");
  EXPECT_EQ(progress_text(512ull << 20, 1024ull << 20, 64ull << 20),
            "512.0 MiB / 1.00 GiB   50.0%  64.0 MiB/s  ETA 8s");
  EXPECT_EQ(progress_text(100, 0, 0), "100 B  -- B/s");
}

HttpResult answer(long status, const std::string& code = "") {
  HttpResult r;
  r.last.status = status;
  if (!code.empty()) r.last.headers["x-error-code"] = code;
  return r;
}

TEST(PullErrors, SayWhatToDo) {
  Target t{
      "o/m/f.gguf", "https://hub/o/m/resolve/main/f.gguf", "https://hub", "o/m", "f.gguf", "main",
      false};
  EXPECT_NE(http_error_message(t, answer(401)).find("set HF_TOKEN"), std::string::npos);
  EXPECT_NE(http_error_message(t, answer(401, "RepoNotFound")).find("does not exist or is private"),
            std::string::npos);
  EXPECT_NE(http_error_message(t, answer(503)).find("try again later"), std::string::npos);
  t.token = true;
  EXPECT_NE(http_error_message(t, answer(401)).find("refused HF_TOKEN"), std::string::npos);
  Target url{"https://x.org/f.gguf", "https://x.org/f.gguf", "https://hub", "", "", "main", false};
  EXPECT_NE(http_error_message(url, answer(404)).find("check the URL"), std::string::npos);
  EXPECT_NE(http_error_message(url, answer(403)).find("HF_TOKEN goes to the hub only"),
            std::string::npos);
  HttpResult dns;
  dns.curl_code = 6;  // CURLE_COULDNT_RESOLVE_HOST
  dns.error = "Could not resolve host: x.org";
  EXPECT_NE(network_error_message(url, dns, 1).find("cannot resolve x.org"), std::string::npos);
}

TEST(PullCache, EmptyListingSaysHowToPull) {
  std::string text = format_cache_listing("/nowhere", list_cache("/nowhere/at/all"));
  EXPECT_NE(text.find("no models in /nowhere"), std::string::npos);
  EXPECT_NE(text.find("baton pull"), std::string::npos);
}

}  // namespace
}  // namespace baton::pull
