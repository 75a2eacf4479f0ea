#pragma once
// `baton pull`: fetches a GGUF model from the Hugging Face hub (or any http(s) URL) into a local
// cache, resumably, checked (SHA-256 when the hub publishes it, the GGUF magic always) and
// placed atomically. The only code in baton that touches the network.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace baton::pull {

// Every failure, as one line that names the fix.
class PullError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PullOptions {
  std::string endpoint = "https://huggingface.co";  // $HF_ENDPOINT
  std::filesystem::path cache;                      // $BATON_CACHE, see default_cache_dir()
  std::string token;                                // $HF_TOKEN: sent to the hub's host only
  std::string revision = "main";
  std::string quant;  // with REPO alone: pick the .gguf whose name holds this quantization
  bool quiet = false;
  // Where progress and notes go (stderr in the CLI); nullptr is quiet too.
  std::FILE* log = stderr;
  bool log_is_tty = false;  // redraw one progress line with \r instead of printing lines
  int retries = 3;          // extra attempts after a dropped connection, 5xx or 429
  std::chrono::milliseconds retry_delay{1000};  // doubled after each failed attempt
  long connect_timeout_s = 30;
  long stall_timeout_s = 60;  // a transfer that moves no byte for this long is retried
};

// The cache folder: $BATON_CACHE, else $XDG_CACHE_HOME/baton/models, else
// $HOME/.cache/baton/models. Throws PullError when none of them is set.
std::filesystem::path default_cache_dir();

// Defaults plus HF_ENDPOINT, HF_TOKEN and the cache folder; log on stderr, tty from isatty(2).
PullOptions options_from_env();

// Resolves WHAT (REPO/FILE, REPO with options.quant, or an http(s) URL), downloads it into the
// cache unless a copy of the remote's size is already there, and returns the local path.
std::filesystem::path pull(const std::string& what, const PullOptions& options);

}  // namespace baton::pull
