// Tile selection: capacities respected, operand sizes charged by their real bytes.
#include "model/tiling/tiling.h"
#include "common/config_dir.h"
#include "common/error.h"
#include "model/hw/gpu.h"
#include "tests/test_seed.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <vector>

namespace ltc::tiling {
namespace {

void expect_fits(const TileChoice& c, const GemmProblem& p, const hw::GpuConfig& gpu) {
  EXPECT_LE(c.smem_bytes_per_block, gpu.shared_memory_kb_per_block * 1024.0);
  EXPECT_LE(c.registers_per_thread, gpu.max_registers_per_thread);
  EXPECT_EQ(c.block.m % c.warp.m, 0);
  EXPECT_EQ(c.block.n % c.warp.n, 0);
  EXPECT_EQ(c.warp.m % p.instr.m, 0);
  EXPECT_EQ(c.warp.n % p.instr.n, 0);
  EXPECT_EQ(c.block.k % p.instr.k, 0);
  EXPECT_GE(c.grid_m * c.block.m, p.m);
  EXPECT_GE(c.grid_n * c.block.n, p.n);
  EXPECT_GE(c.k_steps * c.block.k, p.k);
}

// Resident blocks by hand on the A100 (64 K registers, 164 KiB of shared memory, 64 warps and
// 32 blocks per SM): registers go in 256-register units per warp and the runtime keeps 1 KiB of
// shared memory per block. The tiling counts blocks by the same rule.
TEST(Tiling, OccupancyCountsRegisterUnitsAndTheRuntimesSharedMemory) {
  const hw::GpuConfig gpu = hw::load_gpu("a100");
  // 158 registers x 32 threads = 5056 -> 5120 per warp, 10240 per 2-warp block: 6 blocks.
  EXPECT_EQ(hw::block_occupancy(gpu, 2, 158, 0).blocks_per_sm, 6);
  EXPECT_STREQ(hw::block_occupancy(gpu, 2, 158, 0).limit, "registers");
  // 24 KiB + 1 KiB: 6 fit in 164 KiB; 32 KiB + 1 KiB: 4 (not 5).
  EXPECT_EQ(hw::block_occupancy(gpu, 2, 158, 24 * 1024).blocks_per_sm, 6);
  const auto smem = hw::block_occupancy(gpu, 2, 158, 32 * 1024);
  EXPECT_EQ(smem.blocks_per_sm, 4);
  EXPECT_STREQ(smem.limit, "shared memory");
  EXPECT_EQ(smem.smem_per_block, 33 * 1024);
  EXPECT_EQ(hw::block_occupancy(gpu, 1, 32, 0).blocks_per_sm, 32);   // blocks
  EXPECT_EQ(hw::block_occupancy(gpu, 16, 32, 0).blocks_per_sm, 4);   // warps
  EXPECT_EQ(hw::block_occupancy(gpu, 16, 255, 0).blocks_per_sm, 0);  // 65536 < 16 x 8192
  // The scheduler deepens a tile's pipeline only while the SM keeps the blocks it counted, and
  // the blocks it reports are what its shared memory allows (a 1024x4096x11008 W1A16 tile of
  // 8 KiB stages: 3 stages and 6 blocks, not 4 stages and 4 blocks).
  const hw::GpuConfig lut = hw::load_gpu("a100-lut4x");
  for (int64_t m : {1, 16, 1024}) {
    const TileChoice c =
        require_tiles(lut_gemm_problem(lut, m, 4096, 11008, golden::DType::kFp16, 1), lut);
    EXPECT_EQ(c.blocks_per_sm, hw::block_occupancy(lut, c.warps_per_block, c.registers_per_thread,
                                                   int64_t(std::ceil(c.smem_bytes_per_block)))
                                   .blocks_per_sm)
        << m;
  }
}

// The dequantize cost the compiler's kernels, the tiling and the roofline charge per weight code
// lies within what real W4A16 kernels issue on an H200 (tools/microbench/dequant.py): tinygemm's
// CUDA-core thread instructions per code it dequantizes, and each Triton pair's difference
// (the same GEMM on int4 codes less on fp16 weights); and its integer share, tinygemm's.
TEST(Tiling, DequantOpsPerCodeLieWithinTheMeasuredKernels) {
  std::ifstream f(config_dir("calibration") + "/h200-microbench.json");
  ASSERT_TRUE(f.good());
  const auto j = nlohmann::json::parse(f).at("results").at("dequant");
  std::vector<double> measured;
  for (const auto& [name, c] : j.at("cases").items()) {
    if (name.rfind("tinygemm", 0) == 0) {
      measured.push_back(c.at("cuda_core_thread_inst_per_code").get<double>());
      // Its integer (alu pipe) and FP (fma pipe) shares: kDequantIntOpsPerCode and the rest.
      const double codes = c.at("codes_dequantized").get<double>();
      const auto& pipes = c.at("warp_inst_by_pipe");
      EXPECT_NEAR(32 * pipes.at("alu").get<double>() / codes, kDequantIntOpsPerCode, 0.2) << name;
      EXPECT_NEAR(32 * pipes.at("fma").get<double>() / codes,
                  kDequantOpsPerCode - kDequantIntOpsPerCode, 0.2)
          << name;
    }
  }
  for (const auto& [name, pair] : j.at("triton_pairs").items()) {
    measured.push_back(pair.at("cuda_core_thread_inst_per_code").get<double>());
  }
  ASSERT_EQ(measured.size(), 7u);  // tinygemm at M = 1, 16, 64, 256; three Triton pairs
  const auto [lo, hi] = std::minmax_element(measured.begin(), measured.end());
  EXPECT_GE(kDequantOpsPerCode, *lo);
  EXPECT_LE(kDequantOpsPerCode, *hi);
  EXPECT_GT(*lo, 3.0);  // the figures themselves: 3.64 .. 4.32
  EXPECT_LT(*hi, 5.0);
}

TEST(Tiling, LutOperandSizesAreTableBitsAndPlanes) {
  const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  const GemmProblem p = lut_gemm_problem(gpu, 2048, 27648, 5120, golden::DType::kInt8, 1);
  // M2N64K4 half table: 8 int16 entries per 4 activations = 32 bits per activation.
  EXPECT_DOUBLE_EQ(p.a_bits, 32);
  EXPECT_DOUBLE_EQ(p.w_bits, 1);
  EXPECT_EQ(p.instr, (golden::LmmaShape{2, 64, 4}));
}

// A dequantize-bound W4A16 GEMV on the A100, by hand: block [16,16,512] with 16 K slices, warp
// [16,16,32]; 256 blocks at 2 per SM on 108 SMs run as one full wave of two blocks in turn and a
// tail of one. Each block dequantizes 16 x 4096 codes (one warp row: no repeats). The estimate
// times them as the simulator does, 2 FP32 + 2 INT32 instructions per code on 64 + 64 lanes (1/32
// cycle per code), overlapped with the block's tensor-core work (2 x 16 x 16 x 4096 MACs, an
// m16n8k16 every 8 cycles on each of 4 tensor cores) by achievable.overlap_exponent; the ranking
// at 4 instructions on the 64 FP32 lanes (1/16), the larger of the two.
// LLaMA2-7B's o_proj (4096 x 4096) at `rows` rows, W4A16 on the A100, on block [16,16,512] with
// 16 K slices (warp [16,16,32]): 256 blocks at 2 per SM, two waves.
TileChoice a100_o_proj_w4(const hw::GpuConfig& gpu, int64_t rows) {
  const GemmProblem p = mac_mpgemm_problem(gpu, rows, 4096, 4096, golden::DType::kFp16, 4);
  bool fits = false;
  const TileChoice c = evaluate_tiles(p, gpu, {16, 16, 512}, {16, 16, 32}, &fits, 16);
  EXPECT_TRUE(fits);
  EXPECT_EQ(c.blocks_per_sm, 2);
  EXPECT_EQ(c.waves, 2);
  return c;
}

TEST(Tiling, DequantizeIsEstimatedAtTheSimulatorsRateAndRankedAtTheFp32Lanes) {
  const hw::GpuConfig gpu = hw::load_gpu("a100");
  const TileChoice c = a100_o_proj_w4(gpu, 1);
  const double codes = 16.0 * 4096, clock_mhz = 1410;
  EXPECT_GT(c.memory_us, c.compute_us);  // memory-bound (L2 hot lines of A, the next test)
  const double dequant_us = codes / 32 / clock_mhz;
  const double tensor_us = 2.0 * 16 * 16 * 4096 / (4096.0 / 8 * 4 * clock_mhz);
  const double p_ovl = gpu.achievable.overlap_exponent;
  EXPECT_NEAR(c.compute_us,
              3 * std::pow(std::pow(dequant_us, p_ovl) + std::pow(tensor_us, p_ovl), 1 / p_ovl),
              1e-9);
  EXPECT_NEAR(c.bottleneck_us, std::max(3 * codes / 16 / clock_mhz, c.memory_us), 1e-9);
}

// The fullest L2 slice against a direct count: `lines` random line numbers hashed onto `slices`
// slices (uniformly, as sim/memory.h's mix does), the largest slice's count averaged over many
// draws. The binomial formula (its slices taken as independent) stays within 3% of it.
TEST(Tiling, FullestSliceMatchesHashingLinesAtRandom) {
  const uint64_t seed = test_support::test_seed(42);
  SCOPED_TRACE(test_support::seed_note(seed));
  std::mt19937_64 rng(seed);
  for (const auto& [lines, slices] : std::vector<std::pair<int, int>>{
           {8, 80}, {16, 80}, {64, 80}, {128, 80}, {128, 96}, {256, 96}, {1024, 80}}) {
    const int draws = 4000;
    double sum = 0;
    std::vector<int> load(static_cast<size_t>(slices), 0);
    for (int d = 0; d < draws; ++d) {
      std::fill(load.begin(), load.end(), 0);
      for (int l = 0; l < lines; ++l) ++load[rng() % uint64_t(slices)];
      sum += *std::max_element(load.begin(), load.end());
    }
    const double counted = sum / draws;
    SCOPED_TRACE(std::to_string(lines) + " lines on " + std::to_string(slices) +
                 " slices: " + std::to_string(counted));
    EXPECT_NEAR(max_lines_per_slice(lines, slices), counted, 0.03 * counted);
  }
  EXPECT_EQ(max_lines_per_slice(0, 80), 0);
  EXPECT_EQ(max_lines_per_slice(1, 80), 1);     // one line: one slice
  EXPECT_EQ(max_lines_per_slice(100, 1), 100);  // one slice holds them all
  EXPECT_GE(max_lines_per_slice(800, 80), 10);  // never below the even spread
}

// A skinny GEMM's hot lines by hand: LLaMA2-7B's o_proj at 16 rows, W4A16 on the A100, block
// [16,16,512] with 16 K slices: 256 blocks at 2 per SM, a wave of 216 and a tail of 40. Every
// block of a wave reads the same 16 x 512 fp16 A tile (128 lines) in the same K step; the step
// waits for the fullest of the 80 slices (64 B/cycle each at 1.41 GHz), and each of the 2 waves
// runs the 8 K steps: 216 x E[max] x 128 B / 90.24 B/ns x 8 x 2.
TEST(Tiling, SkinnyGemmWaitsForItsHottestL2SliceEveryWave) {
  const hw::GpuConfig gpu = hw::load_gpu("a100");
  const TileChoice c = a100_o_proj_w4(gpu, 16);
  bool fits = false;
  const double slice_bytes_per_us = gpu.l2_sim_bytes_per_cycle() * 1410 / 80;
  ASSERT_NEAR(slice_bytes_per_us, 7200e3 / 80, 1);
  const double hot_us = 216 * max_lines_per_slice(128, 80) * 128 / slice_bytes_per_us * 8 * 2;
  EXPECT_STREQ(c.bound, "l2");
  EXPECT_NEAR(c.memory_us, hot_us, 1e-9);
  // A GEMM of 1024 rows keeps the even spread over the slices (its blocks drift apart).
  const GemmProblem tall = mac_mpgemm_problem(gpu, 1024, 4096, 4096, golden::DType::kFp16, 4);
  const TileChoice t = evaluate_tiles(tall, gpu, {16, 16, 512}, {16, 16, 512}, &fits);
  ASSERT_TRUE(fits);
  EXPECT_LT(t.memory_us / double(t.grid_m), c.memory_us);
}

// Clusters (TMA multicast, mma_cluster): on the H200 a skinny GEMM's clusters of 2 blocks read
// their A tile from L2 once, so half as many readers wait on the hot slices. o_proj at 16 rows,
// W4A16, block [16,32,512] with 16 K slices: 128 blocks in one wave, 8 K steps, a 16 KB A tile
// (128 lines) on 96 slices of 4612 / 96 B/cycle at 1.98 GHz: 64 readers (clusters) per step,
// 128 without clusters.
TEST(Tiling, SkinnyClustersHalveTheHotLineReaders) {
  hw::GpuConfig gpu = hw::load_gpu("h200");
  const GemmProblem p = mac_mpgemm_problem(gpu, 16, 4096, 4096, golden::DType::kFp16, 4);
  EXPECT_EQ(mma_cluster(p, gpu, 128), 2);
  EXPECT_EQ(mma_cluster(p, gpu, 1), 1);  // one block column: nothing to share
  EXPECT_EQ(mma_cluster(p, hw::load_gpu("a100"), 128), 1);
  EXPECT_EQ(mma_cluster(lut_gemm_problem(hw::load_gpu("a100-lut4x"), 16, 4096, 4096,
                                         golden::DType::kFp16, 2),
                        gpu, 128),
            1);
  bool fits = false;
  const TileChoice c = evaluate_tiles(p, gpu, {16, 32, 512}, {16, 32, 32}, &fits, 16);
  ASSERT_TRUE(fits);
  ASSERT_EQ(c.waves, 1);
  ASSERT_EQ(c.blocks(), 128);
  const double slice_per_us = 4612.0 / 96 * gpu.clock_ghz * 1e3;
  const double step_us = max_lines_per_slice(128, 96) * 128 / slice_per_us;
  EXPECT_STREQ(c.bound, "l2");
  // The kernel's cycles run at the clock its tensor cores' duty allows (the power cap).
  EXPECT_NEAR(c.memory_us, 64 * step_us * 8 * gpu.clock_ghz / c.clock_ghz, 1e-9);
  gpu.sm.cluster_size = 1;
  const TileChoice flat = evaluate_tiles(p, gpu, {16, 32, 512}, {16, 32, 32}, &fits, 16);
  ASSERT_TRUE(fits);
  EXPECT_NEAR(flat.memory_us, 128 * step_us * 8 * gpu.clock_ghz / flat.clock_ghz, 1e-9);
}

// A MAC GEMM shorter than its block tile loads only its rows of A (as the compiler does): a
// GEMV's A is one row, re-read by each of the 256 block columns, beside W4 codes and the fp16
// output.
TEST(Tiling, GemvChargesTheOneRowOfAItLoads) {
  const hw::GpuConfig gpu = hw::load_gpu("a100");
  const GemmProblem p = mac_mpgemm_problem(gpu, 1, 4096, 4096, golden::DType::kFp16, 4);
  bool fits = false;
  const TileChoice c = evaluate_tiles(p, gpu, {16, 16, 512}, {16, 16, 32}, &fits, 16);
  ASSERT_TRUE(fits);
  EXPECT_NEAR(c.global_bytes, 256.0 * 4096 * 2 + 4096.0 * 4096 * p.w_bits / 8 + 4096 * 2, 1e-6);
}

// Skinny MAC GEMMs are ranked by the estimate: the choice is within the 1% tie of every other
// candidate's estimate (a few by hand, among them the wide-N and the narrow-N extremes).
TEST(Tiling, SkinnyMacGemmTakesTheTileWithTheLowestEstimate) {
  for (const char* name : {"a100", "h200"}) {
    const hw::GpuConfig gpu = hw::load_gpu(name);
    for (int64_t m : {1, 16}) {
      for (int wbits : {2, 4, 8}) {
        const GemmProblem p = mac_mpgemm_problem(gpu, m, 12288, 4096, golden::DType::kFp16, wbits);
        const TileChoice c = require_tiles(p, gpu);
        SCOPED_TRACE(std::string(name) + " m=" + std::to_string(m) + " w" + std::to_string(wbits) +
                     " chose " + c.block.name() + " x" + std::to_string(c.k_slices));
        for (const auto& [block, warp, slices] :
             std::vector<std::tuple<Tile, Tile, int>>{{{16, 16, 512}, {16, 16, 512}, 16},
                                                      {{16, 32, 256}, {16, 32, 256}, 8},
                                                      {{16, 64, 256}, {16, 32, 256}, 8},
                                                      {{16, 128, 128}, {16, 32, 128}, 4},
                                                      {{16, 256, 64}, {16, 64, 64}, 2}}) {
          bool fits = false;
          const TileChoice o = evaluate_tiles(p, gpu, block, warp, &fits, slices);
          if (fits) {
            EXPECT_LE(c.estimated_us, o.estimated_us * 1.01) << block.name();
          }
        }
      }
    }
  }
}

// Per-K-step synchronization, by hand: the A100's 1024 x 5120 x 5120 FP16 GEMM on block
// [128,128,32], warp [64,64,32] (4 warps) runs 320 blocks at 2 per SM: a full wave of two blocks
// in turn, then one block alone on 104 SMs, one warp per sub-partition. Per block the tensor
// cores take 2 x 128 x 128 x 5120 MACs at the SM's rate; the shared-memory path reads 1 KB of
// fragments per K column (A and B, 128 x 128 / 64 x 2 B each) at 128 B/cycle and fills 256 rows
// of one 128 B line per K tile (160 of them). The full wave overlaps the two by the roofline's
// rule (achievable.overlap_exponent); the lone block adds them. The ranking score overlaps both
// waves. The SM's rate: an m16n8k16 (4096 ops) every 8 cycles on each of its 4 tensor cores at 1.41
// GHz.
TEST(Tiling, LoneWarpPerSubPartitionAddsItsLoadsAndMmas) {
  const hw::GpuConfig gpu = hw::load_gpu("a100");
  const GemmProblem p = mac_gemm_problem(gpu, 1024, 5120, 5120);
  bool fits = false;
  const TileChoice c = evaluate_tiles(p, gpu, {128, 128, 32}, {64, 64, 32}, &fits);
  ASSERT_TRUE(fits);
  ASSERT_EQ(c.blocks_per_sm, 2);
  ASSERT_EQ(c.waves, 2);
  const double tensor_us = 2.0 * 128 * 128 * 5120 / (4096.0 / 8 * 4 * 1410);
  const double smem_us = (1024.0 * 5120 / 128 + 256.0 * 160) / 1410;
  const double p_ovl = gpu.achievable.overlap_exponent;
  const double both_us = std::pow(std::pow(tensor_us, p_ovl) + std::pow(smem_us, p_ovl), 1 / p_ovl);
  EXPECT_NEAR(c.compute_us, 2 * both_us + tensor_us + smem_us, 1e-6);
  EXPECT_NEAR(c.bottleneck_us, 3 * std::max(tensor_us, smem_us), 1e-6);
}

// Dequantize in registers, by hand: LLaMA2-13B's o_proj at 1024 rows, W4A16 on the A100, on block
// [128,128,64] with 2 x 2 warps [64,64,64]: 320 blocks at 2 per SM run as one full wave of two
// blocks in turn (8 warps, 2 per sub-partition), then one block alone on 104 SMs. Per block:
// the tensor cores take 2 x 128 x 128 x 5120 MACs (an m16n8k16 every 8 cycles on each of 4
// tensor cores at 1.41 GHz); the shared-memory path reads 640 B of fragments per K column (A:
// 128 x 128 / 64 x 2 B; the codes: 128 x 128 / 64 x 0.5 B) at 128 B/cycle and fills 128 A rows
// of one 128 B line and 128 code rows of 32 B (a line's cycle each) per K tile (80 of them); the
// two warp rows each dequantize the block's 128 x 5120 codes at 1/32 cycle per code (2 FP32 + 2
// INT32 instructions on 64 + 64 lanes). Two warps per sub-partition: each warp's loads and
// dequantize come in series, so their sum overlaps the tensor cores by
// achievable.overlap_exponent; the lone block adds its loads to its MMAs (its dequantize of the
// next fragment runs beside them). The ranking score is the larger of the tensor
// cores and the dequantize at the FP32 lanes' rate (4 / 64 cycle per code), over three blocks.
TEST(Tiling, RegisterDequantizeAddsToTheLoadsOfTwoWarpsPerSubPartition) {
  const hw::GpuConfig gpu = hw::load_gpu("a100");
  const GemmProblem p = mac_mpgemm_problem(gpu, 1024, 5120, 5120, golden::DType::kFp16, 4);
  ASSERT_TRUE(dequantizes_in_registers(p));
  bool fits = false;
  const TileChoice c = evaluate_tiles(p, gpu, {128, 128, 64}, {64, 64, 64}, &fits);
  ASSERT_TRUE(fits);
  ASSERT_EQ(c.blocks_per_sm, 2);
  ASSERT_EQ(c.waves, 2);
  ASSERT_EQ(c.warps_per_block, 4);
  const double tensor_us = 2.0 * 128 * 128 * 5120 / (4096.0 / 8 * 4 * 1410);
  const double smem_us = (640.0 * 5120 / 128 + (128.0 + 128.0) * 80) / 1410;
  const double codes = 2.0 * 128 * 5120;
  const double dequant_us = codes / 32 / 1410;
  const double p_ovl = gpu.achievable.overlap_exponent;
  const double pair_us =
      std::pow(std::pow(tensor_us, p_ovl) + std::pow(smem_us + dequant_us, p_ovl), 1 / p_ovl);
  EXPECT_NEAR(c.compute_us, 2 * pair_us + tensor_us + std::max(smem_us, dequant_us), 1e-6);
  EXPECT_NEAR(c.bottleneck_us, 3 * std::max(tensor_us, codes * 4 / 64 / 1410), 1e-6);
}

// More warps per sub-partition share the chain between their pairs: LLaMA2-7B's o_proj at 1024
// rows, W4A16 on the A100, on block [64,128,64] with 1 x 4 warps [64,32,64]: 512 blocks at 4 per
// SM run as one full wave of four blocks in turn (16 warps, 4 per sub-partition: half the
// chain's sum, here below its larger part, the loads), then one block alone on 80 SMs. Per
// block: 576 B of fragments per K column (A: 64 x 128 / 32 x 2 B; the codes: 64 x 128 / 64 x 0.5
// B), 64 A rows of a 128 B line and 128 code rows of 32 B filled per K tile (64 of them), one
// warp row dequantizing 128 x 4096 codes.
TEST(Tiling, RegisterDequantizeChainIsSharedByTheWarpsOfASubPartition) {
  const hw::GpuConfig gpu = hw::load_gpu("a100");
  const GemmProblem p = mac_mpgemm_problem(gpu, 1024, 4096, 4096, golden::DType::kFp16, 4);
  bool fits = false;
  const TileChoice c = evaluate_tiles(p, gpu, {64, 128, 64}, {64, 32, 64}, &fits);
  ASSERT_TRUE(fits);
  ASSERT_EQ(c.warps_per_block, 4);
  ASSERT_EQ(c.blocks_per_sm, 4);
  ASSERT_EQ(c.blocks(), 512);
  ASSERT_EQ(c.waves, 2);
  const double tensor_us = 2.0 * 64 * 128 * 4096 / (4096.0 / 8 * 4 * 1410);
  const double smem_us = (576.0 * 4096 / 128 + (64.0 + 128.0) * 64) / 1410;
  const double dequant_us = 128.0 * 4096 / 32 / 1410;
  ASSERT_GT(smem_us, (smem_us + dequant_us) * 2 / 4);
  const double p_ovl = gpu.achievable.overlap_exponent;
  const double four_us = std::pow(std::pow(tensor_us, p_ovl) + std::pow(smem_us, p_ovl), 1 / p_ovl);
  EXPECT_NEAR(c.compute_us, 4 * four_us + tensor_us + smem_us, 1e-6);
}

// The power cap, by hand: the H200 (1.98 GHz; sustained tensor work holds 1.546 GHz) runs an
// m16n8k16 in 4 cycles on each of 528 tensor cores. The estimate of a kernel is its cycles at
// the clock its tensor cores' duty allows, the duty being the instructions' busy cycles (the
// padded MACs of every block) over the kernel's cycles on every tensor core, as the simulator
// times it (sim/stats.h, KernelStats::clock_ghz); the same tile on the H200 without a cap runs
// at 1.98 GHz.
TEST(Tiling, EstimateRunsTheKernelsCyclesAtThePowerCappedClock) {
  const hw::GpuConfig gpu = hw::load_gpu("h200");
  hw::GpuConfig uncapped = gpu;
  uncapped.sm.tensor_load_clock_ghz = 0;
  const GemmProblem p = mac_gemm_problem(gpu, 1024, 22016, 4096);
  bool fits = false;
  const TileChoice c = evaluate_tiles(p, gpu, {256, 128, 64}, {64, 64, 64}, &fits);
  ASSERT_TRUE(fits);
  const TileChoice u = evaluate_tiles(p, uncapped, {256, 128, 64}, {64, 64, 64}, &fits);
  ASSERT_TRUE(fits);
  EXPECT_DOUBLE_EQ(u.clock_ghz, 1.98);
  const double busy_us = double(c.blocks()) * 2 * 256 * 128 * 4096 / (4096.0 / 4 * 528 * 1980);
  const double duty = busy_us / u.estimated_us;
  const double clock = 1.98 - (1.98 - 1.546) * duty;
  EXPECT_NEAR(c.clock_ghz, clock, 1e-9);
  EXPECT_NEAR(c.estimated_us, u.estimated_us * 1.98 / clock, 1e-6);
  EXPECT_NEAR(c.compute_us, u.compute_us * 1.98 / clock, 1e-6);
  // A compute-bound kernel: most of its cycles keep the tensor cores busy.
  EXPECT_GT(duty, 0.6);
  EXPECT_LT(c.clock_ghz, 1.75);
}

TEST(Tiling, ChosenTilesFitRegistersAndSharedMemory) {
  const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  for (int64_t m : {1, 2, 7, 64, 2048}) {
    for (int wbits : {1, 2, 4}) {
      const GemmProblem p = lut_gemm_problem(gpu, m, 8192, 8192, golden::DType::kInt8, wbits);
      const TileChoice c = require_tiles(p, gpu);
      SCOPED_TRACE("m=" + std::to_string(m) + " w=" + std::to_string(wbits) + " block " +
                   c.block.name() + " warp " + c.warp.name());
      expect_fits(c, p, gpu);
      EXPECT_GT(c.estimated_us, 0);
    }
  }
}

TEST(Tiling, LargeW1A8GemmIsWithinBoundsAndMoreRegistersHelp) {
  // LLaMA2-13B FFN GEMM from the paper (M=2048, N=27648, K=5120), W_INT1 A_INT8 on A100-LUT-4X.
  const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  const hw::GpuConfig drm = hw::load_gpu("a100-lut4x-drm");
  const GemmProblem p = lut_gemm_problem(gpu, 2048, 27648, 5120, golden::DType::kInt8, 1);
  const TileChoice best = require_tiles(p, gpu);
  const TileChoice best_drm =
      require_tiles(lut_gemm_problem(drm, 2048, 27648, 5120, golden::DType::kInt8, 1), drm);
  // 2*M*N*K over the LUT rate is a lower bound.
  const double ideal_us = 2.0 * 2048 * 27648 * 5120 / (p.tensor_tops * 1e6);
  EXPECT_GE(best.estimated_us, ideal_us * (1 - 1e-9));
  EXPECT_LE(best_drm.estimated_us, best.estimated_us * (1 + 1e-9));
  // The paper's warp tile [64,256,32] needs 64*256 int32 accumulators over 32 threads = 512
  // registers per thread: more than a thread may have.
  bool fits = true;
  evaluate_tiles(p, gpu, {128, 512, 32}, {64, 256, 32}, &fits);
  EXPECT_FALSE(fits);
  // The -drm design lifts both limits (configs/gpus/a100-lut4x-drm.json): the paper's tile fits.
  const TileChoice paper =
      evaluate_tiles(lut_gemm_problem(drm, 2048, 27648, 5120, golden::DType::kInt8, 1), drm,
                     {128, 512, 32}, {64, 256, 32}, &fits);
  EXPECT_TRUE(fits);
  EXPECT_GT(paper.registers_per_thread, 512);
}

TEST(Tiling, WiderWeightsShrinkTheNTileOrKeepIt) {
  // Memory-size-based: a W-bit weight takes W times the shared memory of a 1-bit one, so a
  // tile that fits at 8 bits also fits at 1 bit.
  const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  const GemmProblem p8 = lut_gemm_problem(gpu, 256, 8192, 8192, golden::DType::kInt8, 8);
  const GemmProblem p1 = lut_gemm_problem(gpu, 256, 8192, 8192, golden::DType::kInt8, 1);
  const TileChoice c8 = require_tiles(p8, gpu);
  bool fits = false;
  evaluate_tiles(p1, gpu, c8.block, c8.warp, &fits);
  EXPECT_TRUE(fits);
}

TEST(Tiling, NoLutCoreIsAnInputError) {
  const hw::GpuConfig gpu = hw::load_gpu("a100");
  EXPECT_THROW(lut_gemm_problem(gpu, 1, 64, 64, golden::DType::kInt8, 2), InputError);
}

TEST(Tiling, MacProblemUsesMmaShape) {
  const hw::GpuConfig gpu = hw::load_gpu("a100");
  const GemmProblem p = mac_gemm_problem(gpu, 4096, 4096, 4096);
  const TileChoice c = require_tiles(p, gpu);
  expect_fits(c, p, gpu);
  EXPECT_GE(c.block.m * c.block.n, 64 * 64) << c.block.name();
}

// A batch (a grouped GEMM's groups, the grid's z): Qwen3-30B-A3B's expert gate+up projection at
// prefill B8 S512 (128 experts of 256 token rows, N 1536, K 2048, FP16) on the H200. Every group
// is grid_m x grid_n blocks; each group's bytes come from DRAM once (its 6.3 MB of weights fit
// in half of the L2), by hand: A, W padded to whole tiles, and the output, times the groups.
TEST(Tiling, BatchRunsEveryGroupsBlocksAndCountsEachGroupsTraffic) {
  const hw::GpuConfig gpu = hw::load_gpu("h200");
  GemmProblem p = mac_gemm_problem(gpu, 256, 1536, 2048);
  p.batch = 128;
  const TileChoice c = require_tiles(p, gpu);
  expect_fits(c, p, gpu);
  EXPECT_EQ(c.grid_z, 128);
  EXPECT_EQ(c.blocks(), 128 * c.grid_m * c.grid_n);
  const double kp = double(c.k_steps * c.block.k);
  const double by_hand = 128.0 * (double(c.grid_m * c.block.m) * kp * 2 +
                                  double(c.grid_n * c.block.n) * kp * 2 + 256.0 * 1536 * 2);
  EXPECT_NEAR(c.dram_bytes, by_hand, 1.0);
  // One group alone with the same tile: a 128th of the blocks and of the bytes, and a grid too
  // small for the GPU, so more than a 128th of the time.
  GemmProblem one = p;
  one.batch = 1;
  bool fits = false;
  const TileChoice c1 = evaluate_tiles(one, gpu, c.block, c.warp, &fits, c.k_slices);
  ASSERT_TRUE(fits);
  EXPECT_EQ(c.blocks(), 128 * c1.blocks());
  EXPECT_NEAR(c.dram_bytes, 128 * c1.dram_bytes, 1.0);
  EXPECT_NEAR(c.global_bytes, 128 * c1.global_bytes, 1.0);
  EXPECT_LT(c.estimated_us, 128 * c1.estimated_us / 4);
  // Never below the tensor cores' peak over the FLOPs, nor DRAM's bandwidth over the bytes.
  const double flops = 2.0 * 128 * 256 * 1536 * 2048;
  EXPECT_GE(c.compute_us, flops / (p.tensor_tops * 1e6));
  EXPECT_GE(c.memory_us, by_hand / (gpu.dram.bw_gbps * 1e3));
  // The batch is validated.
  p.batch = 0;
  EXPECT_THROW(p.validate(), InputError);
}

}  // namespace
}  // namespace ltc::tiling

namespace ltc::tiling {
namespace {

TEST(LmmaShape, GrowsNThenMUntilFourTensorCoreCycles) {
  const golden::LmmaShape core{2, 64, 4};
  const Tile big{64, 256, 32};
  // 1 plane, 4 tiles per core: N to 4 tiles (1 cycle), then M until 4 cycles: 4 x 4 tiles.
  EXPECT_EQ(choose_lmma_shape(core, 4, 1, big), (golden::LmmaShape{8, 256, 4}));
  EXPECT_EQ(lmma_issue_cycles({8, 256, 4}, core, 4, 1), 4);
  // 2 planes: 2 x 4 tiles = 2 rounds x 2 planes.
  EXPECT_EQ(choose_lmma_shape(core, 4, 2, big), (golden::LmmaShape{4, 256, 4}));
  // 4 planes take 4 cycles on one tile, but the instruction still spans the core's 4 tiles.
  EXPECT_EQ(choose_lmma_shape(core, 4, 4, big), (golden::LmmaShape{2, 256, 4}));
  EXPECT_EQ(choose_lmma_shape(core, 1, 4, big), core);
  // 8 tiles per core: N grows to the warp tile's 4 tiles only, then M.
  EXPECT_EQ(choose_lmma_shape(core, 8, 1, big), (golden::LmmaShape{16, 256, 4}));
  // A small warp tile caps both sides.
  EXPECT_EQ(choose_lmma_shape(core, 4, 1, {2, 128, 32}), (golden::LmmaShape{2, 128, 4}));
  EXPECT_EQ(choose_lmma_shape(core, 4, 2, {6, 192, 32}), (golden::LmmaShape{6, 192, 4}));
}

TEST(LmmaShape, EveryChosenShapeDividesTheWarpTileAndFillsTheCoreForFourCyclesWhenItCan) {
  const golden::LmmaShape core{2, 64, 4};
  for (int tiles : {1, 2, 3, 4, 8}) {
    for (int wbits = 1; wbits <= 8; ++wbits) {
      for (int64_t wm : {2, 4, 6, 8, 16, 64}) {
        for (int64_t wn : {64, 128, 192, 256, 512}) {
          const golden::LmmaShape s = choose_lmma_shape(core, tiles, wbits, {wm, wn, 32});
          SCOPED_TRACE(s.name() + " tiles " + std::to_string(tiles) + " w" + std::to_string(wbits) +
                       " warp " + std::to_string(wm) + "x" + std::to_string(wn));
          EXPECT_EQ(wm % s.m, 0);
          EXPECT_EQ(wn % s.n, 0);
          EXPECT_LE(s.n / 64, std::max(tiles, 1));
          if ((s.m / 2) * (s.n / 64) < tiles ||
              lmma_issue_cycles(s, core, tiles, wbits) < kMinLmmaIssueCycles) {
            // Short of 4 cycles only when neither side can grow: M is the whole warp tile and N
            // the most tiles (dividing the warp tile) one tensor core runs at once.
            EXPECT_EQ(s.m, wm);
            int64_t most_b = 1;
            for (int64_t b = 1; b <= tiles; ++b) most_b = (wn / 64) % b == 0 ? b : most_b;
            EXPECT_EQ(s.n, 64 * most_b);
          }
        }
      }
    }
  }
}

TEST(Tiling, LutChoiceRecordsTheMultiTileInstruction) {
  const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  const GemmProblem p = lut_gemm_problem(gpu, 256, 8192, 8192, golden::DType::kInt8, 1);
  const TileChoice c = require_tiles(p, gpu);
  EXPECT_EQ(c.instr, choose_lmma_shape(p.instr, gpu.lut_tensor->tiles_per_tensor_core, 1, c.warp));
  EXPECT_EQ(c.warp.m % c.instr.m, 0);
  EXPECT_EQ(c.warp.n % c.instr.n, 0);
  // MAC problems keep the MMA shape.
  const GemmProblem mp = mac_gemm_problem(gpu, 256, 256, 256);
  EXPECT_EQ(require_tiles(mp, gpu).instr, (golden::LmmaShape{16, 8, 16}));
}

// No tile fits a GPU without shared memory: choose_tiles says so with nullopt (the roofline then
// falls back to its fixed tiles); require_tiles, the compiler's entry, names the capacities.
TEST(Tiling, NoFeasibleTileIsNulloptNotAnException) {
  hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  gpu.shared_memory_kb_per_block = 0;
  const GemmProblem p = lut_gemm_problem(gpu, 64, 4096, 4096, golden::DType::kInt8, 2);
  EXPECT_FALSE(choose_tiles(p, gpu).has_value());
  try {
    require_tiles(p, gpu);
    FAIL() << "require_tiles returned a tile";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("shared memory (0 KB/block)"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ltc::tiling

namespace ltc::tiling {
namespace {

// The three ways a block's warps split a slice, by hand: 8 rows of 256 B on 8 warps: a row each
// (2 lines each, 16 line cycles); on 16 warps: 16 B of every row each (128 copies of one line
// each); 6 rows of 90 B on 4 warps: neither divides, each warp copies its own 3 rows (12
// copies, one line each).
TEST(Tiling, SliceCopiesAreWholeRowsPartsOfRowsOrOwnRows) {
  const SliceCopy rows = slice_copy(8, 256, 8, 8);
  EXPECT_EQ(rows.copies_per_warp, 1);
  EXPECT_EQ(rows.bytes_per_copy, 256);
  EXPECT_FALSE(rows.own_rows);
  EXPECT_DOUBLE_EQ(rows.line_cycles(128), 16);
  const SliceCopy parts = slice_copy(8, 256, 16, 8);
  EXPECT_EQ(parts.copies_per_warp, 8);
  EXPECT_EQ(parts.bytes_per_copy, 16);
  EXPECT_DOUBLE_EQ(parts.line_cycles(128), 128);
  const SliceCopy own = slice_copy(6, 90, 4, 3);
  EXPECT_TRUE(own.own_rows);
  EXPECT_EQ(own.copies_per_warp, 3);
  EXPECT_DOUBLE_EQ(own.line_cycles(128), 12);
}

}  // namespace
}  // namespace ltc::tiling
