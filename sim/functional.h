// `ltc sim --functional`: while the SMs execute a trace, every GEMM kernel's instructions also
// run through traces/functional.h at the moment they issue (warps interleaved as the schedulers
// interleave them), and each GEMM's outputs are compared bit for bit with the golden model on
// random operands (seeded). An adapter from the SM's issue hook to traces::TraceExecutor.
#pragma once

#include "sim/sm.h"
#include "sim/stats.h"
#include "traces/functional.h"

#include <cstdint>
#include <vector>

namespace ltc::sim {

class FunctionalChecker final : public IssueObserver {
 public:
  // GEMMs above this many multiply-accumulates are timed but not computed.
  static constexpr double kMaxMacs = 3e8;
  FunctionalChecker(const traces::Trace& trace, uint32_t seed) : exec_(trace, seed, kMaxMacs) {}
  void begin_kernel(size_t index) override { exec_.begin_kernel(index); }
  void end_kernel(size_t) override {}
  // LMMAs computed by `unit` (--tc rtl: the verilated tile) instead of golden::lmma.
  void set_lmma_unit(traces::LmmaUnit* unit) { exec_.set_lmma_unit(unit); }
  void on_issue(const traces::Instr& in, const traces::Affine::Point& p, int64_t warp_id) override {
    exec_.step(in, p, warp_id);
  }
  // Checks the last GEMM and adds every verdict to the run's totals.
  void finish(RunStats& r) {
    for (const auto& c : exec_.finish()) {
      r.functional_checks.push_back({c.kernel, c.skipped, c.check.outputs, c.check.mismatches});
      if (c.skipped) continue;
      r.functional_outputs += c.check.outputs;
      r.functional_mismatches += c.check.mismatches;
    }
  }

 private:
  traces::TraceExecutor exec_;
};

}  // namespace ltc::sim
