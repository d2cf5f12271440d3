// GEMM lowering: one mpGEMM Y[M,N] = A[M,K] * W[N,K]^T becomes LMMA kernels for a GPU with LUT
// tensor cores (model/tiling chooses the tiles), and one dense GEMM becomes an MMA kernel.
//
// LUT mpGEMM = two kernels:
//   <name>.precompute  one warp per (row, 128 columns): load activations, build half tables on
//                      CUDA cores (+ quantize them), store tables [row][LUT group][entry]
//   <name>.lmma        grid over (N / bn, M / bm) blocks; per quantization group and K tile each
//                      warp loads its table rows and packed weight segments (compiler/packing.h
//                      layout), then runs lmma over its warp tile (planes inside the instruction,
//                      K groups ascending), and after each quantization group a dequant epilogue
//                      (scale, zero-point bias term); finally stores fp16 outputs. Multi-basis
//                      binary (FluxBin): per basis its own table set and 1-bit sign planes,
//                      dequant with the basis' row scales, then the dense salient branch.
// The precompute kernel is omitted when the tables come from a fused producer (model lowering).
#pragma once

#include "model/hw/gpu.h"
#include "model/llm/precision.h"
#include "model/tiling/tiling.h"
#include "traces/trace.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ltc::compiler {

struct GemmSpec {
  std::string name = "gemm";
  int64_t m = 1, n = 1, k = 1;
  llm::WeightFormat weights;                 // low-bit (not kFloat)
  golden::DType act = golden::DType::kInt8;  // activation dtype the tables are built from
  int64_t group_size = 0;                    // 0: per output channel (one group of K)
  bool quantize_tables = false;              // int8 tables + fp32 scale (q8 LMMAs)
  bool emit_precompute = true;               // false: tables come from a fused producer
  void validate() const;
};

// The trace header entry for the GPU's LUT tensor core (InputError if it has none).
traces::CoreSpec lut_core_spec(const hw::GpuConfig& gpu);

// Kernels of one LUT mpGEMM; `core` indexes the trace's cores. `tiles` (optional) receives the
// choice. Throws InputError for bad shapes or a GPU without LUT tensor cores.
std::vector<traces::Kernel> lower_lut_gemm(const GemmSpec& spec, const hw::GpuConfig& gpu, int core,
                                           tiling::TileChoice* tiles = nullptr);

// The table-precompute kernel of an mpGEMM input (m rows x k_cols activations -> half tables
// [row][LUT group][entry], + fp32 scale per table when quantized); tensor 0 = acts, 1 = tables.
// Multi-basis binary (`bases` > 0): one column-scaled table set per basis (scale fusion), tables
// [basis][row][LUT group][entry], tensor 2 = column scales.
traces::Kernel lower_precompute(const std::string& name, int64_t m, int64_t k_cols,
                                golden::DType act, bool quantize_tables, const hw::GpuConfig& gpu,
                                int bases = 0);

// A dense GEMM on the MAC tensor cores (mma.m16n8k16 fp16 / m16n8k32 int8), `batch` independent
// GEMMs as grid y slices (attention: sequences x heads). Operands: tensor 0 = A, 1 = B, 2 = out.
// `weight_bits` > 0: B holds low-bit codes, dequantized on the CUDA cores before the MMAs
// (dequantize-then-MAC, how a GPU without LUT tensor cores runs an mpGEMM; tensor 3 = scales).
traces::Kernel lower_mma_gemm(const std::string& name, int64_t batch, int64_t m, int64_t n,
                              int64_t k, golden::DType a, golden::DType b, const hw::GpuConfig& gpu,
                              tiling::TileChoice* tiles = nullptr, int weight_bits = 0);

// `ltc compile gemm`: a whole trace (header + kernels) for one mpGEMM.
traces::Trace compile_gemm(const GemmSpec& spec, const hw::GpuConfig& gpu);

}  // namespace ltc::compiler
