// The table algebra of docs/arithmetic.md#the-table: oddness, half table + sign, the offline
// transform, LMMA equals the conventional full-table lookup, and validation of bad parameters.
#include "common/error.h"
#include "model/golden/fp.h"
#include "model/golden/lmma.h"
#include "tests/golden/test_util.h"

#include <gtest/gtest.h>

namespace ltc::golden {
namespace {

using test_support::random_acts;
using test_support::random_codes;
using test_support::seed_note;
using test_support::test_seed;

struct TableCase {
  DType act;
  DType table;
};
const TableCase kTableCases[] = {
    {DType::kInt8, DType::kInt16},      {DType::kFp16, DType::kFp16},
    {DType::kBf16, DType::kBf16},       {DType::kFp8E4M3, DType::kFp8E4M3},
    {DType::kFp8E5M2, DType::kFp8E5M2}, {DType::kFp8E4M3, DType::kFp16},
    {DType::kFp16, DType::kFp32},
};

TEST(Table, IsOddAndHalfTablePlusSignReproducesFullTable) {
  const uint64_t seed = test_seed(21);
  std::mt19937_64 rng(seed);
  for (const auto& tc : kTableCases) {
    for (int k = 1; k <= kMaxK; ++k) {
      for (int trial = 0; trial < 20; ++trial) {
        const auto acts = random_acts(rng, tc.act, k);
        const auto full = precompute_full_table(acts.data(), tc.act, k, tc.table);
        const auto half = precompute_half_table(acts.data(), tc.act, k, tc.table);
        ASSERT_EQ(half.size(), size_t{1} << (k - 1));
        const uint32_t all = (1u << k) - 1u;
        for (uint32_t p = 0; p <= all; ++p) {
          SCOPED_TRACE(std::string(dtype_name(tc.table)) + " K=" + std::to_string(k) +
                       " p=" + std::to_string(p) + ", " + seed_note(seed));
          ASSERT_EQ(full[p ^ all], negate(tc.table, full[p]));  // T[~p] = -T[p], bit for bit
          // Every entry is the signed sum computed directly, one rounded add per step (equal as
          // values: a directly computed exact zero is +0 where the odd table may hold -0).
          uint32_t direct = (p & 1) ? convert(tc.table, tc.act, acts[0])
                                    : negate(tc.table, convert(tc.table, tc.act, acts[0]));
          for (int i = 1; i < k; ++i) {
            const uint32_t x = convert(tc.table, tc.act, acts[i]);
            const uint32_t term = ((p >> i) & 1) ? x : negate(tc.table, x);
            direct =
                is_int(tc.table) ? int_add(tc.table, direct, term) : fp_add(tc.table, direct, term);
          }
          ASSERT_EQ(decode(tc.table, direct), decode(tc.table, full[p]));
          // Index-inverting lookup (what the conventional design does in hardware) ...
          const uint32_t top = 1u << (k - 1);
          const uint32_t inverting =
              (p & top) ? negate(tc.table, half[(~p) & (top - 1)]) : half[p & (top - 1)];
          ASSERT_EQ(inverting, full[p]);
          // ... equals the offline transform plus plain negation.
          ASSERT_EQ(half_table_lookup(half.data(), tc.table, k, transform_pattern(p, k)), full[p]);
        }
      }
    }
  }
}

TEST(Table, EntriesAreTheSignedSumsWithinOneRoundingPerAdd) {
  const uint64_t seed = test_seed(22);
  std::mt19937_64 rng(seed);
  for (int k = 1; k <= kMaxK; ++k) {
    const auto acts = random_acts(rng, DType::kInt8, k);
    const auto full = precompute_full_table(acts.data(), DType::kInt8, k, DType::kInt16);
    for (uint32_t p = 0; p < (1u << k); ++p) {
      int64_t ref = 0;
      for (int i = 0; i < k; ++i) ref += ((p >> i) & 1 ? 1 : -1) * int_value(DType::kInt8, acts[i]);
      ASSERT_EQ(int_value(DType::kInt16, full[p]), ref) << seed_note(seed);
    }
  }
}

TEST(Transform, IsAnInvolutionThatKeepsTheTopBit) {
  for (int k = 1; k <= kMaxK; ++k) {
    for (uint32_t p = 0; p < (1u << k); ++p) {
      EXPECT_EQ(transform_pattern(transform_pattern(p, k), k), p);
      EXPECT_EQ(transform_pattern(p, k) >> (k - 1), p >> (k - 1));
    }
  }
}

TEST(BitPlanes, RecomposeTheCodes) {
  const uint64_t seed = test_seed(23);
  std::mt19937_64 rng(seed);
  for (int w = 1; w <= kMaxWBits; ++w) {
    const int n = 5, k = 7;
    const auto codes = random_codes(rng, size_t(n) * k, w);
    const auto planes = bit_planes(codes.data(), n, k, w);
    for (int col = 0; col < n; ++col) {
      for (int kk = 0; kk < k; ++kk) {
        int q = 0;
        for (int b = 0; b < w; ++b) q |= ((planes[size_t(b) * n + col] >> kk) & 1) << b;
        ASSERT_EQ(q, codes[size_t(col) * k + kk]) << seed_note(seed);
      }
    }
  }
}

// Every LMMA type, K and W: the half-table LMMA with transformed planes equals the conventional
// full-table LUT with untransformed planes, bit for bit, over all 2^K patterns in every plane.
TEST(Lmma, EqualsConventionalFullTableLutForAllPatterns) {
  const uint64_t seed = test_seed(24);
  std::mt19937_64 rng(seed);
  struct Case {
    DType act, table, acc;
  };
  const Case cases[] = {{DType::kInt8, DType::kInt16, DType::kInt32},
                        {DType::kFp16, DType::kFp16, DType::kFp32},
                        {DType::kFp16, DType::kFp16, DType::kFp16},
                        {DType::kBf16, DType::kBf16, DType::kFp32},
                        {DType::kFp8E4M3, DType::kFp8E4M3, DType::kFp32},
                        {DType::kFp8E5M2, DType::kFp8E5M2, DType::kFp16}};
  for (const auto& c : cases) {
    for (int k = 1; k <= kMaxK; ++k) {
      for (int w = 1; w <= kMaxWBits; ++w) {
        const LmmaShape shape{2, 1 << k, k};
        const LmmaType type{c.table, w, c.acc, c.acc};
        // Column j of plane b holds pattern (j + 5b) mod 2^K: each plane covers all patterns.
        std::vector<uint8_t> codes(size_t(shape.n) * k, 0);
        for (int j = 0; j < shape.n; ++j) {
          for (int b = 0; b < w; ++b) {
            const uint32_t p = (j + 5 * b) % shape.n;
            for (int kk = 0; kk < k; ++kk) codes[size_t(j) * k + kk] |= ((p >> kk) & 1) << b;
          }
        }
        const auto acts = random_acts(rng, c.act, size_t(shape.m) * k);
        const auto cin = random_acts(rng, c.acc == DType::kInt32 ? DType::kInt8 : c.acc,
                                     size_t(shape.m) * shape.n);
        std::vector<uint32_t> half;
        for (int m = 0; m < shape.m; ++m) {
          auto h = precompute_half_table(&acts[size_t(m) * k], c.act, k, c.table);
          half.insert(half.end(), h.begin(), h.end());
        }
        std::vector<uint32_t> c_acc(cin.size());
        for (size_t i = 0; i < cin.size(); ++i) {
          c_acc[i] = c.acc == DType::kInt32 ? convert(DType::kInt32, DType::kInt8, cin[i]) : cin[i];
        }
        const auto o =
            lmma(shape, type, half, transformed_bit_planes(codes.data(), shape.n, k, w), c_acc);
        const auto ref =
            lut_naive(shape, type, c.act, acts, bit_planes(codes.data(), shape.n, k, w), c_acc);
        ASSERT_EQ(o, ref) << type.name() << " K=" << k << ", " << seed_note(seed);
      }
    }
  }
}

TEST(Lmma, IntegerResultIsTheBitSerialSumExactly) {
  const uint64_t seed = test_seed(25);
  std::mt19937_64 rng(seed);
  for (int k = 1; k <= kMaxK; ++k) {
    for (int w = 1; w <= kMaxWBits; ++w) {
      const LmmaShape shape{3, 16, k};
      const auto acts = random_acts(rng, DType::kInt8, size_t(shape.m) * k);
      const auto codes = random_codes(rng, size_t(shape.n) * k, w);
      std::vector<uint32_t> half;
      for (int m = 0; m < shape.m; ++m) {
        auto h = precompute_half_table(&acts[size_t(m) * k], DType::kInt8, k, DType::kInt16);
        half.insert(half.end(), h.begin(), h.end());
      }
      std::vector<uint32_t> c(size_t(shape.m) * shape.n, int_wrap(DType::kInt32, -7));
      const auto o = lmma(shape, LmmaType{DType::kInt16, w, DType::kInt32, DType::kInt32}, half,
                          transformed_bit_planes(codes.data(), shape.n, k, w), c);
      for (int m = 0; m < shape.m; ++m) {
        for (int n = 0; n < shape.n; ++n) {
          // sum_b 2^b sum_k (2 q_bk - 1) a_k = 2 sum_k a_k q_k - (2^W - 1) sum_k a_k
          int64_t dot = 0, asum = 0;
          for (int kk = 0; kk < k; ++kk) {
            const int64_t a = int_value(DType::kInt8, acts[size_t(m) * k + kk]);
            dot += a * codes[size_t(n) * k + kk];
            asum += a;
          }
          const int64_t ref = -7 + 2 * dot - ((int64_t{1} << w) - 1) * asum;
          ASSERT_EQ(int_value(DType::kInt32, o[size_t(m) * shape.n + n]), ref) << seed_note(seed);
        }
      }
    }
  }
}

TEST(Lmma, FloatPlanesScaleByExponentAddAndOverflowToInfinity) {
  // One FP16 entry of 60000 accumulated in FP16 over 2 planes: 60000 + 120000 overflows.
  const LmmaShape shape{1, 1, 1};
  const uint32_t a = encode(DType::kFp16, -60000.0);  // T_half[0] = -a_0 = 60000
  const auto half = precompute_half_table(&a, DType::kFp16, 1, DType::kFp16);
  ASSERT_EQ(decode(DType::kFp16, half[0]), 60000.0);
  const std::vector<uint8_t> planes{0, 0};  // pattern 0 in both planes: +T_half[0]
  const auto o16 = lmma(shape, LmmaType{DType::kFp16, 2, DType::kFp16, DType::kFp16}, half, planes,
                        {encode(DType::kFp16, 0.0)});
  EXPECT_TRUE(fp_is_inf(DType::kFp16, o16[0]));
  const auto o32 = lmma(shape, LmmaType{DType::kFp16, 2, DType::kFp32, DType::kFp32}, half, planes,
                        {encode(DType::kFp32, 0.0)});
  EXPECT_EQ(decode(DType::kFp32, o32[0]), 180000.0);
  // FP32 accumulation rounded to an FP16 output.
  const auto o = lmma(shape, LmmaType{DType::kFp16, 2, DType::kFp32, DType::kFp16}, half, planes,
                      {encode(DType::kFp32, 0.0)});
  EXPECT_TRUE(fp_is_inf(DType::kFp16, o[0]));
}

TEST(QuantizedTable, ScaleIsMaxOver127AndEntriesRoundToNearestEven) {
  const uint64_t seed = test_seed(26);
  std::mt19937_64 rng(seed);
  for (int k = 1; k <= kMaxK; ++k) {
    const auto acts = random_acts(rng, DType::kFp16, k);
    const auto half = precompute_half_table(acts.data(), DType::kFp16, k, DType::kFp16);
    const auto q = quantize_table(half, DType::kFp16);
    double max_abs = 0;
    for (uint32_t v : half) max_abs = std::max(max_abs, std::fabs(decode(DType::kFp16, v)));
    const double scale = decode(DType::kFp32, q.scale_fp32);
    EXPECT_EQ(scale, static_cast<double>(static_cast<float>(max_abs / 127.0)));
    for (size_t i = 0; i < half.size(); ++i) {
      const double t = decode(DType::kFp16, half[i]);
      const double e = decode(DType::kInt8, q.entries[i]);
      EXPECT_LE(std::fabs(e * scale - t), scale / 2 * (1 + 1e-12)) << seed_note(seed);
      EXPECT_LE(std::fabs(e), 127.0);
    }
  }
  const std::vector<uint32_t> zeros(8, 0u);
  EXPECT_EQ(quantize_table(zeros, DType::kFp16).scale_fp32, 0u);
}

TEST(Validation, BadParametersNameTheParameterAndRange) {
  auto message = [](auto fn) {
    try {
      fn();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::vector<uint32_t> t(8), c(2);
  const std::vector<uint8_t> p(2);
  EXPECT_NE(message([&] {
              lmma({1, 2, 0}, {DType::kFp16, 1, DType::kFp32, DType::kFp32}, t, p, c);
            }).find("K = 0 is out of range (valid: 1..8)"),
            std::string::npos);
  EXPECT_NE(message([&] {
              lmma({1, 2, 9}, {DType::kFp16, 1, DType::kFp32, DType::kFp32}, t, p, c);
            }).find("K = 9"),
            std::string::npos);
  EXPECT_NE(message([&] {
              lmma({1, 2, 4}, {DType::kFp16, 0, DType::kFp32, DType::kFp32}, t, p, c);
            }).find("W_BIT = 0 is out of range (valid: 1..8)"),
            std::string::npos);
  EXPECT_NE(message([&] {
              lmma({1, 2, 4}, {DType::kFp16, 9, DType::kFp32, DType::kFp32}, t, p, c);
            }).find("W_BIT = 9"),
            std::string::npos);
  // Mismatched operand sizes: 8 table entries for M = 2 half tables of 8 would need 16.
  EXPECT_NE(message([&] {
              lmma({2, 2, 4}, {DType::kFp16, 1, DType::kFp32, DType::kFp32}, t, p, c);
            }).find("half_tables"),
            std::string::npos);
  EXPECT_NE(message([&] {
              lmma({1, 2, 4}, {DType::kBf16, 1, DType::kFp16, DType::kFp16}, t, p, c);
            }).find("does not widen exactly"),
            std::string::npos);
  EXPECT_NE(message([&] {
              lmma({1, 2, 4}, {DType::kInt16, 1, DType::kFp32, DType::kFp32}, t, p, c);
            }).find("int32"),
            std::string::npos);
  const uint8_t bad_codes[4] = {0, 4, 0, 0};
  EXPECT_NE(message([&] { bit_planes(bad_codes, 1, 4, 2); }).find("does not fit in W_BIT = 2"),
            std::string::npos);
}

}  // namespace
}  // namespace ltc::golden
