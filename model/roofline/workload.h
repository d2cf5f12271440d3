// What the model does: GEMM problems and decode/prefill steps in the terms the cost model reads.
// The operator graph itself (norms, precompute, QKV, RoPE, attention, FFN, residuals, head) comes
// from model/llm, the same graph the compiler lowers; this file adds the precision choices that
// depend on the machine (tables only where LUT tensor cores exist) and GEMM operand sizes.
#pragma once

#include "model/golden/dtype.h"
#include "model/hw/gpu.h"
#include "model/llm/graph.h"
#include "model/llm/precision.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace ltc::roofline {

// Y[M,N] = X[M,K] W[N,K]^T, `batch` independent copies (attention heads use batch > 1).
struct GemmProblem {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  llm::WeightFormat weights;  // fp16 by default
  golden::DType acts = golden::DType::kFp16;
  golden::DType out = golden::DType::kFp16;
  bool tables = false;                         // X arrives as precomputed LUT half tables
  golden::DType table = golden::DType::kFp16;  // table entry dtype (tables only)
  int lut_k = 4;                               // activations per table
  bool tables_in_kernel = false;  // tables: built inside the kernel from X (precompute inkernel)
  // The MoE reference step's grouped GEMM (torch._grouped_mm: one CUTLASS kernel over the
  // `batch` groups, no split-K, a setup kernel before it); its rates: the path's "grouped" entry
  // (hw::GemmPathRates::kernel).
  bool grouped = false;
  // A grouped GEMM: the tokens routed and each group's (expert's) probability of taking a token
  // (llm::Op::group_pick); its row tiles are llm::group_row_tiles of them. Empty: batch groups of
  // m rows each.
  int64_t group_tokens = 0;
  std::vector<double> group_pick;
  // A row of an operand or of the output is not a multiple of 16 bytes: cuBLAS runs its
  // alignment-1 kernels, whose operands come from L2 element by element
  // (hw::AchievableRates::unaligned_l2_fraction).
  bool unaligned = false;
  // The compiler's kernel (llm::KernelPlan::kCompiled): costed as model/tiling ranks and
  // estimates it (gemm_cost), whatever the path.
  bool compiled = false;
  double weight_bytes = 0;  // W at its packed size (+ scales, bias)
  double x_bytes = 0;       // X (activations or tables)
  double out_bytes = 0;     // Y

  double flops() const { return 2.0 * double(batch) * m * n * k; }
  double bytes() const { return weight_bytes + x_bytes + out_bytes; }
  // Bytes one X element (one activation) costs as streamed into a tile: the activation, or its
  // share of a half table (2^(K-1) entries per K activations).
  double x_bytes_per_element() const;
  double w_bytes_per_element() const;  // packed bits per weight / 8
  // Table entries per activation: 2^(K-1) / K half-table entries, per weight basis.
  double table_entries_per_element() const;
};

// A GEMM from its shape and formats, with byte counts filled in.
GemmProblem make_gemm(int64_t m, int64_t n, int64_t k, const llm::WeightFormat& weights,
                      golden::DType acts, bool tables = false, bool quantize_tables = false);
// The GEMM of a kLinear operator of a step graph (bytes as the graph counts them).
GemmProblem gemm_of(const llm::Op& op, const llm::StepConfig& step);

// Table precompute: fused (default) where the GPU has LUT tensor cores and the weights are
// low-bit, none otherwise; `mode` overrides.
llm::StepConfig make_step(llm::Phase phase, int64_t batch, int64_t length,
                          const llm::WeightFormat& weights, golden::DType acts,
                          const hw::GpuConfig& gpu,
                          std::optional<llm::PrecomputeMode> mode = std::nullopt,
                          bool quantize_tables = false);

llm::PrecomputeMode parse_precompute(std::string_view s, std::string_view what = "--precompute");
std::string_view precompute_name(llm::PrecomputeMode m);

}  // namespace ltc::roofline
