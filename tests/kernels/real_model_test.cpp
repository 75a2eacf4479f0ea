// Kernels against tensors of real GGUF files (../shared/models) and the gguf module's tables.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "gguf/gguf_file.h"
#include "kernels/matmul.h"
#include "kernels/quantize.h"
#include "kernels/simd.h"
#include "support/shared_files.h"

namespace baton::kernels {
namespace {

using gguf::TensorType;

TEST(KernelTypes, AgreeWithGgufTraits) {
  for (uint32_t id = 0; id < 40; ++id) {
    const auto tr = gguf::type_traits(id);
    if (!tr) continue;
    const BlockShape s = block_shape(TensorType(id));
    if (s.elems == 0) {
      EXPECT_FALSE(tr->supported) << tr->name << " is marked supported but has no kernels";
      continue;
    }
    EXPECT_TRUE(tr->supported) << tr->name;
    EXPECT_EQ(s.elems, int64_t(tr->block_elems)) << tr->name;
    EXPECT_EQ(s.bytes, int64_t(tr->block_bytes)) << tr->name;
  }
}

// Every 2-D tensor of the file times random x, at every level, against float64 over get_row.
void check_model(const std::filesystem::path& path) {
  const auto file = gguf::GgufFile::open(path.string());
  int checked = 0;
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  ThreadPool pool(2);
  for (const auto& t : file->tensors()) {
    if (t.dims.size() != 2 || block_shape(t.type).elems == 0) continue;
    const MatrixView w = view_of(t, file->tensor_data(t));
    const int64_t n_x = 3, rows = std::min<int64_t>(w.rows, 300);
    MatrixView part = w;
    part.rows = rows;
    std::vector<float> x(size_t(n_x * w.cols));
    for (auto& v : x) v = dist(rng);
    std::vector<double> ref(size_t(n_x * rows));
    std::vector<double> mag(size_t(n_x * rows));
    std::vector<float> row(size_t(w.cols));
    for (int64_t o = 0; o < rows; ++o) {
      get_row(part, o, row.data());
      for (int64_t r = 0; r < n_x; ++r) {
        for (int64_t i = 0; i < w.cols; ++i) {
          const double p = double(row[size_t(i)]) * x[size_t(r * w.cols + i)];
          ref[size_t(r * rows + o)] += p;
          mag[size_t(r * rows + o)] += std::fabs(p);
        }
      }
    }
    for (int l = 0; l <= int(detected_simd_level()); ++l) {
      std::vector<float> y(size_t(n_x * rows));
      matmul_at(SimdLevel(l), part, x.data(), n_x, y.data(), &pool);
      for (size_t k = 0; k < y.size(); ++k) {
        ASSERT_NEAR(y[k], ref[k], 1e-5 * mag[k] + 1e-6)
            << t.name << " at " << simd_level_label(SimdLevel(l)) << " element " << k;
      }
    }
    ++checked;
  }
  EXPECT_GT(checked, 0) << path;
}

TEST(RealModel, Stories260kF32Tensors) {
  BATON_REQUIRE_SHARED(path, "models/stories260K.gguf");
  check_model(path);
}

TEST(RealModel, TinyRandomLlamaF16Tensors) {
  BATON_REQUIRE_SHARED(path, "models/llama-2-tiny-random.gguf");
  check_model(path);
}

}  // namespace
}  // namespace baton::kernels
