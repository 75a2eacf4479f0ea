#pragma once
// A Hugging Face hub imitation on loopback for the pull tests: the hub answers the tree API and
// /resolve/ (302 to a "CDN" on another port for LFS files, with X-Linked-ETag / X-Linked-Size,
// as the real hub does), the CDN serves the bytes with Range support. Per-file switches make it
// misbehave: drop the connection mid-file once, ignore Range, publish a wrong hash, need a token.
#include <httplib.h>
#include <openssl/evp.h>

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace baton::pull::testing {

inline std::string sha256_hex(const std::string& bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr);
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    static constexpr char kHex[] = "0123456789abcdef";
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
}

// Bytes that pass the GGUF header check: magic, version 3, then filler.
inline std::string gguf_bytes(size_t n, char seed = 'a') {
  std::string s = std::string("GGUF") + std::string("\x03\x00\x00\x00", 4);
  while (s.size() < n) s += static_cast<char>(seed + s.size() % 23);
  s.resize(n);
  return s;
}

struct FakeFile {
  std::string bytes;
  bool lfs = true;            // redirect to the CDN (else served by the hub itself)
  bool drop_once = false;     // the first GET of the bytes stops halfway and closes
  bool ignore_range = false;  // always 200 with the whole file
  std::string published_sha;  // X-Linked-ETag when not the real one (a wrong hash)
  int get_count = 0;
};

struct SeenRequest {
  std::string server;  // "hub" or "cdn"
  std::string method, path, range, auth;
};

class FakeHub {
 public:
  FakeHub() {
    setup_hub();
    setup_cdn();
    hub_port_ = hub_.bind_to_any_port("127.0.0.1");
    cdn_port_ = cdn_.bind_to_any_port("127.0.0.1");
    hub_thread_ = std::thread([this] { hub_.listen_after_bind(); });
    cdn_thread_ = std::thread([this] { cdn_.listen_after_bind(); });
    // stop() before the accept loop runs would be lost and join() would wait forever.
    while (!hub_.is_running() || !cdn_.is_running()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ~FakeHub() {
    hub_.stop();
    cdn_.stop();
    hub_thread_.join();
    cdn_thread_.join();
  }

  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(hub_port_); }
  std::string cdn_url(const std::string& key) const {
    return "http://127.0.0.1:" + std::to_string(cdn_port_) + "/blobs/" + key;
  }
  // Where the hub's redirect for this file points.
  std::string cdn_url_of(const std::string& repo, const std::string& path) const {
    return cdn_url(repo_key(repo, path));
  }
  int cdn_port() const { return cdn_port_; }

  FakeFile& add(const std::string& repo, const std::string& path, std::string bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    auto& f = repos_[repo][path];
    f.bytes = std::move(bytes);
    return f;
  }
  // The repo answers 401 without "Authorization: Bearer <token>", 403 with another token.
  void gate(const std::string& repo, const std::string& token) {
    std::lock_guard<std::mutex> lock(mu_);
    gated_[repo] = token;
  }
  std::vector<SeenRequest> seen() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }
  std::vector<SeenRequest> seen(const std::string& server, const std::string& method) {
    std::vector<SeenRequest> out;
    for (auto& r : seen()) {
      if (r.server == server && r.method == method) out.push_back(r);
    }
    return out;
  }

 private:
  void record(const std::string& server, const httplib::Request& req) {
    std::lock_guard<std::mutex> lock(mu_);
    seen_.push_back({server, req.method, req.path, req.get_header_value("Range"),
                     req.get_header_value("Authorization")});
  }

  // 0 when the request may see the repo, else 401 or 403.
  int denied(const std::string& repo, const httplib::Request& req) {
    auto it = gated_.find(repo);
    if (it == gated_.end()) return 0;
    const std::string auth = req.get_header_value("Authorization");
    if (auth.empty()) return 401;
    return auth == "Bearer " + it->second ? 0 : 403;
  }

  static void error(httplib::Response& res, int status, const std::string& code) {
    res.status = status;
    if (!code.empty()) res.set_header("X-Error-Code", code);
    res.set_content("{\"error\":\"" + code + "\"}", "application/json");
  }

  // The bytes, honouring "Range: bytes=N-" by hand: httplib's own range handling would
  // otherwise answer for the fake, and the fake must be able to ignore Range.
  static void serve_bytes(const httplib::Request& req, httplib::Response& res, FakeFile& f) {
    const_cast<httplib::Request&>(req).ranges.clear();
    const std::string range = req.get_header_value("Range");
    size_t from = 0;
    if (!range.empty() && !f.ignore_range && range.rfind("bytes=", 0) == 0) {
      from = std::stoull(range.substr(6));
      if (from >= f.bytes.size()) {
        res.status = 416;
        res.set_header("Content-Range", "bytes */" + std::to_string(f.bytes.size()));
        return;
      }
      res.status = 206;
      res.set_header("Content-Range", "bytes " + std::to_string(from) + "-" +
                                          std::to_string(f.bytes.size() - 1) + "/" +
                                          std::to_string(f.bytes.size()));
    } else {
      res.status = 200;
    }
    std::string body = f.bytes.substr(from);
    if (req.method == "GET" && f.drop_once && f.get_count++ == 0) {
      const size_t half = body.size() / 2;
      res.set_content_provider(body.size(), "application/octet-stream",
                               [body, half](size_t off, size_t, httplib::DataSink& sink) {
                                 if (off >= half) return false;  // closes mid-body
                                 sink.write(body.data() + off, half - off);
                                 return true;
                               });
      return;
    }
    res.set_content(body, "application/octet-stream");
  }

  void setup_hub() {
    hub_.Get(R"(/api/models/([^/]+/[^/]+)/tree/([^/?]+))",
             [this](const httplib::Request& req, httplib::Response& res) {
               record("hub", req);
               std::lock_guard<std::mutex> lock(mu_);
               const std::string repo = req.matches[1];
               if (!repos_.count(repo)) return error(res, 404, "RepoNotFound");
               if (int d = denied(repo, req)) return error(res, d, "GatedRepo");
               nlohmann::json list = nlohmann::json::array();
               for (auto& [path, f] : repos_[repo]) {
                 list.push_back({{"type", "file"}, {"path", path}, {"size", f.bytes.size()}});
               }
               list.push_back({{"type", "directory"}, {"path", "docs"}, {"size", 0}});
               res.set_content(list.dump(), "application/json");
             });
    hub_.Get(R"(/([^/]+/[^/]+)/resolve/([^/]+)/(.+))",
             [this](const httplib::Request& req, httplib::Response& res) {
               record("hub", req);
               std::lock_guard<std::mutex> lock(mu_);
               const std::string repo = req.matches[1], rev = req.matches[2], path = req.matches[3];
               if (!repos_.count(repo)) return error(res, 404, "RepoNotFound");
               if (int d = denied(repo, req)) return error(res, d, "GatedRepo");
               if (rev != "main") return error(res, 404, "RevisionNotFound");
               auto it = repos_[repo].find(path);
               if (it == repos_[repo].end()) return error(res, 404, "EntryNotFound");
               FakeFile& f = it->second;
               if (!f.lfs) {
                 res.set_header("ETag", "\"0123456789abcdef0123456789abcdef01234567\"");
                 return serve_bytes(req, res, f);
               }
               const std::string sha = sha256_hex(f.bytes);
               res.set_redirect(cdn_url(repo_key(repo, path)), 302);
               res.set_header("X-Linked-ETag",
                              "\"" + (f.published_sha.empty() ? sha : f.published_sha) + "\"");
               res.set_header("X-Linked-Size", std::to_string(f.bytes.size()));
             });
  }

  void setup_cdn() {
    cdn_.Get(R"(/blobs/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
      record("cdn", req);
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& [repo, files] : repos_) {
        for (auto& [path, f] : files) {
          if (repo_key(repo, path) == req.matches[1]) return serve_bytes(req, res, f);
        }
      }
      res.status = 404;
    });
  }

  static std::string repo_key(const std::string& repo, const std::string& path) {
    return sha256_hex(repo + "/" + path).substr(0, 16) + ".bin";
  }

  httplib::Server hub_, cdn_;
  int hub_port_ = 0, cdn_port_ = 0;
  std::thread hub_thread_, cdn_thread_;
  std::mutex mu_;
  std::map<std::string, std::map<std::string, FakeFile>> repos_;
  std::map<std::string, std::string> gated_;
  std::vector<SeenRequest> seen_;
};

}  // namespace baton::pull::testing
