// GEMM lowering: one mpGEMM Y[M,N] = A[M,K] * W[N,K]^T becomes LMMA kernels for a GPU with LUT
// tensor cores (model/tiling chooses the tiles), or an MMA kernel on the MAC tensor cores.
//
// LUT mpGEMM = two kernels:
//   <name>.precompute  one warp per (row, 32 LUT groups): load activations, build half tables on
//                      CUDA cores (+ quantize them), store tables [basis][row][LUT group][entry]
//   <name>.lmma        grid over (N / bn, M / bm) blocks; a multistage cp.async pipeline over the
//                      K tiles (below) stages each K tile's table rows and packed weight segments
//                      (traces/packing.h layout) in shared memory; each warp loads its
//                      fragments (lds: one per operand for as many K steps as fit in 8 bytes
//                      per thread, so a GEMV's 2 x 64 tile loads 4 steps at once) and runs lmma
//                      over its warp tile (planes inside the instruction, K groups
//                      ascending), and after each quantization group a
//                      dequant epilogue (scale, zero-point bias term); finally stores fp16
//                      outputs. Multi-basis binary (FluxBin): per basis its own table set and
//                      1-bit sign planes, dequant with the basis' row scales, then the dense
//                      salient branch.
// The precompute kernel is omitted when the tables come from a fused producer (model lowering).
// MMA GEMM = one kernel `<name>` of mma.m16n8k{16,32} over the same pipeline; low-bit weights
// are packed codes that each K tile dequantizes on the CUDA cores into a shared buffer
// (dequantize-then-MAC).
//
// The K pipeline (CUTLASS multistage), S = stages (>= 2; at most the K tiles per quantization
// group + 1): a prologue issues the ldgsts of K tiles 0..S-2, each followed by `commit`; K tile t
// then runs `wait n=S-2`, `bar`, its fragments (lds) and tensor-core instructions, the ldgsts of
// tile t+S-1 (only while that tile exists: the last S-1 iterations are peeled off without loads)
// and `commit` (an empty group in the peeled iterations, so `wait n=S-2` always means "K tile t
// has landed"). The one `bar` per K tile also keeps a stage from being overwritten while read:
// iteration t's loads refill the stage iteration t-1 read, and every warp has passed iteration
// t's bar. lds addresses name stage 0's buffer (the stage index t mod S is not affine); shared
// memory is `stages` such buffers (+ the dequantize buffer of the MMA path).
//
// Global tensors are declared padded to whole tiles (traces/trace.h, "Padding"): rows to
// grid_y * bm, output columns to grid_x * bn, K to whole K tiles (and to the precompute kernel's
// 32-group warps); every access stays inside its tensor and no two warps store the same bytes.
#pragma once

#include "model/hw/gpu.h"
#include "model/llm/precision.h"
#include "model/tiling/tiling.h"
#include "traces/trace.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ltc::compiler {

struct GemmSpec {
  std::string name = "gemm";
  int64_t m = 1, n = 1, k = 1;
  // LUT: independent GEMMs of this shape (a grouped GEMM's groups: MoE experts), the grid's z
  // as lower_mma_gemm's batch; INT formats only.
  int64_t batch = 1;
  llm::WeightFormat weights;                 // LUT: low-bit; MMA: any but multi-basis binary
  golden::DType act = golden::DType::kInt8;  // activation dtype (LUT: the tables' source)
  int64_t group_size = 0;                    // 0: per output channel
  bool quantize_tables = false;              // int8 tables + fp32 scale (q8 LMMAs)
  bool emit_precompute = true;               // false: tables come from a fused producer
  // kLut: LMMA kernels; kMma: MAC tensor cores (dense, or dequantize-then-MAC for low-bit
  // weights). Unset: kLut when the GPU has LUT tensor cores and the weights are low-bit.
  std::optional<traces::GemmPath> path;
  int stages = 0;         // cp.async pipeline depth (>= 2); 0: the tiling's choice
  void validate() const;  // the LUT path's rules
};

// The path compile_gemm takes for `spec` on `gpu`.
traces::GemmPath gemm_path(const GemmSpec& spec, const hw::GpuConfig& gpu);

// The trace header entry for the GPU's LUT tensor core (InputError if it has none).
traces::CoreSpec lut_core_spec(const hw::GpuConfig& gpu);

// Kernels of one LUT mpGEMM; `core` indexes the trace's cores. `tiles` (optional) receives the
// choice. Throws InputError for bad shapes or a GPU without LUT tensor cores.
// A batch (spec.batch > 1): one precompute over every GEMM's rows and one lmma kernel whose
// block (bx, by, bz) computes tile (by, bx) of GEMM bz, the tile chosen for the whole grid
// (tiling::GemmProblem::batch). Each GEMM's operands are stacked and padded to whole tiles as
// lower_mma_gemm's: acts [batch][Mp][Kp], tables [batch][Mp][LUT groups], weights
// [batch][core tiles of N][LUT groups][plane], scales [batch][group][Np], out [batch][Mp][Np].
std::vector<traces::Kernel> lower_lut_gemm(const GemmSpec& spec, const hw::GpuConfig& gpu, int core,
                                           tiling::TileChoice* tiles = nullptr);

// The table-precompute kernel of an mpGEMM input (m rows x k_cols activations -> half tables,
// + fp32 scale per table when quantized); tensor 0 = acts, 1 = tables. Multi-basis binary
// (`bases` > 0): one column-scaled table set per basis (scale fusion), tensor 2 = column scales.
// Tables are stored [basis][table_rows][table_groups][entry], acts [m][padded K]; table_rows and
// table_groups are at least m and precompute_table_groups() (0 takes those). `batch` > 1: the
// rows of `batch` GEMMs of m rows each (grid z), stacked: acts [batch][table_rows][padded K],
// tables [basis][batch][table_rows][table_groups]; padding rows are not computed.
traces::Kernel lower_precompute(const std::string& name, int64_t m, int64_t k_cols,
                                golden::DType act, bool quantize_tables, const hw::GpuConfig& gpu,
                                int bases = 0, int64_t table_rows = 0, int64_t table_groups = 0,
                                int64_t batch = 1);
// LUT groups per table row that the precompute kernel's warps cover for K = k_cols.
int64_t precompute_table_groups(int64_t k_cols, int64_t k_group);

// A GEMM on the MAC tensor cores (mma.m16n8k16 fp16 / bf16, m16n8k32 int8 / fp8); `batch`
// independent GEMMs of one shape (a grouped GEMM: MoE experts, MLA's heads) as the grid's z, one
// block per (GEMM, M tile, N tile), the tile chosen for the whole grid (tiling::GemmProblem::
// batch). Operands: tensor 0 = A [batch][Mp][Kp], 1 = B [batch][Np][Kp], 2 = out [batch][Mp][Np]
// fp16 (each GEMM padded to whole tiles). `weight_bits` > 0: B holds low-bit codes (per-channel
// fp16 scale and zero point, tensor 3), dequantized per K tile on the CUDA cores into A's dtype
// before the MMAs (dequantize-then-MAC, how a GPU without LUT tensor cores runs an mpGEMM); int8
// activations with 8-bit codes run the codes directly (int8 MMA) and scale in the epilogue.
// `stages` 0: the tiling's choice.
traces::Kernel lower_mma_gemm(const std::string& name, int64_t batch, int64_t m, int64_t n,
                              int64_t k, golden::DType a, golden::DType b, const hw::GpuConfig& gpu,
                              tiling::TileChoice* tiles = nullptr, int weight_bits = 0,
                              int stages = 0);

// Throws InputError naming the first kernel of `t` whose block `gpu` cannot hold
// (hw::block_limits_error, the simulator's rule): a trace the compiler emits always runs.
void check_kernels_fit(const traces::Trace& t, const hw::GpuConfig& gpu);

// `ltc compile gemm`: a whole trace (header + kernels) for one (mp)GEMM on gemm_path(); the GEMM
// kernel carries a GemmRecord of that path. Throws InputError naming the flag for operands the
// path or GPU cannot run (with the valid ones).
traces::Trace compile_gemm(const GemmSpec& spec, const hw::GpuConfig& gpu);

}  // namespace ltc::compiler
