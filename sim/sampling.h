// Sampled simulation (`ltc sim --sample`): each kernel's statistics from a few reduced runs of the
// same cycle-level model instead of one full run.
//
// The method, per kernel of the trace (launch order):
// - Repeats. A kernel identical to one already simulated (same program, grid, block, resources,
//   tiles, GEMM record and tensor sizes; only the name differs, as in the layers of a model step)
//   takes that kernel's statistics. Every kernel's tensors live at fresh addresses (sim/gpu.h), so
//   two identical kernels see the same memory behaviour; only the previous kernel's dirty L2 lines
//   differ.
// - The L2 carried over. Each run of a kernel starts from the L2 the last simulated kernel's
//   (last) run left, its tensors placed after that run's (SimOptions::start_state): the dirty
//   lines of the kernels before, which its misses write back, are there as in the full run. (A
//   kernel run on an empty L2 read up to 27% fast after large writers.) So is the work the L2
//   slices and DRAM channels still had queued (the write-backs that run's misses posted,
//   MemoryState::dram_backlog): a LUT lmma after the 25 MB of tables its precompute wrote read
//   -15% without it. Where every kernel before was simulated in full, a kernel simulated in
//   full starts from the full run's L2 and queues, and takes its cycles to the cycle. A
//   repeat is not simulated, but its lines pass through that L2 (stream_l2 in sim/memory.h):
//   as many as the repeated kernel fetched and wrote, spread over the sets at random, each
//   pushing out its set's oldest line, the written ones dirty. (Left as the kernel before left
//   it, the L2 kept the dirty lines a repeat would have pushed out: a LLaMA2-7B prefill step's
//   `lm_head` read +6.9%, `ffn_act` +8.6%, `attention` -2.8%; with the lines passed through,
//   +1.9%, +2.7%, -0.1%.) The work the last simulated kernel left queued on the L2 slices and
//   DRAM channels drains while the repeats run, and the last repeat leaves its kernel's (in the
//   full run a repeat after a heavy writer absorbs the write-backs: a LLaMA2-13B prefill's
//   attn_residual on M2N32K8 LUT cores, after o_precompute's and the repeat o_proj.lmma, read
//   +184% with them carried as left, -0.07% drained).
// - Loop trips. The loop that accounts for most of a warp's instructions (the GEMM's K loop, the
//   attention's KV loop) runs `trips[0]` and `trips[1]` times (16 and 32; more after a kernel
//   that left writes pending, so that the first run outlasts them) instead of its N (when
//   N >= 2 * trips[1], and the kernel has one wave or less) in two runs, and the kernel's cycles
//   and counters extrapolate linearly to N. Counters are exactly affine in the trips; cycles are
//   not quite: the cycles per trip move by a few percent from one window of trips to the next,
//   which the extrapolation multiplies by (N - t1) / (t1 - t0). At 8 and 16 trips that reached
//   9% (sim/README.md: trip curves, other trip choices). A kernel of several waves keeps its
//   whole loop: how its waves overlap, and how its blocks drift apart and share the L2, change
//   with the loop's length. Until 3 Dec 2026 kernels cut in waves were cut in their loops too,
//   their L2's lines aged N / t times faster (so that a later wave's re-reads missed as after a
//   whole loop); held out on 4 Dec 2026 (configs/sampling/held-out.json and nine multi-wave
//   GEMMs on the A100, A100 80 GB, H100, H200 and RTX 3090) those read -52% .. +5.6% (the H100's
//   FP16 3072x12288x4096 -20%: blocks a few trips apart sharing a tile, aged as if a loop apart;
//   sim/README.md), and one that is neither cut in waves nor on a slice (below) runs whole: the
//   A100 W4A16 512x8192x8192 GEMM (1.19 waves, 253 trips) takes 2,632 cycles a trip from 16 to 32
//   trips, 3,753 from 32 to 64, 3,187 from 64 to 128 (its tail's blocks start together and run
//   alone on their SMs once the loop is long): -15.4% at 16 / 32.
// - Waves. A grid of B blocks with C resident at a time (blocks per SM x SMs) is W full waves
//   and a tail of r blocks (B = W * C + r, 1 <= r <= C). The blocks from r on fall into windows
//   of C. One run decides as it goes (SimOptions::WaveStop): before handing out block w * C + r
//   (w at least min_waves, 4; kWaveWindows + 2, 7; and late enough that the kernel has moved
//   twice the L2's capacity: streaming kernels reach their steady write-back traffic only then)
//   the dispatcher fits a line through the mean residencies (dispatch to retirement) of the last
//   five complete windows, past the first (whose blocks start together); where it moves less
//   than 0.5% of their mean across them (kWaveSteady), no more blocks are handed out. Each wave
//   cut then adds one steady block's residency, the five windows' mean (every block slot runs
//   one more block): cycles = the run's cycles + (W - w) x mean residency. A run whose
//   residency never settles is the whole kernel, exact, so the cut is tried wherever W > w:
//   nothing is given up. Blocks that drift apart over the waves lose the tiles they shared, and
//   an L2 that holds part of what every wave re-reads keeps less of it wave by wave: the
//   residency of the authors' GEMM (W_INT2 A_FP16 4096x27648x5120 on the A100-LUT-4X) falls
//   from 63,200 to 62,200 cycles over 30 windows, and the RTX 3090's FP16 2048x8192x2048 GEMM
//   adds 188,000 cycles from its second wave to its third, 198,000 by the eighth. Until 4 Dec
//   2026 the runs were cut at fixed w (4, then 8, each checked against the window one wave
//   earlier and given up where that had moved more than 0.5%): a window's residency moves by
//   2-3% from one to the next in some kernels (the A100's FP16 8192x8192x1024 GEMM), so one
//   window against the one before stopped such kernels by chance (-1.7%) and others still
//   drifting (+1.0%), and the runs given up cost up to twice the kernel. A kernel with the
//   waves for this cut is not sliced (below): on a slice each window holds a quarter of the
//   blocks and is noisier (the A100's FP16 8192x8192x1024 GEMM read -2.2% with both).
// - Slices (SampleOptions::max_slice, `--sample-slice`, 4 by default). A kernel of too few
//   waves for the wave cut runs on a slice of the GPU where it can: 1 / f of its SMs, L2 slices and
//   DRAM channels (f <= max_slice dividing each, the slice keeping at least 16 SMs; every per-SM,
//   per-slice and per-channel rate the whole GPU's: slice_gpu), with a sub-grid of 1 / f of its
//   blocks (the blocks' addresses unchanged). It has the whole kernel's waves, each SM its blocks,
//   each L2 slice and DRAM channel its share of the lines, so its cycles are the kernel's at 1 / f
//   of the work. The sub-grid keeps how the blocks share lines (slice_cut): a GEMM's A tile is read
//   by the blocks of a grid row, its B tile by those of a column. Whole rows (grid_y / f) keep the
//   A tile's sharing; whole columns' part of each wave (grid_x / f: as many rows per wave) keep
//   B's. The cut keeps the sharing of the tile that moves more bytes through the L2 (its lines
//   are the L2 slices' hot spots); the other tile, shared by f times fewer blocks per wave, must
//   move at most half as many bytes and have no more lines (which the slice's waves may read
//   again from DRAM). Cut the other way the A100 INT8 1024x8192x8192 GEMM read +33..+67% and the
//   W4A16 512x8192x8192 one -3.5%; square tiles (H200 INT8 640x8192x8192) -2.7%: not sliced. Lines
//   every block reads (a GEMV's activation vector, a LUT GEMV's tables) are read once per slice,
//   not once per f slices: a kernel whose slice would read more than 1% more DRAM bytes than its
//   share so is not sliced. On their slices the 10 GEMMs of `ltc bench sim --only sample` read
//   -0.85 .. +0.31% (mean |error| 0.19%); the FP16 2048x5120x13824 GEMM on a 27-SM slice at its
//   full loop: 2,020,543 cycles against 2,020,678. A kernel of several waves keeps its whole loop
//   on its slice: how the blocks of successive waves drift apart and share the L2 changes with
//   the loop's length (that GEMM takes 2.00 or 2.20 M cycles with its loop a trip longer or
//   shorter, at an L2 hit rate of 0.90 or 0.85: the full model is bimodal there, and its loop at
//   16 and 32 trips read -7.7%). A slice whose DRAM is busy more than 60% of its first run's
//   cycles is given up and the kernel runs whole: its time is then set by the spread of its
//   lines over fewer channels (below) and L2 slices (a LLaMA2-13B prefill down_proj on M2N32K8
//   LUT cores, 85% busy, read -21%). The L2 and its queues are cut to the slice and back
//   (cut_l2 / uncut_l2 in sim/memory.h).
//   Streaming kernels (their blocks move each line through the L2 less than twice: GEMVs,
//   attention over a KV cache, elementwise kernels) run on slices only with
//   SampleOptions::slice_streaming (`--sample-slice-streaming`). Their lines are hashed to
//   the DRAM channels (in 256-byte pieces) and L2 slices (in lines), so each port gets a random
//   (Poisson) share, and a streaming kernel waits for the busiest: the busiest of fewer ports is
//   less far above the mean, and a plain slice ran fast (the FP16 GEMV 1x4096x4096 -1.07% on
//   the A100 and on the H200; the 7B FP16 decode step on the H200 -1.63%). A streaming kernel's
//   slice therefore runs its DRAM channels and L2 slices slower by the whole GPU's expected
//   busiest-over-mean over the slice's, for the kernel's pieces (busiest_over_mean; 1.004 for a
//   32000-wide lm_head, 1.15 for a 100 KB elementwise kernel): those GEMVs read -0.06% and +0.13%,
//   that step -0.84% (sim/README.md, "Busiest ports"). Still off by default: on steps out of
//   sample the slices read twice the error of whole runs (0.73% mean against 0.36%; the MAC
//   A100's W1A16 GEMVs 1-4% fast: fewer blocks queue at the activations' L2 ports, and 27 SMs
//   are less likely than 108 to hold one whose warps issue in a slow interleaving; a slice
//   with the whole GPU's ports, split, was tried: sim/README.md).
//   The GEMMs' slices are not corrected: their time is not their ports' busiest share (DRAM
//   channels 0.5% slower moved the A100 INT8 1024x8192x8192 GEMM's slice from +0.15% to +6.6%: a
//   several-wave slice at the edge of two schedules).
// Counters are the runs' per block (every block runs the same program) times B, linear in the
// trips: instructions by opcode, tensor ops, blocks, warps and shared-memory bytes come out
// exactly as the full run's; stall cycles take what the extrapolated cycles leave beside the
// issue cycles; cache and DRAM counters carry the runs' cache behaviour (a wave cut's run has
// the hit rate of its waves, above the whole kernel's where that falls wave by wave). The cycle
// error
// against full runs is measured by `ltc bench sim --only sample` (sim/README.md gives the
// figures). Each kernel's clock is recomputed from its extrapolated tensor utilization. Timing
// only: --functional needs every instruction and is refused.
//
// Confidence. Each kernel carries the mean and the largest |cycle error| the benchmark measured
// for kernels of its method (SampleInfo::error_mean, error_max; the run's first kernel simulated
// in full is exact: 0; a later one simulated in full carries the table's figure for its kind,
// measured with the L2 carried). A repeat carries its kernel's and the "repeat" row's: how far,
// in the benchmark's full runs, a repeat's own cycles are from its kernel's (a layer's k_proj
// after its q_proj instead of after a norm; out of sample this was most of a step's error:
// sim/README.md). The run's expected error treats as independent the distinct kernels' sampling
// errors (a repeat's adds to its kernel's) and the places' (a repeat's place, kernel_place, is
// the same in every layer), its maximum adds them all in one direction
// (RunStats::sample_error_expected, sample_error_max).
#pragma once

#include "model/hw/gpu.h"
#include "sim/simulator.h"
#include "sim/stats.h"
#include "traces/trace.h"

#include <cstdint>
#include <string>

namespace ltc::sim {

struct SampleOptions {
  int64_t trips[2] = {16, 32};  // trips of the sampled loop in the reduced runs (0 < t0 < t1)
  int64_t min_waves = 4;        // full waves before the tail a wave cut's run keeps at least (>= 4)
  int64_t max_slice = 4;        // the GPU cut to at most 1 / max_slice for a slice (1: never)
  bool slice_streaming = false;  // slices for streaming kernels too (sampling.h, "Slices")
};

// The loop sampled in a kernel: the one (at any depth) whose iterations account for the most
// expanded instructions; pc == npos when the program has no loop.
struct SampleLoop {
  static constexpr size_t npos = size_t(-1);
  size_t pc = npos;
  int64_t trips = 0;
  double share = 0;  // of the warp program's expanded instructions
};
SampleLoop sample_loop(const traces::Kernel& k);

// A slice of the GPU: 1 / f of its SMs, L2 slices and DRAM channels (f divides each), every
// per-SM and per-slice resource (lanes, tensor-core rates, L2 slice size and bandwidth, DRAM
// channel bandwidth) as the whole GPU's.
hw::GpuConfig slice_gpu(const hw::GpuConfig& gpu, int f);

// The expected busiest of `ports` over their mean when `pieces` each go to one of them at random
// (independent Poisson shares): how far above the mean a streaming kernel's busiest DRAM channel
// or L2 slice is (sampling.h, "Slices").
double busiest_over_mean(double pieces, double ports);

// The sub-grid a kernel runs on a slice of the GPU (sampling.h, "Slices"): f = 1 when it is not
// sliced, else its blocks bx < grid_x, by < grid_y, 1 / f of the grid.
struct SliceCut {
  int f = 1;
  int64_t grid_x = 0, grid_y = 0;
  bool streaming = false;  // its blocks move each line through the L2 less than twice
};
SliceCut slice_cut(const traces::Kernel& k, const hw::GpuConfig& gpu, const SampleOptions& so);

// The row of configs/calibration/sampling-confidence.json that a kernel sampled by `method`
// takes: the method, split for "full" and "repeat" by whether the kernel is a GEMM ("loop, one
// wave": a kernel cut in its loop alone has one wave or less; "full, gemm", "slice", ...).
std::string confidence_row(const std::string& method, bool gemm);

// A kernel's place in a model step: its name without the layer ("L12.k_proj" -> "k_proj"). A
// repeat's error from standing for another place is the same in every layer (sampling.h,
// "Confidence").
std::string kernel_place(const std::string& name);

// One line naming the method and its parameters, for `ltc sim` and the JSON output.
std::string sample_method(const SampleOptions& so);

// Simulates `trace` as simulate() does (same options: kernel filter, back end, quantum,
// progress, Ctrl-C) with sampling. Throws InputError for --functional and for bad SampleOptions.
RunStats simulate_sampled(const traces::Trace& trace, const hw::GpuConfig& gpu,
                          const SimOptions& options, const SampleOptions& so = {});

}  // namespace ltc::sim
