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

// What one simulate() leaves in the memory system for the next: the L2's lines (tags, valid and
// dirty sectors; defined in sim/memory.h) and the next free global address. Sampled simulation
// runs each kernel on its own simulate() and carries this from one to the next, so that a kernel
// starts beside the dirty lines of the kernels before it, as in the full run (sim/sampling.h).
struct MemoryState;

struct Progress {
  size_t kernel = 0, kernels = 0;  // index of the running kernel, how many will run
  std::string name;
  int64_t blocks_done = 0, blocks = 0;
  int64_t cycles = 0;  // simulated so far
  double wall_s = 0;
};

struct SimOptions {
  std::string tc = "fast";      // tensor-core back end (sim/tensor_core.h)
  std::string rtl_cache_dir;    // --tc rtl: verilated models (empty: rtl::default_cache_dir())
  bool rtl_optimized = false;   // --tc rtl: models compiled with -O2 (slower to build)
  bool functional = false;      // also compute every GEMM's outputs and check them bit for bit
  uint32_t seed = 1;            // operands of the functional run
  std::string kernel;           // run only the kernels with this name (empty: all)
  int64_t quantum_cycles = 32;  // how far an SM runs ahead of SystemC time (TLM-2.0 quantum)
  // Run only the first `block_limit` blocks (launch order) of every kernel; 0: all. The reduced
  // runs of sampled simulation (sim/sampling.h).
  int64_t block_limit = 0;
  // Blocks (ids in [lo, hi)) whose residency, dispatch to retirement, is summed per kernel
  // (KernelStats::timed_block_cycles; default: all): sampled simulation's steady-state block
  // time.
  int64_t timed_blocks[2] = {0, INT64_MAX};
  // Sampled simulation's wave cut, decided while the kernel runs (sim/sampling.h, "Waves"): with
  // `resident` > 0, the blocks from id `tail` on fall into windows of `resident`. Before handing
  // out block w * resident + tail (w >= min_waves), the dispatcher fits a line through the mean
  // residencies of the last `windows` complete windows (window 0, with blocks of the first wave,
  // left out); where it moves less than `steady` of their mean across them, no more blocks are
  // handed out, and the kernel's timed_blocks are those windows' blocks (the timed_blocks option
  // is then ignored). Never steady: the whole grid runs. Off by default (the sampler sets it:
  // sim/sampling.cpp, kWaveWindows and kWaveSteady).
  struct WaveStop {
    int64_t resident = 0, tail = 0, min_waves = 0, windows = 0;
    double steady = 0;
  } wave_stop;
  // Start from this memory state (the L2's lines; tensors placed from its next free address)
  // instead of an empty L2 at address 0, and / or leave the end state here. Same GPU only.
  const MemoryState* start_state = nullptr;
  MemoryState* end_state = nullptr;
  // Called about every `progress_every_s` seconds of wall time while simulating.
  std::function<void(const Progress&)> progress;
  double progress_every_s = 1.0;
};

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
