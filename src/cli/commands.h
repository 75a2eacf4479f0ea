#pragma once
// Each `baton` subcommand lives in its own cli_*.cpp and registers itself here. A command's
// callback stores its exit status with set_exit_code; errors thrown out of a callback are
// printed by main as one line "baton: error: ..." with exit status 1.
#include <CLI/CLI.hpp>
#include <string>

namespace baton::cli {

void set_exit_code(int code);
// The whole file; std::runtime_error "FLAG PATH: cannot open for reading" when it cannot.
std::string read_file(const std::string& flag, const std::string& path);
int exit_code();

void register_gguf(CLI::App& app);             // gguf info, gguf synth
void register_tokenize(CLI::App& app);         // tokenize
void register_template(CLI::App& app);         // template render
void register_run(CLI::App& app);              // run
void register_serve(CLI::App& app);            // serve
void register_bench_engine(CLI::App& bench);   // bench engine
void register_bench_serve(CLI::App& bench);    // bench serve
void register_bench_grammar(CLI::App& bench);  // bench grammar
void register_pull(CLI::App& app);             // pull, models

// `-m hf:REPO/FILE`: pulls it into the cache (progress on stderr) and returns the local path;
// any other value is returned as given.
std::string resolve_model_arg(const std::string& model);

}  // namespace baton::cli
