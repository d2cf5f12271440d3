// The block dispatcher's seam (SimOptions::dispatch): a policy that sees every block retire and
// may end a kernel's grid early. The core runs every block without one; sampled simulation's wave
// cut (sim/sampler/wave_cut.h) is one. The dispatcher calls it in its own deterministic order
// (blocks handed out and retired as the simulation runs), from one simulate() only: a policy holds
// the state of one run, never global state.
#pragma once

#include "traces/trace.h"

#include <cstdint>
#include <optional>
#include <utility>

namespace ltc::sim {

class DispatchPolicy {
 public:
  virtual ~DispatchPolicy() = default;
  // Kernel `k` launches; its blocks 0 .. blocks - 1 (launch order: id = (bz * grid_y + by) * grid_x
  // + bx) are handed out in order.
  virtual void begin_kernel(const traces::Kernel& k, int64_t blocks) = 0;
  // Before block `id` is handed out: false ends the grid there (blocks from `id` on never run;
  // the kernel ends when those handed out have retired).
  virtual bool admit(int64_t id) = 0;
  // Block `id` was resident from cycle `start` to cycle `end`.
  virtual void retired(int64_t id, int64_t start, int64_t end) = 0;
  // At the kernel's end: the blocks whose residency the kernel's statistics report, and that
  // residency summed (KernelStats::timed_blocks, timed_block_cycles); none: every block's.
  virtual std::optional<std::pair<uint64_t, uint64_t>> timed_blocks() const { return {}; }
};

}  // namespace ltc::sim
