// What the simulator measures, per kernel and in total. Counters add with operator+= (per SM ->
// per kernel -> per run); to_json() writes them the way the roofline writes its estimates, so the
// report and tests can put them side by side. sim/README.md says what each one means.
#pragma once

#include "sim/units.h"
#include "traces/isa.h"

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace ltc::sim {

// Why a sub-partition issued nothing in a cycle (the binding reason of its least-blocked warp).
enum class Stall : uint8_t {
  kNoWarp,       // no resident warp on the sub-partition (tail, dispatch, occupancy)
  kBarrier,      // waiting at bar for the block's other warps
  kAsyncWait,    // wait n=N on cp.async groups still in flight
  kFragments,    // scoreboard: data of an ldg / lds not back yet
  kAccumulator,  // scoreboard: an lmma / mma on the same accumulator tile in flight
  kValues,       // scoreboard: an alu / sfu / precompute / dequant result not ready
  // Structural: the warp's unit has not accepted it yet, one kind per Unit in its order
  // (busy_stall; tensor_busy, alu_busy, sfu_busy, lsu_busy: sim/units.h).
  kUnitBusy,
};
inline constexpr int kStallKinds = int(Stall::kUnitBusy) + kUnitKinds;
constexpr Stall busy_stall(Unit u) {
  return Stall(int(Stall::kUnitBusy) + int(u));
}
std::string_view stall_name(Stall s);  // "barrier", "async_wait", ..., "lsu_busy"

struct MemoryStats {
  uint64_t smem_bytes = 0;            // lds + sts + ldgsts fills
  uint64_t smem_wavefronts = 0;       // shared-memory data-path cycles
  uint64_t bank_conflict_cycles = 0;  // wavefronts beyond one per 128 bytes (bank conflicts)
  uint64_t l1_sectors = 0, l1_hit_sectors = 0;  // ldg lookups (32-byte sectors)
  uint64_t l2_sectors = 0, l2_hit_sectors = 0;  // reads + writes reaching L2
  uint64_t l2_read_bytes = 0, l2_write_bytes = 0;
  uint64_t dram_read_bytes = 0, dram_write_bytes = 0;
  // ldgsts bytes a cluster partner's L2 read delivered (sim/cluster.h).
  uint64_t multicast_bytes = 0;
};

// How a kernel's statistics were obtained in sampled simulation (sim/sampler/sampling.h); empty
// method: simulated in full.
struct SampleInfo {
  // "full", "repeat", "loop", "wave", "slice", "loop+slice", "stream-slice",
  // "loop+stream-slice"
  std::string method;
  std::string repeats;  // "repeat": the identical kernel whose statistics it takes
  int runs = 0;         // reduced simulations it took (0 for a repeat)
  int64_t loop_trips = 0, loop_trips_run[2] = {0, 0};  // the sampled loop: its trips, the runs'
  int slice = 1;  // the runs' GPU: 1 / slice of the SMs, L2 slices and DRAM channels
  int64_t waves = 0, waves_run = 0;  // full waves before the tail: the kernel's, the runs'
  // (the run stopped once its blocks' residency was flat and adds the waves cut at that)
  uint64_t simulated_instructions = 0;  // warp instructions the runs issued (given-up ones too)
  // Confidence: the mean and the largest |cycle error| that `ltc bench sim --only sample`
  // measured for kernels sampled by this method (relative; sim/sampler/sampling.h).
  double error_mean = 0, error_max = 0;
};

struct KernelStats {
  std::string name;
  bool gemm = false;  // the kernel computes a GEMM (its trace has a gemm record)
  int64_t start_cycle = 0;
  int64_t cycles = 0;  // launch to the last block's retirement
  int64_t blocks = 0, warps = 0;
  int blocks_per_sm = 0;  // occupancy limit (registers, shared memory, warps, blocks)
  std::string occupancy_limit;
  // Warp instructions issued by opcode (alu/sfu/precompute/dequant/qtable: warp-wide macro
  // instructions, each covering ceil(thread ops / 32) SIMT instructions, see simt_instructions).
  std::array<uint64_t, size_t(traces::kOpcodeCount) + 1> issued{};
  uint64_t simt_instructions = 0;   // every warp instruction the GPU would issue
  uint64_t thread_ops = 0;          // CUDA-core operations (alu, sfu, precompute, dequant...)
  uint64_t tensor_ops = 0;          // 2*M*N*K of every lmma / mma issued (padding included)
  uint64_t lmma_ops = 0;            // the lmma share of tensor_ops (the rest are mma)
  uint64_t lmma_plane_ops = 0;      // lmma ops x weight planes (the LUT tiles' beats' work)
  uint64_t tensor_busy_cycles = 0;  // summed over tensor cores
  uint64_t tensor_cores = 0;        // in the GPU (for utilization)
  uint64_t issue_cycles = 0;        // sub-partition cycles that issued
  std::array<uint64_t, kStallKinds> stall_cycles{};  // sub-partition cycles by reason
  uint64_t warp_cycles = 0;                          // resident warps x cycles, summed over SMs
  // Blocks whose residency (dispatch to retirement) is reported, and that residency summed:
  // every block's, or those a dispatch policy chose (sim/dispatch_policy.h).
  uint64_t timed_blocks = 0, timed_block_cycles = 0;
  int sms = 0;
  int max_warps_per_sm = 0;
  // The SM clock this kernel ran at: the GPU's clock lowered by its tensor utilization
  // (hw::GpuConfig::loaded_clock_ghz); its time is cycles / clock_ghz.
  double clock_ghz = 0;
  MemoryStats mem;
  SampleInfo sample;  // sampled simulation only

  KernelStats& operator+=(const KernelStats& o);  // counters add; name/cycles kept
  double tensor_utilization() const;              // busy / (cycles x tensor cores)
  double achieved_occupancy() const;              // resident warps / (cycles x SMs x max warps)
  uint64_t warp_instructions() const;             // issued, every opcode
  Stall binding_stall() const;                    // the stall reason with the most cycles
  double time_ms() const { return clock_ghz > 0 ? double(cycles) / (clock_ghz * 1e6) : 0.0; }
};

// Calls f(field of m0, field of m1, ...) for every counter of the MemoryStats given.
template <typename F, typename... M>
void for_each_memory_counter(F&& f, M&... m) {
  f(m.smem_bytes...);
  f(m.smem_wavefronts...);
  f(m.bank_conflict_cycles...);
  f(m.l1_sectors...);
  f(m.l1_hit_sectors...);
  f(m.l2_sectors...);
  f(m.l2_hit_sectors...);
  f(m.l2_read_bytes...);
  f(m.l2_write_bytes...);
  f(m.dram_read_bytes...);
  f(m.dram_write_bytes...);
  f(m.multicast_bytes...);
}

// Calls f(field of s0, field of s1, ...) for every additive counter of the KernelStats given
// (blocks, warps, instructions, busy and stall cycles, memory traffic; cycles is not among them).
// One list for operator+= and the sampled simulation's extrapolation (sim/sampler/sampling.cpp).
template <typename F, typename... S>
void for_each_counter(F&& f, S&... s) {
  f(s.blocks...);
  f(s.warps...);
  for (size_t i = 0; i < std::tuple_size<decltype(KernelStats::issued)>::value; ++i) {
    f(s.issued[i]...);
  }
  f(s.simt_instructions...);
  f(s.thread_ops...);
  f(s.tensor_ops...);
  f(s.lmma_ops...);
  f(s.lmma_plane_ops...);
  f(s.tensor_busy_cycles...);
  f(s.issue_cycles...);
  for (size_t i = 0; i < size_t(kStallKinds); ++i) f(s.stall_cycles[i]...);
  f(s.warp_cycles...);
  f(s.timed_blocks...);
  f(s.timed_block_cycles...);
  for_each_memory_counter(f, s.mem...);
}

struct FunctionalCheck {
  std::string kernel;
  bool skipped = false;  // too large to compute (timed only)
  uint64_t outputs = 0, mismatches = 0;
};

// Where the host's wall time went (SimOptions::host_profile; sim/README.md, "Parallel
// stepping"): the quanta stepped; the batches of SM and L2 work (on the pool, or on SystemC's
// thread alone at 1 thread) and their wall time, the rest being SystemC's thread's own work (kernel
// starts, the dispatcher, bookkeeping); of the merges whose L2 ran as steps on the pool, the wall
// time from each batch's start to the end of the L2's last step (what the SMs that sent lines
// waited for); and each thread's time running items (the pool's threads; at 1 thread, the
// batches').
struct HostProfile {
  bool on = false;
  uint64_t quanta = 0, batches = 0;
  double batch_s = 0, l2_chain_s = 0;
  // Seconds in the L2's items (every thread's, summed) and SM items' waits for L2 items other
  // threads ran (summed; inside thread_busy_s).
  double l2_serve_s = 0, l2_wait_s = 0;
  std::vector<double> thread_busy_s;
  // SystemC's thread alone: the run's wall time outside the batches.
  double serial_s(double wall_s) const { return wall_s > batch_s ? wall_s - batch_s : 0.0; }
};

// Whole-run totals and the per-kernel list (launch order).
struct RunStats {
  double clock_ghz = 0;  // the GPU's clock (kernel gaps run at it; kernels at their own)
  int64_t cycles = 0;    // first launch to last retirement, kernel gaps included
  bool interrupted = false;
  bool functional = false;
  uint64_t functional_mismatches = 0;  // outputs differing from the golden model
  uint64_t functional_outputs = 0;
  std::vector<FunctionalCheck> functional_checks;  // one per GEMM kernel
  // --tc rtl: core-tile LMMAs streamed through the verilated tiles and the cycles they clocked;
  // LMMA instructions whose outputs the tiles computed (--functional).
  uint64_t rtl_tile_lmmas = 0, rtl_tile_cycles = 0, rtl_computed_lmmas = 0;
  double wall_s = 0;
  HostProfile host;
  // Sampled simulation (sim/sampler/sampling.h): how, and the warp instructions simulated against
  // those the full run would issue.
  std::string sample_method;
  uint64_t sample_simulated_instructions = 0;
  // The run's cycle error expected from its kernels' (independent errors: the root of the sum of
  // squares of error_mean x cycles, over the cycles) and at most (all in one direction).
  double sample_error_expected = 0, sample_error_max = 0;
  // Bytes of the L2's dirty sectors when the last kernel retired: the step's output that still
  // has to reach DRAM. total() counts them as DRAM writes (a full run only; 0 when sampled).
  uint64_t end_writeback_bytes = 0;
  std::vector<KernelStats> kernels;
  // Counters summed over the kernels, end_writeback_bytes in mem.dram_write_bytes.
  KernelStats total() const;  // clock_ghz: the one that gives the run's time over its cycles
  // Every kernel at its own clock, the gaps between them at clock_ghz.
  double time_ms() const;
};

void to_json(nlohmann::json& j, const KernelStats& k);
void to_json(nlohmann::json& j, const RunStats& r);

}  // namespace ltc::sim
