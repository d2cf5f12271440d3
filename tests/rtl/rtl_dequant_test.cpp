// The MAC tile's dequantize-then-MAC path (W_INTn x A_float mpGEMM) against the golden model
// (dequantize_codes + mac_dot): every code and every zero point for W_BIT 1..8, FP16 scales from
// subnormal to the largest finite value plus zeros, infinities and NaN, random operands with
// stalls, K-group chaining, and the golden reference itself against hand-computed values.
#include "model/golden/dtype.h"
#include "model/golden/mac.h"
#include "rtl_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ltc::rtl {
namespace {

using golden::DType;
using hw::TensorCoreDesign;
using test::stalls;

hw::TensorCoreConfig dequant_config(int m, int n, int k, DType act, int wbits) {
  auto c = test::config(TensorCoreDesign::kMac, m, n, k, act, wbits);
  c.weight = DType::kInt8;
  return c;
}

// FP16 scales the columns cycle through: subnormals (smallest, largest), smallest normal, 1.0,
// 0.5, a value with a full mantissa, the largest finite value (overflows for |q - z| >= 2),
// negative ones, both zeros, infinities and NaN.
const uint32_t kScales[] = {0x0001, 0x03ff, 0x0400, 0x3c00, 0x3800, 0x3bff, 0x7bff, 0x5a37,
                            0xbc00, 0x83ff, 0xfbff, 0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00};

TEST(MacDequant, GoldenDequantizationMatchesHandValues) {
  // w = fp16(scale * (q - zero)), rounded once.
  auto w = [](uint8_t q, uint32_t scale, uint8_t zero) {
    return golden::dequantize_codes({q}, golden::decode(DType::kFp16, scale), zero,
                                    DType::kFp16)[0];
  };
  EXPECT_EQ(w(3, 0x3800, 1), 0x3c00u);  // 0.5 * 2 = 1.0
  EXPECT_EQ(w(0, 0x3c00, 2), 0xc000u);  // 1.0 * -2 = -2.0
  EXPECT_EQ(w(3, 0x0001, 0), 0x0003u);  // 3 * 2^-24: subnormal, exact
  EXPECT_EQ(w(2, 0x7bff, 0), 0x7c00u);  // 2 * 65504 overflows to +inf
  EXPECT_EQ(w(5, 0x3c00, 5), 0x0000u);  // q == zero: +0
  EXPECT_EQ(w(5, 0xbc00, 5), 0x8000u);  // negative scale times +0: -0
  // 0x3bff = 1 - 2^-11; times 3 = 3 - 0.75 ulp (ulp in [2, 4) is 2^-9): nearest is 3 - 1 ulp.
  EXPECT_EQ(w(3, 0x3bff, 0), 0x41ffu);
}

// Operands where, over the LMMAs, every code q < 2^w appears in every K position of a column, the
// columns cycle through kScales and the zero points step through the code range.
std::vector<LmmaOperands> every_code_ops(const hw::TensorCoreConfig& c, uint64_t seed) {
  const int n = c.shape.n, k = c.shape.k, codes = 1 << c.wbits;
  const int slots = n * k;
  const int count = std::max(2, (codes + slots - 1) / slots) * 2;
  std::vector<LmmaOperands> ops = test::random_ops(c, count, seed, /*specials=*/false);
  constexpr int kNumScales = sizeof(kScales) / sizeof(kScales[0]);
  for (int j = 0; j < count; ++j) {
    auto& o = ops[j];
    // Half of the LMMAs make A the identity on the first K rows (each output shows one weight).
    if (j % 2 == 0) {
      for (int m = 0; m < c.shape.m; ++m) {
        for (int kk = 0; kk < k; ++kk)
          o.a[size_t(m) * k + kk] = (m % k == kk) ? golden::encode(c.act, 1.0) : 0;
      }
    }
    for (int i = 0; i < slots; ++i) o.codes[i] = static_cast<uint8_t>((j / 2 * slots + i) % codes);
    for (int col = 0; col < n; ++col) {
      o.scales[col] = kScales[(col + j * 3) % kNumScales];
      o.zeros[col] = static_cast<uint8_t>((col * 5 + j * 7) % codes);
    }
  }
  return ops;
}

TEST(MacDequant, EveryCodeForWbits1To8) {
  for (int w = 1; w <= 8; ++w) {
    const auto c = dequant_config(4, 8, 4, DType::kFp16, w);
    const uint64_t seed = 2100 + w;
    // The whole zero-point range, each zero with every scale class, in a few passes.
    for (int pass = 0; pass < 3; ++pass) {
      auto ops = every_code_ops(c, seed + 16 * pass);
      for (auto& o : ops) {
        for (int col = 0; col < c.shape.n; ++col)
          o.zeros[col] = static_cast<uint8_t>((o.zeros[col] + pass * 11) % (1 << w));
      }
      test::expect_matches_golden(c, ops, seed + 16 * pass);
    }
  }
}

TEST(MacDequant, RandomWithStallsAndSpecials) {
  // Random codes, FP16 scales (zeros, subnormals, max finite, inf, NaN mixed in) and activations
  // with specials, back to back with handshake stalls; the same model serves every code width.
  for (int w : {1, 2, 4, 8}) {
    const auto c = dequant_config(4, 8, 4, DType::kFp16, w);
    const uint64_t seed = 2200 + w;
    const TileRun run =
        test::expect_matches_golden(c, test::random_ops(c, 100, seed), seed, stalls(seed));
    EXPECT_EQ(run.done_pulses, 100u) << "seed " << seed;
  }
}

TEST(MacDequant, RandomInBf16AndFp8ActivationsWithPipelining) {
  // The weights are dequantized straight into the activation format (one rounding; E4M3
  // saturates at 448), then the fp32-accumulating MAC array.
  for (DType act : {DType::kBf16, DType::kFp8E4M3}) {
    auto c = dequant_config(2, 8, 4, act, 4);
    c.pipeline_stages = act == DType::kBf16 ? 2 : 3;
    const uint64_t seed = 2400 + static_cast<int>(act);
    const TileRun run =
        test::expect_matches_golden(c, test::random_ops(c, 100, seed), seed, stalls(seed));
    EXPECT_EQ(run.done_pulses, 100u) << "seed " << seed;
  }
}

TEST(MacDequant, ChainsKGroupsWithPerBeatScales) {
  // Two beats per LMMA, each with its own codes, scales and zero points: the second starts from
  // the first's sum, i.e. golden of the first used as C for the second.
  const auto c = dequant_config(4, 8, 4, DType::kFp16, 3);
  const auto ops = test::random_ops(c, 2, 2301);
  TileLmma chained = tile_lmma(c, ops[0]);
  const TileLmma second_beat = tile_lmma(c, ops[1]);
  chained.a_beats.push_back(second_beat.a_beats[0]);
  chained.w_beats.push_back(second_beat.w_beats[0]);
  const TileRun run = run_tile(test::harness(c), c, {chained});
  ASSERT_EQ(run.outputs.size(), 1u);
  LmmaOperands second = ops[1];
  second.c = golden_output(c, ops[0]);
  EXPECT_EQ(run.outputs[0], golden_output(c, second)) << "seed 2301";
}

}  // namespace
}  // namespace ltc::rtl
