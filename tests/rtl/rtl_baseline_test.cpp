// The baseline tiles (lut-naive, add, mac) against the golden model: random operands in FP16 and
// INT8, every weight pattern in every plane for W_BIT 1..8, and stalls on the handshake.
#include "rtl_test_util.h"

#include <gtest/gtest.h>

#include <string>

namespace ltc::rtl {
namespace {

using golden::DType;
using hw::TensorCoreDesign;
using test::config;
using test::expect_matches_golden;
using test::stalls;

class BitSerialBaseline : public ::testing::TestWithParam<std::tuple<TensorCoreDesign, DType>> {};

TEST_P(BitSerialBaseline, EveryPatternEveryPlaneForWbits1To8) {
  const auto [design, act] = GetParam();
  for (int w = 1; w <= 8; ++w) {
    const auto c = config(design, 2, 8, 4, act, w);
    const uint64_t seed = 1100 + w;
    expect_matches_golden(c, test::exhaustive_pattern_ops(c, seed), seed);
  }
}

TEST_P(BitSerialBaseline, RandomWithStalls) {
  const auto [design, act] = GetParam();
  for (int w : {1, 2, 4}) {
    const auto c = config(design, 2, 8, 4, act, w);
    const uint64_t seed = 1200 + w;
    const TileRun run =
        expect_matches_golden(c, test::random_ops(c, 100, seed), seed, stalls(seed));
    EXPECT_EQ(run.done_pulses, 100u);
  }
}

INSTANTIATE_TEST_SUITE_P(Designs, BitSerialBaseline,
                         ::testing::Combine(::testing::Values(TensorCoreDesign::kLutNaive,
                                                              TensorCoreDesign::kAdd),
                                            ::testing::Values(DType::kFp16, DType::kInt8)),
                         [](const auto& info) {
                           std::string name =
                               std::string(hw::design_name(std::get<0>(info.param))) + "_" +
                               std::string(golden::dtype_name(std::get<1>(info.param)));
                           for (auto& ch : name) ch = ch == '-' ? '_' : ch;
                           return name;
                         });

TEST(MacTile, RandomFp16AndInt8WithStalls) {
  for (DType act : {DType::kFp16, DType::kInt8}) {
    const auto c = config(TensorCoreDesign::kMac, 2, 8, 4, act, 1);
    const uint64_t seed = 1300 + static_cast<int>(act);
    const TileRun run =
        expect_matches_golden(c, test::random_ops(c, 200, seed), seed, stalls(seed));
    EXPECT_EQ(run.done_pulses, 200u);
  }
}

TEST(MacTile, ChainsKGroupsThroughTheAccumulator) {
  // Two beats per LMMA: the second group starts from the first group's sum, which equals
  // mac_dot of the first group used as C for the second.
  const auto c = config(TensorCoreDesign::kMac, 2, 8, 4, DType::kFp16, 1);
  const auto ops = test::random_ops(c, 2, 1401);
  TileLmma chained = tile_lmma(c, ops[0]);
  chained.a_beats.push_back(ops[1].a);
  chained.w_beats.push_back(ops[1].w);
  const TileRun run = run_tile(test::harness(c), c, {chained});
  ASSERT_EQ(run.outputs.size(), 1u);
  LmmaOperands second = ops[1];
  second.c = golden_output(c, ops[0]);
  EXPECT_EQ(run.outputs[0], golden_output(c, second));
}

}  // namespace
}  // namespace ltc::rtl

namespace ltc::rtl {
namespace {

TEST(AddTile, NanCWithNoWeightBitSetComesOutCanonical) {
  // No add happens when every weight bit is 0: C itself is the result, and a NaN C must leave
  // as the canonical NaN like every other NaN (golden: O = convert(acc)).
  const auto c = test::config(hw::TensorCoreDesign::kAdd, 2, 8, 4, golden::DType::kFp16, 2);
  auto ops = test::random_ops(c, 1, 1501);
  ops[0].codes.assign(ops[0].codes.size(), 0);
  ops[0].c.assign(ops[0].c.size(), 0xffa5a5a5u);  // negative NaN with a payload
  const TileRun run = test::expect_matches_golden(c, ops, 1501);
  ASSERT_EQ(run.outputs.size(), 1u);
  EXPECT_EQ(run.outputs[0][0], 0x7fc00000u);
}

}  // namespace
}  // namespace ltc::rtl
