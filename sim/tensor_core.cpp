#include "sim/tensor_core.h"

#include "model/golden/error.h"

#include <string>

namespace ltc::sim {

hw::TensorOpTiming FastTensorCore::lmma(const traces::LmmaOp& op) const {
  return gpu_.lmma_timing(op.shape, op.wbits);
}

hw::TensorOpTiming FastTensorCore::mma(const traces::MmaOp& op) const {
  return gpu_.mma_timing(op.shape, golden::dtype_name(op.a), golden::dtype_name(op.b));
}

std::unique_ptr<TensorCoreModel> make_tensor_core(std::string_view name, const hw::GpuConfig& gpu) {
  if (name == "fast") return std::make_unique<FastTensorCore>(gpu);
  throw InputError("--tc: '" + std::string(name) + "' is not a tensor-core back end (valid: fast)");
}

}  // namespace ltc::sim
