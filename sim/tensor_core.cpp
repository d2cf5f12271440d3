#include "sim/tensor_core.h"

#include "common/error.h"
#include "sim/rtl_tensor_core.h"

#include <string>

namespace ltc::sim {

hw::TensorOpTiming FastTensorCore::lmma(const traces::LmmaOp& op) const {
  return gpu_.lmma_timing(op.shape, op.wbits);
}

hw::TensorOpTiming FastTensorCore::mma(const traces::MmaOp& op) const {
  return gpu_.mma_timing(op.shape, golden::dtype_name(op.a), golden::dtype_name(op.b));
}

std::unique_ptr<TensorCoreModel> make_tensor_core(std::string_view name, const hw::GpuConfig& gpu,
                                                  const std::string& rtl_cache_dir,
                                                  bool rtl_optimized) {
  if (name == "fast") return std::make_unique<FastTensorCore>(gpu);
  if (name == "rtl" || name == "rtl-naive") {
    return std::make_unique<RtlTensorCore>(
        gpu, name == "rtl" ? hw::TensorCoreDesign::kLut : hw::TensorCoreDesign::kLutNaive,
        rtl_cache_dir, rtl_optimized);
  }
  throw InputError("--tc: '" + std::string(name) +
                   "' is not a tensor-core back end (valid: fast, rtl, rtl-naive)");
}

}  // namespace ltc::sim
