#include "model/roofline/workload.h"

#include "common/error.h"
#include "model/golden/gemm.h"

namespace ltc::roofline {

using golden::DType;

double GemmProblem::table_entries_per_element() const {
  const double entries_per_act = double(1 << (lut_k - 1)) / lut_k;
  const double bases =
      weights.kind == llm::WeightFormatKind::kMultiBasisBinary ? double(weights.bases) : 1.0;
  return entries_per_act * bases;
}

double GemmProblem::x_bytes_per_element() const {
  // In-kernel tables: the kernel streams activations and keeps its tables on chip.
  if (!tables || tables_in_kernel) return llm::dtype_bytes(acts);
  return table_entries_per_element() * llm::dtype_bytes(table);
}

double GemmProblem::w_bytes_per_element() const {
  return weights.is_low_bit() ? weights.bits_per_weight() / 8.0 : weights.bits / 8.0;
}

GemmProblem make_gemm(int64_t m, int64_t n, int64_t k, const llm::WeightFormat& weights, DType acts,
                      bool tables, bool quantize_tables) {
  golden::check_gemm_extents(m, n, k);
  GemmProblem g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.weights = weights;
  g.acts = acts;
  g.tables = tables && weights.is_low_bit();
  g.table = golden::lut_table_dtype(acts, quantize_tables);
  g.weight_bytes = double(n) * k * g.w_bytes_per_element();
  g.x_bytes = double(m) * k * g.x_bytes_per_element();
  g.out_bytes = double(m) * n * llm::dtype_bytes(g.out);
  return g;
}

GemmProblem gemm_of(const llm::Op& op, const llm::StepConfig& step) {
  GemmProblem g;
  g.batch = op.gemm.batch;
  g.m = op.gemm.m;
  g.n = op.gemm.n;
  g.k = op.gemm.k;
  // Dense layers of a low-bit model (the LM head) keep weights and activations in `hidden`.
  const bool dense_in_low_bit_model = !op.low_bit && step.weights.is_low_bit();
  g.weights = step.weights;
  if (dense_in_low_bit_model) {
    g.weights = llm::WeightFormat{};
    g.weights.dtype = step.hidden;
    g.weights.bits = golden::dtype_bits(step.hidden);
  }
  g.acts = dense_in_low_bit_model ? step.hidden : step.acts;
  g.out = step.hidden;
  g.tables = op.reads_tables;
  g.tables_in_kernel = op.builds_tables;
  g.grouped = op.grouped && step.kernels == llm::KernelPlan::kReference && !op.reads_tables;
  if (g.grouped) {
    g.group_tokens = op.group_tokens;
    g.group_pick = op.group_pick;
  }
  g.compiled = step.kernels == llm::KernelPlan::kCompiled;
  g.table = step.table_dtype();
  g.lut_k = step.lut_k;
  g.weight_bytes = op.weight_bytes;
  g.x_bytes = op.read_bytes;
  g.out_bytes = op.write_bytes;
  return g;
}

llm::StepConfig make_step(llm::Phase phase, int64_t batch, int64_t length,
                          const llm::WeightFormat& weights, DType acts, const hw::GpuConfig& gpu,
                          std::optional<llm::PrecomputeMode> mode, bool quantize_tables) {
  llm::StepConfig s = phase == llm::Phase::kDecode ? llm::StepConfig::decode(batch, length)
                                                   : llm::StepConfig::prefill(batch, length);
  s.weights = weights;
  s.acts = acts;
  s.quantize_tables = quantize_tables;
  if (mode) {
    s.precompute = *mode;
  } else {
    s.precompute = weights.is_low_bit() && gpu.has_lut_tensor() ? llm::PrecomputeMode::kFused
                                                                : llm::PrecomputeMode::kNone;
  }
  if (gpu.has_lut_tensor()) s.lut_k = gpu.lut_tensor->core.shape.k;
  s.validate();
  return s;
}

llm::PrecomputeMode parse_precompute(std::string_view s, std::string_view what) {
  if (s == "none") return llm::PrecomputeMode::kNone;
  if (s == "separate") return llm::PrecomputeMode::kSeparate;
  if (s == "fused") return llm::PrecomputeMode::kFused;
  if (s == "inkernel") return llm::PrecomputeMode::kInKernel;
  throw InputError(std::string(what) + ": unknown precompute mode '" + std::string(s) +
                   "' (valid: none, separate, fused, inkernel)");
}

std::string_view precompute_name(llm::PrecomputeMode m) {
  switch (m) {
    case llm::PrecomputeMode::kNone:
      return "none";
    case llm::PrecomputeMode::kSeparate:
      return "separate";
    case llm::PrecomputeMode::kFused:
      return "fused";
    case llm::PrecomputeMode::kInKernel:
      return "inkernel";
  }
  return "?";
}

}  // namespace ltc::roofline
