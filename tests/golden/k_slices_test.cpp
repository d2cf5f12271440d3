// Sliced K (golden/k_slices.h): each slice accumulates its own chunks from zero, the slices'
// partial results add in slice order. Checked against sums written out here, for the MAC GEMM
// and the LUT GEMM, integer (exact whatever the order) and float (where the order shows).
#include "model/golden/k_slices.h"
#include "common/error.h"
#include "model/golden/fp.h"
#include "model/golden/gemm.h"
#include "model/golden/lmma.h"
#include "model/golden/mac.h"
#include "tests/golden/test_util.h"

#include <gtest/gtest.h>

namespace ltc::golden {
namespace {

using test_support::random_acts;
using test_support::random_codes;
using test_support::seed_note;
using test_support::test_seed;

// Unsigned `wbits`-bit codes over K in groups of `group` columns; scales and zero points are
// the caller's.
QuantizedWeights uint_codes(std::mt19937_64& rng, int n, int k, int wbits, int group) {
  QuantizedWeights w;
  w.kind = WeightKind::kUInt;
  w.wbits = wbits;
  w.n = n;
  w.k = k;
  w.group_size = group;
  w.codes = random_codes(rng, size_t(n) * k, wbits);
  return w;
}

TEST(KSlices, ChunksGoToSlicesRoundRobin) {
  const KSlices s{16, 4};
  EXPECT_EQ(s.slice_of(0), 0);
  EXPECT_EQ(s.slice_of(15), 0);
  EXPECT_EQ(s.slice_of(16), 1);
  EXPECT_EQ(s.slice_of(63), 3);
  EXPECT_EQ(s.slice_of(64), 0);  // the next K tile's first chunk
  EXPECT_EQ(KSlices{}.slice_of(12345), 0);
  EXPECT_THROW(validate(KSlices{6, 2}, 4), InputError);  // a chunk splits a LUT group
  EXPECT_THROW(validate(KSlices{0, 2}, 4), InputError);
  EXPECT_THROW(validate(KSlices{8, 0}, 4), InputError);
  EXPECT_NO_THROW(validate(KSlices{8, 2}, 4));
}

// The sliced MAC GEMM is: per slice, fp32 acc over its columns (ascending, the K tail padded),
// then acc_0 + acc_1 + ... in fp32 (kept as the output, so every rounding shows). Written out
// here one column at a time.
TEST(KSlices, MacGemmAddsPerSliceChainsInSliceOrder) {
  const uint64_t seed = test_seed(71);
  std::mt19937_64 rng(seed);
  const int m = 3, n = 5, k = 200, step = 16;  // ragged: 200 = 12.5 steps
  const MacType type{DType::kFp16, DType::kFp16, DType::kFp32, DType::kFp32};
  const auto a = random_acts(rng, DType::kFp16, size_t(m) * k);
  const auto w = random_acts(rng, DType::kFp16, size_t(n) * k);
  int differs = 0;
  for (const KSlices s : {KSlices{16, 2}, KSlices{32, 4}, KSlices{48, 3}}) {
    const auto got = mac_gemm(type, step, a, m, w, n, k, s);
    const auto unsliced = mac_gemm(type, step, a, m, w, n, k);
    for (int r = 0; r < m; ++r) {
      for (int c = 0; c < n; ++c) {
        uint32_t total = 0;
        for (int sl = 0; sl < s.slices; ++sl) {
          uint32_t acc = encode(DType::kFp32, 0.0);
          for (int kk = 0; kk < k; ++kk) {
            if ((kk / s.chunk) % s.slices != sl) continue;
            acc = fp_add(DType::kFp32, acc,
                         fp_mul(DType::kFp32, DType::kFp16, a[size_t(r) * k + kk], DType::kFp16,
                                w[size_t(c) * k + kk]));
          }
          total = sl == 0 ? acc : fp_add(DType::kFp32, total, acc);
        }
        const uint32_t want = total;
        ASSERT_EQ(got[size_t(r) * n + c], want) << seed_note(seed);
        differs += got[size_t(r) * n + c] != unsliced[size_t(r) * n + c];
      }
    }
  }
  EXPECT_GT(differs, 0) << "the slice order never changed a float result: " << seed_note(seed);
}

TEST(KSlices, IntegerGemmsDoNotDependOnTheSlicing) {
  const uint64_t seed = test_seed(72);
  std::mt19937_64 rng(seed);
  const int m = 2, n = 16, k = 260;
  const MacType type{DType::kInt8, DType::kInt8, DType::kInt32, DType::kInt32};
  const auto a = random_acts(rng, DType::kInt8, size_t(m) * k);
  const auto w = random_acts(rng, DType::kInt8, size_t(n) * k);
  EXPECT_EQ(mac_gemm(type, 32, a, m, w, n, k, KSlices{64, 4}), mac_gemm(type, 32, a, m, w, n, k))
      << seed_note(seed);
  // LUT GEMM with int8 activations: every partial is an exact integer.
  QuantizedWeights qw = uint_codes(rng, n, k, 3, k);
  qw.scales.assign(size_t(n), 0.5);
  qw.zeros.assign(size_t(n), 3.0);
  LutGemmConfig cfg = default_lut_gemm_config(DType::kInt8);
  const auto unsliced = lut_gemm(cfg, a, m, qw);
  cfg.slices = KSlices{8, 4};
  EXPECT_EQ(lut_gemm(cfg, a, m, qw), unsliced) << seed_note(seed);
}

// The sliced LUT GEMM: per group, each slice's fp32 chain over its LUT groups, the slices'
// accumulators added in slice order in fp32, then the unchanged epilogue.
TEST(KSlices, LutGemmAddsSliceAccumulatorsBeforeTheEpilogue) {
  const uint64_t seed = test_seed(73);
  std::mt19937_64 rng(seed);
  const int m = 2, n = 8, k = 2048, g = 1024;  // long chains: fp32 rounding shows
  QuantizedWeights qw = uint_codes(rng, n, k, 2, g);
  std::uniform_real_distribution<double> u(0.01, 1.0);
  for (int i = 0; i < n * (k / g); ++i) {
    qw.scales.push_back(u(rng));
    qw.zeros.push_back(double(i % 4));
  }
  const auto a = random_acts(rng, DType::kFp16, size_t(m) * k);
  LutGemmConfig cfg = default_lut_gemm_config(DType::kFp16);
  cfg.slices = KSlices{32, 4};
  const LutGemmPartials p = lut_gemm_partials(cfg, a, m, qw);
  int differs = 0;
  const LutGemmPartials whole = lut_gemm_partials(default_lut_gemm_config(DType::kFp16), a, m, qw);
  for (int r = 0; r < m; ++r) {
    for (int c = 0; c < n; ++c) {
      for (int gi = 0; gi < k / g; ++gi) {
        // The chains by hand: LUT group lg (columns 4 lg ..) belongs to slice (4 lg / 32) % 4.
        uint32_t acc[4];
        for (auto& x : acc) x = encode(DType::kFp32, 0.0);
        for (int lg = gi * g / 4; lg < (gi + 1) * g / 4; ++lg) {
          std::vector<uint32_t> acts4(a.begin() + r * k + lg * 4, a.begin() + r * k + lg * 4 + 4);
          const auto half = precompute_half_table(acts4.data(), DType::kFp16, 4, DType::kFp16);
          std::vector<uint8_t> codes(4);
          for (int i = 0; i < 4; ++i) codes[size_t(i)] = qw.codes[size_t(c) * k + lg * 4 + i];
          const auto planes = transformed_bit_planes(codes.data(), 1, 4, 2);
          const int sl = (lg * 4 / 32) % 4;
          acc[sl] = lmma(LmmaShape{1, 1, 4}, LmmaType{DType::kFp16, 2, DType::kFp32, DType::kFp32},
                         half, planes, {acc[sl]})[0];
        }
        uint32_t total = acc[0];
        for (int sl = 1; sl < 4; ++sl) total = fp_add(DType::kFp32, total, acc[sl]);
        const double want = decode(DType::kFp32, total);
        const double got = p.partial[(size_t(r) * n + c) * p.groups + gi];
        EXPECT_EQ(got, want) << seed_note(seed);
        differs += got != whole.partial[(size_t(r) * n + c) * whole.groups + gi];
      }
    }
  }
  EXPECT_GT(differs, 0) << "the slicing never changed a float partial sum: " << seed_note(seed);
}

}  // namespace
}  // namespace ltc::golden
