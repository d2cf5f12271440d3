#include "sim/sampling.h"

#include "common/config_dir.h"
#include "common/error.h"
#include "common/file_io.h"
#include "sim/gpu.h"
#include "sim/memory.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace ltc::sim {
namespace {

using traces::Opcode;

// Weights of the two samples x0 < x1 that extrapolate a linear function to x.
std::pair<double, double> linear_weights(double x0, double x1, double x) {
  return {(x1 - x) / (x1 - x0), (x - x0) / (x1 - x0)};
}

// sum_i w[i] * s[i] for every counter and the cycles, rounded, never below zero.
KernelStats combine(const std::vector<const KernelStats*>& s, const std::vector<double>& w) {
  KernelStats out = *s[0];
  double cycles = 0;
  for (size_t i = 0; i < s.size(); ++i) cycles += w[i] * double(s[i]->cycles);
  out.cycles = int64_t(std::max(0.0, std::round(cycles)));
  // The inputs' counters in for_each_counter's order, then the output's filled in that order.
  std::vector<std::vector<double>> values(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    for_each_counter([&](const auto& x) { values[i].push_back(double(x)); }, *s[i]);
  }
  size_t field = 0;
  for_each_counter(
      [&](auto& x) {
        double v = 0;
        for (size_t i = 0; i < s.size(); ++i) v += w[i] * values[i][field];
        x = static_cast<std::remove_reference_t<decltype(x)>>(std::max(0.0, std::round(v)));
        ++field;
      },
      out);
  return out;
}

// Global bytes (ldg, ldgsts, stg) one warp of the program moves.
uint64_t global_bytes_per_warp(const std::vector<traces::Instr>& prog) {
  std::vector<uint64_t> mult = {1};
  uint64_t bytes = 0;
  for (const traces::Instr& in : prog) {
    if (in.op == Opcode::kLoop) {
      mult.push_back(mult.back() * in.count);
    } else if (in.op == Opcode::kEndLoop) {
      mult.pop_back();
    } else if (in.op == Opcode::kLdGlobal || in.op == Opcode::kLdGlobalAsync ||
               in.op == Opcode::kStGlobal) {
      bytes += mult.back() * in.bytes;
    }
  }
  return bytes;
}

}  // namespace

hw::GpuConfig slice_gpu(const hw::GpuConfig& gpu, int f) {
  hw::GpuConfig g = gpu;
  const double d = double(f);
  g.sms /= f;
  // Whole-GPU rates the simulator divides over the SMs (GpuConfig::fp32_lanes_per_sm,
  // mma_timing).
  g.cuda_fp32_tflops /= d;
  g.cuda_fp16_tflops /= d;
  for (auto& r : g.mac_tensor) r.tops /= d;
  g.sm.l2_slices /= f;
  g.sm.dram_channels /= f;
  g.l2.capacity_mb /= d;
  g.l2.bw_gbps /= d;
  g.dram.bw_gbps /= d;
  g.sm.l2_bytes_per_cycle /= d;  // 0 stays 0 (then l2.bw_gbps)
  g.sm.dram_gbps /= d;           // 0 stays 0 (then dram.bw_gbps)
  return g;
}

namespace {

// The share of a kernel's global lines that several of its blocks read (sampling.h, "Slices"):
// a slice of 1 / f of the GPU (running 1 / f of the blocks) reads those once, where the whole
// GPU reads them once for f slices' worth of blocks, so the slice reads (f - 1) x this share more
// DRAM bytes than 1 / f of the kernel's. Each global load (ldg, ldgsts) spans, within one block,
// `extent` bytes: its bytes plus its address's range over the block's warps and enclosing loops.
// Blocks apart in bx (by) are |cx| (|cy|) bytes apart, so its blocks' spans are disjoint when one
// block coordinate steps past the extent and the other past the whole row: each block's lines are
// its own. Otherwise its span over the whole grid is shared (per tensor at most the tensor). The
// kernel's lines: the private spans of every block plus the shared ones.
double shared_share(const traces::Kernel& k) {
  std::vector<int64_t> trips;         // enclosing loops' counts, outermost first
  std::vector<double> mult = {1};     // their product
  std::map<uint32_t, double> shared;  // per tensor id
  double own = 0;
  for (const traces::Instr& in : k.program) {
    if (in.op == Opcode::kLoop) {
      trips.push_back(int64_t(in.count));
      mult.push_back(mult.back() * double(in.count));
      continue;
    }
    if (in.op == Opcode::kEndLoop) {
      trips.pop_back();
      mult.pop_back();
      continue;
    }
    // Stores write back their dirty sectors once, however the blocks share a line.
    if (in.op != Opcode::kLdGlobal && in.op != Opcode::kLdGlobalAsync) continue;
    const auto c = [&](size_t v) { return double(std::llabs(in.addr.coef[v])); };
    double extent = double(in.bytes) + c(size_t(traces::AffineVar::kWx)) * double(k.warps_x - 1) +
                    c(size_t(traces::AffineVar::kWy)) * double(k.warps_y - 1);
    for (size_t d = 0; d < trips.size(); ++d) extent += c(4 + d) * double(trips[d] - 1);
    const double cx = c(size_t(traces::AffineVar::kBx)), cy = c(size_t(traces::AffineVar::kBy));
    const double gx = double(k.grid_x), gy = double(k.grid_y);
    const auto apart = [extent](double ca, double ga, double cb, double gb) {
      return (ga == 1 || ca >= extent) && (gb == 1 || cb >= extent + ca * (ga - 1));
    };
    if (apart(cx, gx, cy, gy) || apart(cy, gy, cx, gx)) {
      const double moved = double(in.bytes) * double(k.warps_per_block()) * mult.back();
      own += std::min(extent, moved) * double(k.blocks());
    } else {
      shared[in.tensor] += extent + cx * (gx - 1) + cy * (gy - 1);
    }
  }
  double shared_bytes = 0;
  for (const auto& [id, bytes] : shared) {
    const traces::TensorDecl* t = nullptr;
    for (const traces::TensorDecl& d : k.tensors) t = d.id == id ? &d : t;
    shared_bytes += t ? std::min(bytes, double(t->bytes)) : bytes;
  }
  const double all = own + shared_bytes;
  return all > 0 ? shared_bytes / all : 0;
}

// The largest f <= max_slice by which the GPU (SMs, L2 slices, DRAM channels) and the kernel's
// grid (in whole clusters) divide, leaving the slice at least 16 SMs (the L2 slices and DRAM
// channels in proportion, so that hashed lines still spread evenly) and reading at most 1% more
// DRAM bytes than its share; 1: none.
int slice_factor(const traces::Kernel& k, const hw::GpuConfig& gpu, int64_t max_slice) {
  constexpr int64_t kMinSliceSms = 16;
  if (max_slice < 2) return 1;
  const double shared = shared_share(k);
  for (int64_t f = max_slice; f >= 2; --f) {
    if (gpu.sms % f == 0 && gpu.sms / f >= kMinSliceSms && gpu.sm.l2_slices % f == 0 &&
        gpu.sm.dram_channels % f == 0 && k.blocks() % f == 0 &&
        (k.blocks() / f) % k.cluster_x == 0 && double(f - 1) * shared <= 0.01) {
      return int(f);
    }
  }
  return 1;
}

// The confidence of each method: the mean and largest |cycle error| of the kernels it sampled in
// `ltc bench sim --only sample`, kept with the other measurements in
// configs/calibration/sampling-confidence.json (sim/README.md, "Sampled simulation"). "full" is
// exact for the run's first kernel; later ones start from the L2 the kernel before left, which
// differs from the full run's where a kernel before was sampled or repeated; "loop" is split by
// the grid (one wave or less, or more).
struct Confidence {
  std::string method;
  bool several_waves = false, gemm = false;  // for "loop"; for "full"
  double mean = 0, max = 0;
};

const std::vector<Confidence>& confidence_table() {
  static const std::vector<Confidence> table = [] {
    const std::string path = config_dir("calibration") + "/sampling-confidence.json";
    std::vector<Confidence> t;
    try {
      const nlohmann::json j = nlohmann::json::parse(read_text(path));
      for (const auto& m : j.at("methods")) {
        Confidence c;
        c.method = m.at("method").get<std::string>();
        c.several_waves = m.value("several_waves", false);
        c.gemm = m.value("gemm", false);
        c.mean = m.at("mean").get<double>();
        c.max = m.at("max").get<double>();
        t.push_back(c);
      }
    } catch (const nlohmann::json::exception& e) {
      throw InputError(path + ": " + e.what() +
                       " (expected {\"methods\": [{\"method\", \"mean\", \"max\", ...}]})");
    }
    return t;
  }();
  return table;
}

void set_confidence(SampleInfo& info, bool first, bool several_waves, bool gemm) {
  const std::string row = confidence_row(info.method, several_waves, gemm);
  for (const Confidence& c : confidence_table()) {
    if (confidence_row(c.method, c.several_waves, c.gemm) != row) continue;
    const bool exact = first && c.method == "full";  // the same simulation as the full run's
    info.error_mean = exact ? 0.0 : c.mean;
    info.error_max = exact ? 0.0 : c.max;
  }
}

// One kernel: its reduced runs and the extrapolation (the method in sampling.h).
// Each run starts from `memory` (the previous simulated kernel's end state; null: empty), the
// last one leaves its end state in `memory_out`.
KernelStats sample_kernel(const traces::Kernel& k, const traces::Trace& trace,
                          const hw::GpuConfig& gpu, const SimOptions& options,
                          const SampleOptions& so, size_t pos, size_t kernels,
                          const MemoryState* memory, MemoryState* memory_out, RunStats* out) {
  const Occupancy occ = kernel_occupancy(k, gpu);
  const SampleLoop loop = sample_loop(k);
  const int64_t resident = int64_t(occ.blocks_per_sm) * gpu.sms;
  const int64_t blocks = k.blocks();
  const int64_t tail = (blocks - 1) % resident + 1;
  const int64_t waves = (blocks - tail) / resident;
  const bool by_loop = loop.pc != SampleLoop::npos && loop.trips >= 2 * so.trips[1];
  traces::Kernel reduced = k;
  if (by_loop) reduced.program[loop.pc].count = uint64_t(so.trips[1]);
  // The steady blocks are timed once the kernel has moved twice the L2's capacity through it (at
  // the reduced trips): from there every line it brings in evicts one of its own, dirty
  // evictions are written back and the DRAM queues are at their steady depth, as in the full
  // run. Before, a streaming kernel's blocks run 15-25% faster (the tables' precompute of the
  // authors' GEMM, measured with `ltc sim --block-limit`); the hashed sets fill unevenly, so
  // one capacity is not enough.
  const double wave_bytes = double(global_bytes_per_warp(reduced.program)) *
                            double(k.warps_per_block()) * double(resident);
  const int64_t fill_waves =
      wave_bytes > 0 ? int64_t(std::ceil(2 * gpu.l2_bytes() / wave_bytes)) : 0;
  const int64_t run_waves = std::max(so.min_waves, fill_waves + 2);
  const bool by_wave = waves >= run_waves + 2;
  // A kernel too short to cut in waves whose blocks keep to their own lines runs on a slice of
  // the GPU with as many waves (1 / f of the SMs, the first 1 / f of the blocks).
  const int slice = by_wave ? 1 : slice_factor(k, gpu, so.max_slice);
  const hw::GpuConfig run_gpu = slice > 1 ? slice_gpu(gpu, slice) : gpu;
  const int64_t run_blocks = by_wave ? run_waves * resident + tail : blocks / slice;

  SampleInfo info;
  info.method = by_loop && by_wave ? "loop+wave"
                : by_loop          ? (slice > 1 ? "loop+slice" : "loop")
                : by_wave          ? "wave"
                : slice > 1        ? "slice"
                                   : "full";
  info.slice = slice;
  const int64_t n_run[2] = {by_loop ? so.trips[0] : loop.trips, by_loop ? so.trips[1] : 0};
  if (by_loop) {
    info.loop_trips = loop.trips;
    info.loop_trips_run[0] = n_run[0];
    info.loop_trips_run[1] = n_run[1];
  }
  if (by_wave) {
    info.waves = waves;
    info.waves_run = run_waves;
  }
  std::vector<KernelStats> runs;
  const int n_runs = by_loop ? 2 : 1;
  // The slice starts from its share of the L2 and leaves it to the whole GPU (memory.h).
  MemoryState cut_in, cut_out;
  if (slice > 1 && memory) cut_in = cut_l2(*memory, slice);
  for (int ni = 0; ni < n_runs; ++ni) {
    traces::Trace one;
    one.version = trace.version;
    one.gpu = trace.gpu;
    one.cores = trace.cores;
    one.kernels.push_back(k);
    if (by_loop) one.kernels[0].program[loop.pc].count = uint64_t(n_run[ni]);
    SimOptions o = options;
    o.kernel.clear();
    o.start_state = slice > 1 ? (memory ? &cut_in : nullptr) : memory;
    if (by_loop) o.l2_aging = double(loop.trips) / double(n_run[ni]);
    o.end_state = ni + 1 == n_runs ? (slice > 1 ? &cut_out : memory_out) : nullptr;
    if (slice > 1) o.block_limit = run_blocks;
    if (by_wave) {
      // Blocks that run beside a full GPU on both sides: after the first wave, before the last
      // `resident` blocks (which drain).
      o.block_limit = run_blocks;
      o.timed_blocks[0] = run_blocks - 2 * resident + 1;
      o.timed_blocks[1] = run_blocks - resident + 1;
    }
    if (options.progress) {
      o.progress = [&options, pos, kernels](const Progress& p) {
        Progress q = p;
        q.kernel = pos;
        q.kernels = kernels;
        options.progress(q);
      };
    }
    RunStats r = simulate(one, run_gpu, o);
    out->wall_s += r.wall_s;
    if (r.interrupted || r.kernels.empty()) {
      out->interrupted = true;
      return {};
    }
    info.simulated_instructions += r.kernels[0].warp_instructions();
    ++info.runs;
    runs.push_back(std::move(r.kernels[0]));
  }
  if (slice > 1 && memory_out) *memory_out = uncut_l2(cut_out, slice);
  // Linear in the trips (weights of the two runs; one run: itself).
  const auto wn = by_loop ? linear_weights(double(n_run[0]), double(n_run[1]), double(loop.trips))
                          : std::pair<double, double>{1.0, 0.0};
  std::vector<const KernelStats*> ptrs;
  std::vector<double> weights;
  const double scale = double(blocks) / double(run_blocks);
  for (size_t i = 0; i < runs.size(); ++i) {
    ptrs.push_back(&runs[i]);
    weights.push_back((i == 0 ? wn.first : wn.second) * scale);
  }
  // Counters: per block as in the runs (every block runs the same program), times the blocks.
  KernelStats ks = combine(ptrs, weights);
  // Cycles: the runs' (linear in the trips), plus the waves cut at the steady blocks' residency.
  double cycles = 0, residency = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const double w = i == 0 ? wn.first : wn.second;
    cycles += w * double(runs[i].cycles);
    if (by_wave) {
      residency += w * double(runs[i].timed_block_cycles) /
                   double(std::max<uint64_t>(runs[i].timed_blocks, 1));
    }
  }
  cycles += double(waves - (by_wave ? run_waves : waves)) * residency;
  ks.cycles = int64_t(std::max(0.0, std::round(cycles)));
  // Issue and stall cycles account every sub-partition cycle: stalls take what issue leaves.
  const double sp_cycles = double(ks.cycles) * double(gpu.sms) * double(gpu.sub_partitions_per_sm);
  double stalls = 0;
  for (auto c : ks.stall_cycles) stalls += double(c);
  if (stalls > 0) {
    const double f = std::max(0.0, sp_cycles - double(ks.issue_cycles)) / stalls;
    for (auto& c : ks.stall_cycles) c = uint64_t(std::round(double(c) * f));
  }
  ks.name = k.name;
  ks.sms = gpu.sms;  // a slice's runs count the slice's
  ks.tensor_cores = uint64_t(gpu.tensor_cores());
  ks.clock_ghz = gpu.loaded_clock_ghz(ks.tensor_utilization());
  set_confidence(info, pos == 0, blocks > resident, k.gemm.m > 0);
  ks.sample = info;
  return ks;
}

}  // namespace

std::string confidence_row(const std::string& method, bool several_waves, bool gemm) {
  if (method == "loop") return several_waves ? "loop, several waves" : "loop, one wave";
  if (method == "full") return gemm ? "full, gemm" : "full, other";
  return method;
}

SampleLoop sample_loop(const traces::Kernel& k) {
  SampleLoop best;
  const auto& prog = k.program;
  const uint64_t total = traces::expanded_length(prog);
  if (total == 0) return best;
  // Per open loop: its pc and the expanded instructions inside it; mult: product of the counts.
  struct Open {
    size_t pc;
    uint64_t instrs;
  };
  std::vector<Open> open;
  std::vector<uint64_t> mult = {1};
  for (size_t pc = 0; pc < prog.size(); ++pc) {
    const traces::Instr& in = prog[pc];
    if (in.op == Opcode::kLoop) {
      open.push_back({pc, 0});
      mult.push_back(mult.back() * in.count);
    } else if (in.op == Opcode::kEndLoop) {
      const Open o = open.back();
      open.pop_back();
      mult.pop_back();
      if (!open.empty()) open.back().instrs += o.instrs;
      const double share = double(o.instrs) / double(total);
      if (share > best.share) best = {o.pc, int64_t(prog[o.pc].count), share};
    } else if (!open.empty()) {
      open.back().instrs += mult.back();
    }
  }
  return best;
}

std::string sample_method(const SampleOptions& so) {
  const std::string slices =
      so.max_slice > 1
          ? fmt::format(
                " or, where its blocks read lines of their own, run on 1 / f of the GPU "
                "(f <= {}) with 1 / f of its blocks",
                so.max_slice)
          : std::string();
  return fmt::format(
      "repeated kernels simulated once; per kernel, two runs with its main loop at {} and {} "
      "trips (the L2's lines aging N / trips times faster) and its grid cut to >= {} waves "
      "plus the tail{}, each starting from the L2 the kernel simulated before left, "
      "extrapolated linearly in the trips and by the steady blocks' residency over the waves "
      "cut",
      so.trips[0], so.trips[1], so.min_waves, slices);
}

RunStats simulate_sampled(const traces::Trace& trace, const hw::GpuConfig& gpu,
                          const SimOptions& options, const SampleOptions& so) {
  if (options.functional) {
    throw InputError(
        "--sample extrapolates timing from reduced runs; --functional needs every instruction "
        "(run without --sample)");
  }
  if (!(so.trips[0] >= 1 && so.trips[1] > so.trips[0])) {
    throw InputError("sample trips must satisfy 1 <= t0 < t1 (got " + std::to_string(so.trips[0]) +
                     ", " + std::to_string(so.trips[1]) + ")");
  }
  if (so.max_slice < 1) {
    throw InputError("sample slice must be >= 1 (got " + std::to_string(so.max_slice) + ")");
  }
  if (so.min_waves < 3) {
    throw InputError("sample waves must be >= 3 (got " + std::to_string(so.min_waves) + ")");
  }
  std::vector<size_t> order;
  for (size_t i = 0; i < trace.kernels.size(); ++i) {
    if (options.kernel.empty() || trace.kernels[i].name == options.kernel) order.push_back(i);
  }
  // No kernel to run: simulate() raises the error that names the valid kernels.
  if (order.empty()) return simulate(trace, gpu, options);

  RunStats out;
  out.clock_ghz = gpu.clock_ghz;
  out.sample_method = sample_method(so);
  std::vector<traces::Kernel> seen;  // nameless copies of the kernels simulated
  std::vector<size_t> seen_at;       // their index in out.kernels
  // What the last simulated kernel's last run left in L2, and the repeats after it moved their
  // lines through (stream_l2).
  std::unique_ptr<MemoryState> memory;
  std::vector<LineStream> repeats;  // the lines of the repeats since, oldest first
  int64_t t = 0;
  for (size_t pos = 0; pos < order.size(); ++pos) {
    const traces::Kernel& k = trace.kernels[order[pos]];
    traces::Kernel nameless = k;
    nameless.name.clear();
    KernelStats ks;
    const auto it = std::find(seen.begin(), seen.end(), nameless);
    if (it != seen.end()) {
      ks = out.kernels[seen_at[size_t(it - seen.begin())]];
      const SampleInfo of = ks.sample;
      ks.sample = SampleInfo{};
      ks.sample.method = "repeat";
      ks.sample.error_mean = of.error_mean;  // the repeated kernel's, and its error repeats
      ks.sample.error_max = of.error_max;
      ks.sample.repeats = ks.name;
      ks.name = k.name;
      // Its lines pass through the L2 as the repeated kernel's did (before the next kernel
      // simulated): the lines it fetched and the lines it wrote (whole lines, as kernels
      // write), which push out the oldest.
      const double line = double(gpu.sm.line_bytes);
      repeats.push_back({double(ks.mem.dram_read_bytes + ks.mem.l2_write_bytes) / line,
                         double(ks.mem.l2_write_bytes) / line});
    } else {
      if (memory && !repeats.empty()) {
        const auto t0 = std::chrono::steady_clock::now();
        stream_l2(*memory, repeats, pos);
        out.wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      }
      repeats.clear();
      auto next = std::make_unique<MemoryState>();
      ks = sample_kernel(k, trace, gpu, options, so, pos, order.size(), memory.get(), next.get(),
                         &out);
      if (out.interrupted) break;
      memory = std::move(next);
      out.sample_simulated_instructions += ks.sample.simulated_instructions;
      seen.push_back(std::move(nameless));
      seen_at.push_back(out.kernels.size());
    }
    ks.start_cycle = t;
    t += ks.cycles;
    out.kernels.push_back(std::move(ks));
    out.cycles = t;
    if (pos + 1 < order.size()) t += gpu.sm.kernel_gap_cycles;
  }
  // The run's confidence from its kernels': the errors of distinct kernels independent
  // (expected; a repeat's error is its kernel's), or all one way (max).
  std::map<std::string, double> group;  // kernel simulated -> its error x the cycles it stands for
  double var = 0, max = 0;
  for (const KernelStats& k : out.kernels) {
    group[k.sample.repeats.empty() ? k.name : k.sample.repeats] +=
        k.sample.error_mean * double(k.cycles);
    max += k.sample.error_max * double(k.cycles);
  }
  for (const auto& [name, e] : group) var += e * e;
  if (out.cycles > 0) {
    out.sample_error_expected = std::sqrt(var) / double(out.cycles);
    out.sample_error_max = max / double(out.cycles);
  }
  return out;
}

}  // namespace ltc::sim
