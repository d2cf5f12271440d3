// Tile selection: capacities respected, operand sizes charged by their real bytes.
#include "model/tiling/tiling.h"
#include "model/golden/error.h"
#include "model/hw/gpu.h"

#include <gtest/gtest.h>

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

TEST(Tiling, LutOperandSizesAreTableBitsAndPlanes) {
  const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  const GemmProblem p = lut_gemm_problem(gpu, 2048, 27648, 5120, golden::DType::kInt8, 1);
  // M2N64K4 half table: 8 int16 entries per 4 activations = 32 bits per activation.
  EXPECT_DOUBLE_EQ(p.a_bits, 32);
  EXPECT_DOUBLE_EQ(p.w_bits, 1);
  EXPECT_EQ(p.instr, (golden::LmmaShape{2, 64, 4}));
}

TEST(Tiling, ChosenTilesFitRegistersAndSharedMemory) {
  const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  for (int64_t m : {1, 2, 7, 64, 2048}) {
    for (int wbits : {1, 2, 4}) {
      const GemmProblem p = lut_gemm_problem(gpu, m, 8192, 8192, golden::DType::kInt8, wbits);
      const TileChoice c = choose_tiles(p, gpu);
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
  const TileChoice best = choose_tiles(p, gpu);
  const TileChoice best_drm =
      choose_tiles(lut_gemm_problem(drm, 2048, 27648, 5120, golden::DType::kInt8, 1), drm);
  // 2*M*N*K over the LUT rate is a lower bound.
  const double ideal_us = 2.0 * 2048 * 27648 * 5120 / (p.tensor_tops * 1e6);
  EXPECT_GE(best.estimated_us, ideal_us * (1 - 1e-9));
  EXPECT_LE(best_drm.estimated_us, best.estimated_us * (1 + 1e-9));
  // The paper's warp tile [64,256,32] needs 64*256 int32 accumulators over 32 threads = 512
  // registers per thread: more than a thread may have.
  bool fits = true;
  evaluate_tiles(p, gpu, {128, 512, 32}, {64, 256, 32}, &fits);
  EXPECT_FALSE(fits);
}

TEST(Tiling, WiderWeightsShrinkTheNTileOrKeepIt) {
  // Memory-size-based: a W-bit weight takes W times the shared memory of a 1-bit one, so a
  // tile that fits at 8 bits also fits at 1 bit.
  const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  const GemmProblem p8 = lut_gemm_problem(gpu, 256, 8192, 8192, golden::DType::kInt8, 8);
  const GemmProblem p1 = lut_gemm_problem(gpu, 256, 8192, 8192, golden::DType::kInt8, 1);
  const TileChoice c8 = choose_tiles(p8, gpu);
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
  const TileChoice c = choose_tiles(p, gpu);
  expect_fits(c, p, gpu);
  EXPECT_GE(c.block.m * c.block.n, 64 * 64) << c.block.name();
}

}  // namespace
}  // namespace ltc::tiling
