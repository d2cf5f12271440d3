// Memory-size-based tile selection for one (mp)GEMM on one GPU, in the manner of Roller
// (Zhu et al., OSDI'22): candidate tiles are aligned to the tensor-core instruction, each operand
// is charged the bytes it actually occupies (a half-table entry per K/k activations, a W-bit weight
// plane, an fp32 accumulator), candidates that do not fit registers or shared memory are dropped,
// and the rest are ranked by their bottleneck = max(compute over waves, DRAM + L2 traffic)
// (skinny MAC GEMMs, M <= 16, by the estimate: choose_tiles).
// The tiles are the compiler's kernels, costed as the simulator runs them; the chosen tile's
// estimate is the roofline's cost of a LUT GEMM and of every GEMM of the compiled plan
// (docs/performance-models.md "One cost per kernel"). Accumulators live in registers (as for MMA),
// which caps the warp tile: the paper's W1A8 tile (block [128,512,32], warp [64,256,32]) needs 512
// accumulator registers per thread and does not fit a 255-register thread; the -drm GPUs (doubled
// register file) allow more resident warps.
//
//   Y[M,N] = A[M,K] * W[N,K]^T       block tile  [bm, bn, bk]  (one thread block, one k step)
//                                     warp tile   [wm, wn, bk]  (one warp's accumulators)
//                                     instruction [im, in, ik]  (one LMMA / MMA)
// Shared memory holds `stages` copies of the block's A (or table) and W slices; each warp's
// registers hold its accumulators plus the A/table and W fragments of one K step of the whole
// warp tile (every instruction tile of the warp, so any instruction shape within it fits).
// Sliced K (skinny GEMMs): a block whose one warp row spans its M may split each K tile between
// `k_slices` warps (warp k = block k / k_slices, traces/trace.h "Sliced K"), which add their
// partial sums through shared memory at the end. A GEMV's one warp otherwise walks all of K as
// one chain of dependent tensor-core instructions: the chain, not DRAM, would bound it.
#pragma once

#include "model/golden/lmma.h"
#include "model/hw/gpu.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ltc::tiling {

struct Tile {
  int64_t m = 0, n = 0, k = 0;
  bool operator==(const Tile& o) const { return m == o.m && n == o.n && k == o.k; }
  std::string name() const;  // "[128,512,32]"
};

// One GEMM and what each operand costs in memory.
struct GemmProblem {
  int64_t m = 0, n = 0, k = 0;
  // Independent GEMMs of this shape, each with its own A, W and output (a grouped GEMM's groups,
  // e.g. MoE experts): the grid's z (compiler/gemm_lowering.h, lower_mma_gemm).
  int64_t batch = 1;
  golden::LmmaShape instr{2, 64, 4};  // instruction shape (LMMA, or 16x8x16 for an FP16 MMA)
  double a_bits = 16;          // bits per A element as stored: activation, or half-table bits per
                               // activation for LUT (2^(ik-1) entries x entry bits / ik)
  double w_bits = 16;          // bits per weight as stored (planes for LUT; + scale overhead)
  double acc_bits = 32;        // accumulator element
  double out_bits = 16;        // output element written to global memory
  double tensor_tops = 0;      // whole-GPU tensor rate for this operand pair (TOP/s)
  int passes = 1;              // instruction passes per instruction tile (W planes on a LUT core)
  int lut_tiles_per_core = 0;  // LUT: parallel tiles per tensor core; 0: a MAC problem, whose
                               // instruction is `instr`
  // Dequantize-then-MAC: bits per element of the one dequantized W tile (block.n x block.k) a
  // block keeps in shared memory beside its pipeline stages; 0 when W feeds the MMA as stored.
  double dequant_bits = 0;
  // MAC problems on a warpgroup-MMA GPU (hw::SmConfig::mma_warpgroup > 1):
  // the block's warps along M form one warpgroup whose tensor cores read W from shared memory
  // once for all of them.
  int warpgroup = 1;
  // MAC problems: the mma's timing (GpuConfig::mma_timing); LUT problems take lmma_timing of the
  // instruction chosen for the warp tile.
  hw::TensorOpTiming mma_timing;
  // The warpgroup the tiles must honour: `warpgroup` for a MAC problem, else 1.
  int64_t tile_warpgroup() const { return lut_tiles_per_core == 0 ? warpgroup : 1; }

  void validate() const;               // InputError naming the field
  std::string invalid_reason() const;  // what validate() would say; "" when valid
};

// A LUT mpGEMM on `gpu`'s LUT tensor core: instr = core shape, A = half tables in `table` dtype
// (int16 for int8 activations; int8 entries and an fp32 scale per table with
// `quantize_tables`), W = `wbits` planes (+ `extra_weight_bits` of scales), rate from
// GpuConfig::lut_tops. Throws InputError when the GPU has no LUT tensor core. The compiler's
// LUT kernels and the roofline's LUT GEMMs are this problem's tiles and estimate.
GemmProblem lut_gemm_problem(const hw::GpuConfig& gpu, int64_t m, int64_t n, int64_t k,
                             golden::DType act, int wbits, double extra_weight_bits = 0,
                             bool quantize_tables = false);
// A dense MAC GEMM (fp16 MMA m16n8k16, int8 m16n8k32), e.g. attention or an fp16 linear layer.
GemmProblem mac_gemm_problem(const hw::GpuConfig& gpu, int64_t m, int64_t n, int64_t k,
                             golden::DType act = golden::DType::kFp16,
                             golden::DType weight = golden::DType::kFp16);
// CUDA-core thread instructions that dequantize one weight code: unpack (shift and mask),
// convert, subtract the zero point, scale. The lowering emits them (compiler/gemm_lowering.cpp),
// the simulator and the roofline (model/roofline/machine.cpp) time them by
// GpuConfig::cuda_core_cycles, the tiling ranks tiles by them (evaluate_tiles). Measured on an H200
// (configs/calibration/h200-microbench.json, topic "dequant"; tools/microbench/dequant.py):
// PyTorch's W4A16 tinygemm kernel issues 4.32 CUDA-core thread instructions per code it dequantizes
// (all of its CUDA-core work), a Triton W4A16 GEMM 3.64-4.26 more than the same kernel on FP16
// weights.
inline constexpr int kDequantOpsPerCode = 4;
// Of them on the INT32 lanes (shifts, masks, permutes; the rest FP: scale and zero point, as
// FMAs): tinygemm's alu pipe issues 2.13 per code beside 2.19 on the fma pipe (the same file).
// GpuConfig::cuda_core_cycles times the two together.
inline constexpr int kDequantIntOpsPerCode = 2;
// A MAC mpGEMM (dequantize-then-MAC): `act` x `weight_bits`-bit weight codes, stored packed and
// dequantized per K tile into one W tile of the MMA's operand type (`act`); INT8 x 8-bit codes
// feed the MMA directly. The compiler's lowering (compiler/gemm_lowering.cpp) lays out exactly
// this shared memory.
GemmProblem mac_mpgemm_problem(const hw::GpuConfig& gpu, int64_t m, int64_t n, int64_t k,
                               golden::DType act, int weight_bits);
// The compiler's MMA kernel (compiler/gemm_lowering.h, lower_mma_gemm) for operands `a` x `b`:
// 8- and 16-bit float or int8 activations as they are (others as FP16); `weight_bits` > 0: packed
// codes dequantized into `a`'s type (mac_mpgemm_problem), else `b` as stored (mac_gemm_problem).
GemmProblem mma_kernel_problem(const hw::GpuConfig& gpu, int64_t m, int64_t n, int64_t k,
                               golden::DType a, golden::DType b, int weight_bits = 0);
// Blocks per thread-block cluster of the compiler's MMA kernel (compiler/gemm_lowering.cpp) for
// `p` over `grid_n` block columns: on a GPU with TMA multicast (hw::SmConfig::tma, cluster_size
// > 1), warpgroup kernels (as CUTLASS's sm90 kernels run) and skinny kernels (M <= 16, where every
// block column reads the same A tile) run clusters of cluster_size blocks along N, which read
// their shared A tile from L2 once per cluster (sim/cluster.h); else 1 (LUT problems too).
int64_t mma_cluster(const GemmProblem& p, const hw::GpuConfig& gpu, int64_t grid_n);
// The MMA operands of a linear layer's kernel (compiler/model_lowering.cpp): INT8 MMAs where
// low-bit weights meet integer activations, else FP16; low-bit weights as codes of
// ceil(bits per weight) bits (0: dense weights in the MMA's type).
struct LinearMma {
  golden::DType a = golden::DType::kFp16;
  int weight_bits = 0;
};
LinearMma linear_mma(bool low_bit, golden::DType acts, double bits_per_weight);
// Dequantize-then-MAC on mma.sync warps: each warp dequantizes the B fragments it reads in
// registers, as weight-only kernels do (every warp row of a block repeats its column's work; the
// tiling counts that). A warpgroup MMA reads B from shared memory, so there the block dequantizes
// each K tile once into shared memory for all its warps.
bool dequantizes_in_registers(const GemmProblem& p);

// How a block's warps copy one operand's slice of a K tile (`rows` rows of `row_bytes` bytes)
// into shared memory with ldgsts, the compiler's rule (compiler/gemm_lowering.cpp,
// load_block_slice): whole rows each when the warps divide the rows; else an equal part of every
// row when they divide its bytes; else each warp its own warp tile's `own_rows` rows (rows that
// warps share are copied more than once). The estimate charges the shared-memory path a cycle
// per L2 line of each copy (the simulator's LSU: sim/sm.cpp), so many small copies cost more
// than a few whole rows.
struct SliceCopy {
  int64_t warps = 1;
  int64_t copies_per_warp = 0;
  int64_t bytes_per_copy = 0;
  bool own_rows = false;  // the third case
  // Line cycles of the whole block's copies (lines of `line_bytes`).
  double line_cycles(int64_t line_bytes) const;
};
SliceCopy slice_copy(int64_t rows, int64_t row_bytes, int64_t warps, int64_t own_rows);

// LMMA instruction shapes (traces/isa.h): a x b tiles of the core shape, timed by
// hw::lmma_issue_cycles (model/hw/gpu.h), the one formula the simulator and roofline use too.
using hw::lmma_issue_cycles;
// The compiler's instruction: starting from the core shape, grow N (up to core.n *
// tiles_per_core) and then M, within the warp tile (whose m, n the result divides), until the
// instruction spans every tile of the tensor core and needs >= kMinLmmaIssueCycles cycles, so
// one issue keeps the whole tensor core busy.
inline constexpr int64_t kMinLmmaIssueCycles = 4;
golden::LmmaShape choose_lmma_shape(const golden::LmmaShape& core, int tiles_per_core, int wbits,
                                    const Tile& warp);

// Lines hashed over `slices` L2 slices (sim/memory.h: a mix of the line number picks the slice)
// fall as balls into bins: the expected lines of the fullest slice, which serves a K step's
// readers last (the hot-line term of a skinny GEMM's estimate). P(max <= x) =
// P(Binomial(lines, 1 / slices) <= x) ^ slices (the slices' loads taken as independent),
// E[max] = sum over x >= 0 of 1 - P(max <= x); at least 1 line (for lines >= 1) and
// lines / slices.
double max_lines_per_slice(double lines, int slices);

struct TileChoice {
  Tile block;
  Tile warp;         // warp.k = block.k / k_slices
  int k_slices = 1;  // warps that split each K tile (sliced K); they are the block's warps in y
  golden::LmmaShape instr;  // LUT: choose_lmma_shape for the warp tile; MAC: the MMA shape
  int warps_per_block = 0;
  int stages = 2;  // shared-memory pipeline depth
  int64_t grid_m = 0, grid_n = 0, k_steps = 0;
  int64_t grid_z = 1;  // GemmProblem::batch
  int64_t blocks() const { return grid_m * grid_n * grid_z; }
  int blocks_per_sm = 0;  // resident blocks, limited by registers and shared memory
  int64_t waves = 0;
  double smem_bytes_per_block = 0;  // stages x stage_bytes, + the dequantized W tile
  double stage_bytes = 0;           // one pipeline stage: the block's A and W tiles of one K step
  int registers_per_thread = 0;
  double global_bytes = 0;  // A + W reads of all blocks (DRAM or L2), plus the output
  // The ranking score: max(compute, memory), the dequantize pass at the FP32 lanes' rate and no
  // lone-warp K step serialization (what the estimate adds to compute_us).
  double bottleneck_us = 0;
  // The kernel's time: the pipeline's fill and drain + compute and memory overlapped (the
  // roofline's cost of the compiler's GEMM kernels, model/roofline/cost.cpp).
  double estimated_us = 0;
  double compute_us = 0;  // tensor cores, shared-memory data path, dequantize, chains
  double memory_us = 0;   // DRAM and L2 traffic, hot lines, bytes in flight
  // The SM clock the estimate runs the kernel's cycles at (hw::GpuConfig::loaded_clock_ghz of
  // its tensor cores' duty; estimated_us, compute_us, memory_us and chain_us are at this clock).
  double clock_ghz = 0;
  double dram_bytes = 0;  // of global_bytes, those that come from DRAM
  // Line cycles the block's stage copies (ldgsts) take on the SM's load/store path per K tile
  // (slice_copy for A and W; 0 on a GPU whose TMA fills the stages).
  double fill_lines = 0;
  // What binds the estimate: "compute" (tensor cores), "smem" (shared-memory data path),
  // "dequant", "chain", "dram", "l2" (traffic or hot lines) or "latency" (bytes in flight).
  const char* bound = "";
  double chain_us = 0;          // waves x one warp's chain of dependent tensor-core instructions
  double padding_fraction = 0;  // computed MACs that fall outside M x N x K
};

// Candidate enumeration and ranking: the best tile, or nullopt when no tile fits the registers and
// shared memory (e.g. a GPU with no shared memory). Throws InputError only for an invalid problem
// (GemmProblem::validate). Deterministic for equal inputs.
std::optional<TileChoice> choose_tiles(const GemmProblem& p, const hw::GpuConfig& gpu);
// choose_tiles for a caller that needs a tile (the compiler): InputError naming the instruction
// and the GPU's capacities when none fits.
TileChoice require_tiles(const GemmProblem& p, const hw::GpuConfig& gpu);
// The cost of one given tiling (for comparisons such as the paper's [128,512,32] / [64,256,32]);
// `fits` false when it exceeds a capacity.
TileChoice evaluate_tiles(const GemmProblem& p, const hw::GpuConfig& gpu, const Tile& block,
                          const Tile& warp, bool* fits, int k_slices = 1);

}  // namespace ltc::tiling
