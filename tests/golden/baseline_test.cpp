// Baseline tensor-core semantics: MAC dot products against native arithmetic, the ADD bit-serial
// core and the dequantize-then-MAC path against the integer/double references.
#include "common/error.h"
#include "model/golden/fp.h"
#include "model/golden/mac.h"
#include "tests/golden/test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace ltc::golden {
namespace {

using test_support::random_acts;
using test_support::random_codes;
using test_support::seed_note;
using test_support::test_seed;

TEST(Mac, Fp16DotProductMatchesSequentialFloatAccumulation) {
  const uint64_t seed = test_seed(41);
  std::mt19937_64 rng(seed);
  const LmmaShape shape{2, 16, 4};
  for (int trial = 0; trial < 200; ++trial) {
    const auto a = random_acts(rng, DType::kFp16, size_t(shape.m) * shape.k);
    const auto w = random_acts(rng, DType::kFp16, size_t(shape.n) * shape.k);
    const auto c = random_acts(rng, DType::kFp32, size_t(shape.m) * shape.n);
    const auto o = mac_dot(shape, MacType{}, a, w, c);
    for (int m = 0; m < shape.m; ++m) {
      for (int n = 0; n < shape.n; ++n) {
        float acc;
        uint32_t cb = c[size_t(m) * shape.n + n];
        std::memcpy(&acc, &cb, 4);
        for (int k = 0; k < shape.k; ++k) {
          // Native float: the product of two halves is exact in float, the add rounds once.
          acc += float(decode(DType::kFp16, a[size_t(m) * shape.k + k])) *
                 float(decode(DType::kFp16, w[size_t(n) * shape.k + k]));
        }
        uint32_t ref;
        std::memcpy(&ref, &acc, 4);
        ASSERT_EQ(o[size_t(m) * shape.n + n], ref) << seed_note(seed);
      }
    }
  }
}

// The paper's MAC unit accumulates in FP16: each FP16 x FP16 product is rounded once (RNE) to
// FP16, then added (RNE). Hand values in binary16.
TEST(Mac, Fp16AccumulationRoundsTheProductThenTheSum) {
  const MacType t{DType::kFp16, DType::kFp16, DType::kFp16, DType::kFp16};
  const LmmaShape one{1, 1, 1};
  auto dot1 = [&](uint32_t a, uint32_t w, uint32_t c) { return mac_dot(one, t, {a}, {w}, {c})[0]; };
  // (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20: below half an ULP (2^-11) above 1 + 2^-9.
  EXPECT_EQ(dot1(0x3c01, 0x3c01, 0x0000), 0x3c02u);
  // (1 + 2^-10) x 1.5 = 1.5 + 2^-10 + 2^-11: halfway, ties to the even 1.5 + 2^-9.
  EXPECT_EQ(dot1(0x3c01, 0x3e00, 0x0000), 0x3e02u);
  // 256 x 256 = 65536 overflows FP16: +inf; inf x 0 is the canonical NaN.
  EXPECT_EQ(dot1(0x5c00, 0x5c00, 0x0000), 0x7c00u);
  EXPECT_EQ(dot1(0x7c00, 0x0000, 0x3c00), 0x7e00u);
  // 2^-12 x 2^-12 = 2^-24: the smallest subnormal, exact; x 2^-1 more = 2^-25: a tie, to even 0.
  EXPECT_EQ(dot1(0x0c00, 0x0c00, 0x0000), 0x0001u);
  EXPECT_EQ(dot1(0x0c00, 0x0800, 0x0000), 0x0000u);
  // Rounded product, then rounded add: C = 2048, (1 + 2^-10)^2 rounds to 1 + 2^-9, and
  // 2048 + 1.00195 = 2049.00195 rounds to 2050 (ULP 2 at 2048; above the tie).
  EXPECT_EQ(dot1(0x3c01, 0x3c01, 0x6800), 0x6801u);
  // Against double arithmetic rounded at each step, on random operands.
  const uint64_t seed = test_seed(49);
  std::mt19937_64 rng(seed);
  const LmmaShape shape{2, 8, 4};
  for (int trial = 0; trial < 200; ++trial) {
    const auto a = random_acts(rng, DType::kFp16, size_t(shape.m) * shape.k);
    const auto w = random_acts(rng, DType::kFp16, size_t(shape.n) * shape.k);
    const auto c = random_acts(rng, DType::kFp16, size_t(shape.m) * shape.n);
    const auto o = mac_dot(shape, t, a, w, c);
    for (int m = 0; m < shape.m; ++m) {
      for (int n = 0; n < shape.n; ++n) {
        double acc = decode(DType::kFp16, c[size_t(m) * shape.n + n]);
        for (int k = 0; k < shape.k; ++k) {
          const double p = decode(DType::kFp16, a[size_t(m) * shape.k + k]) *
                           decode(DType::kFp16, w[size_t(n) * shape.k + k]);
          acc = decode(DType::kFp16,
                       encode(DType::kFp16, acc + decode(DType::kFp16, encode(DType::kFp16, p))));
        }
        const uint32_t ref =
            std::isnan(acc) ? fp_canonical_nan(DType::kFp16) : encode(DType::kFp16, acc);
        ASSERT_EQ(o[size_t(m) * shape.n + n], ref) << seed_note(seed) << " trial " << trial;
      }
    }
  }
}

TEST(Mac, Int8DotProductIsExactAndWrapsInInt32) {
  const uint64_t seed = test_seed(42);
  std::mt19937_64 rng(seed);
  const LmmaShape shape{2, 8, 16};
  const MacType type{DType::kInt8, DType::kInt8, DType::kInt32, DType::kInt32};
  const auto a = random_acts(rng, DType::kInt8, size_t(shape.m) * shape.k);
  const auto w = random_acts(rng, DType::kInt8, size_t(shape.n) * shape.k);
  std::vector<uint32_t> c(size_t(shape.m) * shape.n, 0x7ffffff0u);  // near INT32_MAX
  const auto o = mac_dot(shape, type, a, w, c);
  for (int m = 0; m < shape.m; ++m) {
    for (int n = 0; n < shape.n; ++n) {
      int64_t ref = 0x7ffffff0;
      for (int k = 0; k < shape.k; ++k) {
        ref += int_value(DType::kInt8, a[size_t(m) * shape.k + k]) *
               int_value(DType::kInt8, w[size_t(n) * shape.k + k]);
      }
      ASSERT_EQ(o[size_t(m) * shape.n + n], uint32_t(uint64_t(ref) & 0xffffffffu))
          << seed_note(seed);
    }
  }
  EXPECT_THROW(
      mac_dot(shape, MacType{DType::kFp16, DType::kFp32, DType::kFp32, DType::kFp32}, a, w, c),
      InputError);
}

TEST(Add, BitSerialCoreIsTheIntegerDotProduct) {
  const uint64_t seed = test_seed(43);
  std::mt19937_64 rng(seed);
  for (int w = 1; w <= 8; ++w) {
    const LmmaShape shape{2, 8, 4};
    const auto a = random_acts(rng, DType::kInt8, size_t(shape.m) * shape.k);
    const auto codes = random_codes(rng, size_t(shape.n) * shape.k, w);
    const std::vector<uint32_t> c(size_t(shape.m) * shape.n, 0u);
    const auto o =
        add_serial_dot(shape, LmmaType{DType::kInt8, w, DType::kInt32, DType::kInt32}, a, codes, c);
    for (int m = 0; m < shape.m; ++m) {
      for (int n = 0; n < shape.n; ++n) {
        int64_t ref = 0;
        for (int k = 0; k < shape.k; ++k) {
          ref +=
              int_value(DType::kInt8, a[size_t(m) * shape.k + k]) * codes[size_t(n) * shape.k + k];
        }
        ASSERT_EQ(int_value(DType::kInt32, o[size_t(m) * shape.n + n]), ref) << seed_note(seed);
      }
    }
  }
}

TEST(Add, FloatBitSerialCoreIsWithinOneRoundingPerAdd) {
  const uint64_t seed = test_seed(44);
  std::mt19937_64 rng(seed);
  const LmmaShape shape{1, 16, 4};
  for (int w : {1, 4, 8}) {
    const auto a = random_acts(rng, DType::kFp16, shape.k);
    const auto codes = random_codes(rng, size_t(shape.n) * shape.k, w);
    const std::vector<uint32_t> c(shape.n, 0u);
    const auto o =
        add_serial_dot(shape, LmmaType{DType::kFp16, w, DType::kFp32, DType::kFp32}, a, codes, c);
    for (int n = 0; n < shape.n; ++n) {
      double ref = 0, mag = 0;
      for (int k = 0; k < shape.k; ++k) {
        const double x = decode(DType::kFp16, a[k]) * codes[size_t(n) * shape.k + k];
        ref += x;
        mag += std::fabs(x);
      }
      const int adds = shape.k * w;
      const double u = fp_unit_roundoff(DType::kFp32);
      EXPECT_LE(std::fabs(decode(DType::kFp32, o[n]) - ref), adds * u / (1 - adds * u) * mag)
          << seed_note(seed);
    }
  }
}

TEST(Mac, DequantizeThenMacRoundsEachWeightOnce) {
  const std::vector<uint8_t> codes{0, 1, 2, 3, 15};
  const auto w = dequantize_codes(codes, 0.1, 7.5, DType::kFp16);
  for (size_t i = 0; i < codes.size(); ++i) {
    EXPECT_EQ(w[i], encode(DType::kFp16, 0.1 * (codes[i] - 7.5)));
  }
}

}  // namespace
}  // namespace ltc::golden
