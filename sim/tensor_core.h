// Tensor-core back ends behind one interface: the simulator asks a back end how long each static
// lmma / mma instruction of a kernel keeps the tensor core busy and when its result is ready.
// The fast back end is the formula of model/hw (GpuConfig::lmma_timing / mma_timing), the one
// the roofline and the compiler's scheduler use too; a back end that runs the verilated tile
// (ltc sim --tc rtl) implements the same interface.
#pragma once

#include "model/hw/gpu.h"
#include "traces/functional.h"
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
  // Back ends that run every LMMA (rtl) time each one as it issues: the SM then takes
  // issue_lmma()'s timing instead of lmma()'s, which only serves decode-time checks.
  virtual bool times_each_issue() const { return false; }
  virtual hw::TensorOpTiming issue_lmma(const traces::LmmaOp& op) const { return lmma(op); }
  // With --functional: the unit that computes the LMMAs in place of the golden model (null:
  // golden::lmma).
  virtual traces::LmmaUnit* lmma_unit() { return nullptr; }
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

// "fast", "rtl" (the verilated ltc_lut_tile, sim/rtl_tensor_core.h) or "rtl-naive"
// (ltc_lut_naive_tile); InputError naming --tc and the valid values otherwise. `rtl_cache_dir`:
// where the verilated models are built and cached (empty: rtl::default_cache_dir());
// `rtl_optimized`: compile them with -O2 (rtl::HarnessOptions::optimized).
std::unique_ptr<TensorCoreModel> make_tensor_core(std::string_view name, const hw::GpuConfig& gpu,
                                                  const std::string& rtl_cache_dir = "",
                                                  bool rtl_optimized = false);

}  // namespace ltc::sim
