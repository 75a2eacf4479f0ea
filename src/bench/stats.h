#pragma once
// Percentiles and inter-token gaps over the raw timings of a run.
#include <cstddef>
#include <vector>

#include "bench/record.h"

namespace baton::bench {

// Linear-interpolated percentile (p in [0,100]) of unsorted values; NaN for an empty input.
double percentile(std::vector<double> values, double p);
double median(const std::vector<double>& values);

// Gaps between consecutive token arrivals. Unsorted input is sorted first.
std::vector<double> token_gaps(const std::vector<double>& token_ms);

// Gaps that end inside [from_ms, to_ms] or span it: the stalls a stream saw in that window.
std::vector<double> gaps_overlapping(const std::vector<double>& token_ms, double from_ms,
                                     double to_ms);

struct Summary {
  std::size_t count = 0;
  double p50 = 0, p99 = 0, max = 0, mean = 0;  // NaN when count == 0
};
Summary summarize(const std::vector<double>& values);

struct RequestStats {
  std::size_t tokens = 0;  // SSE chunks with text
  Summary gaps;
  double queue_wait_ms = -1, ttft_ms = -1, total_ms = -1;
  double decode_tps = 0;  // (tokens - 1) / (last token - first token)
};
RequestStats request_stats(const RequestRecord& r);
// Tokens the request generated: the server's usage count where it reported one (with
// speculation several tokens may arrive in one event), else the events with text.
std::size_t generated_tokens(const RequestRecord& r);

// Tokens of all requests over the span from the first send to the last end, per second.
double aggregate_tokens_per_s(const std::vector<RequestRecord>& rs);

}  // namespace baton::bench
