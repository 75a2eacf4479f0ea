// The three "a long prompt arrives" scenarios: decode-under-prefill, three-sessions and
// hol-sequential. Each sends its requests at fixed points of the run and reads its headline
// figures off the raw timings afterwards.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "bench/scenario_runner.h"
#include "bench/stats.h"

namespace baton::bench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double or_nan(double v) {
  return v >= 0 ? v : kNaN;
}

double max_or_nan(const std::vector<double>& v) {
  return v.empty() ? kNaN : summarize(v).max;
}

}  // namespace

void run_decode_under_prefill(RunContext& ctx, ScenarioResult& out) {
  long decode = ctx.knob("decode-tokens"), trigger = ctx.knob("trigger-token");
  auto a = std::make_unique<InFlight>(
      ctx, ctx.completion("A decode", ctx.knob("prompt-tokens"), decode, 1));
  if (!a->wait_tokens(trigger, ctx.deadline())) {
    out.notes.push_back("A ended or failed before its token " + std::to_string(trigger) +
                        "; B was sent anyway");
  }
  auto b = std::make_unique<InFlight>(ctx, ctx.completion("B long prompt", ctx.knob("long-tokens"),
                                                          ctx.knob("long-max-tokens"), 2));
  // Delays count from the moment the request really went out, not from its thread's start.
  ctx.sleep_until_ms(std::max(0.0, b->sent_ms(ctx.deadline())) + ctx.knob_f("short-delay-ms"));
  auto c = std::make_unique<InFlight>(
      ctx, ctx.completion("C short", ctx.knob("short-tokens"), ctx.knob("short-max-tokens"), 3));
  RequestRecord ra = a->join(), rb = b->join(), rc = c->join();

  std::vector<double> before;
  for (std::size_t i = 1; i < ra.token_ms.size() && ra.token_ms[i] <= rb.send_ms; ++i) {
    before.push_back(ra.token_ms[i] - ra.token_ms[i - 1]);
  }
  double b_prefill_end = rb.first_token_ms >= 0 ? rb.first_token_ms : rb.end_ms;
  auto during = gaps_overlapping(ra.token_ms, rb.send_ms, b_prefill_end);
  out.figures.push_back({"A median gap before B", before.empty() ? kNaN : median(before), "ms"});
  out.figures.push_back({"A worst gap while B prefills", max_or_nan(during), "ms"});
  out.figures.push_back({"B TTFT", or_nan(rb.ttft_ms()), "ms"});
  out.figures.push_back({"C TTFT", or_nan(rc.ttft_ms()), "ms"});
  if (!ra.token_ms.empty() && ra.token_ms.back() < b_prefill_end) {
    out.notes.push_back("A finished before B's prefill ended; raise --decode-tokens");
  }
  out.requests = {ra, rb, rc};
}

void run_three_sessions(RunContext& ctx, ScenarioResult& out) {
  auto longr = std::make_unique<InFlight>(
      ctx, ctx.completion("L long cold", ctx.knob("long-tokens"), ctx.knob("long-max-tokens"), 1));
  ctx.sleep_until_ms(std::max(0.0, longr->sent_ms(ctx.deadline())) + ctx.knob_f("short-delay-ms"));
  std::vector<std::unique_ptr<InFlight>> shorts;
  long n = ctx.knob("shorts"), short_tokens = ctx.knob("short-tokens");
  for (long i = 0; i < n; ++i) {
    shorts.push_back(std::make_unique<InFlight>(
        ctx, ctx.completion(fmt::format("S{} short", i + 1), short_tokens,
                            ctx.knob("short-max-tokens"), 10 + static_cast<std::uint64_t>(i))));
  }
  auto rs = join_all(shorts);
  RequestRecord rl = longr->join();
  double worst = -1;
  for (const auto& r : rs) {
    out.figures.push_back(
        {r.label.substr(0, r.label.find(' ')) + " TTFT", or_nan(r.ttft_ms()), "ms"});
    worst = std::max(worst, r.ttft_ms());
  }
  out.figures.push_back({"worst short TTFT", or_nan(worst), "ms"});
  out.figures.push_back({"L TTFT", or_nan(rl.ttft_ms()), "ms"});
  out.figures.push_back({"L total time", or_nan(rl.total_ms()), "ms"});
  if (rl.first_token_ms >= 0 && !rs.empty() && rl.first_token_ms < rs.front().send_ms) {
    out.notes.push_back("L finished prefill before the short ones were sent; raise --long-tokens");
  }
  out.requests.push_back(rl);
  out.requests.insert(out.requests.end(), rs.begin(), rs.end());
}

void run_hol_sequential(RunContext& ctx, ScenarioResult& out) {
  auto a = std::make_unique<InFlight>(ctx, ctx.completion("A long prompt", ctx.knob("long-tokens"),
                                                          ctx.knob("long-max-tokens"), 1));
  ctx.sleep_until_ms(std::max(0.0, a->sent_ms(ctx.deadline())) + ctx.knob_f("short-delay-ms"));
  auto b = std::make_unique<InFlight>(
      ctx, ctx.completion("B short", ctx.knob("short-tokens"), ctx.knob("short-max-tokens"), 2));
  RequestRecord rb = b->join(), ra = a->join();
  out.figures.push_back({"B queue wait", or_nan(rb.queue_wait_ms()), "ms"});
  out.figures.push_back({"B TTFT", or_nan(rb.ttft_ms()), "ms"});
  out.figures.push_back({"A TTFT", or_nan(ra.ttft_ms()), "ms"});
  out.figures.push_back({"A total time", or_nan(ra.total_ms()), "ms"});
  if (ra.first_token_ms >= 0 && ra.first_token_ms < rb.send_ms) {
    out.notes.push_back(
        "A finished prefill before B was sent; raise --long-tokens or lower "
        "--short-delay-ms");
  }
  out.requests = {ra, rb};
}

}  // namespace baton::bench
