// agents: K sessions, each a multi-turn conversation like a coding agent's. Every turn sends
// the whole history plus a new tool-output-sized chunk, so a server with prefix reuse only has
// to prefill the chunk; per-turn TTFT and usage.cached_tokens show whether it does.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <thread>

#include "bench/prompt_text.h"
#include "bench/scenario_runner.h"
#include "bench/stats.h"

namespace baton::bench {
namespace {

struct AgentPlan {
  long turns = 0, answer_tokens = 0, chunk_min = 0, chunk_max = 0;
};

long chunk_tokens(const AgentPlan& plan, std::uint64_t seed, long session, long turn) {
  std::uint64_t state =
      seed * 7919 + static_cast<std::uint64_t>(session) * 131 + static_cast<std::uint64_t>(turn);
  long span = std::max(0L, plan.chunk_max - plan.chunk_min);
  return plan.chunk_min + static_cast<long>(mix64(state) % static_cast<std::uint64_t>(span + 1));
}

// The headers an agent sends with every turn of session `s`: what a proxy in front routes on.
std::vector<std::pair<std::string, std::string>> session_headers(const ScenarioOptions& opt,
                                                                 long s) {
  if (opt.session_headers == "none") return {};
  const std::string id = fmt::format("bench-{}-session-{}", opt.seed, s + 1);
  std::vector<std::pair<std::string, std::string>> h = {{"x-session-affinity", id}};
  if (opt.session_headers == "all") {
    for (const char* name : {"x-opencode-session", "x-claude-code-session-id", "session_id"}) {
      h.emplace_back(name, id);
    }
  }
  return h;
}

// Runs one session's turns back to back; each turn's prompt extends the previous one.
std::vector<RequestRecord> run_session(const RunContext& ctx, const AgentPlan& plan, long s) {
  std::vector<RequestRecord> out;
  const auto& opt = ctx.options();
  std::string context;
  long context_tokens = 0;
  nlohmann::json messages = nlohmann::json::array(
      {{{"role", "system"}, {"content", "You are a coding agent. Read the tool output."}}});
  for (long t = 0; t < plan.turns && Clock::now() < ctx.deadline(); ++t) {
    long chunk = chunk_tokens(plan, opt.seed, s, t);
    std::uint64_t salt = 1000 + static_cast<std::uint64_t>(s) * 100 + static_cast<std::uint64_t>(t);
    std::string text = make_prompt(chunk, opt.prompt_unit, opt.seed * 1000003ULL + salt);
    StreamRequest req =
        ctx.base_request(fmt::format("s{} turn {}", s + 1, t + 1), plan.answer_tokens);
    req.prompt_tokens_requested = context_tokens + chunk;
    req.headers = session_headers(opt, s);
    if (opt.chat) {
      req.chat = true;
      messages.push_back({{"role", "user"}, {"content", text}});
      req.messages = messages;
    } else {
      req.prompt = context.empty() ? text : context + "\n" + text;
    }
    RequestRecord rec = stream_request(ctx.endpoint(), req, ctx.t0(), ctx.deadline());
    context = req.prompt + rec.text;
    context_tokens = req.prompt_tokens_requested + static_cast<long>(rec.token_ms.size());
    if (opt.chat) messages.push_back({{"role", "assistant"}, {"content", rec.text}});
    bool failed = !rec.ok();
    out.push_back(std::move(rec));
    if (failed) break;  // a broken conversation cannot continue meaningfully
  }
  return out;
}

void agent_figures(const std::vector<std::vector<RequestRecord>>& sessions, long turns,
                   ScenarioResult& out) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  double cached_sum = 0, prompt_sum = 0;
  bool have_usage = false;
  for (long t = 0; t < turns; ++t) {
    std::vector<double> ttft, cached;
    for (const auto& s : sessions) {
      if (t >= static_cast<long>(s.size()) || s[t].ttft_ms() < 0) continue;
      ttft.push_back(s[t].ttft_ms());
      const Usage& u = s[t].usage;
      if (u.cached_tokens) cached.push_back(static_cast<double>(*u.cached_tokens));
      if (t > 0 && u.cached_tokens && u.prompt_tokens) {
        have_usage = true;
        cached_sum += static_cast<double>(*u.cached_tokens);
        prompt_sum += static_cast<double>(*u.prompt_tokens);
      }
    }
    std::string turn = fmt::format("turn {}", t + 1);
    out.figures.push_back({turn + " mean TTFT", ttft.empty() ? kNaN : summarize(ttft).mean, "ms"});
    out.figures.push_back(
        {turn + " mean cached", cached.empty() ? kNaN : summarize(cached).mean, "tokens"});
  }
  out.figures.push_back({"cached share, turns 2+",
                         have_usage && prompt_sum > 0 ? 100 * cached_sum / prompt_sum : kNaN, "%"});
  if (!have_usage) out.notes.push_back("the server reported no cached_tokens in usage");
}

}  // namespace

void run_agents(RunContext& ctx, ScenarioResult& out) {
  AgentPlan plan;
  long sessions = ctx.knob("sessions");
  plan.turns = ctx.knob("turns");
  plan.answer_tokens = ctx.knob("decode-tokens");
  plan.chunk_min = ctx.knob("chunk-min-tokens");
  plan.chunk_max = std::max(plan.chunk_min, ctx.knob("chunk-max-tokens"));
  std::vector<std::vector<RequestRecord>> results(static_cast<std::size_t>(sessions));
  std::vector<std::thread> threads;
  for (long s = 0; s < sessions; ++s) {
    threads.emplace_back(
        [&, s] { results[static_cast<std::size_t>(s)] = run_session(ctx, plan, s); });
  }
  for (auto& th : threads) th.join();
  for (const auto& s : results) out.requests.insert(out.requests.end(), s.begin(), s.end());
  agent_figures(results, plan.turns, out);
}

void run_throughput(RunContext& ctx, ScenarioResult& out) {
  long streams = ctx.knob("streams"), prompt = ctx.knob("prompt-tokens");
  long decode = ctx.knob("decode-tokens");
  std::vector<std::unique_ptr<InFlight>> flights;
  for (long i = 0; i < streams; ++i) {
    flights.push_back(
        std::make_unique<InFlight>(ctx, ctx.completion(fmt::format("stream {}", i + 1), prompt,
                                                       decode, static_cast<std::uint64_t>(i + 1))));
  }
  out.requests = join_all(flights);
  std::vector<double> all_gaps, tps;
  for (const auto& r : out.requests) {
    auto g = token_gaps(r.token_ms);
    all_gaps.insert(all_gaps.end(), g.begin(), g.end());
    tps.push_back(request_stats(r).decode_tps);
  }
  auto gaps = summarize(all_gaps);
  out.figures.push_back({"aggregate throughput", aggregate_tokens_per_s(out.requests), "tok/s"});
  out.figures.push_back({"mean per-stream decode", summarize(tps).mean, "tok/s"});
  out.figures.push_back({"p50 gap, all streams", gaps.p50, "ms"});
  out.figures.push_back({"p99 gap, all streams", gaps.p99, "ms"});
}

}  // namespace baton::bench
