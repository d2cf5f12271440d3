// Functional closure: emitted GEMM traces, executed by the interpreter with the golden LMMA,
// reproduce the golden mpGEMM for many shapes, including ones the tiles do not divide.
#include "model/golden/gemm.h"
#include "common/error.h"
#include "compiler/gemm_lowering.h"
#include "compiler/interpreter.h"
#include "model/golden/lmma.h"
#include "model/hw/gpu.h"
#include "model/tiling/tiling.h"
#include "traces/packing.h"

#include "tests/test_seed.h"

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
  SCOPED_TRACE(ltc::test_support::seed_note(seed) + " M=" + std::to_string(c.m) +
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

  golden::LutGemmConfig cfg = golden::default_lut_gemm_config(c.act, 4, c.quantize_tables);
  cfg.slices = traces::kernel_k_slices(trace.kernels.back());  // the order the kernel adds in
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
  uint32_t seed = uint32_t(ltc::test_support::test_seed(1234));
  for (const Case& c : cases) run_case(c, seed++);
}

TEST(GemmLowering, FloatActivationsMatchTheGoldenLutGemmBitForBit) {
  const Case cases[] = {
      {1, 64, 64, "int2", DType::kFp16, 0},      {3, 100, 70, "int4", DType::kFp16, 0},
      {2, 96, 256, "int2", DType::kBf16, 64},    {5, 70, 100, "int1", DType::kFp8E4M3, 0},
      {4, 128, 128, "ternary", DType::kFp16, 0},
  };
  uint32_t seed = uint32_t(ltc::test_support::test_seed(99));
  for (const Case& c : cases) run_case(c, seed++);
}

TEST(GemmLowering, QuantizedTablesMatchTheGoldenLutGemm) {
  const Case cases[] = {{2, 64, 128, "int2", DType::kFp16, 0, true},
                        {3, 100, 72, "int4", DType::kFp16, 0, true}};
  uint32_t seed = uint32_t(ltc::test_support::test_seed(7));
  for (const Case& c : cases) run_case(c, seed++);
}

TEST(GemmLowering, RandomShapes) {
  const uint64_t rng_seed = ltc::test_support::test_seed(20260);
  SCOPED_TRACE(ltc::test_support::seed_note(rng_seed));
  std::mt19937 rng(rng_seed);
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
  uint32_t seed = uint32_t(ltc::test_support::test_seed(77));
  for (const Mb& c : cases) {
    SCOPED_TRACE(std::string(c.weights) + " " + ltc::test_support::seed_note(seed));
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
  // The instruction: a x b core tiles of M2N64K4 chosen to span the tensor core's tiles for >= 4
  // tensor-core cycles.
  const golden::LmmaShape instr =
      tiling::choose_lmma_shape({2, 64, 4}, gpu.lut_tensor->tiles_per_tensor_core, 2,
                                {k.tiles.warp[0], k.tiles.warp[1], k.tiles.warp[2]});
  EXPECT_EQ(k.tiles.instr, (std::array<int64_t, 3>{instr.m, instr.n, 4}));
  EXPECT_GE((instr.m / 2) * (instr.n / 64),
            std::min<int64_t>(gpu.lut_tensor->tiles_per_tensor_core,
                              (k.tiles.warp[0] / 2) * (k.tiles.warp[1] / 64)));
  EXPECT_LE(k.smem_bytes, uint64_t(gpu.shared_memory_kb_per_block) * 1024);
  EXPECT_LE(int(k.regs_per_thread), gpu.max_registers_per_thread);
  EXPECT_EQ(k.grid_x * k.tiles.block[1] >= 8192, true);
  // Core tiles of all LMMAs together = (M padded to 2) / 2 * N / 64 * K / 4 = 262144.
  uint64_t lmmas = 0;
  for (int64_t wy = 0; wy < k.warps_y; ++wy) {
    for (int64_t wx = 0; wx < k.warps_x; ++wx) {
      traces::expand_warp(k, 0, 0, wx, wy, [&](const traces::Instr& in, const auto&) {
        lmmas += in.op == traces::Opcode::kLmma;
      });
    }
  }
  EXPECT_EQ(lmmas * uint64_t(k.blocks()) * uint64_t(instr.m / 2 * instr.n / 64),
            uint64_t(8192 / 64) * (8192 / 4));
}

TEST(GemmLowering, GpuWithoutLutCoreIsAnInputError) {
  GemmSpec spec;
  spec.m = 1;
  spec.n = 64;
  spec.k = 64;
  spec.weights = llm::parse_weight_format("int2");
  spec.path = traces::GemmPath::kLut;
  EXPECT_THROW(compile_gemm(spec, hw::load_gpu("a100")), InputError);
  spec.weights = llm::parse_weight_format("fp16");
  EXPECT_THROW(compile_gemm(spec, hw::load_gpu("a100-lut4x")), InputError);
  // Without --path the GPU and weights choose: mac on a GPU without LUT cores.
  spec.path.reset();
  spec.weights = llm::parse_weight_format("int2");
  EXPECT_EQ(gemm_path(spec, hw::load_gpu("a100")), traces::GemmPath::kMma);
  EXPECT_EQ(gemm_path(spec, hw::load_gpu("a100-lut4x")), traces::GemmPath::kLut);
  spec.weights = llm::parse_weight_format("fp16");
  EXPECT_EQ(gemm_path(spec, hw::load_gpu("a100-lut4x")), traces::GemmPath::kMma);
}

TEST(Packing, PatternsAreTheGoldenTransformedPlanes) {
  const uint64_t rng_seed = ltc::test_support::test_seed(42);
  SCOPED_TRACE(ltc::test_support::seed_note(rng_seed));
  std::mt19937 rng(rng_seed);
  const llm::WeightFormat f = llm::parse_weight_format("int3");
  const auto w = random_weights(rng, f, 70, 22, 0);
  const traces::PackedWeights p = traces::pack_weights(w, 4, 64);
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
  const uint64_t rng_seed = ltc::test_support::test_seed(1);
  SCOPED_TRACE(ltc::test_support::seed_note(rng_seed));
  std::mt19937 rng(rng_seed);
  const auto w = random_weights(rng, llm::parse_weight_format("int2"), 8, 12, 6);
  EXPECT_THROW(traces::pack_weights(w, 4, 64), InputError);
}

}  // namespace
}  // namespace ltc::compiler

namespace ltc::compiler {
namespace {

GemmSpec spec_of(int64_t m, int64_t n, int64_t k, const char* weights, DType act, int64_t group = 0,
                 int stages = 0) {
  GemmSpec s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.weights = llm::parse_weight_format(weights);
  s.act = act;
  s.group_size = group;
  s.stages = stages;
  return s;
}

// Replays one warp's stream against the cp.async group rules of traces/isa.h: every non-empty
// committed group is one K tile, in order; a tensor-core instruction of K tile t may only run
// after a `wait` that left tile t's group complete; no group loads past the last K tile.
void expect_pipeline(const traces::Kernel& k, int stages, int64_t k_tiles) {
  SCOPED_TRACE(k.name + " stages " + std::to_string(stages));
  const int64_t bk = k.tiles.block[2];
  for (int64_t wy = 0; wy < k.warps_y; ++wy) {
    for (int64_t wx = 0; wx < k.warps_x; ++wx) {
      int64_t committed = 0, nonempty = 0, open_loads = 0, landed = -1, tiles_seen = 0;
      std::vector<int64_t> group_tile;  // committed group -> K tile (-1: empty)
      int64_t last_tile = -1;
      bool ok = true;
      traces::expand_warp(
          k, k.grid_x - 1, k.grid_y - 1, wx, wy, [&](const traces::Instr& in, const auto& p) {
            switch (in.op) {
              case traces::Opcode::kLdGlobalAsync:
                ++open_loads;
                break;
              case traces::Opcode::kCommit:
                group_tile.push_back(open_loads > 0 ? nonempty++ : -1);
                open_loads = 0;
                ++committed;
                break;
              case traces::Opcode::kWait: {
                EXPECT_EQ(in.count, uint64_t(stages - 2));
                // Groups 0 .. committed - n - 1 are complete: the highest tile among them landed.
                for (int64_t g = 0; g < committed - int64_t(in.count); ++g) {
                  landed = std::max(landed, group_tile[size_t(g)]);
                }
                break;
              }
              case traces::Opcode::kLmma:
              case traces::Opcode::kMma: {
                const int64_t t = in.k.eval(p) / bk;
                if (t > landed && ok) {
                  ADD_FAILURE() << "K tile " << t << " used before it landed (" << landed << ")";
                  ok = false;
                }
                if (t != last_tile) ++tiles_seen;
                last_tile = t;
                break;
              }
              default:
                break;
            }
          });
      EXPECT_EQ(open_loads, 0);
      EXPECT_EQ(nonempty, k_tiles);  // each K tile loaded once, none past the end
      EXPECT_EQ(tiles_seen, k_tiles);
    }
  }
}

TEST(GemmPipeline, LutKernelsPipelineEveryStageDepthAndStayExact) {
  const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  struct P {
    int64_t m, n, k, group;
    const char* w;
  };
  const P shapes[] = {{3, 100, 700, 0, "int2"},
                      {2, 64, 1024, 128, "int4"},
                      {5, 130, 300, 0, "int3"},
                      {1, 256, 96, 32, "int1"}};
  uint32_t seed = uint32_t(ltc::test_support::test_seed(300));
  for (const P& sh : shapes) {
    for (int stages : {2, 3, 4, 6}) {
      const GemmSpec spec = spec_of(sh.m, sh.n, sh.k, sh.w, DType::kInt8, sh.group, stages);
      tiling::TileChoice tc;
      const auto kernels = lower_lut_gemm(spec, gpu, 0, &tc);
      const traces::Kernel& k = kernels.back();
      const int64_t G = sh.group > 0 && sh.group < sh.k ? sh.group : sh.k;
      const int64_t tpg =
          sh.group > 0 && sh.group < sh.k ? G / tc.block.k : (sh.k + tc.block.k - 1) / tc.block.k;
      EXPECT_EQ(tc.stages, std::min<int64_t>(stages, tpg + 1));
      const int64_t k_tiles = (sh.k + G - 1) / G * tpg;
      expect_pipeline(k, tc.stages, k_tiles);
      EXPECT_GE(k.smem_bytes, uint64_t(tc.stages) * 1);
      traces::Trace t;
      t.gpu = gpu.name;
      t.cores.push_back(lut_core_spec(gpu));
      t.kernels = kernels;
      traces::validate(t, "pipeline");
      traces::check_addresses(t, "pipeline");
      const GemmCheck c = check_gemm_trace(t, seed++);
      EXPECT_EQ(c.mismatches, 0u) << sh.m << "x" << sh.n << "x" << sh.k << " stages " << stages;
    }
  }
}

TEST(GemmPipeline, MmaKernelsPipelineEveryStageDepth) {
  const hw::GpuConfig gpu = hw::load_gpu("a100");
  for (const char* w : {"fp16", "int4", "int8"}) {
    for (int stages : {2, 3, 5}) {
      const DType act = std::string(w) == "int8" ? DType::kInt8 : DType::kFp16;
      const traces::Trace t = compile_gemm(spec_of(37, 200, 300, w, act, 0, stages), gpu);
      const traces::Kernel& k = t.kernels.back();
      const int64_t k_tiles = (300 + k.tiles.block[2] - 1) / k.tiles.block[2];
      expect_pipeline(k, std::min<int>(stages, int(k_tiles) + 1), k_tiles);
      traces::check_addresses(t, "mma");
    }
  }
}

TEST(GemmLowering, MultiTileLmmaInstructionsAreExact) {
  // int1 on a large warp tile: N grows to 4 core tiles, then M.
  const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  const GemmSpec spec = spec_of(256, 1024, 256, "int1", DType::kInt8);
  const traces::Trace t = compile_gemm(spec, gpu);
  const traces::Kernel& k = t.kernels.back();
  bool multi = false;
  for (const auto& in : k.program) {
    if (in.op == traces::Opcode::kLmma) {
      multi = in.lmma.shape.n > 64 || in.lmma.shape.m > 2;
      EXPECT_EQ(tiling::lmma_issue_cycles(in.lmma.shape, {2, 64, 4}, 4, 1) >= 4 ||
                    in.lmma.shape.m == k.tiles.warp[0],
                true)
          << in.lmma.name();
    }
  }
  EXPECT_TRUE(multi) << k.tiles.instr[0] << "x" << k.tiles.instr[1];
  const GemmCheck c = check_gemm_trace(t, uint32_t(ltc::test_support::test_seed(4242)));
  EXPECT_EQ(c.mismatches, 0u);
  EXPECT_EQ(c.outputs, uint64_t(256 * 1024));
}

// One warp's fragment loads of the LUT kernel (lds into a fragment buffer; a sliced kernel's
// reduction reads partial sums too): lds per lmma, the largest lds, the kernel's K slices.
struct FragmentLoads {
  uint64_t lds = 0, lmma = 0, max_bytes = 0;
  int slices = 1;
  uint64_t instr_per_step = 1;  // lmma per K step of a warp: its warp tile's instruction tiles
  uint64_t warp_m = 0, warp_n = 0;
};
FragmentLoads fragment_loads(int64_t m, int64_t n, int64_t k, const char* w, DType act) {
  const traces::Trace t = compile_gemm(spec_of(m, n, k, w, act), hw::load_gpu("a100-lut4x"));
  FragmentLoads f;
  f.slices = traces::kernel_k_slices(t.kernels.back()).slices;
  const auto& tiles = t.kernels.back().tiles;
  f.instr_per_step = uint64_t((tiles.warp[0] / tiles.instr[0]) * (tiles.warp[1] / tiles.instr[1]));
  f.warp_m = uint64_t(tiles.warp[0]);
  f.warp_n = uint64_t(tiles.warp[1]);
  traces::expand_warp(t.kernels.back(), 0, 0, 0, 0,
                      [&](const traces::Instr& in, const traces::Affine::Point&) {
                        if (in.op == traces::Opcode::kLdShared && in.frag != 0) {
                          ++f.lds;
                          f.max_bytes = std::max<uint64_t>(f.max_bytes, in.bytes);
                        }
                        if (in.op == traces::Opcode::kLmma) ++f.lmma;
                      });
  return f;
}

TEST(GemmLowering, FragmentLoadsGatherKStepsUpToEightBytesPerThread) {
  // A GEMV warp tile (2 x 64, int2): one K step's fragments are a 32-byte table pair and 64
  // bytes of planes, so 4 steps fit in 256 bytes: 2 lds per 4 lmma, the planes' lds 256 bytes.
  // Sliced K: each warp runs its share of the K steps.
  const FragmentLoads gemv = fragment_loads(1, 4096, 4096, "int2", DType::kInt8);
  EXPECT_EQ(gemv.lmma, uint64_t(4096 / 4 / gemv.slices));
  EXPECT_EQ(gemv.lds * 2, gemv.lmma);
  EXPECT_EQ(gemv.max_bytes, 256u);
  // int4 planes: 4 planes of a 32-byte segment per 64-column core tile a step, int16 tables
  // 8 x 2 bytes per row; as many steps per lds as fit 256 bytes (per step the warp issues its
  // warp tile's instructions; two lds, tables and planes, per load).
  const FragmentLoads w4 = fragment_loads(16, 8192, 4096, "int4", DType::kInt8);
  const uint64_t step_bytes = std::max<uint64_t>(w4.warp_n / 64 * 4 * 32, w4.warp_m * 16);
  uint64_t steps_per_load = 1;
  while (2 * steps_per_load * step_bytes <= 256) steps_per_load *= 2;
  EXPECT_EQ(w4.lds * steps_per_load * w4.instr_per_step, 2 * w4.lmma);
  EXPECT_EQ(w4.max_bytes, 256u);
  // The authors' GEMM's warp tile already loads 256 bytes a step: one step per lds, as before.
  const FragmentLoads big = fragment_loads(4096, 27648, 512, "int2", DType::kFp16);
  EXPECT_EQ(big.max_bytes, 256u);
  EXPECT_EQ(big.lds, 2 * uint64_t(512 / 4));
}

TEST(GemmLowering, MacPathCompilesDenseAndDequantizeThenMacGemms) {
  struct M {
    const char* gpu;
    const char* weights;
    DType act;
    int wbits;
    DType mma_a, mma_b;
  };
  const M cases[] = {
      {"a100", "fp16", DType::kFp16, 0, DType::kFp16, DType::kFp16},
      {"a100-lut4x", "bf16", DType::kBf16, 0, DType::kBf16, DType::kBf16},
      {"h100", "fp8e5m2", DType::kFp8E5M2, 0, DType::kFp8E5M2, DType::kFp8E5M2},
      {"a100", "int4", DType::kFp16, 4, DType::kFp16, DType::kFp16},
      {"rtx3090", "ternary", DType::kBf16, 2, DType::kBf16, DType::kBf16},
      {"a100", "int8", DType::kInt8, 8, DType::kInt8, DType::kInt8},
  };
  for (const M& c : cases) {
    SCOPED_TRACE(std::string(c.gpu) + " " + c.weights);
    GemmSpec spec = spec_of(5, 100, 70, c.weights, c.act);
    spec.path = traces::GemmPath::kMma;
    const hw::GpuConfig gpu = hw::load_gpu(c.gpu);
    const traces::Trace t = compile_gemm(spec, gpu);
    ASSERT_EQ(t.kernels.size(), 1u);
    EXPECT_TRUE(t.cores.empty());
    const traces::Kernel& k = t.kernels[0];
    EXPECT_EQ(k.gemm.path, traces::GemmPath::kMma);
    EXPECT_EQ(k.gemm.batch, 1);
    EXPECT_EQ(k.gemm.wbits, c.wbits);
    EXPECT_EQ(k.gemm.act, c.act);
    EXPECT_EQ(k.gemm.group, 70);
    bool dequant_alu = false;
    int64_t mmas = 0;
    for (const auto& in : k.program) {
      if (in.op == traces::Opcode::kMma) {
        EXPECT_EQ(in.mma.a, c.mma_a);
        EXPECT_EQ(in.mma.b, c.mma_b);
      }
      // The dequantizing ALU work (its integer share: unpacking); a sliced kernel's reduction
      // adds on the FP lanes only.
      dequant_alu = dequant_alu || (in.op == traces::Opcode::kAlu && in.int_ops > 0);
    }
    EXPECT_EQ(dequant_alu, c.wbits > 0 && c.wbits < 8);
    // Every (m16, n8, k) step of the padded GEMM once.
    for (int64_t by = 0; by < k.grid_y; ++by) {
      for (int64_t bx = 0; bx < k.grid_x; ++bx) {
        for (int64_t wy = 0; wy < k.warps_y; ++wy) {
          for (int64_t wx = 0; wx < k.warps_x; ++wx) {
            traces::expand_warp(k, bx, by, wx, wy, [&](const traces::Instr& in, const auto&) {
              mmas += in.op == traces::Opcode::kMma;
            });
          }
        }
      }
    }
    const int64_t ik = k.tiles.instr[2];
    EXPECT_EQ(mmas, k.grid_y * k.tiles.block[0] / 16 * (k.grid_x * k.tiles.block[1] / 8) *
                        ((70 + k.tiles.block[2] - 1) / k.tiles.block[2] * k.tiles.block[2] / ik));
    const auto r = traces::check_addresses(t, "mac");
    EXPECT_EQ(r.overlap_kernels, 1);
    // The functional executor reproduces golden::mac_gemm from the trace.
    const GemmCheck check = check_gemm_trace(t, uint32_t(ltc::test_support::test_seed(31)));
    EXPECT_EQ(check.outputs, 500u);
    EXPECT_EQ(check.mismatches, 0u);
  }
}

TEST(GemmLowering, DequantizeThenMacTilesCountTheDequantizedTile) {
  // The tiling chose the stages and the blocks per SM without the dequantized W tile the kernel
  // keeps beside its stages: on the H200 a W2A8 2048x4096x4096 GEMM then asked for more shared
  // memory than a block has ("4 pipeline stages exceed ..."), and on the A100 the paper's W1A16
  // 2048x27648x5120 was tiled for two blocks per SM where one fits (docs/results/sim-paper.md).
  struct M {
    const char* gpu;
    int64_t m, n, k;
    DType act;
    int wbits;
  };
  const M cases[] = {
      {"h200", 2048, 4096, 4096, DType::kInt8, 2},
      {"h200", 8, 14336, 14336, DType::kFp16, 4},
      {"h100", 2048, 4096, 4096, DType::kFp16, 4},
      {"a100", 2048, 27648, 5120, DType::kFp16, 1},
      {"a100", 1, 8192, 8192, DType::kFp16, 4},
      {"rtx3090", 1024, 4096, 4096, DType::kBf16, 2},
      {"a100-80g", 256, 28672, 8192, DType::kFp16, 4},
      {"a100", 256, 4096, 4096, DType::kInt8, 8},
  };
  for (const M& c : cases) {
    SCOPED_TRACE(std::string(c.gpu) + " " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                 std::to_string(c.k) + " w" + std::to_string(c.wbits));
    const hw::GpuConfig gpu = hw::load_gpu(c.gpu);
    tiling::TileChoice tc;
    const traces::Kernel k = lower_mma_gemm("g", 1, c.m, c.n, c.k, c.act, c.act, gpu, &tc, c.wbits);
    const double smem_block = gpu.shared_memory_kb_per_block * 1024.0;
    const double smem_sm = gpu.shared_memory_kb_per_sm * 1024.0;
    EXPECT_LE(double(k.smem_bytes), smem_block);
    EXPECT_DOUBLE_EQ(double(k.smem_bytes), tc.smem_bytes_per_block);
    // The blocks per SM the tiling planned for (a whole wave's, or the grid's share) fit.
    const int64_t planned =
        std::min<int64_t>(tc.blocks_per_sm, (tc.blocks() + gpu.sms - 1) / gpu.sms);
    EXPECT_LE(planned, int64_t(smem_sm / double(k.smem_bytes)));
    // Stages of the packed codes and A, plus one dequantized tile in A's type (none when INT8
    // codes feed the MMA).
    const int64_t eb = golden::dtype_bits(c.act) / 8;
    const int64_t stage = tc.block.m * tc.block.k * eb + tc.block.n * tc.block.k * c.wbits / 8;
    // (none either when mma.sync warps dequantize in registers: all but Hopper's warpgroups).
    const bool in_registers = tiling::dequantizes_in_registers(
        tiling::mac_mpgemm_problem(gpu, c.m, c.n, c.k, c.act, c.wbits));
    EXPECT_EQ(in_registers, c.wbits < 8 && (c.m <= 16 || gpu.sm.mma_warpgroup == 1))
        << "warpgroups read B from shared memory";
    const int64_t dq =
        (c.wbits == 8 && c.act == DType::kInt8) || in_registers ? 0 : tc.block.n * tc.block.k * eb;
    EXPECT_EQ(int64_t(k.smem_bytes), tc.stages * stage + dq);
    // The tiling's estimate covers the CUDA-core work the kernel issues (the dequantize pass),
    // spread over every SM's FP32 and INT32 lanes as the simulator issues it
    // (GpuConfig::cuda_core_cycles, tiling::kDequantIntOpsPerCode of every
    // tiling::kDequantOpsPerCode on the INT32 lanes): counted here from the trace's ALU
    // instructions.
    double thread_ops = 0;
    std::vector<double> mult = {1};
    for (const traces::Instr& in : k.program) {
      if (in.op == traces::Opcode::kLoop) mult.push_back(mult.back() * double(in.count));
      if (in.op == traces::Opcode::kEndLoop) mult.pop_back();
      if (in.op == traces::Opcode::kAlu) thread_ops += mult.back() * double(in.count);
    }
    thread_ops *= double(k.warps_per_block() * k.blocks());
    const double int_share = double(tiling::kDequantIntOpsPerCode) / tiling::kDequantOpsPerCode;
    const double alu_us =
        gpu.cuda_core_cycles(thread_ops * (1 - int_share), thread_ops * int_share) /
        (double(gpu.sms) * gpu.clock_ghz * 1e3);
    EXPECT_GE(tc.estimated_us, alu_us);
  }
}

TEST(GemmLowering, TooManyStagesNameTheFlagAndTheStagesThatFit) {
  const hw::GpuConfig gpu = hw::load_gpu("a100");
  tiling::TileChoice tc;
  lower_mma_gemm("g", 1, 2048, 27648, 5120, DType::kFp16, DType::kFp16, gpu, &tc, 1);
  // Stages of the chosen tile that fit, by hand (its mma.sync warps dequantize in registers: no
  // dequantized tile beside them).
  const int64_t eb = 2, limit = int64_t(gpu.shared_memory_kb_per_block * 1024.0);
  const int64_t stage = tc.block.m * tc.block.k * eb + tc.block.n * tc.block.k / 8;
  const int64_t fit = limit / stage;
  try {
    lower_mma_gemm("g", 1, 2048, 27648, 5120, DType::kFp16, DType::kFp16, gpu, nullptr, 1, 16);
    FAIL() << "16 stages of " << stage << " B fit in " << limit << " B";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--stages 16"), std::string::npos) << what;
    EXPECT_NE(what.find("at most " + std::to_string(fit) + " stages"), std::string::npos) << what;
  }
}

TEST(GemmLowering, WarpgroupMmaKernelsReadBOnceForTheGroup) {
  // On h200 (sm.mma_warpgroup 4) the block's warps along M are one warpgroup and each warp
  // loads a quarter of B's fragment; with warpgroups off every warp loads all of it.
  GemmSpec spec = spec_of(256, 4096, 4096, "fp16", DType::kFp16);
  spec.path = traces::GemmPath::kMma;
  for (int group : {4, 1}) {
    SCOPED_TRACE(group);
    hw::GpuConfig gpu = hw::load_gpu("h200");
    gpu.sm.mma_warpgroup = group;
    const traces::Kernel k = compile_gemm(spec, gpu).kernels.at(0);
    if (group > 1) {
      EXPECT_EQ(k.warps_y, group);
    }
    const int64_t wm = k.tiles.warp[0], wn = k.tiles.warp[1], step = 16 * 2;
    std::vector<uint64_t> lds;
    for (const auto& in : k.program) {
      if (in.op == traces::Opcode::kLdShared && in.frag > 0) lds.push_back(in.bytes);
    }
    ASSERT_GE(lds.size(), 2u);
    EXPECT_EQ(lds[0], uint64_t(wm * step));
    EXPECT_EQ(lds[1], uint64_t(wn * step / group));
    EXPECT_NO_THROW(traces::check_addresses(compile_gemm(spec, gpu), "h200.lmt"));
    // A GEMM shorter than the block tile (rows loaded: M only) still gives the dense result.
    GemmSpec small = spec_of(5, 100, 70, "fp16", DType::kFp16);
    small.path = traces::GemmPath::kMma;
    const traces::Trace st = compile_gemm(small, gpu);
    EXPECT_EQ(traces::check_addresses(st, "small").overlap_kernels, 1);
    EXPECT_EQ(check_gemm_trace(st, uint32_t(ltc::test_support::test_seed(11))).mismatches, 0u);
  }
}

// Skinny MMA kernels on a GPU with TMA multicast run clusters along N (tiling::mma_cluster): every
// block column reads the same A tile, which a cluster reads from L2 once. A GPU without clusters
// and the LUT path run plain grids; the results stay bit-exact either way.
TEST(GemmLowering, SkinnyMmaKernelsRunClustersWhereTheGpuHasThem) {
  for (const char* w : {"int4", "fp16"}) {
    SCOPED_TRACE(w);
    GemmSpec spec = spec_of(16, 4096, 4096, w, DType::kFp16);
    spec.path = traces::GemmPath::kMma;
    const traces::Kernel h = compile_gemm(spec, hw::load_gpu("h200")).kernels.at(0);
    EXPECT_EQ(h.cluster_x, 2);
    EXPECT_GT(h.grid_x, 1);
    EXPECT_EQ(compile_gemm(spec, hw::load_gpu("a100")).kernels.at(0).cluster_x, 1);
  }
  const traces::Trace lut =
      compile_gemm(spec_of(16, 4096, 4096, "int2", DType::kFp16), hw::load_gpu("a100-lut4x"));
  EXPECT_EQ(lut.kernels.back().cluster_x, 1);
  GemmSpec small = spec_of(3, 300, 500, "int3", DType::kFp16);
  small.path = traces::GemmPath::kMma;
  const traces::Trace st = compile_gemm(small, hw::load_gpu("h200"));
  EXPECT_EQ(st.kernels.at(0).cluster_x, st.kernels.at(0).grid_x > 1 ? 2 : 1);
  const uint32_t seed = uint32_t(ltc::test_support::test_seed(12));
  EXPECT_EQ(check_gemm_trace(st, seed).mismatches, 0u) << "seed " << seed;
}

TEST(GemmLowering, MacPathRejectsWhatTheMacCoresCannotRun) {
  GemmSpec spec = spec_of(4, 64, 64, "fp8e4m3", DType::kFp8E4M3);
  const std::string msg = [&] {
    try {
      compile_gemm(spec, hw::load_gpu("a100"));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  }();
  EXPECT_NE(
      msg.find("do not take fp8e4m3 x fp8e4m3 (valid: fp16 x fp16, bf16 x bf16, int8 x int8)"),
      std::string::npos)
      << msg;
  spec = spec_of(4, 64, 64, "binary:kb=2,g=32,s=0", DType::kFp16);
  spec.path = traces::GemmPath::kMma;
  EXPECT_THROW(compile_gemm(spec, hw::load_gpu("a100-lut4x")), InputError);
  spec = spec_of(4, 64, 64, "fp8e4m3", DType::kFp8E5M2);  // one operand dtype per record
  EXPECT_THROW(compile_gemm(spec, hw::load_gpu("h100")), InputError);
  spec = spec_of(4, 64, 64, "fp16", DType::kInt8);  // int8 x fp16: no such mma
  EXPECT_THROW(compile_gemm(spec, hw::load_gpu("a100")), InputError);
  spec = spec_of(4, 64, 64, "int4", DType::kFp16, 32);  // groups: per channel only
  spec.path = traces::GemmPath::kMma;
  EXPECT_THROW(compile_gemm(spec, hw::load_gpu("a100")), InputError);
  spec = spec_of(4, 64, 64, "int4", DType::kFp16, 0, 1);
  EXPECT_THROW(compile_gemm(spec, hw::load_gpu("a100")), InputError);
}

// Exact addresses: every access inside its (padded) tensor and shared memory, no two warps
// storing the same byte, for odd shapes on both paths.
TEST(GemmAddresses, EveryShapeStaysInsideItsTensorsAndStoresNeverOverlap) {
  const hw::GpuConfig lut = hw::load_gpu("a100-lut4x");
  const hw::GpuConfig mac = hw::load_gpu("a100");
  const uint64_t rng_seed = ltc::test_support::test_seed(777);
  SCOPED_TRACE(ltc::test_support::seed_note(rng_seed));
  std::mt19937 rng(rng_seed);
  int checked = 0;
  for (int64_t m = 1; m <= 5; ++m) {
    for (int64_t n : {1, 63, 100, 130, 200}) {
      for (int64_t k : {4, 70, 100, 257}) {
        const char* w = (m + n + k) % 3 == 0 ? "int4" : (m + n + k) % 3 == 1 ? "int2" : "ternary";
        SCOPED_TRACE("M=" + std::to_string(m) + " N=" + std::to_string(n) +
                     " K=" + std::to_string(k) + " " + w);
        const traces::Trace a = compile_gemm(spec_of(m, n, k, w, DType::kInt8), lut);
        const auto ra = traces::check_addresses(a, "lut");
        EXPECT_EQ(ra.overlap_kernels, 2);
        GemmSpec ms = spec_of(m, n, k, w, DType::kFp16);
        const traces::Trace b = compile_gemm(ms, mac);
        EXPECT_EQ(traces::check_addresses(b, "mac").overlap_kernels, 1);
        ++checked;
      }
    }
  }
  // Random shapes with groups, FluxBin, fp16 tables, more stages.
  const char* formats[] = {"int1", "int3", "binary:kb=2,g=64,s=4", "int2"};
  for (int i = 0; i < 20; ++i) {
    const int64_t m = 1 + int64_t(rng() % 40), n = 1 + int64_t(rng() % 400);
    const int64_t k = 64 * (1 + int64_t(rng() % 6)) - int64_t(rng() % 3) * 4;
    GemmSpec s = spec_of(m, n, k, formats[i % 4], i % 2 ? DType::kFp16 : DType::kInt8,
                         i % 4 == 3 ? 32 : 0, 2 + i % 3);
    s.quantize_tables = i % 5 == 0 && s.act == DType::kFp16;
    SCOPED_TRACE("case " + std::to_string(i) + " M=" + std::to_string(m) +
                 " N=" + std::to_string(n) + " K=" + std::to_string(k));
    const traces::Trace t = compile_gemm(s, lut);
    const auto r = traces::check_addresses(t, "random");
    EXPECT_EQ(r.overlap_skipped, 0);
    const GemmCheck c = check_gemm_trace(t, 900 + uint32_t(i));
    EXPECT_EQ(c.mismatches, 0u);
    ++checked;
  }
  EXPECT_EQ(checked, 5 * 5 * 4 + 20);
}

}  // namespace
}  // namespace ltc::compiler

namespace ltc::compiler {
namespace {

// Skinny GEMMs take sliced-K kernels (warps split every K tile, traces/trace.h "Sliced K"); their
// outputs equal the golden GEMM with the same slices bit for bit, on every path, float and
// integer accumulation, ragged K and quantization groups.
TEST(GemmSlicedK, SkinnyKernelsSliceKAndStayBitExact) {
  struct C {
    const char* gpu;
    int64_t m, n, k;
    const char* w;
    DType act;
    int64_t group;
  };
  const C cases[] = {
      {"a100-lut4x", 1, 128, 1000, "int2", DType::kFp16, 0},   // LUT, fp32 acc, ragged K
      {"a100-lut4x", 3, 128, 4096, "int3", DType::kInt8, 0},   // LUT, int32 acc
      {"a100-lut4x", 1, 64, 1024, "int4", DType::kFp16, 128},  // LUT, groups
      {"a100-lut8x", 9, 192, 777, "int2", DType::kFp16, 0},    // LUT, ragged M and K
      {"a100", 1, 256, 2000, "int4", DType::kFp16, 0},         // dequantize-then-MAC
      {"a100", 5, 64, 3000, "fp16", DType::kFp16, 0},          // dense MMA, fp32 acc
      {"a100", 2, 256, 4096, "int8", DType::kInt8, 0},         // int8 codes, int32 acc
      {"a100", 16, 512, 4096, "int2", DType::kFp16, 0},        // dequantize, 16 rows
      {"h200", 16, 1024, 3000, "int4", DType::kFp16, 0},       // clusters, ragged K
  };
  uint32_t seed = uint32_t(ltc::test_support::test_seed(900));
  for (const C& c : cases) {
    const hw::GpuConfig gpu = hw::load_gpu(c.gpu);
    const traces::Trace t = compile_gemm(spec_of(c.m, c.n, c.k, c.w, c.act, c.group), gpu);
    const traces::Kernel& k = t.kernels.back();
    const golden::KSlices s = traces::kernel_k_slices(k);
    const std::string what = std::string(c.gpu) + " " + std::to_string(c.m) + "x" +
                             std::to_string(c.n) + "x" + std::to_string(c.k) + " " + c.w +
                             " seed " + std::to_string(seed);
    EXPECT_GT(s.slices, 1) << what << ": a skinny GEMM should slice K";
    EXPECT_EQ(k.warps_y, s.slices) << what;
    traces::check_addresses(t, "sliced");
    const GemmCheck check = check_gemm_trace(t, seed++);
    EXPECT_EQ(check.mismatches, 0u) << what;
    EXPECT_EQ(check.outputs, uint64_t(c.m * c.n)) << what;
  }
}

// A sliced trace checked against the unsliced golden GEMM differs: the slice order is what makes
// float results bit-exact, so the test above cannot pass by accident.
TEST(GemmSlicedK, FloatResultsDependOnTheSliceOrder) {
  const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  const traces::Trace t = compile_gemm(spec_of(2, 256, 4096, "int3", DType::kFp16), gpu);
  const size_t gk = t.kernels.size() - 1;
  const golden::KSlices s = traces::kernel_k_slices(t.kernels[gk]);
  ASSERT_GT(s.slices, 1);
  const uint32_t seed = uint32_t(ltc::test_support::test_seed(901));
  const traces::GemmOperands ops = traces::random_gemm_operands(t.kernels[gk].gemm, seed);
  const std::vector<double> y = traces::execute_gemm(t, gk, ops);
  const traces::GemmCheck sliced =
      traces::compare_gemm(y, traces::reference_gemm(t.kernels[gk].gemm, ops, 4, false, s));
  const traces::GemmCheck unsliced =
      traces::compare_gemm(y, traces::reference_gemm(t.kernels[gk].gemm, ops, 4, false));
  EXPECT_EQ(sliced.mismatches, 0u) << "seed " << seed;
  EXPECT_GT(unsliced.mismatches, 0u) << "seed " << seed;
}

}  // namespace
}  // namespace ltc::compiler

namespace ltc::compiler {
namespace {

// Line cycles of every ldgsts block (0, 0) issues, by its exact addresses (128 B lines): what
// the simulator's load/store path spends on the kernel's stage copies (sim/sm.cpp).
double stage_copy_lines(const traces::Kernel& k) {
  double lines = 0;
  for (int64_t wy = 0; wy < k.warps_y; ++wy) {
    for (int64_t wx = 0; wx < k.warps_x; ++wx) {
      traces::expand_warp(k, 0, 0, wx, wy, [&](const traces::Instr& in, const auto& p) {
        if (in.op != traces::Opcode::kLdGlobalAsync) return;
        const uint64_t addr = uint64_t(in.addr.eval(p));
        lines += double(((addr + in.bytes - 1) >> 7) - (addr >> 7) + 1);
      });
    }
  }
  return lines;
}

// The tiling charges a block's stage copies by the compiler's split of each slice between its
// warps (tiling::slice_copy): whole rows, a part of every row (the small copies of GEMVs whose
// warps slice K), or each warp its own rows. Against the lines the compiled kernels' ldgsts touch,
// per K tile, on LUT and MMA kernels from GEMVs to prefill shapes (K a multiple of every K tile).
TEST(GemmLowering, StageCopiesTouchTheLinesTheTilingCharges) {
  struct Case {
    const char* gpu;
    int64_t m, n, k;
    const char* w;
    DType act;
  };
  const Case cases[] = {{"a100-lut4x", 1, 4096, 4096, "int2", DType::kInt8},
                        {"a100-lut4x", 16, 8192, 8192, "int2", DType::kInt8},
                        {"a100-lut4x", 16, 4096, 11008, "int1", DType::kFp16},
                        {"a100-lut4x", 512, 4096, 4096, "int4", DType::kInt8},
                        {"a100", 1, 4096, 4096, "int4", DType::kFp16},
                        {"a100", 16, 5120, 13824, "fp16", DType::kFp16},
                        {"a100", 1024, 5120, 5120, "int4", DType::kFp16}};
  int small_copies = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.gpu) + " " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                 std::to_string(c.k) + " " + c.w);
    const hw::GpuConfig gpu = hw::load_gpu(c.gpu);
    const GemmSpec spec = spec_of(c.m, c.n, c.k, c.w, c.act);
    tiling::TileChoice tc;
    traces::Kernel k;
    if (std::string(c.gpu) == "a100-lut4x") {
      k = lower_lut_gemm(spec, gpu, 0, &tc).back();
    } else {
      const int bits = std::string(c.w) == "fp16" ? 0 : 4;
      k = lower_mma_gemm("gemm", 1, c.m, c.n, c.k, DType::kFp16, DType::kFp16, gpu, &tc, bits);
    }
    ASSERT_EQ(c.k % tc.block.k, 0);
    const double per_tile = stage_copy_lines(k) / double(tc.k_steps);
    EXPECT_DOUBLE_EQ(per_tile, tc.fill_lines) << tc.block.name() << " x" << tc.k_slices;
    if (tc.warps_per_block > 1 && per_tile > 0) {
      // Copies shorter than a line: more line cycles than the slices' bytes fill.
      small_copies += per_tile * 128 > 1.5 * tc.stage_bytes;
    }
  }
  EXPECT_GT(small_copies, 0);  // the case the count exists for is among them
}

}  // namespace
}  // namespace ltc::compiler
