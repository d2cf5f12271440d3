// `ltc sim --tc rtl`: the verilated LUT tile as the SM's tensor core. Every LMMA instruction
// streams its half tables and weight planes through the tile's valid/ready ports (one beat per
// plane), takes the cycles the tile takes, and with --functional its outputs are the tile's (they
// replace golden::lmma in traces/functional's GEMM executor, whose final outputs are still
// checked against the golden GEMM).
//
// Timing of one instruction of a x b core tiles on a tensor core of T tiles: tile LMMA i goes to
// tile slot i mod T; each slot streams its LMMAs back to back. occupancy = cycles until the last
// beat of the busiest slot is accepted (the next instruction's first beat may enter the cycle
// after), latency = cycles until its last result is taken (out_ready_i is high: the register
// file always takes a result) + sm.lmma_latency_cycles. A tile is idle before each instruction,
// which is exact for these ports: with out_ready_i high, in_ready_o never drops, so an LMMA that
// follows another one in the pipeline is accepted exactly as on an idle tile.
//
// One verilated model per LMMA type (table, accumulator, output dtype) of the GPU's core shape
// and pipeline stages, built and cached like `ltc verify`'s (rtl/rtl_runner.h, shared-library
// flavour). "rtl-naive" runs ltc_lut_naive_tile: activations in (the tile builds its full table),
// untransformed planes. MMAs keep the fast model's timing (the MAC tile is not in the loop).
#pragma once

#include "model/hw/gpu.h"
#include "rtl/tile_library.h"
#include "sim/tensor_core.h"
#include "traces/functional.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

namespace ltc::sim {

class RtlTensorCore final : public TensorCoreModel, public traces::LmmaUnit {
 public:
  // `design`: kLut or kLutNaive. Models are built on first use.
  // `optimized`: models compiled with -O2 (rtl::HarnessOptions::optimized).
  RtlTensorCore(const hw::GpuConfig& gpu, hw::TensorCoreDesign design, std::string cache_dir,
                bool optimized = false);
  std::string_view name() const override;
  // Decode time: an LMMA of `op` on zero operands through the tile (checks that the tile can run
  // it and gives the plan a timing; each issue is timed again by issue_lmma).
  hw::TensorOpTiming lmma(const traces::LmmaOp& op) const override;
  hw::TensorOpTiming mma(const traces::MmaOp& op) const override;
  bool times_each_issue() const override { return true; }
  // The LMMA issuing now: the timing of the operands the functional path just streamed
  // (lmma(LmmaInstance)), else (timing only, or an LMMA predicated off) zero operands of `op`.
  hw::TensorOpTiming issue_lmma(const traces::LmmaOp& op) const override;
  traces::LmmaUnit* lmma_unit() override { return this; }
  std::vector<uint32_t> lmma(const traces::LmmaInstance& l) override;

  uint64_t tile_lmmas() const { return tile_lmmas_; }
  uint64_t computed_lmmas() const {
    return computed_lmmas_;
  }                              // instructions whose O it gave  // core-tile LMMAs streamed
  uint64_t tile_cycles() const;  // cycles clocked in every model

 private:
  struct Run {
    hw::TensorOpTiming timing;
    std::vector<uint32_t> out;
  };
  Run run(const traces::LmmaInstance& l, bool want_outputs) const;
  rtl::VerilatedTile& tile_for(const traces::LmmaInstance& l) const;
  traces::LmmaInstance zero_instance(const traces::LmmaOp& op) const;

  const hw::GpuConfig& gpu_;
  hw::TensorCoreDesign design_;
  std::string cache_dir_;
  bool optimized_;
  // The tiles are clocked by const timing queries: their cycles are the model's answer.
  mutable std::map<std::tuple<int, int, int, int>, std::unique_ptr<rtl::VerilatedTile>> tiles_;
  mutable std::optional<hw::TensorOpTiming> streamed_;
  mutable uint64_t tile_lmmas_ = 0;
  uint64_t computed_lmmas_ = 0;
};

}  // namespace ltc::sim
