// The LUT tensor core tile (ltc_lut_tile) against the golden model: every weight pattern in every
// plane for W_BIT 1..8, random operands in every table/accumulator format, FP corner cases, C
// preload, back-to-back LMMAs with stalls, reset mid-operation and VCD tracing.
#include "model/golden/dtype.h"
#include "model/golden/fp.h"
#include "rtl_test_util.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ltc::rtl {
namespace {

using golden::DType;
using hw::TensorCoreDesign;
using test::config;
using test::expect_matches_golden;

TEST(LutTile, Fp16EveryPatternEveryPlaneForWbits1To8) {
  for (int w = 1; w <= 8; ++w) {
    const auto c = config(TensorCoreDesign::kLut, 2, 8, 4, DType::kFp16, w);
    expect_matches_golden(c, test::exhaustive_pattern_ops(c, 100 + w), 100 + w);
  }
}

TEST(LutTile, Int8EveryPatternEveryPlaneForWbits1To8) {
  for (int w = 1; w <= 8; ++w) {
    const auto c = config(TensorCoreDesign::kLut, 2, 8, 4, DType::kInt8, w);
    expect_matches_golden(c, test::exhaustive_pattern_ops(c, 200 + w), 200 + w);
  }
}

TEST(LutTile, RandomFp16AndInt8) {
  for (DType act : {DType::kFp16, DType::kInt8}) {
    for (int w : {1, 2, 4}) {
      const auto c = config(TensorCoreDesign::kLut, 2, 8, 4, act, w);
      const uint64_t seed = 300 + w + 10 * static_cast<int>(act);
      expect_matches_golden(c, test::random_ops(c, 150, seed), seed);
    }
  }
}

// The reference shape M2N64K4 (largest model in the suite; built once and cached).
TEST(LutTile, RandomM2N64K4Int8) {
  const auto c = config(TensorCoreDesign::kLut, 2, 64, 4, DType::kInt8, 4);
  expect_matches_golden(c, test::random_ops(c, 100, 401), 401);
}

struct FormatCase {
  DType act, table, acc, out;
  int wbits, stages;
};

TEST(LutTile, RandomInEveryTableAccumulatorAndOutputFormat) {
  const FormatCase cases[] = {
      {DType::kFp8E4M3, DType::kFp8E4M3, DType::kFp16, DType::kFp16, 8, 1},
      {DType::kFp8E5M2, DType::kFp8E5M2, DType::kFp32, DType::kFp8E4M3, 8, 1},
      {DType::kBf16, DType::kBf16, DType::kFp32, DType::kFp16, 3, 3},
      {DType::kFp16, DType::kInt8, DType::kInt32, DType::kInt32, 2, 2},  // quantized table
  };
  uint64_t seed = 500;
  for (const auto& fc : cases) {
    auto c = config(TensorCoreDesign::kLut, 2, 8, 4, fc.act, fc.wbits);
    c.table = fc.table;
    c.acc = fc.acc;
    c.out = fc.out;
    c.pipeline_stages = fc.stages;
    ++seed;
    expect_matches_golden(c, test::random_ops(c, 150, seed), seed);
  }
}

// One LMMA per corner: every half-table entry is `entry`, every weight code 0 (pattern 0, so the
// entry is taken with a plus sign, scaled by 2^0 once), C = c. O = c + widen(entry).
LmmaOperands corner(const hw::TensorCoreConfig& c, uint32_t cval, uint32_t entry) {
  LmmaOperands o;
  o.a.assign(size_t(c.shape.m) * c.shape.half_table_size(), entry);
  o.codes.assign(size_t(c.shape.n) * c.shape.k, 0);
  o.c.assign(size_t(c.shape.m) * c.shape.n, cval);
  return o;
}

TEST(LutTile, FloatCornerCasesFp16TableFp32Acc) {
  const auto c = config(TensorCoreDesign::kLut, 2, 8, 4, DType::kFp16, 1);
  // {C (fp32), entry (fp16), expected O (fp32) by IEEE 754 hand calculation}
  const uint32_t cases[][3] = {
      {0xbf800000, 0x3c00, 0x00000000},  // -1 + 1 = +0 (exact cancellation)
      {0x80000000, 0x8000, 0x80000000},  // -0 + -0 = -0
      {0x80000000, 0x0000, 0x00000000},  // -0 + +0 = +0
      {0x7f800000, 0xfc00, 0x7fc00000},  // inf + -inf = canonical NaN
      {0xff800000, 0x3c00, 0xff800000},  // -inf + 1 = -inf
      {0x3f800000, 0x7e01, 0x7fc00000},  // 1 + NaN (payload) = canonical NaN
      {0x00000001, 0x0000, 0x00000001},  // fp32 min subnormal + 0 stays subnormal
      {0x00000000, 0x0001, 0x33800000},  // fp16 min subnormal 2^-24 widens to a normal
      {0x7f7fffff, 0x7bff, 0x7f7fffff},  // fp32 max + 65504 rounds back to max
      {0x4b800000, 0x3c00, 0x4b800000},  // 2^24 + 1: tie, rounds to even (2^24)
      {0x4b800001, 0x3c00, 0x4b800002},  // (2^24 + 2) + 1: tie, rounds to even (up)
  };
  std::vector<LmmaOperands> ops;
  for (const auto& k : cases) ops.push_back(corner(c, k[0], k[1]));
  const TileRun run = expect_matches_golden(c, ops, 0);
  ASSERT_EQ(run.outputs.size(), std::size(cases));
  for (size_t i = 0; i < std::size(cases); ++i) {
    EXPECT_EQ(run.outputs[i][0], cases[i][2]) << "case " << i;
  }
}

TEST(LutTile, FloatCornerCasesFp8TableFp16Acc) {
  auto c = config(TensorCoreDesign::kLut, 2, 8, 4, DType::kFp8E4M3, 8);
  c.acc = c.out = DType::kFp16;
  // Weight code 0 gives pattern 0 in every plane: each plane b adds +entry * 2^b, so the LMMA
  // adds entry * 255 in eight rounded steps.
  const uint32_t cases[][3] = {
      {0x0000, 0x7e, 0x7c00},  // 448 * (1 + ... + 128): 56896 + 57344 overflows FP16 to +inf
      {0xdbf8, 0x38, 0x0000},  // -255 + (1 + 2 + ... + 128) = +0, exact cancellation
      {0x3c00, 0x7f, 0x7e00},  // E4M3 NaN entry -> canonical FP16 NaN
      {0x8000, 0x80, 0x8000},  // -0 + eight times -0 stays -0
  };
  std::vector<LmmaOperands> ops;
  for (const auto& k : cases) ops.push_back(corner(c, k[0], k[1]));
  const TileRun run = expect_matches_golden(c, ops, 0);
  ASSERT_EQ(run.outputs.size(), std::size(cases));
  for (size_t i = 0; i < std::size(cases); ++i) {
    EXPECT_EQ(run.outputs[i][0], cases[i][2]) << "case " << i;
  }
}

TEST(LutTile, CPreloadThroughZeroTable) {
  const auto c = config(TensorCoreDesign::kLut, 2, 8, 4, DType::kFp16, 2);
  std::mt19937_64 rng(ltc::test_support::test_seed(601));
  LmmaOperands o = corner(c, 0, 0x0000);                               // +0 entries
  for (auto& v : o.c) v = static_cast<uint32_t>(rng()) & 0x7f7fffffu;  // positive finite fp32
  const TileRun run = expect_matches_golden(c, {o}, 601);
  ASSERT_EQ(run.outputs.size(), 1u);
  EXPECT_EQ(run.outputs[0], o.c);  // C + 0 + 0 = C
}

TEST(LutTile, BackToBackAtOnePlanePerCycle) {
  for (int stages : {1, 3}) {
    auto c = config(TensorCoreDesign::kLut, 2, 8, 4, stages == 1 ? DType::kFp16 : DType::kBf16, 4);
    c.pipeline_stages = stages;
    if (stages == 3) c.out = DType::kFp16;  // the format test's bf16 model
    const auto ops = test::random_ops(c, 20, 700 + stages);
    const TileRun run = expect_matches_golden(c, ops, 700 + stages);
    // One reset cycle, 80 beats accepted on consecutive cycles, the last result valid `stages`
    // cycles after its beat.
    EXPECT_EQ(run.cycles, 1u + 20u * 4u + static_cast<uint64_t>(stages)) << "stages " << stages;
    EXPECT_EQ(run.done_pulses, 20u);
  }
}

TEST(LutTile, StallsOnBothHandshakesKeepResults) {
  const auto c = config(TensorCoreDesign::kLut, 2, 8, 4, DType::kFp16, 4);
  StallOptions s;
  s.seed = ltc::test_support::test_seed(801);
  s.in_stall_pct = 35;
  s.out_stall_pct = 35;
  const auto ops = test::random_ops(c, 60, 801);
  const TileRun run = expect_matches_golden(c, ops, 801, s);
  EXPECT_GT(run.cycles, 60u * 4u + 20u);  // stalls happened
  EXPECT_EQ(run.done_pulses, 60u);
}

TEST(LutTile, ResetMidOperationDropsOnlyTheInterruptedLmma) {
  const auto c = config(TensorCoreDesign::kLut, 2, 8, 4, DType::kFp16, 4);
  const auto ops = test::random_ops(c, 6, 901);
  std::vector<TileLmma> lmmas;
  for (const auto& o : ops) lmmas.push_back(tile_lmma(c, o));
  lmmas[1].abort_after = 2;  // reset after two of four planes
  lmmas[4].abort_after = 3;
  StallOptions s;
  s.seed = ltc::test_support::test_seed(902);
  s.out_stall_pct = 20;
  const TileRun run = run_tile(test::harness(c), c, lmmas, s);
  const std::vector<size_t> kept = {0, 2, 3, 5};
  ASSERT_EQ(run.outputs.size(), kept.size());
  for (size_t i = 0; i < kept.size(); ++i) {
    EXPECT_EQ(run.outputs[i], golden_output(c, ops[kept[i]])) << "lmma " << kept[i];
  }
}

TEST(LutTile, VcdTraceBehindAFlag) {
  const auto c = config(TensorCoreDesign::kLut, 1, 4, 4, DType::kInt8, 2);
  const std::string vcd =
      (std::filesystem::temp_directory_path() / "ltc_rtl_trace_test.vcd").string();
  std::filesystem::remove(vcd);
  StallOptions s;
  s.vcd = vcd;
  const auto ops = test::random_ops(c, 3, 1001);
  std::vector<TileLmma> lmmas;
  for (const auto& o : ops) lmmas.push_back(tile_lmma(c, o));
  const TileRun run = run_tile(test::harness(c, /*trace=*/true), c, lmmas, s);
  EXPECT_EQ(run.outputs.size(), 3u);
  std::ifstream in(vcd);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("$enddefinitions"), std::string::npos);
  EXPECT_NE(text.str().find("in_valid_i"), std::string::npos);
  std::filesystem::remove(vcd);
}

}  // namespace
}  // namespace ltc::rtl
