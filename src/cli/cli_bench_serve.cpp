// `baton bench serve`: a load client that replays starvation scenarios against any
// OpenAI-compatible server. The work is in src/bench; this file only maps flags onto it.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "bench/bench_serve.h"
#include "cli/commands.h"

namespace baton::cli {
namespace {

std::string scenarios_help() {
  std::string out = "\nScenarios (--scenario):\n";
  for (const auto& [name, summary] : bench::scenario_names()) {
    out += fmt::format("  {:<22} {}\n", name, summary);
  }
  out += "\nScenario knobs (default per scenario; a knob a scenario does not list is unused):\n";
  for (const auto& k : bench::knobs()) {
    std::string defs;
    for (const auto& [sc, v] : k.defaults)
      defs += fmt::format("{}{}={:g}", defs.empty() ? "" : ", ", sc, v);
    out += fmt::format("  --{:<20} {} [{}]\n", k.name, k.help, defs);
  }
  return out;
}

}  // namespace

void register_bench_serve(CLI::App& bench) {
  auto opt = std::make_shared<bench::BenchServeOptions>();
  auto* cmd = bench.add_subcommand(
      "serve", "replay a starvation scenario against an OpenAI-compatible server (streaming)");
  cmd->add_option("--url", opt->url, "server base URL")->capture_default_str();
  cmd->add_option("--scenario", opt->scenario, "scenario to run (listed below)")->required();
  cmd->add_option("--model", opt->scenario_options.model,
                  "model name to request (default: the first id in /v1/models)");
  cmd->add_option("--out", opt->out_dir, "write DIR/<scenario>.json (raw timings) and .svg");
  cmd->add_option("--compare", opt->compare_url,
                  "second server URL: run the same scenario there too and compare");
  cmd->add_option("--api-key", opt->api_key, "bearer token sent to the server(s)");
  cmd->add_option("--prompt-unit", opt->scenario_options.prompt_unit,
                  "prompt words per requested token (1 suits typical BPE vocabularies)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--timeout-s", opt->scenario_options.timeout_s, "limit per request, seconds")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--run-limit-s", opt->run_limit_s, "limit for the whole run, seconds")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--seed", opt->scenario_options.seed, "seed of the prompt text")
      ->capture_default_str();
  cmd->add_flag("--chat", opt->scenario_options.chat,
                "agents: use /v1/chat/completions messages instead of a growing prompt");
  cmd->add_option("--session-headers", opt->scenario_options.session_headers,
                  "agents: headers naming each session's id, for a proxy that pins sessions: "
                  "affinity (x-session-affinity), all (also x-opencode-session, "
                  "x-claude-code-session-id, session_id) or none")
      ->capture_default_str()
      ->check(CLI::IsMember({"affinity", "all", "none"}));
  for (const auto& k : bench::knobs()) {
    cmd->add_option_function<double>(
           "--" + k.name, [opt, name = k.name](double v) { opt->scenario_options.knobs[name] = v; },
           k.help)
        ->check(CLI::NonNegativeNumber)
        ->type_name("N");
  }
  cmd->footer(scenarios_help());
  cmd->callback([opt] { set_exit_code(bench::run_bench_serve(*opt, std::cout, std::cerr)); });
}

}  // namespace baton::cli
