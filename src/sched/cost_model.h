#pragma once
// What a step costs, measured: a linear model of a step's wall time in the work it holds, fitted
// to the steps the loop has run. Attention is a term of its own because it is what grows with
// context depth: a 128-token chunk at 3K tokens of context costs half again what it costs at the
// start of a prompt, and a per-token figure learned early in a prefill overshoots later ones.
// Pure and single-threaded: the loop owns a CostEstimator and hands the policy its CostModel.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace baton::sched {

// The work of one step, as the model counts it.
struct StepShape {
  int32_t decode_rows = 0;
  int32_t prefill_tokens = 0;
  // Query-key pairs over every row of the step, in thousands: a row at position p attends to
  // p + 1 keys, so a chunk of n tokens from position s holds n*s + n(n+1)/2 pairs.
  double kpairs = 0;

  // Adds n tokens at positions start .. start+n-1, as prefill or as decode rows.
  void add_prefill(int32_t start, int32_t n);
  void add_decode(int32_t start);
};

// Thousands of query-key pairs of n consecutive rows starting at position `start`.
double attention_kpairs(int32_t start, int32_t n);

// Step time in ms = fixed + per decode row + per prefill token + per thousand attention pairs.
// Zero coefficients until measured; tests set them directly.
struct CostModel {
  double ms_fixed = 0;
  double ms_per_decode_row = 0;
  double ms_per_prefill_token = 0;
  double ms_per_kpair = 0;
  // Fitted to both decode-only steps and steps with prefill (CostEstimator sets it).
  bool fitted = false;
  // How far recent steps with prefill ran over their prediction (the 90th percentile of
  // actual / predicted, at least 1): a step planned to a limit aims this much below it, so the
  // machine's noise lands under the limit rather than around it.
  double overshoot = 1;

  // A mixed step can be predicted: fitted, or per-row and per-token costs set.
  bool measured() const {
    return fitted || (ms_fixed + ms_per_decode_row > 0 && ms_per_prefill_token > 0);
  }
  double predict_ms(const StepShape& s) const;
  // The most prefill tokens in [lo, hi], from context position `depth`, that keep a step of
  // `base` plus that chunk within `limit_ms` / overshoot; lo when even lo does not fit.
  int32_t largest_chunk(const StepShape& base, int32_t depth, double limit_ms, int32_t lo,
                        int32_t hi) const;
};

// Fits a CostModel to recent steps by least squares, with every coefficient kept >= 0. Steps are
// kept in windows by size: decode-only steps in one, steps with prefill in one per power of two
// of their prefill tokens. A long stretch of one size (a latency target holds mixed steps at a
// dozen tokens for minutes) would otherwise push every other size out, and with all chunks alike
// the per-token cost cannot be told from the fixed one: the fit would then extrapolate wildly to
// the next full-size chunk.
class CostEstimator {
 public:
  static constexpr size_t kPerWindow = 16;
  static constexpr size_t kWindows = 13;      // decode-only, then prefill 1, 2-3, 4-7 ... 2048+
  static constexpr size_t kErrorWindow = 32;  // recent actual / predicted ratios
  static constexpr double kMaxOvershoot = 1.5;

  void observe(const StepShape& s, double ms);
  const CostModel& model() const { return model_; }

 private:
  struct Sample {
    std::array<double, 4> x;  // 1, decode rows, prefill tokens, kpairs
    double ms;
  };
  struct Window {
    std::vector<Sample> ring;
    size_t next = 0;
  };
  void refit();

  std::array<Window, kWindows> windows_;
  std::vector<double> ratios_;  // actual / predicted of recent steps with prefill
  size_t next_ratio_ = 0;
  bool seen_decode_ = false, seen_prefill_ = false;
  CostModel model_;
};

}  // namespace baton::sched
