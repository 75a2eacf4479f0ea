#pragma once
// Starvation scenarios replayed against an OpenAI-compatible server, and their results.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/openai_client.h"
#include "bench/record.h"

namespace baton::bench {

struct ScenarioOptions {
  std::string model;
  double prompt_unit = 1.0;  // words of prompt text per requested token
  double timeout_s = 600;    // per request
  bool chat = false;         // agents: /v1/chat/completions instead of a growing prompt
  // agents: which headers name each session's id (for a proxy that pins sessions to replicas):
  // "affinity" (x-session-affinity, OpenCode's), "all" (also x-opencode-session,
  // x-claude-code-session-id and session_id, as Claude Code and Codex send them) or "none".
  std::string session_headers = "affinity";
  std::uint64_t seed = 1;
  std::map<std::string, double> knobs;  // only the knobs the user set
};

// A scenario's headline number, e.g. "C TTFT".
struct Figure {
  std::string name;
  double value = 0;  // NaN when it could not be measured
  std::string unit;  // "ms", "tok/s", "tokens", "%"
};

// A stage of a scenario measured as a whole rather than per request (connections: holding
// idle connections, then queued streams); the report prints one column per phase.
struct Phase {
  std::string name;
  std::vector<Figure> figures;
};

struct ScenarioResult {
  std::string scenario, server_url, model;
  std::vector<RequestRecord> requests;
  std::vector<Figure> figures;
  std::vector<Phase> phases;
  std::vector<std::string> notes;   // why a figure is missing or what to change
  std::vector<std::string> errors;  // failures not tied to one request record (exit status 1)
  nlohmann::json options;           // every knob value used
  double wall_ms = 0;
};

// A scenario knob: one CLI option with a default per scenario that uses it.
struct Knob {
  std::string name;  // without the leading "--"
  std::string help;
  std::map<std::string, double> defaults;  // scenario → default
};

const std::vector<Knob>& knobs();
const std::vector<std::pair<std::string, std::string>>& scenario_names();  // name, summary
bool is_scenario(const std::string& name);

// Runs one scenario against `ep` (model already resolved in opt.model). Never throws for
// request failures (they are in the records); throws BenchError for an unknown scenario.
ScenarioResult run_scenario(const std::string& name, const Endpoint& ep, const ScenarioOptions& opt,
                            Clock::time_point deadline);

// The scenarios themselves (scenario_*.cpp).
class RunContext;
void run_decode_under_prefill(RunContext& ctx, ScenarioResult& out);
void run_three_sessions(RunContext& ctx, ScenarioResult& out);
void run_hol_sequential(RunContext& ctx, ScenarioResult& out);
void run_agents(RunContext& ctx, ScenarioResult& out);
void run_throughput(RunContext& ctx, ScenarioResult& out);
void run_connections(RunContext& ctx, ScenarioResult& out);
void run_edit(RunContext& ctx, ScenarioResult& out);
void run_live_view(RunContext& ctx, ScenarioResult& out);

}  // namespace baton::bench
