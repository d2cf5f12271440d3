// Functional semantics of trace instructions (traces/functional.h), without the compiler: small
// hand-built LUT and MMA GEMM traces reproduce golden::lut_gemm / golden::mac_gemm bit for bit,
// whatever order the warps' instructions interleave in, and broken schedules are named.
#include "traces/functional.h"

#include "common/error.h"
#include "common/int_math.h"
#include "model/golden/fp.h"
#include "model/golden/gemm.h"
#include "model/golden/mac.h"
#include "tests/golden/test_util.h"

#include "tests/test_seed.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace ltc::traces {
namespace {

using golden::DType;
using golden::test_support::seed_note;
using golden::test_support::test_seed;

Affine aff(int64_t base, std::initializer_list<std::pair<AffineVar, int64_t>> terms) {
  Affine a;
  a.base = base;
  for (const auto& [v, c] : terms) a.add(v, c);
  return a;
}

Instr loop(uint64_t trips) {
  Instr in;
  in.op = Opcode::kLoop;
  in.count = trips;
  return in;
}
Instr endloop() {
  Instr in;
  in.op = Opcode::kEndLoop;
  return in;
}
Instr plain(Opcode op) {
  Instr in;
  in.op = op;
  in.bytes = 64;
  return in;
}

// ---- hand-built LUT GEMM traces -----------------------------------------------------------------
struct LutCase {
  int64_t m, n, k;
  DType act;
  int wbits;          // INT formats; 1 with bases > 0
  int64_t group = 0;  // 0: per channel
  int bases = 0;      // multi-basis binary
  int64_t salient = 0;
  bool q8 = false;
  int tiles_m = 1, tiles_n = 1;  // lmma shape = tiles_m*core.m x tiles_n*core.n (multi-tile)
  std::string name() const {
    return "M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k) + " " +
           std::string(golden::dtype_name(act)) + " W" + std::to_string(wbits) + " group " +
           std::to_string(group) + " bases " + std::to_string(bases) + (q8 ? " q8" : "") +
           " lmma tiles " + std::to_string(tiles_m) + "x" + std::to_string(tiles_n);
  }
};

// Two kernels like compile_gemm's: a precompute kernel (one warp per activation row), then a
// GEMM kernel with one warp per lmma-sized output tile, per quantization group (and basis) the
// lmmas over its LUT groups then the dequant epilogue.
Trace lut_trace(const LutCase& c) {
  const DType table = golden::is_int(c.act) ? DType::kInt16 : c.act;
  CoreSpec core;
  core.config = hw::TensorCoreConfig::make(hw::TensorCoreDesign::kLut, {2, 16, 4}, c.act,
                                           c.bases > 0 ? 1 : c.wbits);
  const int kg = core.config.shape.k;
  Trace t;
  t.gpu = "hand-built";
  t.cores = {core};
  const int64_t group = c.group == 0 ? c.k : c.group;
  const int bases = std::max(c.bases, 1);

  Kernel pre;
  pre.name = "gemm.precompute";
  pre.warps_y = c.m;
  for (int j = 0; j < bases; ++j) {
    Instr pc;
    pc.op = Opcode::kPrecompute;
    pc.m = aff(0, {{AffineVar::kWy, 1}});
    pc.k = aff(0, {{AffineVar::kI0, 8 * kg}});
    pc.rows = 1;
    pc.cols = uint32_t(8 * kg);
    pc.k_group = kg;
    pc.act = c.act;
    pc.table = table;
    pc.basis = uint32_t(j);
    pre.program.push_back(loop(uint64_t(ceil_div(c.k, 8 * kg))));
    pre.program.push_back(plain(Opcode::kLdGlobal));
    pre.program.push_back(pc);
    pre.program.push_back(plain(Opcode::kStGlobal));
    pre.program.push_back(endloop());
  }

  Kernel g;
  g.name = "gemm.lmma";
  g.gemm.path = GemmPath::kLut;
  g.gemm.m = c.m;
  g.gemm.n = c.n;
  g.gemm.k = c.k;
  g.gemm.group = group;
  g.gemm.wbits = c.bases > 0 ? 1 : c.wbits;
  g.gemm.act = c.act;
  g.gemm.bases = c.bases;
  g.gemm.salient = c.salient;
  g.tiles.core = 0;
  const int wm = c.tiles_m * core.config.shape.m, wn = c.tiles_n * core.config.shape.n;
  // Blocks of 2 x 2 warps, each warp one lmma tile.
  g.warps_x = 2;
  g.warps_y = 2;
  g.grid_x = ceil_div(c.n, 2 * wn);
  g.grid_y = ceil_div(c.m, 2 * wm);
  const Affine m0 = aff(0, {{AffineVar::kBy, 2 * wm}, {AffineVar::kWy, wm}});
  const Affine n0 = aff(0, {{AffineVar::kBx, 2 * wn}, {AffineVar::kWx, wn}});
  LmmaOp op;
  op.shape = {wm, wn, kg};
  op.act = c.act;
  op.quantized_table = c.q8;
  op.wbits = c.bases > 0 ? 1 : c.wbits;
  op.acc = golden::is_int(c.act) && !c.q8 ? DType::kInt32 : DType::kFp32;
  op.out = op.acc;
  auto& p = g.program;
  p.push_back(loop(uint64_t(ceil_div(c.k, group))));  // i0: quantization group
  for (int j = 0; j < bases; ++j) {
    p.push_back(loop(uint64_t(ceil_div(group, kg))));  // i1: LUT group within it
    p.push_back(plain(Opcode::kLdShared));
    Instr l;
    l.op = Opcode::kLmma;
    l.lmma = op;
    l.m = m0;
    l.n = n0;
    l.k = aff(0, {{AffineVar::kI0, group}, {AffineVar::kI1, kg}});
    l.basis = uint32_t(j);
    p.push_back(l);
    p.push_back(endloop());
    Instr dq;
    dq.op = Opcode::kDequant;
    dq.m = m0;
    dq.n = n0;
    dq.g = aff(0, {{AffineVar::kI0, 1}});
    dq.rows = uint32_t(wm);
    dq.cols = uint32_t(wn);
    dq.basis = uint32_t(j);
    dq.row_scale = c.bases > 0;
    p.push_back(dq);
  }
  p.push_back(endloop());
  if (c.salient > 0) {
    Instr sal;
    sal.op = Opcode::kDequant;
    sal.m = m0;
    sal.n = n0;
    sal.rows = uint32_t(wm);
    sal.cols = uint32_t(wn);
    sal.salient = true;
    p.push_back(sal);
  }
  p.push_back(plain(Opcode::kStGlobal));
  t.kernels = {pre, g};
  return t;
}

// ---- hand-built MMA GEMM traces -----------------------------------------------------------------
struct MmaCase {
  int64_t batch, m, n, k;
  DType act;
  int wbits = 0;  // > 0: dequantize-then-MAC codes
  int64_t group = 0;
  std::string name() const {
    return "batch " + std::to_string(batch) + " M=" + std::to_string(m) +
           " N=" + std::to_string(n) + " K=" + std::to_string(k) + " " +
           std::string(golden::dtype_name(act)) + " codes W" + std::to_string(wbits) + " group " +
           std::to_string(group);
  }
};

// lower_mma_gemm's structure: block 32 x 16 (2 x 1 warps of 16 x 16), batches stacked along M,
// each padded to the block; per K chunk two m16n8 mmas per warp.
Trace mma_trace(const MmaCase& c) {
  const bool int8 = c.act == DType::kInt8;
  MmaOp op;
  op.shape = {16, 8, int8 ? 32 : 16};
  // fp8 activations run on fp16 MMAs (exact upcast), like GPUs without fp8 tensor cores.
  op.a = (c.act == DType::kFp8E4M3 || c.act == DType::kFp8E5M2) ? DType::kFp16 : c.act;
  op.b = op.a;
  op.acc = mma_acc_dtype(c.act);
  op.out = op.acc;
  const int64_t bm = 32, bn = 16;
  Kernel kr;
  kr.name = "attn.mma";
  kr.gemm.path = GemmPath::kMma;
  kr.gemm.batch = c.batch;
  kr.gemm.m = c.m;
  kr.gemm.n = c.n;
  kr.gemm.k = c.k;
  kr.gemm.group = c.group == 0 ? c.k : c.group;
  kr.gemm.wbits = c.wbits;
  kr.gemm.act = c.act;
  kr.tiles.block = {bm, bn, op.shape.k};
  kr.tiles.warp = {16, 16, op.shape.k};
  kr.tiles.instr = {16, 8, op.shape.k};
  kr.grid_x = ceil_div(c.n, bn);
  kr.grid_y = ceil_div(c.m, bm) * c.batch;
  kr.warps_y = 2;
  auto& p = kr.program;
  p.push_back(loop(uint64_t(ceil_div(c.k, op.shape.k))));  // i0: K chunk
  p.push_back(plain(Opcode::kLdGlobalAsync));
  p.push_back(plain(Opcode::kCommit));
  Instr wait = plain(Opcode::kWait);
  p.push_back(wait);
  if (c.wbits > 0) p.push_back(plain(Opcode::kAlu));
  p.push_back(plain(Opcode::kBarrier));
  p.push_back(loop(2));  // i1: n8 sub-tile
  Instr mm;
  mm.op = Opcode::kMma;
  mm.mma = op;
  mm.m = aff(0, {{AffineVar::kBy, bm}, {AffineVar::kWy, 16}});
  mm.n = aff(0, {{AffineVar::kBx, bn}, {AffineVar::kI1, 8}});
  mm.k = aff(0, {{AffineVar::kI0, op.shape.k}});
  p.push_back(mm);
  p.push_back(endloop());
  p.push_back(endloop());
  p.push_back(plain(Opcode::kStGlobal));
  Trace t;
  t.gpu = "hand-built";
  t.kernels = {kr};
  return t;
}

// ---- drivers ------------------------------------------------------------------------------------
bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

size_t mismatches(const std::vector<double>& y, const std::vector<double>& ref) {
  EXPECT_EQ(y.size(), ref.size());
  size_t bad = 0;
  for (size_t i = 0; i < std::min(y.size(), ref.size()); ++i)
    bad += same_bits(y[i], ref[i]) ? 0 : 1;
  return bad;
}

// What a cycle-level simulator does: every warp of a kernel resident at once, each issuing when
// the scheduler picks it. Here the pick is random (each warp keeps its own program order).
std::vector<double> run_interleaved(const Trace& t, size_t gemm_kernel, const GemmOperands& ops,
                                    uint64_t seed, bool upstream_tables = false) {
  GemmExecutor ex(t, gemm_kernel, ops, upstream_tables);
  std::mt19937_64 rng(seed);
  for (size_t ki = ex.first_kernel(); ki <= ex.gemm_kernel(); ++ki) {
    const Kernel& k = t.kernels[ki];
    ex.begin_kernel(ki);
    struct Issue {
      const Instr* in;
      Affine::Point p;
    };
    std::vector<std::vector<Issue>> warps;
    for (int64_t by = 0; by < k.grid_y; ++by) {
      for (int64_t bx = 0; bx < k.grid_x; ++bx) {
        for (int64_t wy = 0; wy < k.warps_y; ++wy) {
          for (int64_t wx = 0; wx < k.warps_x; ++wx) {
            warps.emplace_back();
            expand_warp(k, bx, by, wx, wy, [&](const Instr& in, const Affine::Point& p) {
              warps.back().push_back({&in, p});
            });
          }
        }
      }
    }
    std::vector<size_t> pc(warps.size(), 0);
    std::vector<int64_t> live;
    for (size_t w = 0; w < warps.size(); ++w) live.push_back(int64_t(w));
    while (!live.empty()) {
      const size_t pick = std::uniform_int_distribution<size_t>(0, live.size() - 1)(rng);
      const int64_t w = live[pick];
      const Issue& is = warps[size_t(w)][pc[size_t(w)]++];
      ex.step(*is.in, is.p, w);
      if (pc[size_t(w)] == warps[size_t(w)].size()) live.erase(live.begin() + ptrdiff_t(pick));
    }
  }
  return ex.result();
}

// Program order, round robin: warp 0's instruction i, warp 1's instruction i, ...
std::vector<double> run_round_robin(const Trace& t, size_t gemm_kernel, const GemmOperands& ops) {
  GemmExecutor ex(t, gemm_kernel, ops);
  for (size_t ki = ex.first_kernel(); ki <= ex.gemm_kernel(); ++ki) {
    const Kernel& k = t.kernels[ki];
    ex.begin_kernel(ki);
    std::vector<std::vector<std::pair<const Instr*, Affine::Point>>> warps;
    for (int64_t by = 0; by < k.grid_y; ++by) {
      for (int64_t bx = 0; bx < k.grid_x; ++bx) {
        for (int64_t wy = 0; wy < k.warps_y; ++wy) {
          for (int64_t wx = 0; wx < k.warps_x; ++wx) {
            warps.emplace_back();
            expand_warp(k, bx, by, wx, wy, [&](const Instr& in, const Affine::Point& p) {
              warps.back().emplace_back(&in, p);
            });
          }
        }
      }
    }
    for (size_t i = 0;; ++i) {
      bool any = false;
      for (size_t w = 0; w < warps.size(); ++w) {
        if (i >= warps[w].size()) continue;
        any = true;
        ex.step(*warps[w][i].first, warps[w][i].second, int64_t(w));
      }
      if (!any) break;
    }
  }
  return ex.result();
}

void check_lut(const LutCase& c, uint64_t seed) {
  SCOPED_TRACE(c.name() + ", " + seed_note(seed));
  const Trace t = lut_trace(c);
  const GemmOperands ops = random_gemm_operands(t.kernels[1].gemm, uint32_t(seed));
  ExecStats stats;
  const std::vector<double> y = execute_gemm(t, 1, ops, &stats);
  const std::vector<double> ref = reference_gemm(t.kernels[1].gemm, ops, 4, c.q8);
  EXPECT_EQ(mismatches(y, ref), 0u);
  EXPECT_EQ(stats.tables, uint64_t(std::max(c.bases, 1) * c.m * ceil_div(c.k, 4)));
  EXPECT_EQ(stats.kernels, 2u);
  if (golden::is_int(c.act) && !c.q8 && c.bases == 0) {
    // Integer activations: exactly the dense grouped result as well.
    const auto dots = golden::grouped_code_dots(c.act, ops.acts, int(c.m), ops.weights);
    EXPECT_EQ(mismatches(y, golden::grouped_reference(dots, ops.weights)), 0u);
  }
  EXPECT_EQ(mismatches(run_interleaved(t, 1, ops, seed), y), 0u) << "random interleaving";
  EXPECT_EQ(mismatches(run_round_robin(t, 1, ops), y), 0u) << "round robin";
}

void check_mma(const MmaCase& c, uint64_t seed) {
  SCOPED_TRACE(c.name() + ", " + seed_note(seed));
  const Trace t = mma_trace(c);
  const GemmOperands ops = random_gemm_operands(t.kernels[0].gemm, uint32_t(seed));
  ExecStats stats;
  const std::vector<double> y = execute_gemm(t, 0, ops, &stats);
  const int ks = c.act == DType::kInt8 ? 32 : 16;
  const std::vector<double> ref = reference_gemm(t.kernels[0].gemm, ops, ks, false);
  ASSERT_EQ(y.size(), size_t(c.batch * c.m * c.n));
  EXPECT_EQ(mismatches(y, ref), 0u);
  // Every (16-row tile, n8, K chunk) of every batch ran once.
  EXPECT_EQ(stats.mmas,
            uint64_t(c.batch * ceil_div(c.m, 32) * 2 * ceil_div(c.n, 16) * 2 * ceil_div(c.k, ks)));
  EXPECT_EQ(mismatches(run_interleaved(t, 0, ops, seed), y), 0u) << "random interleaving";
  EXPECT_EQ(mismatches(run_round_robin(t, 0, ops), y), 0u) << "round robin";
}

// ---- LUT path -----------------------------------------------------------------------------------
TEST(FunctionalLut, Int8ActivationsMatchGoldenForOneTwoAndFourBitWeights) {
  uint64_t seed = test_seed(100);
  for (int wbits : {1, 2, 4}) check_lut({5, 40, 36, DType::kInt8, wbits}, seed++);
}

TEST(FunctionalLut, Fp16ActivationsMatchGoldenForOneTwoAndFourBitWeights) {
  uint64_t seed = test_seed(200);
  for (int wbits : {1, 2, 4}) check_lut({3, 33, 44, DType::kFp16, wbits}, seed++);
}

TEST(FunctionalLut, ScaleGroupsWithAShortLastGroupMatchGolden) {
  uint64_t seed = test_seed(300);
  check_lut({4, 20, 70, DType::kInt8, 2, 32}, seed++);
  check_lut({3, 17, 72, DType::kFp16, 4, 24}, seed++);
  check_lut({2, 20, 64, DType::kBf16, 3, 16}, seed++);
}

TEST(FunctionalLut, QuantizedTablesMatchGolden) {
  check_lut({3, 24, 40, DType::kFp16, 2, 0, 0, 0, true}, test_seed(400));
}

TEST(FunctionalLut, MultiBasisBinaryMatchesGolden) {
  uint64_t seed = test_seed(500);
  check_lut({3, 20, 64, DType::kInt8, 1, 32, 2, 0}, seed++);
  check_lut({5, 18, 70, DType::kFp16, 1, 32, 3, 4}, seed++);
}

TEST(FunctionalLut, MultiTileLmmaIsTheCoreTilesOnItsSubBlocks) {
  uint64_t seed = test_seed(600);
  // lmma m4n32k4 / m6n48k4 on an m2n16k4 core, M and N not multiples of the instruction.
  check_lut({7, 50, 36, DType::kInt8, 2, 0, 0, 0, false, 2, 2}, seed++);
  check_lut({5, 40, 40, DType::kFp16, 3, 8, 0, 0, false, 3, 3}, seed++);
  check_lut({3, 40, 64, DType::kFp16, 1, 32, 2, 4, false, 2, 2}, seed++);
  // The same GEMM through core-tile and multi-tile lmmas: same bits.
  LutCase core_tiles{6, 48, 40, DType::kBf16, 2};
  LutCase multi = core_tiles;
  multi.tiles_m = 3;
  multi.tiles_n = 3;
  const GemmOperands ops = random_gemm_operands(lut_trace(core_tiles).kernels[1].gemm, 7);
  EXPECT_EQ(mismatches(execute_gemm(lut_trace(core_tiles), 1, ops),
                       execute_gemm(lut_trace(multi), 1, ops)),
            0u);
}

TEST(FunctionalLut, LmmaShapeNotAMultipleOfTheCoreTileIsNamed) {
  Trace t = lut_trace({2, 16, 16, DType::kInt8, 2});
  for (auto& in : t.kernels[1].program) {
    if (in.op == Opcode::kLmma) in.lmma.shape = {3, 16, 4};
  }
  const GemmOperands ops = random_gemm_operands(t.kernels[1].gemm, 1);
  try {
    execute_gemm(t, 1, ops);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not a multiple of the tensor core tile m2n16k4"),
              std::string::npos)
        << e.what();
  }
}

// ---- MMA path -----------------------------------------------------------------------------------
TEST(FunctionalMma, Fp16DenseMatchesGoldenMacGemm) {
  uint64_t seed = test_seed(700);
  check_mma({1, 20, 24, 40, DType::kFp16}, seed++);
  check_mma({1, 32, 16, 32, DType::kFp16}, seed++);
}

TEST(FunctionalMma, BatchesStackAlongPaddedRows) {
  uint64_t seed = test_seed(800);
  check_mma({3, 5, 20, 24, DType::kBf16}, seed++);
  check_mma({2, 40, 8, 16, DType::kFp16}, seed++);
}

TEST(FunctionalMma, Int8DenseMatchesGoldenMacGemm) {
  check_mma({1, 18, 20, 70, DType::kInt8}, test_seed(900));
}

TEST(FunctionalMma, Fp8OnFp16MmasMatchesTheFp8MacReference) {
  uint64_t seed = test_seed(1000);
  check_mma({1, 17, 16, 48, DType::kFp8E4M3}, seed++);
  check_mma({2, 9, 10, 20, DType::kFp8E5M2}, seed++);
}

TEST(FunctionalMma, DequantizeThenMacInt4CodesMatchesGolden) {
  uint64_t seed = test_seed(1100);
  check_mma({1, 20, 24, 40, DType::kFp16, 4}, seed++);
  check_mma({1, 16, 16, 64, DType::kBf16, 4, 32}, seed++);
  check_mma({1, 16, 16, 96, DType::kInt8, 4}, seed++);
  check_mma({1, 7, 9, 20, DType::kFp16, 2}, seed++);
}

TEST(FunctionalMma, OutputsAreFp16ForFloatAndInt32ForInt8) {
  EXPECT_EQ(mma_out_dtype(DType::kFp16), DType::kFp16);
  EXPECT_EQ(mma_out_dtype(DType::kBf16), DType::kFp16);
  EXPECT_EQ(mma_out_dtype(DType::kInt8), DType::kInt32);
  // A dot product of 2048 fp16 ones rounds to fp16 once, at the end: 2048 is exact, but the fp32
  // accumulator must not round on the way (2049 ones: 2049 in fp32, 2048 in fp16).
  const MmaCase c{1, 1, 1, 2049, DType::kFp16};
  const Trace t = mma_trace(c);
  GemmOperands ops = random_gemm_operands(t.kernels[0].gemm, 1);
  for (auto& x : ops.acts) x = golden::encode(DType::kFp16, 1.0);
  for (auto& x : ops.b) x = golden::encode(DType::kFp16, 1.0);
  EXPECT_EQ(execute_gemm(t, 0, ops), std::vector<double>{2048.0});
}

TEST(GoldenMacGemm, IsTheChainOfInstructionMacDotsWithZeroPaddedTail) {
  const uint64_t seed = test_seed(1200);
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 rng(seed);
  for (DType act : {DType::kFp16, DType::kBf16, DType::kInt8, DType::kFp8E4M3}) {
    const int m = 3, n = 5, k = 45, ks = act == DType::kInt8 ? 32 : 16;
    const auto a = golden::test_support::random_acts(rng, act, size_t(m * k));
    const auto w = golden::test_support::random_acts(rng, act, size_t(n * k));
    const golden::MacType type{act, act, mma_acc_dtype(act), mma_acc_dtype(act)};
    const auto o = golden::mac_gemm(type, ks, a, m, w, n, k);
    for (int r = 0; r < m; ++r) {
      for (int col = 0; col < n; ++col) {
        std::vector<uint32_t> acc{golden::encode(type.acc, 0.0)};
        for (int k0 = 0; k0 < k; k0 += ks) {
          std::vector<uint32_t> ac(size_t(ks), golden::encode(act, 0.0)), wc = ac;
          for (int i = 0; i < ks && k0 + i < k; ++i) {
            ac[size_t(i)] = a[size_t(r * k + k0 + i)];
            wc[size_t(i)] = w[size_t(col * k + k0 + i)];
          }
          acc = golden::mac_dot({1, 1, ks}, type, ac, wc, acc);
        }
        ASSERT_EQ(o[size_t(r * n + col)], acc[0])
            << golden::dtype_name(act) << " " << r << " " << col;
      }
    }
  }
}

TEST(GoldenMacGemm, DequantizedWeightsAreDequantizeCodesPerRowAndGroup) {
  const uint64_t rng_seed = ltc::test_support::test_seed(3);
  SCOPED_TRACE(ltc::test_support::seed_note(rng_seed));
  std::mt19937 rng(rng_seed);
  std::normal_distribution<double> nd(0.0, 1.0);
  std::vector<double> w(6 * 40);
  for (auto& x : w) x = nd(rng);
  const auto q = golden::quantize_weights(golden::WeightKind::kUInt, 4, 16, w, 6, 40);
  const auto d = golden::dequantize_weights(q, DType::kFp16);
  ASSERT_EQ(d.size(), w.size());
  for (int row = 0; row < 6; ++row) {
    for (int c = 0; c < 40; ++c) {
      const auto one = golden::dequantize_codes(
          {q.codes[size_t(row * 40 + c)]}, q.scale(row, c / 16), q.zero(row, c / 16), DType::kFp16);
      EXPECT_EQ(d[size_t(row * 40 + c)], one[0]);
    }
  }
}

// ---- rule checks --------------------------------------------------------------------------------
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(FunctionalRules, LmmaBeforeItsTableIsPrecomputedIsNamed) {
  const Trace t = lut_trace({2, 16, 16, DType::kInt8, 2});
  const GemmOperands ops = random_gemm_operands(t.kernels[1].gemm, 1);
  GemmExecutor ex(t, 1, ops);
  ex.begin_kernel(1);  // skips the precompute kernel
  const std::string msg = error_of([&] {
    expand_warp(t.kernels[1], 0, 0, 0, 0,
                [&](const Instr& in, const Affine::Point& p) { ex.step(in, p, 0); });
  });
  EXPECT_NE(msg.find("kernel gemm.lmma block (0,0) warp (0,0): lmma."), std::string::npos) << msg;
  EXPECT_NE(msg.find("before it was precomputed"), std::string::npos) << msg;
}

TEST(FunctionalRules, OneOutputWrittenByTwoWarpsIsNamed) {
  Trace t = mma_trace({1, 16, 16, 16, DType::kFp16});
  for (auto& in : t.kernels[0].program) {
    if (in.op == Opcode::kMma) in.m = aff(0, {});  // both warps of the block on rows 0..15
  }
  const GemmOperands ops = random_gemm_operands(t.kernels[0].gemm, 1);
  const std::string msg = error_of([&] { execute_gemm(t, 0, ops); });
  EXPECT_NE(msg.find("warp (0,1)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("computed by two warps"), std::string::npos) << msg;
}

TEST(FunctionalRules, MissingKChunkIsNamedByResult) {
  Trace t = mma_trace({1, 16, 16, 40, DType::kFp16});
  t.kernels[0].program[0].count = 2;  // K chunks 0, 1 of 3
  const GemmOperands ops = random_gemm_operands(t.kernels[0].gemm, 1);
  const std::string msg = error_of([&] { execute_gemm(t, 0, ops); });
  EXPECT_NE(msg.find("output (0,0) consumed 32 of 40 K elements"), std::string::npos) << msg;
}

TEST(FunctionalRules, DequantBeforeAllColumnsOfItsGroupIsNamed) {
  Trace t = lut_trace({2, 16, 32, DType::kInt8, 2, 16});
  t.kernels[1].program[1].count = 3;  // 3 of the 4 LUT groups of each quantization group
  const GemmOperands ops = random_gemm_operands(t.kernels[1].gemm, 1);
  const std::string msg = error_of([&] { execute_gemm(t, 1, ops); });
  EXPECT_NE(msg.find("dequantizes group 0 after 12 of 16 columns"), std::string::npos) << msg;
}

TEST(FunctionalRules, InstructionOfTheOtherPathIsNamed) {
  Trace t = mma_trace({1, 16, 16, 16, DType::kFp16});
  t.kernels[0].gemm.path = GemmPath::kLut;
  t.kernels[0].tiles.core = 0;
  CoreSpec core;
  core.config = hw::TensorCoreConfig::make(hw::TensorCoreDesign::kLut, {2, 16, 4}, DType::kFp16, 1);
  t.cores = {core};
  t.kernels[0].gemm.wbits = 1;
  const GemmOperands ops = random_gemm_operands(t.kernels[0].gemm, 1);
  const std::string msg = error_of([&] { execute_gemm(t, 0, ops); });
  EXPECT_NE(msg.find("mma in a LUT GEMM"), std::string::npos) << msg;
}

TEST(FunctionalRules, OperandsOfAnotherShapeAreAnInputError) {
  const Trace t = mma_trace({1, 16, 16, 16, DType::kFp16});
  GemmRecord other = t.kernels[0].gemm;
  other.n = 24;
  EXPECT_THROW(GemmExecutor(t, 0, random_gemm_operands(other, 1)), InputError);
  EXPECT_THROW(GemmExecutor(t, 5, random_gemm_operands(other, 1)), InputError);
}

TEST(FunctionalCheck, CheckGemmTraceComparesBothPathsWithGolden) {
  const GemmCheck lut = check_gemm_trace(lut_trace({3, 20, 40, DType::kFp16, 2, 8}),
                                         uint32_t(ltc::test_support::test_seed(9)));
  EXPECT_EQ(lut.outputs, 60u);
  EXPECT_EQ(lut.mismatches, 0u);
  EXPECT_GT(lut.stats.lmmas, 0u);
  const GemmCheck mma = check_gemm_trace(mma_trace({2, 10, 12, 40, DType::kFp16, 4}),
                                         uint32_t(ltc::test_support::test_seed(9)));
  EXPECT_EQ(mma.outputs, 240u);
  EXPECT_EQ(mma.mismatches, 0u);
  EXPECT_GT(mma.stats.mmas, 0u);
  Trace both = lut_trace({3, 20, 40, DType::kFp16, 2, 8});
  both.kernels.push_back(mma_trace({2, 10, 12, 40, DType::kFp16, 4}).kernels[0]);
  EXPECT_THROW(check_gemm_trace(both, uint32_t(ltc::test_support::test_seed(1))), InputError);
  // Progress after each distinct GEMM, in order, with the total up front; a GEMM above
  // max_macs is reported as skipped.
  std::vector<std::pair<size_t, size_t>> calls;
  const auto checks =
      check_trace_gemms(both, 3, 5e7, [&](const KernelCheck& kc, size_t i, size_t n) {
        calls.emplace_back(i, n);
        EXPECT_FALSE(kc.skipped);
      });
  ASSERT_EQ(checks.size(), 2u);
  for (const auto& c : checks) EXPECT_EQ(c.check.mismatches, 0u) << c.kernel;
  EXPECT_EQ(calls, (std::vector<std::pair<size_t, size_t>>{{0, 2}, {1, 2}}));
  size_t skipped = 0;
  check_trace_gemms(both, 3, 1,
                    [&](const KernelCheck& kc, size_t, size_t) { skipped += kc.skipped; });
  EXPECT_EQ(skipped, 2u);
}

TEST(FunctionalCheck, TraceExecutorChecksEveryGemmOfAWholeTraceAsASimulatorRunsIt) {
  const uint64_t seed = test_seed(1300);
  SCOPED_TRACE(seed_note(seed));
  Trace t = lut_trace({3, 20, 40, DType::kFp16, 2, 8});
  Kernel norm;
  norm.name = "norm";
  norm.program = {plain(Opcode::kLdGlobal), plain(Opcode::kSfu), plain(Opcode::kStGlobal)};
  t.kernels.insert(t.kernels.begin(), norm);
  t.kernels.push_back(norm);
  t.kernels.push_back(mma_trace({2, 10, 12, 40, DType::kInt8, 4}).kernels[0]);
  t.kernels.push_back(mma_trace({1, 64, 64, 64, DType::kFp16}).kernels[0]);
  TraceExecutor ex(t, uint32_t(seed), 100000);  // the last GEMM (262144 MACs) is skipped
  std::mt19937_64 rng(seed);
  for (size_t ki = 0; ki < t.kernels.size(); ++ki) {
    const Kernel& k = t.kernels[ki];
    ex.begin_kernel(ki);
    // Warps issue in a random interleaving, each in its own program order.
    std::vector<std::vector<std::pair<const Instr*, Affine::Point>>> warps;
    for (int64_t by = 0; by < k.grid_y; ++by) {
      for (int64_t bx = 0; bx < k.grid_x; ++bx) {
        for (int64_t wy = 0; wy < k.warps_y; ++wy) {
          for (int64_t wx = 0; wx < k.warps_x; ++wx) {
            warps.emplace_back();
            expand_warp(k, bx, by, wx, wy, [&](const Instr& in, const Affine::Point& p) {
              warps.back().emplace_back(&in, p);
            });
          }
        }
      }
    }
    std::vector<size_t> pc(warps.size(), 0);
    for (size_t left = warps.size(); left > 0;) {
      const size_t w = std::uniform_int_distribution<size_t>(0, warps.size() - 1)(rng);
      if (pc[w] == warps[w].size()) continue;
      ex.step(*warps[w][pc[w]].first, warps[w][pc[w]].second, int64_t(w));
      if (++pc[w] == warps[w].size()) --left;
    }
  }
  const std::vector<KernelCheck> checks = ex.finish();
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_EQ(checks[0].kernel, "gemm.lmma");
  EXPECT_EQ(checks[0].check.outputs, 60u);
  EXPECT_EQ(checks[0].check.stats.kernels, 2u);  // with its precompute kernel
  EXPECT_EQ(checks[1].kernel, "attn.mma");
  EXPECT_EQ(checks[1].check.outputs, 240u);
  EXPECT_TRUE(checks[2].skipped);
  for (const auto& c : checks) EXPECT_EQ(c.check.mismatches, 0u) << c.kernel;
}

}  // namespace
}  // namespace ltc::traces
