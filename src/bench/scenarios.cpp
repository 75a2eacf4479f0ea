#include "bench/scenarios.h"

#include <algorithm>

#include "bench/scenario_runner.h"

namespace baton::bench {
namespace {
constexpr const char* kDup = "decode-under-prefill";
constexpr const char* kThree = "three-sessions";
constexpr const char* kHol = "hol-sequential";
constexpr const char* kAgents = "agents";
constexpr const char* kTput = "throughput";
constexpr const char* kConn = "connections";
constexpr const char* kEdit = "edit";
constexpr const char* kLive = "live-view";
}  // namespace

const std::vector<Knob>& knobs() {
  static const std::vector<Knob> k = {
      {"prompt-tokens",
       "prompt length of the decoding streams",
       {{kDup, 32}, {kTput, 128}, {kConn, 8}, {kEdit, 200}, {kLive, 32}}},
      {"decode-tokens",
       "tokens each decoding stream generates (agents: per answer)",
       {{kDup, 400}, {kAgents, 64}, {kTput, 256}, {kConn, 8}, {kEdit, 200}, {kLive, 200}}},
      {"trigger-token", "send the long prompt after stream A's Nth token", {{kDup, 20}}},
      {"long-tokens",
       "prompt length of the long request",
       {{kDup, 3000}, {kThree, 12000}, {kHol, 8000}, {kLive, 2000}}},
      {"long-max-tokens",
       "tokens the long request generates",
       {{kDup, 16}, {kThree, 16}, {kHol, 16}}},
      {"short-tokens",
       "prompt length of the short requests",
       {{kDup, 20}, {kThree, 20}, {kHol, 20}}},
      {"short-max-tokens",
       "tokens each short request generates",
       {{kDup, 16}, {kThree, 32}, {kHol, 16}}},
      {"short-delay-ms",
       "delay from the long request's send to the short ones",
       {{kDup, 1000}, {kThree, 1000}, {kHol, 500}}},
      {"shorts", "number of short requests", {{kThree, 2}}},
      {"sessions", "concurrent agent sessions", {{kAgents, 3}}},
      {"turns", "turns per agent session", {{kAgents, 4}}},
      {"chunk-min-tokens", "smallest tool-output chunk added per turn", {{kAgents, 2000}}},
      {"chunk-max-tokens", "largest tool-output chunk added per turn", {{kAgents, 6000}}},
      {"streams",
       "concurrent streams (edit: copy streams, beside one prose stream)",
       {{kTput, 4}, {kEdit, 2}, {kLive, 2}}},
      {"viewers", "GET /events readers (open dashboards) in every other phase", {{kLive, 5}}},
      {"rounds", "phases with and without viewers, each", {{kLive, 3}}},
      {"connections", "connections held open at once, in each phase", {{kConn, 1000}}},
      {"health-probes", "GET /health probes timed while the connections are open", {{kConn, 20}}},
  };
  return k;
}

const std::vector<std::pair<std::string, std::string>>& scenario_names() {
  static const std::vector<std::pair<std::string, std::string>> n = {
      {kDup,
       "stream A decodes; after its Nth token a long prompt B arrives, then a short C: A's "
       "gaps while B prefills, B's and C's TTFT"},
      {kThree,
       "a long cold prompt, then short streams after the first quantum: their time to first "
       "output and the long one's total time"},
      {kHol,
       "(for --parallel 1) a long prompt A, then a short B during A's prefill: B's queue wait "
       "and A's total time"},
      {kAgents,
       "K multi-turn sessions whose context grows by a tool-output chunk each turn: per-turn "
       "TTFT and cached tokens"},
      {kTput, "N concurrent streams: aggregate tokens/s and per-stream inter-token gaps"},
      {kEdit,
       "N streams whose answer copies a span of their prompt (for --speculate), beside one "
       "prose stream: their tokens/s, drafts confirmed, the prose stream's worst gap"},
      {kLive,
       "rounds of streams decoding beside a long prefill, alternately with no live viewer and "
       "with N reading GET /events: the mean step time of each and the noise between rounds"},
      {kConn,
       "N idle keep-alive connections, then N streams at once (most queued): server RSS and "
       "fds per connection, /health latency while they are open, streams finished"},
  };
  return n;
}

bool is_scenario(const std::string& name) {
  const auto& n = scenario_names();
  return std::any_of(n.begin(), n.end(), [&](const auto& p) { return p.first == name; });
}

ScenarioResult run_scenario(const std::string& name, const Endpoint& ep, const ScenarioOptions& opt,
                            Clock::time_point deadline) {
  if (!is_scenario(name)) {
    std::string list;
    for (const auto& [n, _] : scenario_names()) list += (list.empty() ? "" : ", ") + n;
    throw BenchError("unknown --scenario '" + name + "'; expected one of: " + list);
  }
  ScenarioResult out;
  out.scenario = name;
  out.server_url = ep.url;
  out.model = opt.model;
  RunContext ctx(ep, opt, name, deadline);
  if (name == kDup) run_decode_under_prefill(ctx, out);
  if (name == kThree) run_three_sessions(ctx, out);
  if (name == kHol) run_hol_sequential(ctx, out);
  if (name == kAgents) run_agents(ctx, out);
  if (name == kTput) run_throughput(ctx, out);
  if (name == kConn) run_connections(ctx, out);
  if (name == kEdit) run_edit(ctx, out);
  if (name == kLive) run_live_view(ctx, out);
  out.wall_ms = ctx.now_ms();
  out.options = ctx.used_knobs();
  out.options["prompt-unit"] = opt.prompt_unit;
  out.options["timeout-s"] = opt.timeout_s;
  out.options["seed"] = opt.seed;
  if (name == kAgents) out.options["chat"] = opt.chat;
  if (Clock::now() >= deadline)
    out.notes.push_back("the run limit (--run-limit-s) cut this run short");
  return out;
}

}  // namespace baton::bench
