// Functional closure: emitted GEMM traces, executed by the interpreter with the golden LMMA,
// reproduce the golden mpGEMM for many shapes, including ones the tiles do not divide.
#include "model/golden/gemm.h"
#include "compiler/gemm_lowering.h"
#include "compiler/interpreter.h"
#include "compiler/packing.h"
#include "model/golden/error.h"
#include "model/golden/lmma.h"
#include "model/hw/gpu.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

namespace ltc::compiler {
namespace {

using golden::DType;

struct Case {
  int64_t m, n, k;
  const char* weights;
  DType act;
  int64_t group;  // 0 = per channel
  bool quantize_tables = false;
};

golden::QuantizedWeights random_weights(std::mt19937& rng, const llm::WeightFormat& f, int n, int k,
                                        int group) {
  std::normal_distribution<double> nd(0.0, 1.0);
  std::vector<double> w(size_t(n) * k);
  for (auto& x : w) x = nd(rng);
  golden::WeightKind kind = golden::WeightKind::kSInt;
  int wbits = f.planes();
  if (f.kind == llm::WeightFormatKind::kTernary) kind = golden::WeightKind::kTernary;
  if (f.kind == llm::WeightFormatKind::kBinary || wbits == 1) kind = golden::WeightKind::kBinary;
  return golden::quantize_weights(kind, wbits, group, w, n, k);
}

std::vector<uint32_t> random_acts(std::mt19937& rng, DType act, int64_t count) {
  std::vector<uint32_t> a(static_cast<size_t>(count));
  if (golden::is_int(act)) {
    std::uniform_int_distribution<int> d(-128, 127);
    for (auto& x : a) x = golden::encode(act, d(rng));
  } else {
    std::normal_distribution<double> d(0.0, 1.0);
    for (auto& x : a) x = golden::encode(act, d(rng));
  }
  return a;
}

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

void run_case(const Case& c, uint32_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed) + " M=" + std::to_string(c.m) +
               " N=" + std::to_string(c.n) + " K=" + std::to_string(c.k) + " " + c.weights + " " +
               std::string(golden::dtype_name(c.act)) + " group " + std::to_string(c.group) +
               (c.quantize_tables ? " q8" : ""));
  std::mt19937 rng(seed);
  const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  GemmSpec spec;
  spec.m = c.m;
  spec.n = c.n;
  spec.k = c.k;
  spec.weights = llm::parse_weight_format(c.weights);
  spec.act = c.act;
  spec.group_size = c.group;
  spec.quantize_tables = c.quantize_tables;
  const traces::Trace trace = compile_gemm(spec, gpu);

  GemmOperands ops;
  ops.act = c.act;
  ops.m = c.m;
  ops.acts = random_acts(rng, c.act, c.m * c.k);
  ops.weights = random_weights(rng, spec.weights, int(c.n), int(c.k), int(c.group));
  InterpretStats stats;
  const std::vector<double> y = interpret_gemm(trace, ops, &stats);

  const golden::LutGemmConfig cfg = golden::default_lut_gemm_config(c.act, 4, c.quantize_tables);
  const std::vector<double> ref = golden::lut_gemm(cfg, ops.acts, int(c.m), ops.weights);
  ASSERT_EQ(y.size(), ref.size());
  size_t bad = 0;
  for (size_t i = 0; i < y.size(); ++i) bad += same_bits(y[i], ref[i]) ? 0 : 1;
  EXPECT_EQ(bad, 0u) << "first: " << y[0] << " vs " << ref[0];
  if (golden::is_int(c.act) && !c.quantize_tables) {
    // Integer activations: exactly the dense grouped result.
    const auto dots = golden::grouped_code_dots(c.act, ops.acts, int(c.m), ops.weights);
    const std::vector<double> dense = golden::grouped_reference(dots, ops.weights);
    for (size_t i = 0; i < y.size(); ++i) ASSERT_TRUE(same_bits(y[i], dense[i])) << i;
  }
  // Every LUT group of every row ran once per N tile, every table was built once.
  EXPECT_EQ(stats.tables, uint64_t(c.m * ((c.k + 3) / 4)));
}

TEST(GemmLowering, IntegerActivationsReproduceTheDenseResultExactly) {
  const Case cases[] = {
      {1, 64, 64, "int2", DType::kInt8, 0},     {2, 128, 256, "int4", DType::kInt8, 0},
      {3, 100, 70, "int2", DType::kInt8, 0},    {5, 65, 130, "int1", DType::kInt8, 0},
      {7, 200, 256, "int3", DType::kInt8, 64},  {1, 96, 384, "ternary", DType::kInt8, 128},
      {16, 64, 36, "int8", DType::kInt8, 0},    {33, 130, 200, "binary", DType::kInt8, 0},
      {4, 257, 512, "int2", DType::kInt8, 128}, {2, 64, 132, "int4", DType::kInt8, 32},
  };
  uint32_t seed = 1234;
  for (const Case& c : cases) run_case(c, seed++);
}

TEST(GemmLowering, FloatActivationsMatchTheGoldenLutGemmBitForBit) {
  const Case cases[] = {
      {1, 64, 64, "int2", DType::kFp16, 0},      {3, 100, 70, "int4", DType::kFp16, 0},
      {2, 96, 256, "int2", DType::kBf16, 64},    {5, 70, 100, "int1", DType::kFp8E4M3, 0},
      {4, 128, 128, "ternary", DType::kFp16, 0},
  };
  uint32_t seed = 99;
  for (const Case& c : cases) run_case(c, seed++);
}

TEST(GemmLowering, QuantizedTablesMatchTheGoldenLutGemm) {
  const Case cases[] = {{2, 64, 128, "int2", DType::kFp16, 0, true},
                        {3, 100, 72, "int4", DType::kFp16, 0, true}};
  uint32_t seed = 7;
  for (const Case& c : cases) run_case(c, seed++);
}

TEST(GemmLowering, RandomShapes) {
  std::mt19937 rng(20260);
  const char* formats[] = {"int1", "int2", "int3", "int4", "ternary"};
  for (int i = 0; i < 12; ++i) {
    Case c{1 + int64_t(rng() % 9),
           1 + int64_t(rng() % 300),
           1 + int64_t(rng() % 300),
           formats[rng() % 5],
           DType::kInt8,
           0};
    run_case(c, 5000 + uint32_t(i));
  }
}

// FluxBin multi-basis binary: per-basis column-scaled tables, 1-bit sign LMMAs, row-scale
// epilogues per (group, basis) and the dense salient branch, bit for bit as golden::lut_gemm.
TEST(GemmLowering, MultiBasisBinaryMatchesTheGoldenLutGemm) {
  struct Mb {
    int64_t m, n, k;
    const char* weights;
    DType act;
  };
  const Mb cases[] = {{3, 100, 256, "binary:kb=2,g=128,s=8", DType::kFp16},
                      {2, 64, 200, "binary:kb=3,g=64,s=0", DType::kInt8},
                      {5, 70, 96, "binary:kb=2,g=32,s=4", DType::kBf16},
                      {1, 130, 300, "binary:kb=1,g=128,s=16", DType::kFp16}};
  const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  uint32_t seed = 77;
  for (const Mb& c : cases) {
    SCOPED_TRACE(std::string(c.weights) + " seed " + std::to_string(seed));
    GemmSpec spec;
    spec.m = c.m;
    spec.n = c.n;
    spec.k = c.k;
    spec.weights = llm::parse_weight_format(c.weights);
    spec.act = c.act;
    const traces::Trace t = compile_gemm(spec, gpu);
    EXPECT_EQ(t.kernels.back().gemm.bases, spec.weights.bases);
    const GemmCheck check = check_gemm_trace(t, seed++);
    EXPECT_EQ(check.outputs, uint64_t(c.m * c.n));
    EXPECT_EQ(check.mismatches, 0u) << "max diff " << check.max_abs_diff;
    // One table set per basis: M x ceil(K / 4) tables each.
    EXPECT_EQ(check.stats.tables, uint64_t(spec.weights.bases * c.m * ((c.k + 3) / 4)));
  }
}

TEST(GemmLowering, TilesAreRecordedAndCapacitiesRespected) {
  const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  GemmSpec spec;
  spec.m = 1;
  spec.n = 8192;
  spec.k = 8192;
  spec.weights = llm::parse_weight_format("int2");
  const traces::Trace t = compile_gemm(spec, gpu);
  ASSERT_EQ(t.kernels.size(), 2u);
  const traces::Kernel& k = t.kernels[1];
  EXPECT_EQ(k.tiles.instr, (std::array<int64_t, 3>{2, 64, 4}));
  EXPECT_LE(k.smem_bytes, uint64_t(gpu.shared_memory_kb_per_block) * 1024);
  EXPECT_LE(int(k.regs_per_thread), gpu.max_registers_per_thread);
  EXPECT_EQ(k.grid_x * k.tiles.block[1] >= 8192, true);
  // LMMAs executed by all warps together = (M padded to 2) / 2 * N / 64 * K / 4 = 262144.
  uint64_t lmmas = 0;
  for (int64_t wy = 0; wy < k.warps_y; ++wy) {
    for (int64_t wx = 0; wx < k.warps_x; ++wx) {
      traces::expand_warp(k, 0, 0, wx, wy, [&](const traces::Instr& in, const auto&) {
        lmmas += in.op == traces::Opcode::kLmma;
      });
    }
  }
  EXPECT_EQ(lmmas * uint64_t(k.blocks()), uint64_t(8192 / 64) * (8192 / 4));
}

TEST(GemmLowering, GpuWithoutLutCoreIsAnInputError) {
  GemmSpec spec;
  spec.m = 1;
  spec.n = 64;
  spec.k = 64;
  spec.weights = llm::parse_weight_format("int2");
  EXPECT_THROW(compile_gemm(spec, hw::load_gpu("a100")), InputError);
  spec.weights = llm::parse_weight_format("fp16");
  EXPECT_THROW(compile_gemm(spec, hw::load_gpu("a100-lut4x")), InputError);
}

TEST(Packing, PatternsAreTheGoldenTransformedPlanes) {
  std::mt19937 rng(42);
  const llm::WeightFormat f = llm::parse_weight_format("int3");
  const auto w = random_weights(rng, f, 70, 22, 0);
  const PackedWeights p = pack_weights(w, 4, 64);
  EXPECT_EQ(p.bytes.size(), size_t(2 * 6 * 3 * 32));  // 2 N tiles x 6 LUT groups x 3 planes x 32 B
  for (int lg = 0; lg < 6; ++lg) {
    std::vector<uint8_t> tile(size_t(70) * 4, 0);
    for (int col = 0; col < 70; ++col) {
      for (int i = 0; i < 4; ++i) {
        const int c = lg * 4 + i;
        tile[size_t(col) * 4 + i] = c < 22 ? w.codes[size_t(col) * 22 + c] : 0;
      }
    }
    const auto planes = golden::transformed_bit_planes(tile.data(), 70, 4, 3);
    for (int b = 0; b < 3; ++b) {
      for (int col = 0; col < 70; ++col) {
        ASSERT_EQ(p.pattern(col, lg, b), planes[size_t(b) * 70 + col])
            << lg << " " << b << " " << col;
      }
    }
  }
}

TEST(Packing, GroupNotMultipleOfKIsAnInputError) {
  std::mt19937 rng(1);
  const auto w = random_weights(rng, llm::parse_weight_format("int2"), 8, 12, 6);
  EXPECT_THROW(pack_weights(w, 4, 64), InputError);
}

}  // namespace
}  // namespace ltc::compiler
