#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace baton::cli {
namespace {
int g_exit_code = 0;
}
void set_exit_code(int code) {
  g_exit_code = code;
}
int exit_code() {
  return g_exit_code;
}
}  // namespace baton::cli

namespace {

// llama.cpp's two-letter single-dash flags (-ctk q8_0, -ctv=q8_0), which CLI11 cannot name, as
// the long flags they stand for.
std::vector<std::string> with_llama_cpp_spellings(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (auto& a : args) {
    for (const auto& [shortname, longname] :
         {std::pair{"-ctk", "--cache-type-k"}, std::pair{"-ctv", "--cache-type-v"}}) {
      const size_t n = std::strlen(shortname);
      if (a.compare(0, n, shortname) == 0 && (a.size() == n || a[n] == '=')) {
        a = longname + a.substr(n);
      }
    }
  }
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"baton: an LLM inference server whose scheduler never starves a stream", "baton"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "baton 0.1.0");
  baton::cli::register_serve(app);
  baton::cli::register_pull(app);
  baton::cli::register_run(app);
  auto* bench = app.add_subcommand("bench", "benchmarks: engine speed, or a server under load");
  bench->require_subcommand(1);
  baton::cli::register_bench_engine(*bench);
  baton::cli::register_bench_serve(*bench);
  baton::cli::register_bench_grammar(*bench);
  baton::cli::register_gguf(app);
  baton::cli::register_tokenize(app);
  baton::cli::register_template(app);
  try {
    auto args = with_llama_cpp_spellings(argc, argv);
    std::vector<char*> cargs;
    for (auto& a : args) cargs.push_back(a.data());
    app.parse(static_cast<int>(cargs.size()), cargs.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "baton: error: %s\n", e.what());
    return 1;
  }
  return baton::cli::exit_code();
}
