// Sampled simulation (`ltc sim --sample`): each kernel's statistics from a few reduced runs of the
// same cycle-level model instead of one full run. The method (repeats, the wave cut, slices of the
// GPU, loop trips), why each rule is as it is, and the confidence each kernel states are in
// sim/sampler/README.md.
#pragma once

#include "model/hw/gpu.h"
#include "sim/simulator.h"
#include "sim/stats.h"
#include "traces/trace.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ltc::sim {

struct SampleOptions {
  int64_t trips[2] = {16, 32};  // trips of the sampled loop in the reduced runs (0 < t0 < t1)
  int64_t min_waves = 4;        // full waves before the tail a wave cut's run keeps at least (>= 4)
  int64_t max_slice = 4;        // the GPU cut to at most 1 / max_slice for a slice (1: never)
  bool slice_streaming = false;  // slices for streaming kernels too (README.md, the method)
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
// or L2 slice is (README.md, the method).
double busiest_over_mean(double pieces, double ports);

// The sub-grid a kernel runs on a slice of the GPU (README.md, the method): f = 1 when it is not
// sliced, else its blocks bx < grid_x, by < grid_y, bz < grid_z, 1 / f of the grid.
struct SliceCut {
  int f = 1;
  int64_t grid_x = 0, grid_y = 0, grid_z = 1;
  bool streaming = false;  // its blocks move each line through the L2 less than twice
};
SliceCut slice_cut(const traces::Kernel& k, const hw::GpuConfig& gpu, const SampleOptions& so);

// The confidence table (configs/calibration/sampling-confidence.json): per sampling method (and
// for "full" and "repeat" whether the kernel is a GEMM), how many kernels the benchmark compared
// and the mean and largest of their |cycle error| against the full run.
struct ConfidenceRow {
  std::string method;
  bool gemm = false;
  int64_t kernels = 0;
  double mean = 0, max = 0;
};

// Tallies the benchmark's per-kernel errors into rows (`ltc bench sim --only sample
// --confidence-out`): the mean rounded to 1e-4, the largest rounded up to 1e-3.
class ConfidenceTally {
 public:
  void add(const std::string& method, bool gemm, double abs_error);
  std::vector<ConfidenceRow> rows() const;  // ordered by confidence_row

 private:
  struct Sum {
    std::string method;
    bool gemm = false;
    std::vector<double> errors;
  };
  std::map<std::string, Sum> by_row_;
};

// The rows of a table file (InputError naming the file where it is not one).
std::vector<ConfidenceRow> read_confidence(const std::string& path);

// `measured` with the rows of `before` that it does not measure (a run without
// --slice-streaming keeps the stream-slice rows an earlier run measured), ordered by
// confidence_row.
std::vector<ConfidenceRow> merge_confidence(std::vector<ConfidenceRow> measured,
                                            const std::vector<ConfidenceRow>& before);

// The row of `table` for a kernel sampled by `method` (and whether it is a GEMM). A method of
// two parts ("loop+slice") with no row of its own takes its parts' rows as independent errors:
// mean the root of the sum of squares, largest the sum. Zero where no row applies.
ConfidenceRow confidence_in(const std::vector<ConfidenceRow>& table, const std::string& method,
                            bool gemm);

// The table's file text: {"what": what, "methods": [rows, one a line]} (what the sampler reads).
std::string confidence_file(const std::vector<ConfidenceRow>& rows, const std::string& what);

// One kernel of a sampled run against the same kernel of the full run of the trace (what the
// confidence table is measured from). A repeat's error is how far, in the full run, the kernel
// it repeats is from its own cycles (the "repeat" rows); the run's first kernel simulated in full
// is exact (row "exact", in no tally).
struct KernelComparison {
  std::string name, method, row, repeats;
  int64_t full_cycles = 0, sampled_cycles = 0;
  double error = 0;  // sampled / full - 1 (a repeat: its kernel's full cycles / its own - 1)
  double waves = 0;  // blocks over those resident at once (not for repeats)
  double share = 0;  // of the warp instructions the sampled run simulated (not for repeats)
  bool gemm = false;
};
// `full` needs each kernel's name and cycles only (a cached full run). Kernels are compared in
// launch order; a repeat whose kernel the full run lacks is left out.
std::vector<KernelComparison> compare_to_full(const RunStats& sampled, const RunStats& full,
                                              const traces::Trace& trace, const hw::GpuConfig& gpu);

// The row of configs/calibration/sampling-confidence.json that a kernel sampled by `method`
// takes: the method, split for "full" and "repeat" by whether the kernel is a GEMM ("loop, one
// wave": a kernel cut in its loop alone has one wave or less; "full, gemm", "slice", ...).
std::string confidence_row(const std::string& method, bool gemm);

// Whether a kernel sampled by `method` at `position` in the run (launch order, from 0) has the
// full run's cycles by construction: the run's first kernel simulated in full is the same
// simulation as the full run's first kernel (it carries no error and takes no confidence row).
bool exact_by_construction(size_t position, const std::string& method);

// A kernel's place in a model step: its name without the layer ("L12.k_proj" -> "k_proj"). A
// repeat's error from standing for another place is the same in every layer (README.md,
// "Confidence").
std::string kernel_place(const std::string& name);

// One line naming the method and its parameters, for `ltc sim` and the JSON output.
std::string sample_method(const SampleOptions& so);

// Simulates `trace` as simulate() does (same options: kernel filter, back end, quantum,
// progress, Ctrl-C) with sampling. Throws InputError for --functional and for bad SampleOptions.
RunStats simulate_sampled(const traces::Trace& trace, const hw::GpuConfig& gpu,
                          const SimOptions& options, const SampleOptions& so = {});

}  // namespace ltc::sim
