// `ltc sim --tc rtl`: the verilated LUT tile as the SM's tensor core gives the fast model's cycles
// and, with --functional, outputs bit-identical to the golden model (and so to the fast back end)
// on the compiler's GEMMs: INT8 and FP16 activations, W_BIT 1, 2, 4, at M2N64K4 (a100-lut4x, four
// tiles per tensor core) and at M2N8K4 with two pipeline stages. Models are built into the build
// tree's RTL cache, shared with the rtl tests.
#include "sim/rtl_tensor_core.h"
#include "common/error.h"
#include "compiler/gemm_lowering.h"
#include "model/golden/lmma.h"
#include "model/hw/gpu.h"
#include "model/llm/precision.h"
#include "sim/simulator.h"
#include "tests/sim/sim_test_util.h"
#include "tests/test_seed.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace ltc {
namespace {

uint32_t test_seed() {
  return uint32_t(ltc::test_support::test_seed(11));  // tests/test_seed.h: LTC_SEED replays
}

using ltc::test_support::compiled_gemm;

sim::RunStats run(const traces::Trace& t, const hw::GpuConfig& gpu, const std::string& tc,
                  bool functional) {
  sim::SimOptions o;
  o.tc = tc;
  o.functional = functional;
  o.seed = test_seed();
  o.rtl_cache_dir = LTC_RTL_TEST_CACHE;
  return sim::simulate(t, gpu, o);
}

// Same cycles, kernel by kernel and stall by stall, and (functional) no output off the golden.
void expect_equivalent(const traces::Trace& t, const hw::GpuConfig& gpu, const std::string& tc,
                       const std::string& what, bool functional = true) {
  const sim::RunStats fast = run(t, gpu, "fast", functional);
  const sim::RunStats rtl = run(t, gpu, tc, functional);
  EXPECT_EQ(rtl.cycles, fast.cycles) << what;
  ASSERT_EQ(rtl.kernels.size(), fast.kernels.size()) << what;
  for (size_t i = 0; i < fast.kernels.size(); ++i) {
    EXPECT_EQ(rtl.kernels[i].cycles, fast.kernels[i].cycles) << what << " kernel " << i;
    EXPECT_EQ(rtl.kernels[i].tensor_busy_cycles, fast.kernels[i].tensor_busy_cycles)
        << what << " kernel " << i;
    EXPECT_EQ(rtl.kernels[i].stall_cycles, fast.kernels[i].stall_cycles) << what << " kernel " << i;
  }
  // Every issued LMMA went through the tile (a x b core tiles each).
  uint64_t lmmas = 0;
  for (const auto& k : rtl.kernels) lmmas += k.issued[size_t(traces::Opcode::kLmma)];
  EXPECT_GE(rtl.rtl_tile_lmmas, lmmas) << what;
  EXPECT_GT(rtl.rtl_tile_cycles, 0u) << what;
  if (!functional) {
    EXPECT_EQ(rtl.rtl_computed_lmmas, 0u) << what;
    return;
  }
  // The tile computed the LMMAs (all but those predicated off in the K padding).
  EXPECT_GT(rtl.rtl_computed_lmmas, 0u) << what;
  EXPECT_LE(rtl.rtl_computed_lmmas, lmmas) << what;
  EXPECT_GT(rtl.functional_outputs, 0u) << what;
  EXPECT_EQ(rtl.functional_outputs, fast.functional_outputs) << what;
  EXPECT_EQ(fast.functional_mismatches, 0u)
      << what << ", " << ltc::test_support::seed_note(test_seed());
  EXPECT_EQ(rtl.functional_mismatches, 0u)
      << what << ", " << ltc::test_support::seed_note(test_seed());
}

TEST(RtlTensorCore, M2N64K4GivesTheFastCyclesAndTheGoldenOutputs) {
  const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  for (golden::DType act : {golden::DType::kInt8, golden::DType::kFp16}) {
    for (const char* w : {"int1", "int2", "int4"}) {
      expect_equivalent(compiled_gemm(gpu, 3, 128, 40, w, act), gpu, "rtl",
                        std::string("m2n64k4 ") + w + " x " + std::string(golden::dtype_name(act)));
    }
  }
}

TEST(RtlTensorCore, M2N8K4WithTwoPipelineStagesGivesTheFastCyclesAndTheGoldenOutputs) {
  hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  gpu.lut_tensor->core.shape = {2, 8, 4};
  gpu.lut_tensor->core.pipeline_stages = 2;
  gpu.lut_tensor->tiles_per_tensor_core = 2;
  for (golden::DType act : {golden::DType::kInt8, golden::DType::kFp16}) {
    for (const char* w : {"int1", "int2", "int4"}) {
      expect_equivalent(compiled_gemm(gpu, 5, 24, 36, w, act), gpu, "rtl",
                        std::string("m2n8k4 ") + w + " x " + std::string(golden::dtype_name(act)));
    }
  }
}

TEST(RtlTensorCore, TimingOnlyRunsStreamEveryLmmaAndKeepTheCycles) {
  const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  expect_equivalent(compiled_gemm(gpu, 4, 192, 64, "int2", golden::DType::kFp16), gpu, "rtl",
                    "timing only", false);
}

TEST(RtlTensorCore, TheNaiveTileComputesTheSameGemm) {
  const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  expect_equivalent(compiled_gemm(gpu, 3, 128, 40, "int2", golden::DType::kInt8), gpu, "rtl-naive",
                    "rtl-naive int2 x int8");
}

// One instruction of 2 x 2 core tiles on a core of 4 tiles: the tile's result equals golden::lmma
// on random operands, and the timing is the fast formula's.
TEST(RtlTensorCore, OneMultiTileLmmaEqualsTheGoldenLmma) {
  const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  sim::RtlTensorCore tc(gpu, hw::TensorCoreDesign::kLut, LTC_RTL_TEST_CACHE);
  std::mt19937 rng(test_seed());
  traces::LmmaInstance l;
  l.shape = {4, 128, 4};
  l.type = {golden::DType::kInt16, 3, golden::DType::kInt32, golden::DType::kInt32};
  l.act = golden::DType::kInt8;
  for (int r = 0; r < l.shape.m; ++r) {
    std::vector<uint32_t> a(4);
    for (auto& v : a) v = rng() & 0xffu;
    l.acts.insert(l.acts.end(), a.begin(), a.end());
    const auto half = golden::precompute_half_table(a.data(), l.act, 4, l.type.table);
    l.half_tables.insert(l.half_tables.end(), half.begin(), half.end());
  }
  for (int i = 0; i < 3 * l.shape.n; ++i) l.planes.push_back(uint8_t(rng() & 0xfu));
  for (int i = 0; i < l.shape.m * l.shape.n; ++i) l.c.push_back(rng());
  const auto want = golden::lmma(l.shape, l.type, l.half_tables, l.planes, l.c);
  EXPECT_EQ(tc.lmma(l), want) << ltc::test_support::seed_note(test_seed());
  traces::LmmaOp op;
  op.shape = l.shape;
  op.act = l.act;
  op.wbits = 3;
  op.acc = op.out = golden::DType::kInt32;
  const hw::TensorOpTiming fast = gpu.lmma_timing(op.shape, op.wbits);
  const hw::TensorOpTiming streamed = tc.issue_lmma(op);  // the operands above
  const hw::TensorOpTiming zeros = tc.issue_lmma(op);     // zero operands
  for (const auto& t : {streamed, zeros}) {
    EXPECT_EQ(t.issue_cycles, fast.issue_cycles);
    EXPECT_EQ(t.latency_cycles, fast.latency_cycles);
  }
}

TEST(RtlTensorCore, UnknownBackEndNamesTheFlagAndTheValidValues) {
  const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  try {
    sim::make_tensor_core("verilog", gpu);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--tc"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("fast, rtl, rtl-naive"), std::string::npos);
  }
}

}  // namespace
}  // namespace ltc
