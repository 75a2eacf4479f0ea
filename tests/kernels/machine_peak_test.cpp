#include "kernels/machine_peak.h"

#include <gtest/gtest.h>

namespace baton::kernels {
namespace {

// Only sanity: the figures are for benchmarks, and their size depends on the machine.
TEST(MachinePeak, ReturnsPositiveFigures) {
  ThreadPool pool(2);
  const double gbs = measure_read_bandwidth_gbs(pool, 16u << 20);
  EXPECT_GT(gbs, 0.1);
  const double gops = measure_int8_peak_gops(pool);
  EXPECT_GT(gops, 0.1);
}

}  // namespace
}  // namespace baton::kernels
