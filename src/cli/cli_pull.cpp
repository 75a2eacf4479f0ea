// `baton pull REPO[/FILE] | URL` and `baton models`: the model cache (src/pull).
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "pull/cache_list.h"
#include "pull/pull.h"

namespace baton::cli {
namespace {

struct PullArgs {
  std::string what;
  std::string quant;
  std::string revision = "main";
  bool quiet = false;
};

constexpr const char* kPullFooter =
    "WHAT is REPO/FILE.gguf on the Hugging Face hub, REPO with --quant (or a repo with a single "
    "GGUF file), or an http(s) URL. The path of the local copy is printed on stdout, alone; "
    "progress and notes go to stderr.\n"
    "An interrupted download resumes from FILE.part (HTTP Range): up to 3 retries in the same "
    "run, then on the next run. The hub's SHA-256 (X-Linked-ETag) and the GGUF header are checked "
    "before the file "
    "is renamed into place. A file already in the cache is kept when its size equals the "
    "remote's (one HEAD request; it is not re-hashed).\n"
    "Environment: BATON_CACHE (default $XDG_CACHE_HOME/baton/models, else "
    "~/.cache/baton/models), HF_TOKEN (gated or private repos; sent to the hub's origin only), "
    "HF_ENDPOINT (default https://huggingface.co), https_proxy.";

void register_pull_command(CLI::App& app) {
  auto a = std::make_shared<PullArgs>();
  auto* cmd = app.add_subcommand(
      "pull", "download a GGUF model (Hugging Face hub or URL) into the cache; print its path");
  cmd->footer(kPullFooter);
  cmd->add_option("what", a->what, "REPO/FILE.gguf, REPO (with --quant) or an http(s) URL")
      ->required();
  cmd->add_option("--quant", a->quant,
                  "with REPO alone: the .gguf whose name carries this quantization, e.g. "
                  "Q4_K_M (case-insensitive)");
  cmd->add_option("--revision", a->revision, "branch, tag or commit on the hub")
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", a->quiet, "no progress or notes on stderr (errors still print)");
  cmd->callback([a] {
    pull::PullOptions o = pull::options_from_env();
    o.quant = a->quant;
    o.revision = a->revision;
    o.quiet = a->quiet;
    const std::string path = pull::pull(a->what, o).string();
    std::printf("%s\n", path.c_str());
    set_exit_code(0);
  });
}

void register_models_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "models", "list the models in the cache (BATON_CACHE): size, modified time, path");
  cmd->callback([] {
    const auto cache = pull::default_cache_dir();
    std::string text = pull::format_cache_listing(cache, pull::list_cache(cache));
    std::fwrite(text.data(), 1, text.size(), stdout);
    set_exit_code(0);
  });
}

}  // namespace

void register_pull(CLI::App& app) {
  register_pull_command(app);
  register_models_command(app);
}

std::string resolve_model_arg(const std::string& model) {
  if (model.rfind("hf:", 0) != 0) return model;
  pull::PullOptions o = pull::options_from_env();
  return pull::pull(model.substr(3), o).string();
}

}  // namespace baton::cli
