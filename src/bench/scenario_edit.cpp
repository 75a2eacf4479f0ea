// edit: answers that repeat a span of their prompt, as an agent's edit re-emits the file it read.
// Each copy stream's prompt is a text S, the server's own greedy continuation G of S, a blank
// line and S again: the greedy continuation of that is known to copy G, on any model that
// copies from its context (a story model does). Beside them one stream writes prose from a
// fresh prompt; its inter-token gaps are the fairness figure. Run it against a server with
// --speculate and (--compare) one without: the copy streams' tokens/s, the share of drafted
// tokens the model confirmed (from the server's /metrics, where it has them), and the prose
// stream's worst gap, in one run.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "bench/prompt_text.h"
#include "bench/scenario_runner.h"
#include "bench/stats.h"

namespace baton::bench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Generated tokens per second from the first token to the last, counted by the server's usage
// where it reports one (several tokens may arrive in one event when drafts are kept).
double decode_tokens_per_s(const RequestRecord& r) {
  const double n = r.usage.completion_tokens ? static_cast<double>(*r.usage.completion_tokens)
                                             : static_cast<double>(r.token_ms.size());
  if (r.token_ms.size() < 2 || n < 2) return kNaN;
  const double span_ms = r.token_ms.back() - r.token_ms.front();
  return span_ms > 0 ? (n - 1) * 1000.0 / span_ms : kNaN;
}

std::optional<double> spec_sample(const RunContext& ctx, const char* name) {
  return metric_sample(ctx.endpoint(), name, 10);
}

}  // namespace

void run_edit(RunContext& ctx, ScenarioResult& out) {
  const long streams = ctx.knob("streams"), prompt = ctx.knob("prompt-tokens");
  const long decode = ctx.knob("decode-tokens");
  const auto& opt = ctx.options();
  // The texts and their greedy continuations, before the clock that matters.
  std::vector<StreamRequest> copies;
  for (long i = 0; i < streams; ++i) {
    const std::string s = make_prompt(prompt, opt.prompt_unit, opt.seed * 7919 + 17 * (i + 1));
    StreamRequest first = ctx.base_request(fmt::format("text {}", i + 1), decode);
    first.prompt = s;
    const RequestRecord g = stream_request(ctx.endpoint(), first, ctx.t0(), ctx.deadline());
    if (!g.ok()) {
      out.requests.push_back(g);
      out.notes.push_back("the continuation to copy could not be had; nothing was timed");
      return;
    }
    StreamRequest copy = ctx.base_request(fmt::format("copy {}", i + 1), decode);
    copy.prompt = s + g.text + "\n\n" + s;
    copy.prompt_tokens_requested = 2 * prompt + decode;
    copies.push_back(std::move(copy));
  }
  const auto drafted0 = spec_sample(ctx, "baton_spec_drafted_tokens_total");
  const auto accepted0 = spec_sample(ctx, "baton_spec_accepted_tokens_total");
  std::vector<std::unique_ptr<InFlight>> flights;
  flights.push_back(std::make_unique<InFlight>(
      ctx, ctx.completion("prose", prompt, decode, opt.seed * 104729 + 3)));
  for (auto& c : copies) flights.push_back(std::make_unique<InFlight>(ctx, std::move(c)));
  out.requests = join_all(flights);
  std::vector<double> copy_tps;
  for (size_t i = 1; i < out.requests.size(); ++i) {
    copy_tps.push_back(decode_tokens_per_s(out.requests[i]));
  }
  const RequestStats prose = request_stats(out.requests[0]);
  out.figures.push_back({"copy streams' decode", summarize(copy_tps).mean, "tok/s"});
  out.figures.push_back({"prose stream's decode", decode_tokens_per_s(out.requests[0]), "tok/s"});
  out.figures.push_back({"prose stream's p50 gap", prose.gaps.p50, "ms"});
  out.figures.push_back({"prose stream's worst gap", prose.gaps.max, "ms"});
  const auto drafted1 = spec_sample(ctx, "baton_spec_drafted_tokens_total");
  const auto accepted1 = spec_sample(ctx, "baton_spec_accepted_tokens_total");
  if (drafted0 && drafted1 && accepted0 && accepted1) {
    const double drafted = *drafted1 - *drafted0, accepted = *accepted1 - *accepted0;
    out.figures.push_back({"drafted tokens", drafted, "tokens"});
    out.figures.push_back({"drafts confirmed", drafted > 0 ? 100 * accepted / drafted : kNaN, "%"});
  } else {
    out.notes.push_back("the server's /metrics has no speculation counters: no acceptance");
  }
}

}  // namespace baton::bench
