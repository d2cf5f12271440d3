// The paper's accumulator: FP16 accumulation (AccType = FP16, out FP16) in the LUT tile with FP16
// tables (W_INTn A_FP16) and in the FP16 MAC tile, against the golden model bit for bit: every
// weight pattern in every plane, random operands with specials and stalls, and rounding corners
// checked by hand in IEEE 754 binary16.
#include "rtl_test_util.h"

#include <gtest/gtest.h>

namespace ltc::rtl {
namespace {

using golden::DType;
using hw::TensorCoreDesign;
using test::config;
using test::expect_matches_golden;
using test::stalls;

hw::TensorCoreConfig fp16_acc(TensorCoreDesign d, int wbits) {
  auto c = config(d, 2, 8, 4, DType::kFp16, wbits);
  c.acc = c.out = DType::kFp16;
  return c;
}

TEST(Fp16Accumulator, LutTileEveryPatternEveryPlane) {
  for (int w : {1, 4}) {
    const auto c = fp16_acc(TensorCoreDesign::kLut, w);
    const uint64_t seed = 4900 + w;
    expect_matches_golden(c, test::exhaustive_pattern_ops(c, seed), seed);
  }
}

TEST(Fp16Accumulator, LutTileRandomWithSpecialsAndStalls) {
  for (int w : {1, 4}) {
    const auto c = fp16_acc(TensorCoreDesign::kLut, w);
    const uint64_t seed = 4910 + w;
    const TileRun run =
        expect_matches_golden(c, test::random_ops(c, 300, seed), seed, stalls(seed));
    EXPECT_EQ(run.done_pulses, 300u);
  }
}

// One LMMA per corner: every half-table entry is `entry`, every weight code 0 (pattern 0 in the
// one plane: the entry added once with a plus sign), C = c: O = fp16(c + entry), rounded to nearest
// even, by hand.
TEST(Fp16Accumulator, LutTileRoundingCornersByHand) {
  const auto c = fp16_acc(TensorCoreDesign::kLut, 1);
  const uint32_t cases[][3] = {
      {0x6800, 0x3c00, 0x6800},  // 2048 + 1: halfway between 2048 and 2050, ties to even 2048
      {0x6801, 0x3c00, 0x6802},  // 2050 + 1: halfway, ties to even 2052
      {0x7bff, 0x4c00, 0x7c00},  // 65504 + 16 = 65520: halfway to 65536, ties to even: +inf
      {0x7bff, 0x4bfe, 0x7bff},  // 65504 + 15.97: below the halfway point, stays 65504
      {0xbc00, 0x3c00, 0x0000},  // -1 + 1 = +0
      {0x8000, 0x8000, 0x8000},  // -0 + -0 = -0
      {0x0001, 0x0001, 0x0002},  // subnormals add exactly: 2^-24 + 2^-24 = 2^-23
      {0x0400, 0x8001, 0x03ff},  // 2^-14 - 2^-24: the largest subnormal
      {0x7c00, 0xfc00, 0x7e00},  // inf + -inf: canonical NaN
      {0x3c00, 0x7e01, 0x7e00},  // 1 + NaN (payload): canonical NaN
      {0x5bff, 0x3800, 0x5c02},  // 255.875 + 0.5 = 256.375: halfway (ULP 0.25), ties to even 256.5
  };
  std::vector<LmmaOperands> ops;
  for (const auto& k : cases) {
    LmmaOperands o;
    o.a.assign(size_t(c.shape.m) * c.shape.half_table_size(), k[1]);
    o.codes.assign(size_t(c.shape.n) * c.shape.k, 0);
    o.c.assign(size_t(c.shape.m) * c.shape.n, k[0]);
    ops.push_back(o);
  }
  const TileRun run = expect_matches_golden(c, ops, 0);
  ASSERT_EQ(run.outputs.size(), std::size(cases));
  for (size_t i = 0; i < std::size(cases); ++i) {
    EXPECT_EQ(run.outputs[i][0], cases[i][2]) << "case " << i;
  }
}

TEST(Fp16Accumulator, MacTileRandomWithSpecialsAndStalls) {
  const auto c = fp16_acc(TensorCoreDesign::kMac, 1);
  const uint64_t seed = 4920;
  const TileRun run = expect_matches_golden(c, test::random_ops(c, 300, seed), seed, stalls(seed));
  EXPECT_EQ(run.done_pulses, 300u);
}

}  // namespace
}  // namespace ltc::rtl
