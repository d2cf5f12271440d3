// The SM's functional units behind one interface. A unit is a FunctionalUnit (free_at, issue)
// built from its row of kUnitKinds; the warp scheduler asks a warp's unit when it takes the
// warp's next instruction (free_at), charges the unit's structural stall while it waits
// (busy_stall, sim/stats.h), and issue() occupies it. The SM's issue path reads a unit's
// occupancy and latency from the decoded instruction (DecodedInstr, sim/sm.h) and writes its
// result into the scoreboard class the instruction writes, so a unit of fixed occupancy and
// latency needs no code of its own in sim/sm.cpp. sim/README.md, "Functional units", lists the
// edits a new unit takes.
#pragma once

#include "model/hw/gpu.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>

namespace ltc::sim {

// Simulated SM cycles.
using Cycle = int64_t;

// Which unit an instruction occupies (kNone: none; barriers, cp.async group bookkeeping).
enum class Unit : uint8_t { kTensor, kAlu, kSfu, kLsu, kNone };
inline constexpr int kUnitKinds = int(Unit::kNone);  // units, kNone excluded

struct UnitKind {
  std::string_view name;
  std::string_view busy_name;  // its structural stall in the statistics ("tensor_busy")
  bool per_sm;                 // one shared by the SM's sub-partitions (else one per sub-partition)
  // Identical pipes in one (the first free takes an instruction): of the SM or sub-partition,
  // 1..kMaxUnitCopies (simulate() refuses a GPU outside that, naming `copies_from`).
  int (*copies)(const hw::GpuConfig&);
  std::string_view copies_from;
  // Cycles of queued work it accepts beyond the instruction in service (0: an instruction issues
  // only to a free pipe).
  Cycle queue;
};

// Memory instructions wait to issue while the SM's load/store path has more than this many
// cycles of work queued (the MIO / LSU instruction queue of real SMs).
inline constexpr Cycle kLsuQueueCycles = 64;
inline constexpr int kMaxUnitCopies = 8;

inline constexpr std::array<UnitKind, kUnitKinds> kUnits = {{
    // The sub-partition's tensor cores (GpuConfig::lmma_timing / mma_timing: tensor_core.h).
    {"tensor", "tensor_busy", false,
     [](const hw::GpuConfig& g) { return g.tensor_cores_per_sm / g.sub_partitions_per_sm; },
     "field 'tensor_cores_per_sm' over 'sub_partitions_per_sm'", 0},
    // Its CUDA-core lanes (FP32 and INT32 ops: GpuConfig::cuda_core_cycles).
    {"alu", "alu_busy", false, [](const hw::GpuConfig&) { return 1; }, "one", 0},
    // Its special-function unit (sm.sfu_ops_per_cycle).
    {"sfu", "sfu_busy", false, [](const hw::GpuConfig&) { return 1; }, "one", 0},
    // The SM's load/store path: shared memory (wavefronts) and global accesses (one line a cycle).
    {"lsu", "lsu_busy", true, [](const hw::GpuConfig&) { return 1; }, "one", kLsuQueueCycles},
}};

constexpr const UnitKind& unit_kind(Unit u) {
  return kUnits[size_t(u)];
}

// Busy until free_at(); issue() takes an instruction at `c` (c >= free_at()) into the pipe that
// frees first, keeps that pipe `busy` cycles from when the instruction starts in it, and returns
// that start (c, or later when the unit queues work).
class FunctionalUnit {
 public:
  FunctionalUnit() = default;
  FunctionalUnit(int copies, Cycle queue)
      : copies_(std::clamp(copies, 1, kMaxUnitCopies)), queue_(queue) {}
  Cycle free_at() const { return open_; }
  Cycle issue(Cycle c, Cycle busy) {
    Cycle* pipe = std::min_element(free_.begin(), free_.begin() + copies_);
    const Cycle start = std::max(c, *pipe);
    *pipe = start + busy;
    const Cycle next = *std::min_element(free_.begin(), free_.begin() + copies_);
    open_ = std::max<Cycle>(0, next - queue_);
    return start;
  }
  void reset() {
    free_.fill(0);
    open_ = 0;
  }

 private:
  int copies_ = 1;
  Cycle queue_ = 0;
  Cycle open_ = 0;  // free_at(): the first pipe's free cycle less the queue
  std::array<Cycle, kMaxUnitCopies> free_{};
};

}  // namespace ltc::sim
