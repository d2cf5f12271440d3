// Tensor-core back ends behind one interface: the simulator asks a back end how long each static
// lmma / mma instruction of a kernel keeps the tensor core busy and when its result is ready.
// The fast back end is the formula of model/hw (GpuConfig::lmma_timing / mma_timing), the one
// the roofline and the compiler's scheduler use too; a back end that runs the verilated tile
// (ltc sim --tc rtl) implements the same interface.
#pragma once

#include "model/hw/gpu.h"
#include "traces/isa.h"

#include <memory>
#include <string_view>

namespace ltc::sim {

class TensorCoreModel {
 public:
  virtual ~TensorCoreModel() = default;
  virtual std::string_view name() const = 0;
  virtual hw::TensorOpTiming lmma(const traces::LmmaOp& op) const = 0;
  virtual hw::TensorOpTiming mma(const traces::MmaOp& op) const = 0;
};

class FastTensorCore final : public TensorCoreModel {
 public:
  explicit FastTensorCore(const hw::GpuConfig& gpu) : gpu_(gpu) {}
  std::string_view name() const override { return "fast"; }
  hw::TensorOpTiming lmma(const traces::LmmaOp& op) const override;
  hw::TensorOpTiming mma(const traces::MmaOp& op) const override;

 private:
  const hw::GpuConfig& gpu_;
};

// "fast" (the only back end of this build besides those the RTL harness adds); InputError
// naming --tc and the valid values otherwise.
std::unique_ptr<TensorCoreModel> make_tensor_core(std::string_view name, const hw::GpuConfig& gpu);

}  // namespace ltc::sim
