#include "sim/sampler/sampling.h"

#include "common/config_dir.h"
#include "common/error.h"
#include "common/file_io.h"
#include "common/json_fields.h"
#include "sim/gpu.h"
#include "sim/memory.h"
#include "sim/sampler/checkpoint.h"
#include "sim/sampler/wave_cut.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
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

// Global bytes (ldg, ldgsts, stg; with `stores_only`, stg) one warp of the program moves.
uint64_t global_bytes_per_warp(const std::vector<traces::Instr>& prog, bool stores_only = false) {
  std::vector<uint64_t> mult = {1};
  uint64_t bytes = 0;
  for (const traces::Instr& in : prog) {
    if (in.op == Opcode::kLoop) {
      mult.push_back(mult.back() * in.count);
    } else if (in.op == Opcode::kEndLoop) {
      mult.pop_back();
    } else if (in.op == Opcode::kStGlobal ||
               (!stores_only && (in.op == Opcode::kLdGlobal || in.op == Opcode::kLdGlobalAsync))) {
      bytes += mult.back() * in.bytes;
    }
  }
  return bytes;
}

}  // namespace

double busiest_over_mean(double pieces, double ports) {
  const double lambda = pieces / ports;
  if (!(lambda > 0) || ports <= 1) return 1;
  // E[max] = sum_k P(max > k) = sum_k (1 - F(k)^ports), F the Poisson CDF. Below k0 (12
  // deviations under the mean) F is negligible; from there its terms in log space.
  const double k0 = std::max(0.0, std::floor(lambda - 12 * std::sqrt(lambda) - 10));
  double expect = k0, cdf = 0;
  for (double k = k0;; ++k) {
    const double p = std::exp(k * std::log(lambda) - lambda - std::lgamma(k + 1));
    cdf += p;
    // Past the mean, once a term is negligible the rest of the sum is too (below ports x it).
    if (k > lambda && p * ports < 1e-12) break;
    expect += 1 - std::pow(std::min(cdf, 1.0), ports);
  }
  return expect / lambda;
}

hw::GpuConfig slice_gpu(const hw::GpuConfig& gpu, int f) {
  hw::GpuConfig g = gpu;
  const double d = double(f);
  g.sms /= f;
  // Whole-GPU rates the simulator divides over the SMs (GpuConfig::fp32_lanes_per_sm,
  // int32_lanes_per_sm, mma_timing).
  g.cuda_fp32_tflops /= d;
  g.cuda_fp16_tflops /= d;
  g.cuda_int32_tops /= d;
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

// How a kernel's blocks share the lines they read (README.md). Each global load (ldg,
// ldgsts) spans, within one block, `extent` bytes: its bytes plus its address's range over the
// block's warps and enclosing loops. Blocks apart in bx (by) are |cx| (|cy|) bytes apart, so:
// - own: its blocks' spans are disjoint (one block coordinate steps past the extent, the other
//   past the whole row);
// - row: the blocks of one grid row (same by) overlap, rows are disjoint (a GEMM's A tile);
// - column: the blocks of one grid column (same bx) overlap, columns are disjoint (B's tile);
// - all: any other overlap (a GEMV's activation vector, which every block reads).
struct Sharing {
  double own_lines = 0, all_lines = 0;     // DRAM bytes: the own and the "all" loads' spans
  double row_lines = 0, column_lines = 0;  // the row- and column-shared loads' spans
  double row_moved = 0, column_moved = 0;  // bytes one block moves through the L2 by those
  double moved = 0;                        // ... by all its loads
  double lines() const { return own_lines + all_lines + row_lines + column_lines; }
};

Sharing block_sharing(const traces::Kernel& k) {
  Sharing sh;
  std::vector<int64_t> trips;         // enclosing loops' counts, outermost first
  std::vector<double> mult = {1};     // their product
  std::map<uint32_t, double> shared;  // per tensor id: the "all" loads' span over the grid
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
    // A grid z (a grouped GEMM's groups): spans |cz| apart along bz are each group's own; a
    // load without a bz term is the same for every group.
    const double cz = c(size_t(traces::AffineVar::kBz));
    const double gz = cz > 0 ? double(k.grid_z) : 1.0;
    const double moved = double(in.bytes) * double(k.warps_per_block()) * mult.back();
    sh.moved += moved;
    // The spans `ga` apart by `ca` along one coordinate disjoint, and their `gb` lines apart by
    // `cb` along the other disjoint too.
    const auto apart = [extent](double ca, double ga, double cb, double gb) {
      return (ga == 1 || ca >= extent) && (gb == 1 || cb >= extent + ca * (ga - 1));
    };
    if (apart(cx, gx, cy, gy) || apart(cy, gy, cx, gx)) {
      sh.own_lines += std::min(extent, moved) * double(k.blocks());
    } else if (gx > 1 && gy > 1 && cy >= extent + cx * (gx - 1)) {
      sh.row_moved += moved;
      sh.row_lines += (extent + cx * (gx - 1)) * gy * gz;
    } else if (gx > 1 && gy > 1 && cx >= extent + cy * (gy - 1)) {
      sh.column_moved += moved;
      sh.column_lines += (extent + cy * (gy - 1)) * gx * gz;
    } else {
      shared[in.tensor] += (extent + cx * (gx - 1) + cy * (gy - 1)) * gz;
    }
  }
  for (const auto& [id, bytes] : shared) {
    const traces::TensorDecl* t = nullptr;
    for (const traces::TensorDecl& d : k.tensors) t = d.id == id ? &d : t;
    sh.all_lines += t ? std::min(bytes, double(t->bytes)) : bytes;
  }
  return sh;
}

}  // namespace

SliceCut slice_cut(const traces::Kernel& k, const hw::GpuConfig& gpu, const SampleOptions& so) {
  constexpr int64_t kMinSliceSms = 16;
  if (so.max_slice < 2) return {};
  const Sharing sh = block_sharing(k);
  const double lines = sh.lines();
  const double all_share = lines > 0 ? sh.all_lines / lines : 0;
  // Streaming: its blocks move each line through the L2 less than twice on average.
  const bool streaming = sh.moved * double(k.blocks()) < 2 * lines;
  if (streaming && !so.slice_streaming) return {};
  // The slice keeps the sharing of the tile that moves more bytes through the L2 (its lines are
  // the L2 slices' hot spots); the other's blocks share by f less, so it must move at most half
  // as many bytes, and its lines, which the slice's waves may read again from DRAM, must be no
  // more than the first's.
  const bool rows = sh.row_moved >= sh.column_moved;
  const double major = rows ? sh.row_moved : sh.column_moved;
  const double minor = rows ? sh.column_moved : sh.row_moved;
  if (minor > 0.5 * major ||
      (rows ? sh.column_lines > sh.row_lines : sh.row_lines > sh.column_lines)) {
    return {};
  }
  for (int64_t f = so.max_slice; f >= 2; --f) {
    if (gpu.sms % f != 0 || gpu.sms / f < kMinSliceSms || gpu.sm.l2_slices % f != 0 ||
        gpu.sm.dram_channels % f != 0 || double(f - 1) * all_share > 0.01) {
      continue;
    }
    const bool by_y = k.grid_y % f == 0;
    const bool by_x = k.grid_x % f == 0 && (k.grid_x / f) % k.cluster_x == 0;
    // Whole rows keep a row-shared tile's sharing; whole columns' share of each wave (as many
    // rows per wave) a column-shared one's.
    // A grid z (a grouped GEMM's groups, which share nothing) keeps its groups, each cut alike.
    if (by_y && (major == 0 || rows)) {
      return {int(f), k.grid_x, k.grid_y / f, k.grid_z, streaming};
    }
    if (by_x && (major == 0 || !rows)) {
      return {int(f), k.grid_x / f, k.grid_y, k.grid_z, streaming};
    }
  }
  return {};
}

namespace {

// A streaming kernel's slice (README.md): slice_gpu, its DRAM channels and L2 slices
// slowed by how much further above the mean the busiest of the whole GPU's is than the busiest
// of the slice's, for the kernel's traffic hashed over them (busiest_over_mean).
hw::GpuConfig stream_slice_gpu(const traces::Kernel& k, const hw::GpuConfig& gpu, int f) {
  hw::GpuConfig g = slice_gpu(gpu, f);
  const Sharing sh = block_sharing(k);
  const double writes = double(global_bytes_per_warp(k.program, true)) *
                        double(k.warps_per_block()) * double(k.blocks());
  // DRAM: each line read once, each byte written once; L2: every byte the blocks move; both in
  // lines, which the slices and their channels are hashed by.
  const double dram = (sh.lines() + writes) / double(gpu.sm.line_bytes);
  const double l2 = (sh.moved * double(k.blocks()) + writes) / double(gpu.sm.line_bytes);
  const auto excess = [f](double pieces, int ports) {
    return busiest_over_mean(pieces, ports) / busiest_over_mean(pieces / f, ports / f);
  };
  const double rd = excess(dram, gpu.sm.dram_channels), rl = excess(l2, gpu.sm.l2_slices);
  g.dram.bw_gbps /= rd;
  g.sm.dram_gbps /= rd;  // 0 stays 0 (then dram.bw_gbps)
  g.l2.bw_gbps /= rl;
  g.sm.l2_bytes_per_cycle /= rl;
  return g;
}

// The confidence of each method, as `ltc bench sim --only sample --confidence-out` measured it
// (configs/calibration/sampling-confidence.json; README.md, "Confidence").
const std::vector<ConfidenceRow>& confidence_table() {
  static const std::vector<ConfidenceRow> table =
      read_confidence(config_dir("calibration") + "/sampling-confidence.json");
  return table;
}

ConfidenceRow confidence_of(const std::string& method, bool gemm) {
  return confidence_in(confidence_table(), method, gemm);
}

void set_confidence(SampleInfo& info, bool first, bool gemm) {
  const ConfidenceRow c = confidence_of(info.method, gemm);
  const bool exact = exact_by_construction(first ? 0 : 1, info.method);
  info.error_mean = exact ? 0.0 : c.mean;
  info.error_max = exact ? 0.0 : c.max;
}

// The share of a run's cycles its DRAM channels were busy: its DRAM bytes at the GPU's DRAM
// bandwidth (per SM clock cycle, as the memory model serves it).
double dram_busy(const KernelStats& k, const hw::GpuConfig& gpu) {
  const double per_cycle = gpu.dram_channel_bytes_per_cycle() * double(gpu.sm.dram_channels);
  const double bytes = double(k.mem.dram_read_bytes + k.mem.dram_write_bytes);
  return k.cycles > 0 ? bytes / (per_cycle * double(k.cycles)) : 0;
}

// A reduced run whose DRAM is busier than this stands for the kernel badly. A slice runs fast:
// its time is set by how its lines spread over fewer DRAM channels and L2 slices (README.md);
// measured, the sliced GEMMs of `ltc bench sim --only sample` kept their DRAM busy 20-51% of the
// time and read within 0.8%, the LLaMA2-13B prefill's down_proj on M2N32K8 LUT cores 85%, -21%.
constexpr double kMaxDramBusy = 0.6;

// A wave cut's run stops where a line fitted through the mean residencies of its last
// kWaveWindows windows of resident blocks moves less than kWaveSteady of their mean across them
// (WaveCut, wave_cut.h; README.md; one window against the one before stopped kernels
// whose windows move 2-3% from one to the next by chance).
constexpr double kWaveSteady = 0.005;
constexpr int64_t kWaveWindows = 5;

// How a kernel is sampled (README.md, the method), chosen before any run.
struct Plan {
  SampleLoop loop;
  int64_t resident = 0, blocks = 0, tail = 0, waves = 0;  // blocks resident at once; full waves
  int64_t trips[2] = {0, 0};  // the sampled loop's trips in the two runs (loop_cut)
  bool loop_cut = false, wave_cut = false;
  int64_t min_run_waves = 0;  // the wave cut's least
  SliceCut cut;               // f = 1: the whole GPU
};

Plan plan_kernel(const traces::Kernel& k, const hw::GpuConfig& gpu, const SampleOptions& so,
                 const MemoryState* memory) {
  Plan p;
  const Occupancy occ = kernel_occupancy(k, gpu);
  p.loop = sample_loop(k);
  p.resident = int64_t(occ.blocks_per_sm) * gpu.sms;
  p.blocks = k.blocks();
  p.tail = (p.blocks - 1) % p.resident + 1;
  p.waves = (p.blocks - p.tail) / p.resident;
  // The loop's trips in the two runs: so.trips, scaled up so that the first run brings in twice
  // the bytes that the L2 and DRAM queues it starts from still have to write back (its lines
  // over the loop's trips, block_sharing). A run that ends sooner writes back less of them than
  // the longer one, and the difference extrapolates: a LLaMA2-13B prefill's down_proj on M2N32K8
  // LUT cores after the 470 MB of tables ffn_act wrote read +83% at 16 / 32 trips, -54% at 32 /
  // 64, -5.0% at 48 / 96 (what this takes), +0.6% at 64 / 128. (Asking for twice the L2's
  // capacity instead, as the wave cut does, gave the same trips there and ran the LLaMA2-70B
  // down_proj LUT GEMV, -0.82% at 16 / 32, in full.) The write-backs start only once a line
  // brought in evicts one: where the whole loop brings in more than the L2's empty ways hold, the
  // first run brings in those bytes as well. (The first layer's q_proj of a LLaMA2-7B FP16 prefill
  // S512 on the H100, 125 trips of 0.8 MB after embedding and attn_norm left 8 MB dirty in a
  // mostly empty 50 MB L2, read -4.3% at 16 / 32 trips, which only filled empty ways; past them,
  // too few trips are left for a cut, and it runs whole.)
  p.trips[0] = so.trips[0];
  p.trips[1] = so.trips[1];
  if (p.loop.pc != SampleLoop::npos && memory) {
    const double loop_bytes = block_sharing(k).lines();
    const double per_trip = loop_bytes / double(p.loop.trips);
    const double pending = pending_write_bytes(*memory, gpu);
    const double empty = empty_l2_bytes(*memory, gpu);
    const double first = pending > 0 ? 2 * pending + (loop_bytes > empty ? empty : 0) : 0;
    if (per_trip > 0 && per_trip * double(p.trips[0]) < first) {
      const double scale = std::ceil(first / (per_trip * double(p.trips[0])));
      for (int64_t& t : p.trips) t = int64_t(std::min(double(t) * scale, 1e15));
    }
  }
  // Only a kernel of one wave or less is cut in its loop (README.md).
  p.loop_cut =
      p.loop.pc != SampleLoop::npos && p.loop.trips >= 2 * p.trips[1] && p.blocks <= p.resident;
  // The steady blocks are timed once the kernel has moved twice the L2's capacity through it:
  // from there every line it brings in evicts one of its own, dirty evictions are written back
  // and the DRAM queues are at their steady depth, as in the full run. Before, a streaming
  // kernel's blocks run 15-25% faster (the tables' precompute of the authors' GEMM, measured
  // with `ltc sim --block-limit`); the hashed sets fill unevenly, so one capacity is not enough.
  const double wave_bytes =
      double(global_bytes_per_warp(k.program)) * double(k.warps_per_block()) * double(p.resident);
  const int64_t fill_waves =
      wave_bytes > 0 ? int64_t(std::ceil(2 * gpu.l2_bytes() / wave_bytes)) : 0;
  // The wave cut decides in its run when the blocks' residency has stopped moving (the
  // WaveCut policy, README.md): a run never steady is the whole kernel, so it
  // costs nothing to try on any kernel with waves beyond the run's least.
  p.min_run_waves = std::max({so.min_waves, fill_waves + 2, kWaveWindows + 2});
  // A kernel with too few waves for a wave cut runs on a slice of the GPU where it can
  // (slice_cut), with as many waves; one of several waves keeps its whole loop (README.md). (Both
  // at once, the slice's windows of a quarter of the blocks each are noisier: the A100's FP16
  // 8192x8192x1024 GEMM read -2.2% against -1.5% on its slice whole.) A slice whose DRAM was busy
  // more than kMaxDramBusy of its first run's cycles (not a streaming kernel's, which were asked
  // for as they are) is given up. A kernel of several waves neither cut in waves nor on a slice
  // runs whole: its loop does not extrapolate (README.md). (A kernel cut in its loop has one wave
  // or less: never both.)
  p.wave_cut = p.waves > p.min_run_waves;
  p.cut = p.wave_cut ? SliceCut{} : slice_cut(k, gpu, so);
  return p;
}

// A plan's reduced runs.
struct Runs {
  std::vector<KernelStats> runs;  // one, or two at the loop's trips n[0] < n[1]
  SampleInfo info;                // runs, slice, loop trips, warp instructions simulated
  SliceCut cut;                   // the plan's, or none where its slice was given up
  int64_t n[2] = {0, 0};
  int64_t run_blocks = 0, run_waves = 0;  // the runs' blocks, and full waves (a wave cut's fewer)
  bool interrupted = false;
};

// Runs `p`: a slice whose DRAM was busy more than kMaxDramBusy of its first run's cycles (not a
// streaming kernel's, which were asked for as they are) is given up and the kernel runs on the
// whole GPU. Each run starts from `memory` (the previous simulated kernel's end state; null:
// empty), the last one leaves its end state in `memory_out`.
Runs run_plan(const Plan& p, const traces::Kernel& k, const traces::Trace& trace,
              const hw::GpuConfig& gpu, const SimOptions& options, size_t pos, size_t kernels,
              const MemoryState* memory, MemoryState* memory_out, RunStats* out) {
  Runs r;
  r.cut = p.cut;
  r.run_waves = p.waves;
  uint64_t given_up = 0;  // warp instructions of runs given up (a slice's)
  SampleInfo& info = r.info;
  MemoryState cut_in, cut_out;
  hw::GpuConfig run_gpu;
  for (bool done = false; !done;) {
    done = true;
    const int slice = r.cut.f;
    r.run_blocks = p.blocks / slice;
    run_gpu = slice > 1
                  ? (r.cut.streaming ? stream_slice_gpu(k, gpu, slice) : slice_gpu(gpu, slice))
                  : gpu;
    info = SampleInfo{};
    info.slice = slice;
    r.n[0] = p.loop_cut ? p.trips[0] : p.loop.trips;
    r.n[1] = p.loop_cut ? p.trips[1] : 0;
    if (p.loop_cut) {
      info.loop_trips = p.loop.trips;
      info.loop_trips_run[0] = r.n[0];
      info.loop_trips_run[1] = r.n[1];
    }
    info.simulated_instructions = given_up;
    r.runs.clear();
    const int n_runs = p.loop_cut ? 2 : 1;
    // The slice starts from its share of the L2 and leaves it to the whole GPU (memory.h).
    if (slice > 1 && memory) cut_in = cut_l2(*memory, slice);
    for (int ni = 0; ni < n_runs; ++ni) {
      traces::Trace one;
      one.version = trace.version;
      one.gpu = trace.gpu;
      one.cores = trace.cores;
      one.kernels.push_back(k);
      if (p.loop_cut) one.kernels[0].program[p.loop.pc].count = uint64_t(r.n[ni]);
      if (slice > 1) {
        one.kernels[0].grid_x = r.cut.grid_x;
        one.kernels[0].grid_y = r.cut.grid_y;
        one.kernels[0].grid_z = r.cut.grid_z;
      }
      SimOptions o = options;
      o.kernel.clear();
      o.start_state = slice > 1 ? (memory ? &cut_in : nullptr) : memory;
      o.end_state = ni + 1 == n_runs ? (slice > 1 ? &cut_out : memory_out) : nullptr;
      WaveCut cut_policy({p.resident, p.tail, p.min_run_waves, kWaveWindows, kWaveSteady});
      if (p.wave_cut) o.dispatch = &cut_policy;
      if (options.progress) {
        o.progress = [&options, pos, kernels](const Progress& p) {
          Progress q = p;
          q.kernel = pos;
          q.kernels = kernels;
          options.progress(q);
        };
      }
      RunStats run = simulate(one, run_gpu, o);
      out->wall_s += run.wall_s;
      if (run.interrupted || run.kernels.empty()) {
        out->interrupted = true;
        r.interrupted = true;
        return r;
      }
      info.simulated_instructions += run.kernels[0].warp_instructions();
      ++info.runs;
      const bool busy = ni == 0 && dram_busy(run.kernels[0], run_gpu) > kMaxDramBusy;
      if (busy && slice > 1 && !r.cut.streaming) {
        given_up = info.simulated_instructions;
        r.cut = SliceCut{};
        done = false;
        break;
      }
      // A wave cut that stopped: its blocks are w full waves and the tail.
      if (p.wave_cut && run.kernels[0].blocks < r.run_blocks) {
        r.run_blocks = run.kernels[0].blocks;
        r.run_waves = (r.run_blocks - p.tail) / p.resident;
      }
      r.runs.push_back(std::move(run.kernels[0]));
    }
  }
  // The slice leaves its share of the L2 to the whole GPU (checkpoint.h).
  if (r.cut.f > 1 && memory_out) *memory_out = uncut_l2(cut_out, r.cut.f);
  return r;
}

// The kernel's statistics from its runs: counters per block times the blocks, linear in the
// trips; cycles linear in the trips plus the waves cut at the steady blocks' residency.
KernelStats extrapolate(const Plan& p, const Runs& r, const traces::Kernel& k,
                        const hw::GpuConfig& gpu) {
  SampleInfo info = r.info;
  const bool by_wave = r.run_waves < p.waves;
  const std::string sliced = r.cut.streaming ? "stream-slice" : "slice";
  info.method = p.loop_cut    ? (r.cut.f > 1 ? "loop+" + sliced : "loop")
                : r.cut.f > 1 ? sliced
                : by_wave     ? "wave"
                              : "full";
  if (by_wave) {
    info.waves = p.waves;
    info.waves_run = r.run_waves;
  }
  // Linear in the trips (weights of the two runs; one run: itself).
  const auto wn = p.loop_cut ? linear_weights(double(r.n[0]), double(r.n[1]), double(p.loop.trips))
                             : std::pair<double, double>{1.0, 0.0};
  std::vector<const KernelStats*> ptrs;
  std::vector<double> weights;
  const double scale = double(p.blocks) / double(r.run_blocks);
  for (size_t i = 0; i < r.runs.size(); ++i) {
    ptrs.push_back(&r.runs[i]);
    weights.push_back((i == 0 ? wn.first : wn.second) * scale);
  }
  // Counters: per block as in the runs (every block runs the same program), times the blocks.
  KernelStats ks = combine(ptrs, weights);
  // Cycles: the runs' (linear in the trips), plus the waves cut at the steady blocks' residency.
  double cycles = 0, residency = 0;
  for (size_t i = 0; i < r.runs.size(); ++i) {
    const double w = i == 0 ? wn.first : wn.second;
    cycles += w * double(r.runs[i].cycles);
    if (by_wave) {
      residency += w * double(r.runs[i].timed_block_cycles) /
                   double(std::max<uint64_t>(r.runs[i].timed_blocks, 1));
    }
  }
  cycles += double(p.waves - r.run_waves) * residency;
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
  ks.sample = info;
  return ks;
}

// One kernel: planned, run, extrapolated, and given its method's confidence.
KernelStats sample_kernel(const traces::Kernel& k, const traces::Trace& trace,
                          const hw::GpuConfig& gpu, const SimOptions& options,
                          const SampleOptions& so, size_t pos, size_t kernels,
                          const MemoryState* memory, MemoryState* memory_out, RunStats* out) {
  const Plan p = plan_kernel(k, gpu, so, memory);
  const Runs r = run_plan(p, k, trace, gpu, options, pos, kernels, memory, memory_out, out);
  if (r.interrupted) return {};
  KernelStats ks = extrapolate(p, r, k, gpu);
  // A loop cut leaves the L2 as its longer run did; the trips it did not run would have brought
  // more lines in (every tensor is fresh: a new line is a DRAM read or a write), pushing out the
  // least recent, dirty ones written back within the kernel, as the repeats' lines do, but
  // before the outputs it wrote after its loop (its dirty lines stay the most recent).
  if (p.loop_cut && memory_out && !r.runs.empty()) {
    const MemoryStats& ran = r.runs.back().mem;
    const double scale = double(p.blocks) / double(r.run_blocks);
    const uint64_t line = uint64_t(gpu.sm.line_bytes);
    // The lines past the run's, in the whole GPU's bytes (a slice's runs scaled to its blocks).
    const auto more = [&](uint64_t whole, uint64_t run) {
      return std::max(0.0, double(whole) - scale * double(run)) / double(line);
    };
    const double reads = more(ks.mem.dram_read_bytes, ran.dram_read_bytes);
    const double writes = more(ks.mem.l2_write_bytes, ran.l2_write_bytes);
    // The kernel's own lines: those of the addresses its run allocated.
    const uint64_t first = memory ? memory->next_address : 0;
    if (reads + writes > 0) {
      stream_l2(*memory_out, {LineStream{reads + writes, writes}}, pos, uint32_t(first / line),
                uint32_t(memory_out->next_address / line));
    }
  }
  set_confidence(ks.sample, pos == 0, k.gemm.m > 0);
  return ks;
}

}  // namespace

void ConfidenceTally::add(const std::string& method, bool gemm, double abs_error) {
  Sum& s = by_row_[confidence_row(method, gemm)];
  s.method = method;
  s.gemm = gemm;
  s.errors.push_back(abs_error);
}

std::vector<ConfidenceRow> ConfidenceTally::rows() const {
  std::vector<ConfidenceRow> out;
  for (const auto& [row, s] : by_row_) {
    double sum = 0, largest = 0;
    for (double e : s.errors) {
      sum += e;
      largest = std::max(largest, e);
    }
    ConfidenceRow r;
    r.method = s.method;
    r.gemm = s.gemm;
    r.kernels = int64_t(s.errors.size());
    r.mean = std::round(sum / double(s.errors.size()) * 1e4) / 1e4;
    r.max = std::ceil(largest * 1e3) / 1e3;
    out.push_back(r);
  }
  return out;
}

std::vector<ConfidenceRow> read_confidence(const std::string& path) {
  std::vector<ConfidenceRow> t;
  try {
    const nlohmann::json j = parse_json(read_text(path), path);
    for (const auto& m : j.at("methods")) {
      ConfidenceRow c;
      c.method = m.at("method").get<std::string>();
      c.gemm = m.value("gemm", false);
      c.kernels = m.value("kernels", int64_t(0));
      c.mean = m.at("mean").get<double>();
      c.max = m.at("max").get<double>();
      t.push_back(c);
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path + ": " + e.what() +
                     " (expected {\"methods\": [{\"method\", \"mean\", \"max\", ...}]})");
  }
  return t;
}

std::vector<ConfidenceRow> merge_confidence(std::vector<ConfidenceRow> measured,
                                            const std::vector<ConfidenceRow>& before) {
  const auto key = [](const ConfidenceRow& r) { return confidence_row(r.method, r.gemm); };
  for (const ConfidenceRow& b : before) {
    const bool remeasured = std::any_of(measured.begin(), measured.end(),
                                        [&](const ConfidenceRow& m) { return key(m) == key(b); });
    if (!remeasured) measured.push_back(b);
  }
  std::sort(measured.begin(), measured.end(),
            [&](const ConfidenceRow& x, const ConfidenceRow& y) { return key(x) < key(y); });
  return measured;
}

std::string confidence_file(const std::vector<ConfidenceRow>& rows, const std::string& what) {
  std::string text = "{\n \"what\": " + nlohmann::json(what).dump() + ",\n \"methods\": [\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const ConfidenceRow& r = rows[i];
    nlohmann::ordered_json m = {{"method", r.method}};
    if (r.method == "full" || r.method == "repeat") m["gemm"] = r.gemm;
    m["kernels"] = r.kernels;
    m["mean"] = r.mean;
    m["max"] = r.max;
    text += "  " + m.dump() + (i + 1 < rows.size() ? ",\n" : "\n");
  }
  return text + " ]\n}\n";
}

std::vector<KernelComparison> compare_to_full(const RunStats& sampled, const RunStats& full,
                                              const traces::Trace& trace,
                                              const hw::GpuConfig& gpu) {
  std::map<std::string, int64_t> full_cycles;
  for (const auto& fk : full.kernels) full_cycles.emplace(fk.name, fk.cycles);
  std::vector<KernelComparison> out;
  for (size_t i = 0; i < sampled.kernels.size() && i < full.kernels.size(); ++i) {
    const KernelStats& sk = sampled.kernels[i];
    const int64_t own = full.kernels[i].cycles;
    KernelComparison c;
    c.name = sk.name;
    c.method = sk.sample.method;
    c.gemm = sk.gemm;
    c.full_cycles = own;
    c.sampled_cycles = sk.cycles;
    if (sk.sample.method == "repeat") {
      const auto of = full_cycles.find(sk.sample.repeats);
      if (of == full_cycles.end() || own <= 0) continue;
      c.repeats = sk.sample.repeats;
      c.row = confidence_row("repeat", sk.gemm);
      c.error = double(of->second) / double(own) - 1;
      out.push_back(c);
      continue;
    }
    const Occupancy occ = kernel_occupancy(trace.kernels[i], gpu);
    c.waves = double(trace.kernels[i].blocks()) / double(occ.blocks_per_sm * gpu.sms);
    c.error = own > 0 ? double(sk.cycles) / double(own) - 1 : 0.0;
    c.share = double(sk.sample.simulated_instructions) /
              double(std::max<uint64_t>(sampled.sample_simulated_instructions, 1));
    c.row = exact_by_construction(i, c.method) ? "exact" : confidence_row(c.method, c.gemm);
    out.push_back(c);
  }
  return out;
}

bool exact_by_construction(size_t position, const std::string& method) {
  return position == 0 && method == "full";
}

std::string kernel_place(const std::string& name) {
  // "L<digits>." then the op.
  if (name.size() > 2 && name[0] == 'L' && std::isdigit(static_cast<unsigned char>(name[1]))) {
    size_t i = 1;
    while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) ++i;
    if (i < name.size() && name[i] == '.') return name.substr(i + 1);
  }
  return name;
}

ConfidenceRow confidence_in(const std::vector<ConfidenceRow>& table, const std::string& method,
                            bool gemm) {
  const std::string row = confidence_row(method, gemm);
  for (const ConfidenceRow& c : table) {
    if (confidence_row(c.method, c.gemm) == row) return c;
  }
  const size_t plus = method.find('+');
  if (plus == std::string::npos) return {};
  const ConfidenceRow a = confidence_in(table, method.substr(0, plus), gemm);
  const ConfidenceRow b = confidence_in(table, method.substr(plus + 1), gemm);
  ConfidenceRow c;
  c.method = method;
  c.gemm = gemm;
  c.mean = std::hypot(a.mean, b.mean);
  c.max = a.max + b.max;
  return c;
}

std::string confidence_row(const std::string& method, bool gemm) {
  if (method == "loop") return "loop, one wave";
  if (method == "full") return gemm ? "full, gemm" : "full, other";
  if (method == "repeat") return gemm ? "repeat, gemm" : "repeat, other";
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
                "; where a sub-grid keeps how its blocks share lines, a kernel of fewer waves "
                "runs on 1 / f of the GPU (f <= {}) with 1 / f of its blocks{}, one of several "
                "waves with its whole loop",
                so.max_slice, so.slice_streaming ? " (streaming kernels too)" : "")
          : std::string();
  return fmt::format(
      "repeated kernels simulated once; each other kernel from the L2 and queues the kernel "
      "simulated before left, in two runs with its main loop at {} and {} trips (more after "
      "pending write-backs) where it has one wave or less; a kernel of more than {} waves (and "
      "{}) stops handing out blocks at the first wave boundary where a line through the "
      "residency of its last {} waves of blocks moves less than {}% across them (else it runs "
      "whole){}; extrapolated linearly in the trips and by the steady blocks' residency over "
      "the waves cut; a kernel of several waves neither cut in waves nor on a slice runs whole",
      so.trips[0], so.trips[1], std::max(so.min_waves, kWaveWindows + 2),
      "twice the L2 moved through it", kWaveWindows, 100 * kWaveSteady, slices);
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
  if (so.min_waves < 4) {
    throw InputError("sample waves must be >= 4 (got " + std::to_string(so.min_waves) + ")");
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
  const ConfidenceRow place_error[2] = {confidence_of("repeat", false),
                                        confidence_of("repeat", true)};
  std::vector<traces::Kernel> seen;  // nameless copies of the kernels simulated
  std::vector<size_t> seen_at;       // their index in out.kernels
  // What the last simulated kernel's last run left in L2, and the repeats after it moved their
  // lines through (stream_l2).
  std::unique_ptr<MemoryState> memory;
  std::vector<LineStream> repeats;  // the lines of the repeats since, oldest first
  // The work each simulated kernel left queued at its end (MemoryState's l2_backlog and
  // dram_backlog, parallel to `seen`); the cycles the repeats since took (with their gaps), and
  // the last one's kernel.
  std::vector<MemoryState> seen_backlog;  // their queues only
  double repeat_cycles = 0;
  size_t last_repeat = 0;
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
      // The repeated kernel's error, and how far a kernel's cycles move from one place in the
      // step to another (independent of it: the "repeat" rows).
      const ConfidenceRow& context = place_error[ks.gemm ? 1 : 0];
      ks.sample.error_mean = std::hypot(of.error_mean, context.mean);
      ks.sample.error_max = of.error_max + context.max;
      ks.sample.repeats = ks.name;
      ks.name = k.name;
      // Its lines pass through the L2 as the repeated kernel's did (before the next kernel
      // simulated): the lines it fetched and the lines it wrote (whole lines, as kernels
      // write), which push out the oldest.
      const double line = double(gpu.sm.line_bytes);
      repeats.push_back({double(ks.mem.dram_read_bytes + ks.mem.l2_write_bytes) / line,
                         double(ks.mem.l2_write_bytes) / line});
      repeat_cycles += double(gpu.step_kernel_gap_cycles()) + double(ks.cycles);
      last_repeat = size_t(it - seen.begin());
    } else {
      if (memory && !repeats.empty()) {
        const auto t0 = std::chrono::steady_clock::now();
        stream_l2(*memory, repeats, pos);
        // The queues the last simulated kernel left drain while the repeats run (in the full
        // run, the repeat after a writer absorbs its write-backs); the last repeat leaves what
        // its kernel left. Carried as left, a LLaMA2-13B prefill's attn_residual on M2N32K8 LUT
        // cores, after o_precompute's 138 MB of write-backs and o_proj.lmma (a repeat of
        // q_proj.lmma), waited for them: 68,125 cycles against the full run's 24,715.
        drain_backlog(*memory, repeat_cycles, seen_backlog[last_repeat]);
        out.wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      }
      repeats.clear();
      repeat_cycles = 0;
      auto next = std::make_unique<MemoryState>();
      ks = sample_kernel(k, trace, gpu, options, so, pos, order.size(), memory.get(), next.get(),
                         &out);
      if (out.interrupted) break;
      memory = std::move(next);
      out.sample_simulated_instructions += ks.sample.simulated_instructions;
      seen_backlog.emplace_back();
      seen_backlog.back().l2_backlog = memory->l2_backlog;
      seen_backlog.back().dram_backlog = memory->dram_backlog;
      seen.push_back(std::move(nameless));
      seen_at.push_back(out.kernels.size());
    }
    ks.start_cycle = t;
    t += ks.cycles;
    out.kernels.push_back(std::move(ks));
    out.cycles = t;
    if (pos + 1 < order.size()) t += gpu.step_kernel_gap_cycles();
  }
  // The run's confidence from its kernels': the errors of distinct kernels independent
  // (expected), or all one way (max). A repeat carries its kernel's sampling error, and its place
  // in the step's: the same in every layer (a layer's k_proj follows its q_proj), independent
  // from one place to another.
  std::map<std::string, double> group;  // error x cycles: per kernel simulated, per place
  std::map<std::string, double> simulated_error;
  double var = 0, max = 0;
  for (const KernelStats& k : out.kernels) {
    if (k.sample.repeats.empty()) {
      simulated_error[k.name] = k.sample.error_mean;
      group[k.name] += k.sample.error_mean * double(k.cycles);
    } else {
      group[k.sample.repeats] += simulated_error[k.sample.repeats] * double(k.cycles);
      group["place " + kernel_place(k.name)] += place_error[k.gemm ? 1 : 0].mean * double(k.cycles);
    }
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
