#include "bench/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace baton::bench {

double RequestRecord::queue_wait_ms() const {
  if (send_ms < 0) return -1;
  if (queue_wait_is_fallback()) return ttft_ms();
  double first = first_byte_ms >= 0 ? first_byte_ms : first_event_ms;
  return first >= 0 ? first - send_ms : ttft_ms();
}

bool RequestRecord::queue_wait_is_fallback() const {
  return first_byte_was_comment || (first_byte_ms < 0 && first_event_ms < 0);
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  p = std::clamp(p, 0.0, 100.0);
  double rank = p / 100.0 * static_cast<double>(values.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(rank));
  auto hi = std::min(lo + 1, values.size() - 1);
  double frac = rank - static_cast<double>(lo);
  return values[lo] + (values[hi] - values[lo]) * frac;
}

double median(const std::vector<double>& values) {
  return percentile(values, 50);
}

std::vector<double> token_gaps(const std::vector<double>& token_ms) {
  std::vector<double> t = token_ms;
  std::sort(t.begin(), t.end());
  std::vector<double> gaps;
  for (std::size_t i = 1; i < t.size(); ++i) gaps.push_back(t[i] - t[i - 1]);
  return gaps;
}

std::vector<double> gaps_overlapping(const std::vector<double>& token_ms, double from_ms,
                                     double to_ms) {
  std::vector<double> t = token_ms;
  std::sort(t.begin(), t.end());
  std::vector<double> out;
  for (std::size_t i = 1; i < t.size(); ++i) {
    if (t[i] > from_ms && t[i - 1] < to_ms) out.push_back(t[i] - t[i - 1]);
  }
  return out;
}

Summary summarize(const std::vector<double>& values) {
  Summary s;
  s.count = values.size();
  if (values.empty()) {
    s.p50 = s.p99 = s.max = s.mean = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  s.p50 = percentile(values, 50);
  s.p99 = percentile(values, 99);
  s.max = *std::max_element(values.begin(), values.end());
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(s.count);
  return s;
}

RequestStats request_stats(const RequestRecord& r) {
  RequestStats s;
  s.tokens = r.token_ms.size();
  s.gaps = summarize(token_gaps(r.token_ms));
  s.queue_wait_ms = r.queue_wait_ms();
  s.ttft_ms = r.ttft_ms();
  s.total_ms = r.total_ms();
  if (s.tokens >= 2) {
    auto [lo, hi] = std::minmax_element(r.token_ms.begin(), r.token_ms.end());
    double span = *hi - *lo;
    // Tokens as the server's usage counts them where it reports one: with speculation several
    // kept tokens may arrive in one event.
    const double n = static_cast<double>(generated_tokens(r));
    if (span > 0 && n >= 2) s.decode_tps = (n - 1) * 1000.0 / span;
  }
  return s;
}

std::size_t generated_tokens(const RequestRecord& r) {
  const long reported = r.usage.completion_tokens.value_or(-1);
  if (reported >= 0 && static_cast<std::size_t>(reported) >= r.token_ms.size()) {
    return static_cast<std::size_t>(reported);
  }
  return r.token_ms.size();
}

double aggregate_tokens_per_s(const std::vector<RequestRecord>& rs) {
  double start = std::numeric_limits<double>::max(), end = -1;
  std::size_t tokens = 0;
  for (const auto& r : rs) {
    if (r.send_ms < 0) continue;
    start = std::min(start, r.send_ms);
    end = std::max(end,
                   r.end_ms >= 0 ? r.end_ms : (r.token_ms.empty() ? r.send_ms : r.token_ms.back()));
    tokens += generated_tokens(r);
  }
  if (end <= start) return 0;
  return static_cast<double>(tokens) * 1000.0 / (end - start);
}

}  // namespace baton::bench
