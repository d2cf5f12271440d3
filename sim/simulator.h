// The cycle-level simulator's public entry: run a trace (every kernel, or one) on a GPU and get
// per-kernel statistics. `ltc sim` is a thin layer over simulate(); tests call it directly.
#pragma once

#include "model/hw/gpu.h"
#include "sim/stats.h"
#include "traces/trace.h"

#include <cstdint>
#include <functional>
#include <string>

namespace ltc::sim {

// What one simulate() leaves in the memory system for the next: the L2's lines and queued work
// and the next free global address (defined in sim/memory.h).
struct MemoryState;
class DispatchPolicy;

struct Progress {
  size_t kernel = 0, kernels = 0;  // index of the running kernel, how many will run
  std::string name;
  int64_t blocks_done = 0, blocks = 0;
  int64_t cycles = 0;  // simulated so far
  double wall_s = 0;
};

struct SimOptions {
  std::string tc = "fast";     // tensor-core back end (sim/tensor_core.h)
  std::string rtl_cache_dir;   // --tc rtl: verilated models (empty: rtl::default_cache_dir())
  bool rtl_optimized = false;  // --tc rtl: models compiled with -O2 (slower to build)
  bool functional = false;     // also compute every GEMM's outputs and check them bit for bit
  uint32_t seed = 1;           // operands of the functional run
  std::string kernel;          // run only the kernels with this name (empty: all)
  // How far the SMs run ahead of the memory system's time (TLM-2.0 quantum): they step a quantum
  // at a time, and no more than one L2 round trip (the hit latency; simulate() refuses more).
  // 0: longest_quantum(gpu), the longest that keeps every load's data time exact.
  int64_t quantum_cycles = 0;
  // Host threads that step the SMs (sim/README.md, "Parallel stepping"); results do not depend
  // on it. --tc rtl steps on one.
  int threads = 1;
  // Time where the host's wall goes (RunStats::host); no simulated effect.
  bool host_profile = false;
  // Run only the first `block_limit` blocks (launch order) of every kernel; 0: all (--block-limit).
  int64_t block_limit = 0;
  // Seams for a layer above the core (sampled simulation, sim/sampler/), owned by the caller:
  // a policy the block dispatcher consults (sim/dispatch_policy.h), and a memory checkpoint
  // (MemoryState, sim/memory.h) to start from instead of an empty L2 at address 0 and / or to
  // leave at the end. A checkpoint is restored on the GPU that wrote it only.
  DispatchPolicy* dispatch = nullptr;
  const MemoryState* start_state = nullptr;
  MemoryState* end_state = nullptr;
  // Called about every `progress_every_s` seconds of wall time while simulating.
  std::function<void(const Progress&)> progress;
  double progress_every_s = 1.0;
};

// The longest quantum the simulator takes on `gpu`: its L2 hit latency in whole cycles (a load
// issued in a quantum has no data before the quantum ends, so resolving it at the merge is
// exact), at most 65535 (the merge orders a quantum's lines by their 16-bit cycle offset).
int64_t longest_quantum(const hw::GpuConfig& gpu);

// Throws InputError when the trace does not fit the GPU (lmma on a GPU without LUT cores, a
// block that needs more registers or shared memory than an SM has, an unknown --kernel). Safe
// to call several times in one process (each run gets a fresh SystemC context).
RunStats simulate(const traces::Trace& trace, const hw::GpuConfig& gpu, const SimOptions& options);

// SystemC allows one elaboration per context: every elaboration in the process (each simulate(),
// a test's own modules) starts with this, which gives it a fresh context.
void fresh_systemc_context();

// Asks a running simulate() to stop at its next quantum and return what it has simulated
// (RunStats::interrupted). Async-signal-safe: `ltc sim` calls it from its SIGINT handler.
void request_stop();

}  // namespace ltc::sim
