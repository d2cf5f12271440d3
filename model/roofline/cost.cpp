#include "model/roofline/cost.h"

#include "common/error.h"
#include "common/int_math.h"
#include "model/llm/routing.h"
#include "model/tiling/decode_attention.h"
#include "model/tiling/tiling.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace ltc::roofline {

using golden::DType;

namespace {

struct Tile {
  int tm, tn;
};
// Thread-block tiles a tuned library picks from (CUTLASS/cuBLAS-like; 16-row tiles are the
// mma.m16n8k16 skinny kernels used for small M). Accumulators must fit in
// half the register file, so a doubled register file (-drm) admits the larger LUT tiles.
constexpr Tile kMacTiles[] = {{128, 256}, {256, 128}, {128, 128}, {64, 256}, {64, 128},
                              {128, 64},  {64, 64},   {16, 128},  {16, 256}};
// LUT tensor cores have M = 2 tiles, so small-M thread blocks waste nothing; wide N reuses tables.
constexpr Tile kLutTiles[] = {{128, 256}, {256, 128}, {128, 128}, {64, 256}, {64, 128},
                              {16, 256},  {32, 256},  {16, 512},  {32, 512}, {64, 512},
                              {128, 512}, {256, 256}, {256, 512}};
constexpr int kMaxSplitK = 16;
constexpr int kMinSplitKDepth = 256;  // split-K never cuts K below this per split
constexpr double kAccBytes = 4;       // fp32 / int32 accumulators
// Stream-K: extra work and partial-tile traffic of the fix-up, as a fraction (fitted with the
// H200 calibration: MAPE 2.94% -> 2.65%, and no wave-quantization cliffs between calibrated M).
constexpr double kStreamKFixup = 0.05;
// In-kernel table precompute (PrecomputeMode::kInKernel, the conventional LUT-GEMM practice):
// every warp builds the tables of its own rows (the LMMA/MMA reads them from registers), so the
// CUDA-core work is repeated for every warp tile along N. Per entry: the add that extends a
// smaller entry, writing it out and loading it into the fragment, as FP16 CUDA-core operations
// (an estimate of issue slots, not fitted to the paper's Table I). MAC-library tiles use
// 64-column warp tiles (CUTLASS's 128x256 block = 2 x 4 warps of 64 x 64).
constexpr double kInKernelOpsPerEntry = 3;
constexpr int kMacWarpN = 64;

using hw::overlap;

// Sustained-power clock drop for long compute-bound kernels (calibrated on H200).
double throttle(const Machine& m, double compute_s) {
  const auto& a = m.achievable();
  const double onset = a.throttle_onset_ms * 1e-3;
  if (a.throttle_per_efold <= 0 || compute_s <= onset) return 1.0;
  return std::min(a.throttle_max, 1.0 + a.throttle_per_efold * std::log(compute_s / onset));
}

double cuda_rate(const Machine& m, DType t) {
  return m.cuda_flops_per_s(t);
}

// The kernel boundary the simulator waits after each kernel of a compiled step
// (GpuConfig::step_kernel_gap_cycles), in seconds.
double kernel_gap_s(const Machine& m) {
  return double(m.gpu().step_kernel_gap_cycles()) / (m.gpu().clock_ghz * 1e9);
}

// A CUDA-core operator's kernels: the eager reference's stream at its fitted rate, each at the
// fitted per-kernel floor; the compiler's fused kernels as the simulator runs them: every load
// of a row issued before the first use (one L2 + DRAM round trip), the bytes at the simulator's
// DRAM bandwidth, and the kernel boundary after the kernel.
OpCost memory_bound(const Machine& m, const std::string& name, const std::string& kind,
                    double flops, double bytes, int kernels, DType t,
                    llm::KernelPlan plan = llm::KernelPlan::kReference, double bytes_per_s = 0) {
  OpCost c;
  c.name = name;
  c.kind = kind;
  c.flops = flops;
  c.bytes = bytes;
  c.kernels = kernels;
  c.execution_path = "cuda cores";
  const bool compiled = plan == llm::KernelPlan::kCompiled;
  // Its kernels' bandwidth: `bytes_per_s` where given, else the plan's (the simulator's DRAM
  // stream, or the eager elementwise rate).
  if (bytes_per_s <= 0) {
    bytes_per_s = compiled ? m.gpu().dram_sim_gbps() * 1e9 : m.elementwise_bytes_per_s();
  }
  c.memory_ms = bytes / bytes_per_s * 1e3;
  c.compute_ms = flops / cuda_rate(m, t) * 1e3;
  const double fixed_ms =
      kernels *
      (compiled ? m.gpu().dram_round_trip_ns() * 1e-9 + kernel_gap_s(m) : m.elementwise_fixed_s()) *
      1e3;
  c.ms = std::max(c.memory_ms, c.compute_ms) + fixed_ms;
  c.bound = kernels == 0                                     ? "fused"
            : fixed_ms > std::max(c.memory_ms, c.compute_ms) ? "fixed"
            : c.memory_ms >= c.compute_ms                    ? "dram"
                                                             : "cuda";
  return c;
}

// The compiler's row kernels of a CUDA-core operator (compiler/model_lowering.cpp: one block
// per token row) as the simulator runs them. Memory: the larger of the bytes over the simulator's
// DRAM and L2 bandwidths and one SM's rows over its port into L2 (sm.noc_bytes_per_cycle: what
// binds a decode step's few rows). What the kernel just before it wrote (`prev_write` bytes) is
// read from L2 when it fits in half of it; the rest of its reads, and what it writes, are DRAM
// traffic. Then memory_bound's round trip and kernel boundary.
OpCost compiled_row_kernels(const Machine& m, const llm::Op& op, const llm::StepConfig& step,
                            const std::string& kind, double bytes, DType t, double prev_write) {
  OpCost c =
      memory_bound(m, op.name, kind, op.flops, bytes, op.launches, t, llm::KernelPlan::kCompiled);
  const hw::GpuConfig& gpu = m.gpu();
  const double writes = std::min(bytes, op.write_bytes);
  const double reads = std::max(0.0, bytes - writes - op.weight_bytes);
  const double from_l2 = prev_write <= gpu.l2_bytes() / 2 ? std::min(reads, prev_write) : 0.0;
  const double dram = bytes - from_l2;
  const double rows = double(std::max<int64_t>(1, step.rows()));
  const double rows_per_sm = std::ceil(rows / double(gpu.sms));
  const double port_s =
      bytes / rows * rows_per_sm / (gpu.sm.noc_bytes_per_cycle * gpu.clock_ghz * 1e9);
  const double l2_s = bytes / (gpu.l2_sim_bytes_per_cycle() * gpu.clock_ghz * 1e9);
  const double dram_s = dram / (gpu.dram_sim_gbps() * 1e9);
  const double fixed_ms = c.ms - std::max(c.memory_ms, c.compute_ms);
  c.memory_ms = std::max({dram_s, l2_s, port_s}) * 1e3;
  c.ms = std::max(c.memory_ms, c.compute_ms) + fixed_ms;
  if (c.kernels > 0 && fixed_ms <= std::max(c.memory_ms, c.compute_ms)) {
    c.bound = c.compute_ms > c.memory_ms         ? "cuda"
              : port_s >= std::max(dram_s, l2_s) ? "sm port"
              : l2_s > dram_s                    ? "l2"
                                                 : "dram";
  }
  c.bytes = dram;
  return c;
}

// The weight operand name a path entry of the `achievable` section (hw::GemmPathRates) uses.
std::string path_weight_name(const llm::WeightFormat& w) {
  if (w.kind == llm::WeightFormatKind::kFloat) return std::string(golden::dtype_name(w.dtype));
  if (w.kind == llm::WeightFormatKind::kInt) return "int" + std::to_string(w.bits);
  return w.name();
}

// The rates of g's path: its entry in the `achievable` section (zeros where it has none). A
// grouped GEMM (the MoE reference step's torch._grouped_mm, which runs a 16-bit float step's
// experts in BF16: its FP16 kernel cannot be captured in a CUDA graph) takes the path's
// "grouped" entry, each 0 of it from the plain entry; it runs whole tiles (no split-K, no
// stream-K).
hw::GemmPathRates path_rates(const hw::AchievableRates& a, const GemmProblem& g) {
  std::string act(golden::dtype_name(g.acts)), weight = path_weight_name(g.weights);
  const bool half = (g.acts == DType::kFp16 || g.acts == DType::kBf16) &&
                    g.weights.kind == llm::WeightFormatKind::kFloat &&
                    (g.weights.dtype == DType::kFp16 || g.weights.dtype == DType::kBf16);
  if (g.grouped && half) act = weight = "bf16";
  const hw::GemmPathRates* plain = a.gemm_path(act, weight);
  hw::GemmPathRates r = plain ? *plain : hw::GemmPathRates{};
  if (!g.grouped) return r;
  if (const hw::GemmPathRates* e = a.gemm_path(act, weight, "grouped")) {
    for (auto f : {&hw::GemmPathRates::tensor_fraction, &hw::GemmPathRates::small_tile_fraction,
                   &hw::GemmPathRates::dram_bw_fraction, &hw::GemmPathRates::fixed_us,
                   &hw::GemmPathRates::l2_bw_fraction, &hw::GemmPathRates::tile_overhead_k,
                   &hw::GemmPathRates::group_switch_us}) {
      if (e->*f > 0) r.*f = e->*f;
    }
    for (auto f : {&hw::GemmPathRates::tile_m, &hw::GemmPathRates::max_tile_m,
                   &hw::GemmPathRates::tile_n, &hw::GemmPathRates::data_parallel}) {
      if (e->*f > 0) r.*f = e->*f;
    }
    if (!e->tile_choice.empty()) r.tile_choice = e->tile_choice;
  }
  r.max_split_k = 1;
  r.data_parallel = 1;
  return r;
}

}  // namespace

OpCost gemm_cost(const Machine& m, const GemmProblem& g) {
  const GemmPath path = m.gemm_path(g.weights, g.acts, g.tables);
  const auto& a = m.achievable();
  const int sms = m.sms();
  // Paths whose kernels were measured apart (INT8, FP8, weight-only INT4) have their own rates;
  // a grouped GEMM its path's "grouped" entry over them.
  const hw::GemmPathRates merged =
      path.unit == GemmUnit::kLut ? hw::GemmPathRates{} : path_rates(a, g);
  const hw::GemmPathRates* rates = path.unit == GemmUnit::kLut ? nullptr : &merged;
  const double tensor_fraction =
      rates && rates->tensor_fraction > 0 ? rates->tensor_fraction : a.tensor_fraction;
  const double per_sm_tensor = path.peak_tops * 1e12 * tensor_fraction / sms;
  // Tiles under 128 rows (small-M kernels) may run at their own efficiency on a fitted path.
  constexpr int kSmallTileRows = 128;
  const double per_sm_tensor_small = rates && rates->small_tile_fraction > 0
                                         ? path.peak_tops * 1e12 * rates->small_tile_fraction / sms
                                         : per_sm_tensor;
  const double per_sm_cuda = cuda_rate(m, DType::kFp16) / sms;
  // The dequantize pass's cycles per weight on one SM's CUDA cores (FP32 and INT32 lanes), as
  // the compiler's kernels and the simulator issue it, at the CUDA cores' achievable fraction.
  const double dequant_s_per_weight =
      m.gpu().cuda_core_cycles(path.dequant_ops_per_weight - path.dequant_int_ops_per_weight,
                               path.dequant_int_ops_per_weight) /
      (m.gpu().clock_ghz * 1e9 * a.cuda_core_fraction);
  const double xb = g.x_bytes_per_element(), wb = g.w_bytes_per_element();
  const double dram_bw = rates && rates->dram_bw_fraction > 0
                             ? m.gpu().dram.bw_gbps * 1e9 * rates->dram_bw_fraction
                             : m.dram_bytes_per_s();
  const int min_tile_m = rates ? rates->tile_m : 0;
  const int max_tile_m = rates && rates->max_tile_m > 0 ? rates->max_tile_m : 0;
  const double tile_overhead_k = rates ? rates->tile_overhead_k : 0.0;
  const double group_switch_s = rates ? rates->group_switch_us * 1e-6 : 0.0;
  const double l2_bw = g.unaligned && a.unaligned_l2_fraction > 0
                           ? m.gpu().l2.bw_gbps * 1e9 * a.unaligned_l2_fraction
                       : rates && rates->l2_bw_fraction > 0
                           ? m.gpu().l2.bw_gbps * 1e9 * rates->l2_bw_fraction
                           : m.l2_bytes_per_s();
  // cuBLAS's alignment-1 kernels split K only for a batch of one (h100-latent-gemms.json).
  const int max_split_k = g.unaligned && g.batch > 1        ? 1
                          : rates && rates->max_split_k > 0 ? rates->max_split_k
                                                            : kMaxSplitK;
  const int tile_n = rates ? rates->tile_n : 0;
  const bool stream_k_allowed = !(rates && rates->data_parallel == 1);
  // A grouped GEMM's setup kernel (the groups' problem descriptors) runs before it.
  const double fixed_s =
      (rates && rates->fixed_us > 0 ? rates->fixed_us * 1e-6 : m.kernel_fixed_s()) +
      (g.grouped ? m.elementwise_fixed_s() : 0.0);

  OpCost best;
  double best_s = INFINITY;
  double tile_tensor = 0;  // the library's chosen tile's own tensor rate per SM (0: by rows)
  auto consider = [&](Tile t, bool check_registers, int warp_n) {
    if (check_registers && t.tm * double(t.tn) * kAccBytes > 0.5 * m.register_bytes_per_sm()) {
      return;
    }
    // A grouped GEMM's groups fill the row tiles the routing gives (uneven groups pad more),
    // each group's rounded up to whole clusters along M (CUTLASS's grouped scheduler).
    const int64_t cluster = g.grouped ? std::max(1, m.gpu().sm.cluster_size) : 1;
    const double row_tiles =
        g.group_pick.empty()
            ? double(g.batch * cluster * ceil_div(g.m, t.tm * cluster))
            : double(cluster) * llm::group_row_tiles(g.group_tokens, g.group_pick, t.tm * cluster);
    const int64_t base = std::max<int64_t>(1, std::llround(row_tiles)) * ceil_div(g.n, t.tn);
    // Schedules: split-K s (only while the grid is smaller than the GPU), and stream-K (the K
    // loops of all tiles dealt evenly over the SMs, partial tiles fixed up) for larger grids.
    auto evaluate = [&](int s, bool stream_k) {
      const int64_t kk = stream_k ? g.k : ceil_div(g.k, s);
      const int64_t tiles = stream_k ? base : base * s;
      const int64_t waves = ceil_div(tiles, sms);
      const double active = double(std::min<int64_t>(tiles, sms));
      const double t_tensor = 2.0 * t.tm * t.tn * (double(kk) + tile_overhead_k) /
                              (tile_tensor > 0         ? tile_tensor
                               : t.tm < kSmallTileRows ? per_sm_tensor_small
                                                       : per_sm_tensor);
      const double t_dequant = dequant_s_per_weight * double(t.tn) * kk;
      // A tile loads only the rows of X that exist (bounds-checked loads, TMA's zero fill), so a
      // tile taller than M reads M rows: tinygemm's time grows with the rows present.
      const double rows = g.group_pick.empty() ? double(g.m) / double(ceil_div(g.m, t.tm))
                                               : double(g.batch * g.m) / std::max(1.0, row_tiles);
      // An alignment-1 kernel's element loads are bound per SM: each SM its share of the feed
      // however few are active.
      const double feeding = g.unaligned ? double(sms) : active;
      const double t_l2 = (rows * xb + t.tn * wb) * kk / (l2_bw / feeding);
      // In-kernel tables: built per k step before the tensor core can use them (a barrier
      // between the two phases), once per warp tile along N.
      const double t_tables = g.tables && g.tables_in_kernel
                                  ? kInKernelOpsPerEntry * g.table_entries_per_element() * t.tm *
                                        double(kk) *
                                        double(ceil_div(t.tn, std::min(warp_n, t.tn))) / per_sm_cuda
                                  : 0.0;
      const double per_tile = std::max({t_tensor, t_dequant, t_l2}) + t_tables;
      // A grouped kernel's thread block moves to another group about once per tile while
      // there are more groups than waves, else once per group.
      const double t_switch =
          g.grouped ? double(std::min<int64_t>(waves, g.batch)) * group_switch_s : 0.0;
      const double t_compute =
          (stream_k ? double(tiles) / sms * per_tile * (1 + kStreamKFixup) : waves * per_tile) +
          t_switch;
      const double partial_bytes = 2.0 * g.batch * g.m * g.n * kAccBytes;
      const double reduce_bytes = stream_k ? kStreamKFixup * partial_bytes
                                  : s > 1  ? s * partial_bytes
                                           : 0.0;
      const double t_dram =
          (g.bytes() + reduce_bytes) / std::min(dram_bw, active * m.sm_dram_bytes_per_s());
      // Split-K: the partial sums are added by a second (reduce) kernel.
      const double t_fixed = fixed_s + (!stream_k && s > 1 ? m.elementwise_fixed_s() : 0.0);
      // Overlap and throttling never go below the slower part: a schedule that cannot beat
      // the best so far is not costed further (the calibration's fits spend most time here).
      if (std::max(t_compute, t_dram) + t_fixed >= best_s) return;
      double t_total = overlap(t_compute, t_dram, a.overlap_exponent);
      // The sustained-power clock drop follows the tensor cores' power, so their duty: a tile
      // that waits on its L2 feed or its dequantization (tinygemm) keeps its clocks up.
      if (t_compute > t_dram) {
        const double duty = t_tensor / std::max({t_tensor, t_dequant, t_l2});
        t_total *= 1 + duty * (throttle(m, t_compute) - 1);
      }
      t_total += t_fixed;
      if (t_total < best_s) {
        best_s = t_total;
        best.tile = TileChoice{t.tm, t.tn, stream_k ? 1 : s, tiles, waves, stream_k};
        best.compute_ms = t_compute * 1e3;
        best.memory_ms = t_dram * 1e3;
        const double inner = per_tile - t_tables;
        best.bound = t_dram >= t_compute  ? "dram"
                     : t_tables > inner   ? "tables"
                     : inner == t_tensor  ? "compute"
                     : inner == t_dequant ? "dequant"
                                          : "l2";
        if (fixed_s > std::max(t_compute, t_dram)) best.bound = "fixed";
        best.bytes = g.bytes() + reduce_bytes;
      }
    };
    for (int s = 1; s <= max_split_k; ++s) {
      if (s > 1 && (base * s > sms || ceil_div(g.k, s) < kMinSplitKDepth)) break;
      evaluate(s, false);
    }
    if (base > sms && stream_k_allowed) evaluate(1, true);
  };
  // The compiler's kernel: the tile model/tiling picks at kernel level and the estimate it ranks
  // tiles by (tensor cores, the shared-memory data path, dequantize, L2 and DRAM at the
  // simulator's bandwidths, waves, the first round trip) is this GEMM's cost, plus the kernel
  // boundary the simulator puts after it (GpuConfig::step_kernel_gap_cycles). A LUT GEMM always
  // (a LUT GPU has no measured kernels to fit); a MAC or dequantize-then-MAC GEMM of the compiled
  // plan with the MMA operands the compiler's lowering gives it (tiling::linear_mma). Either way
  // a batch (a grouped GEMM's groups) is the kernel's grid z (tiling::GemmProblem::batch), as
  // the compiler lowers it (compiler/gemm_lowering.h).
  const bool lut = path.unit == GemmUnit::kLut;
  Machine::KernelTile kernel;
  if (lut) {
    const Machine::TileKey key{g.m,          g.n,          g.k,         g.weights.planes(),
                               int(xb * 64), int(wb * 64), int(g.batch)};
    kernel = m.kernel_tile(key, [&]() -> Machine::KernelTile {
      auto p = tiling::lut_gemm_problem(m.gpu(), g.m, g.n, g.k, g.acts, g.weights.planes(),
                                        wb * 8 - g.weights.planes(), g.table == DType::kInt8);
      p.a_bits = xb * 8;
      p.batch = g.batch;
      // A problem the scheduler does not take (no tensor rate for these operands) or no
      // feasible tile: the fixed candidates below.
      if (!p.invalid_reason().empty()) return std::nullopt;
      return tiling::choose_tiles(p, m.gpu());
    });
  } else if (g.compiled && !g.tables) {
    const tiling::LinearMma mma =
        tiling::linear_mma(g.weights.is_low_bit(), g.acts, g.weights.bits_per_weight());
    const Machine::TileKey key{g.m, g.n, g.k, mma.weight_bits, int(mma.a), 0, int(g.batch)};
    kernel = m.kernel_tile(key, [&]() -> Machine::KernelTile {
      auto p = tiling::mma_kernel_problem(m.gpu(), g.m, g.n, g.k, mma.a, mma.a, mma.weight_bits);
      p.batch = g.batch;
      if (!p.invalid_reason().empty()) return std::nullopt;
      return tiling::choose_tiles(p, m.gpu());
    });
  }
  if (kernel && !g.tables_in_kernel) {
    const tiling::TileChoice& k = *kernel;
    best.tile = TileChoice{int(k.block.m), int(k.block.n), 1, k.blocks(), k.waves, false};
    best.compute_ms = k.compute_us * 1e-3;
    best.memory_ms = k.memory_us * 1e-3;
    const double gap_s = kernel_gap_s(m);
    best.bound = k.bound;
    if (gap_s * 1e6 > std::max(k.compute_us, k.memory_us)) best.bound = "fixed";
    best.bytes = k.dram_bytes;
    best_s = k.estimated_us * 1e-6 + gap_s;
  } else if (lut) {
    if (kernel) {
      // Tables built in the kernel (not a compiled kernel): the roofline's costs of that tile,
      // with the table-building work.
      consider(Tile{int(kernel->block.m), int(kernel->block.n)}, false, int(kernel->warp.n));
    }
    if (best_s == INFINITY) {
      for (Tile t : kLutTiles) consider(t, true, m.gpu().lut_tensor->core.shape.n);
    }
  } else if (rates && !rates->tile_choice.empty()) {
    // The library's heuristic picks the tile (not necessarily the fastest): that tile's cost.
    const hw::TileRule& t = hw::chosen_tile(rates->tile_choice, g.m, g.n, g.k);
    tile_tensor = path.peak_tops * 1e12 * t.tensor_fraction / sms;
    consider(Tile{t.tile_m, t.tile_n}, false, kMacWarpN);
  } else if (tile_n > 0) {
    // A path of one kernel tile, tile_m x tile_n (tinygemm's m16n8k16 thread block).
    consider(Tile{min_tile_m > 0 ? min_tile_m : 16, tile_n}, true, kMacWarpN);
  } else if (min_tile_m > 0 || max_tile_m > 0) {
    // The path's kernels pad M up to their smallest tile (INT8 IMMA tiles of 32 rows; 1 for
    // GEMV-like weight-only kernels) and tile M with rows up to their largest (tinygemm: one
    // m16 tile's work per row block, however large M is).
    const int lo = min_tile_m > 0 ? min_tile_m : 16;
    for (Tile t : {Tile{lo, 64}, Tile{lo, 128}, Tile{lo, 256}}) consider(t, true, kMacWarpN);
    if (max_tile_m > lo) {
      for (Tile t : {Tile{max_tile_m, 64}, Tile{max_tile_m, 128}, Tile{max_tile_m, 256}}) {
        consider(t, true, kMacWarpN);
      }
    }
    for (Tile t : kMacTiles) {
      if (t.tm > lo && (max_tile_m == 0 || t.tm < max_tile_m)) consider(t, true, kMacWarpN);
    }
  } else {
    for (Tile t : kMacTiles) consider(t, true, kMacWarpN);
  }
  best.name = "gemm";
  best.kind = "gemm";
  best.ms = best_s * 1e3;
  best.flops = g.flops();
  // + the split-K reduce kernel, or the grouped GEMM's setup kernel
  best.kernels = best.tile.split_k > 1 || g.grouped ? 2 : 1;
  best.execution_path = path.description;
  if (g.grouped) best.execution_path += ", grouped (torch._grouped_mm)";
  if (g.unaligned) best.execution_path += ", alignment-1 kernel";
  if (g.tables && g.tables_in_kernel) best.execution_path += ", tables built in kernel";
  best.tensor_busy_s = g.flops() / (path.peak_tops * 1e12);
  return best;
}

// cuBLAS's strided-batched GEMV kernels (gemmSN) for the absorbed MLA decode's alignment-1 GEMMs
// (latent_decode_cost): where the library takes them and what they cost.
bool latent_gemmsn(LatentGemm layout, int64_t batch, int64_t m, int64_t n, int64_t k) {
  // Long rows for their heads (n x k against m squared) over enough of the batch.
  switch (layout) {
    case LatentGemm::kScore:
      return n * k >= 8192 * m * m && batch * n >= 131072;
    case LatentGemm::kValue:
      return n >= 512 && n * k >= 4096 * m * m && batch >= 256;
  }
  return false;
}

double latent_gemmsn_s(const Machine& m, LatentGemm layout, int64_t batch, int64_t rows, int64_t n,
                       int64_t k) {
  // Per output column a K loop of (k + k_extra) steps over (rows + m_extra) rows, `rate` of them
  // per SM cycle on the CUDA cores.
  struct Rate {
    double rate, k_extra, m_extra;
  };
  const Rate r = layout == LatentGemm::kScore ? Rate{17.8, 115, 0} : Rate{32.0, 65, 4};
  return double(batch) * double(n) * (double(k) + r.k_extra) * (double(rows) + r.m_extra) /
         (r.rate * m.sms() * m.gpu().clock_ghz * 1e9);
}

namespace {

// One gemmSN kernel (latent_gemmsn): its CUDA-core loop against its operands' DRAM stream.
OpCost gemmsn_cost(const Machine& m, LatentGemm layout, const GemmProblem& g) {
  OpCost c;
  c.name = c.kind = "gemm";
  c.flops = g.flops();
  c.bytes = g.bytes();
  c.kernels = 1;
  c.compute_ms = 1e3 * latent_gemmsn_s(m, layout, g.batch, g.m, g.n, g.k);
  c.memory_ms = 1e3 * g.bytes() / m.dram_bytes_per_s();
  c.ms = std::max(c.compute_ms, c.memory_ms) + 1e3 * m.kernel_fixed_s();
  c.bound = "cuda";
  c.execution_path = "gemmSN (CUDA cores)";
  return c;
}

// The MLA decode of the reference step (absorbed, docs/performance-models.md) as the eager kernels
// it launches: the latent and RoPE key copied into their caches; per sequence the scores as two
// batched GEMMs of the heads' queries against the cached latents [L x kv_lora_rank] and RoPE keys
// [L x rope], their add and the scale, softmax in FP32 and its cast back, and the values as a
// batched GEMM of the probabilities against the latents again. The score rows are L = context + 1
// long: when that is not a multiple of 16 bytes cuBLAS runs its alignment-1 kernels.
OpCost latent_decode_cost(const Machine& m, const llm::Op& op, const llm::StepConfig& step) {
  const auto& at = op.attention;
  const double hb = llm::dtype_bytes(step.hidden);
  const double b = double(at.batch), h = double(at.heads), len = double(at.kv_len);
  const int64_t latent = at.v_dim(), rope = at.head_dim - at.v_dim();
  const bool unaligned = (at.kv_len * int64_t(hb)) % 16 != 0;
  int gemv = 0;  // GEMMs run as gemmSN
  auto batched = [&](LatentGemm layout, int64_t n, int64_t k, double w_bytes, double x_bytes,
                     double out_bytes) {
    GemmProblem g;
    g.batch = at.batch;
    g.m = at.heads;
    g.n = n;
    g.k = k;
    g.weights.dtype = step.hidden;
    g.weights.bits = golden::dtype_bits(step.hidden);
    g.acts = g.out = step.hidden;
    g.weight_bytes = w_bytes;
    g.x_bytes = x_bytes;
    g.out_bytes = out_bytes;
    g.unaligned = unaligned;
    if (!unaligned || !latent_gemmsn(layout, g.batch, g.m, g.n, g.k)) return gemm_cost(m, g);
    ++gemv;
    return gemmsn_cost(m, layout, g);
  };
  const double scores = b * h * len;  // elements of one [B, heads, L] score tensor
  const std::vector<OpCost> gemms = {
      batched(LatentGemm::kScore, at.kv_len, latent, b * len * latent * hb, b * h * latent * hb,
              scores * hb),
      batched(LatentGemm::kScore, at.kv_len, rope, b * len * rope * hb, b * h * rope * hb,
              scores * hb),
      batched(LatentGemm::kValue, latent, at.kv_len, b * len * latent * hb, scores * hb,
              b * h * latent * hb)};
  // The score path's kernels stream contiguous tensors (PyTorch's vectorized elementwise
  // kernels: the achievable DRAM rate, not the eager strided one): the two score parts added
  // (read 2, write 1), scaled (1, 1), softmax to FP32 (its max, sum and output passes read the
  // row three times; 4 bytes out), cast back (4 bytes, 1); the two cache copies (the step's new
  // rows). Their CUDA-core work: the add, the scale, the softmax's max, subtract, exp, sum and
  // divide per score (the GEMMs' flops are the GEMMs').
  const double new_rows = b * double(at.q_len) * double(latent + rope) * hb;
  const int elementwise = 6;
  OpCost c =
      memory_bound(m, op.name, "attention", 7 * scores, scores * (9 * hb + 8) + 2 * new_rows,
                   elementwise, DType::kFp32, llm::KernelPlan::kReference, m.dram_bytes_per_s());
  c.flops = op.flops;
  c.compute_ms = 0;
  for (const auto& g : gemms) {
    c.ms += g.ms;
    c.compute_ms += g.compute_ms;
    c.memory_ms += g.memory_ms;
    c.bytes += g.bytes;
    c.kernels += g.kernels;
  }
  c.bound = gemms[0].bound;
  c.execution_path = "eager: 3 batched GEMMs (mac " + std::string(golden::dtype_name(step.hidden)) +
                     (unaligned ? ", alignment-1 kernels" : "") +
                     (gemv > 0 ? ", " + std::to_string(gemv) + " as gemmSN on CUDA cores" : "") +
                     ") + softmax in fp32";
  c.tile = gemms[0].tile;
  c.tensor_busy_s = op.flops / (m.mac_tops(step.hidden) * 1e12);
  return c;
}

OpCost attention_cost(const Machine& m, const llm::Op& op, const llm::StepConfig& step) {
  const auto& at = op.attention;
  if (at.latent && step.kernels == llm::KernelPlan::kReference) {
    return latent_decode_cost(m, op, step);
  }
  const auto& a = m.achievable();
  const int sms = m.sms();
  const double peak = m.mac_tops(step.hidden) * 1e12;
  const bool compiled = step.kernels == llm::KernelPlan::kCompiled;
  OpCost c;
  c.name = op.name;
  c.kind = "attention";
  c.flops = op.flops;
  c.bytes = op.bytes();
  // Its launches (llm::KernelPlan): the attention kernel at the kernel's fixed cost, the others
  // (reference: SDPA's second kernel and the K and V cache copies; compiled: the KV append and
  // the split-KV combine) at the elementwise one.
  c.kernels = op.launches;
  c.execution_path = "flash attention (mac " + std::string(golden::dtype_name(step.hidden)) + ")";
  int64_t units = at.batch * at.heads;
  double extra_ms = 0;
  // The reference step's SDPA kernels (cuDNN's flash forward) are built for head dimensions in
  // steps of 64 (their names: 64, 128, 192, 256): a narrower query/key or value width runs the
  // next one up, its MMAs on the padded width (Phi-2's 80 and MiniCPM3's 96 on the 128 kernel).
  // The compiled plan's kernels take the exact widths.
  constexpr int64_t kReferenceHeadDimStep = 64;
  const int64_t dim_step = compiled ? 1 : kReferenceHeadDimStep;
  const double mma_dims = double(ceil_div(at.head_dim, dim_step) * dim_step +
                                 ceil_div(at.v_dim(), dim_step) * dim_step);
  bool serial_tiles = false;
  // The reference decode kernel's K and V tiles (cuDNN's flash forward: 128 keys).
  constexpr int64_t kKeyTile = 128;
  // The compiled decode kernel's estimate (its clock is the loaded one: no throttle on top).
  std::optional<tiling::DecodeAttentionEstimate> estimate;
  if (!at.causal && at.q_len <= 16) {
    // Decode: stream the KV cache. FlashAttention-2 folds the query heads of a KV group into
    // the row dimension when q_len is 1 (GQA), so a tile is (group x q_len) rows padded to the
    // 16-row mma granularity, one per (sequence, KV head); split-KV spreads short grids.
    // The compiled plan's kernel is the compiler's (tiling::plan_decode_attention: its blocks
    // and splits).
    int64_t rows = at.q_len, splits = 1;
    if (compiled) {
      const tiling::DecodeAttentionPlan d = tiling::plan_decode_attention(
          tiling::DecodeAttentionShape::of(at, int64_t(llm::dtype_bytes(step.hidden))), m.gpu());
      units = d.units();
      rows = d.rows;
      splits = d.splits;
      estimate = tiling::estimate_decode_attention(d, m.gpu(), golden::dtype_name(step.hidden));
      // The cache at the simulator's DRAM stream, or what the blocks keep in flight per round
      // trip (Little's law); the split partials written by the splits and read by the combine.
      const double bw = std::min(m.gpu().dram_sim_gbps() * 1e9,
                                 estimate->in_flight_bytes / (m.gpu().dram_round_trip_ns() * 1e-9));
      const double partial_bytes = splits > 1 ? 2.0 * double(d.blocks() * d.part_row_bytes()) : 0;
      c.memory_ms = (c.bytes + partial_bytes) / bw * 1e3;
      c.compute_ms = estimate->ms();
    } else {
      const bool fold = at.q_len == 1 && at.kv_heads > 0 && at.heads > at.kv_heads;
      if (fold) {
        rows = at.heads / at.kv_heads;
        units = at.batch * at.kv_heads;
      }
      splits = units >= sms
                   ? 1
                   : std::max<int64_t>(1, std::min(ceil_div(sms, units), ceil_div(at.kv_len, 256)));
      // The measured kernel's stream per SM; its MMAs on the padded tiles at decode attention's
      // fitted efficiency.
      const double active = double(std::min<int64_t>(units * splits, sms));
      c.memory_ms =
          c.bytes / std::min(m.attention_bytes_per_s(), active * m.sm_dram_bytes_per_s()) * 1e3;
      // Whole key tiles: the last one's MMAs and softmax run however few keys it holds.
      const double padded_flops = 2.0 * units * 16.0 * ceil_div(rows, 16) *
                                  double(ceil_div(at.kv_len, kKeyTile) * kKeyTile) * mma_dims;
      c.compute_ms = padded_flops / (peak * m.decode_attention_fraction()) * 1e3;
    }
    const double padded_rows = 16.0 * ceil_div(rows, 16);
    c.tile = TileChoice{int(padded_rows), 256, int(splits), units * splits,
                        ceil_div(units * splits, sms)};
    // The reference kernel (cuDNN's flash forward, four warps, a 16-row query tile and 128-key
    // K and V tiles in shared memory) holds one block per SM where those tiles take more than
    // half of it (head_dim 256): no other block's loads then hide a block's MMA and softmax, so
    // the SM's time is their sum, not their overlap.
    if (!compiled) {
      const int64_t d = ceil_div(std::max(at.head_dim, at.v_dim()), dim_step) * dim_step;
      const int64_t smem = (16 + 2 * kKeyTile) * d * int64_t(llm::dtype_bytes(step.hidden));
      serial_tiles = hw::block_occupancy(m.gpu(), 4, 1, smem).blocks_per_sm <= 1;
    }
    // The compiled plan's split-KV combine (the reference's second SDPA kernel is in its four).
    if (step.kernels == llm::KernelPlan::kCompiled && splits > 1) ++c.kernels;
  } else {
    // Prefill: FlashAttention-2 tiles of 128 queries x 128 keys; causal tiles see a growing
    // prefix (diagonal blocks computed whole). Longest-tile bound and total work over the SMs;
    // each tile also pays a prologue/epilogue (load Q, rescale and write O) worth one block:
    // with flash_attention_fraction 0.36 this gives FA2's published H100 causal head-dim-128
    // rates (191..335 TFLOP/s, S = 512..16k) within 3%.
    constexpr int kBlock = 128;
    constexpr double kTileOverheadBlocks = 1;
    const int64_t nq = ceil_div(at.q_len, kBlock), nk = ceil_div(at.kv_len, kBlock);
    const double t_block =
        2.0 * kBlock * kBlock * mma_dims / (peak * a.flash_attention_fraction / sms);
    // A sliding window limits a query tile to the key tiles its window spans. The reference
    // step past the window passes the banded mask to SDPA explicitly: its kernel computes every
    // query-key tile, and K and V are first repeated to every query head (llm graph's launches).
    const bool masked = step.kernels == llm::KernelPlan::kReference && at.causal && at.window > 0 &&
                        at.q_len > at.window;
    const int64_t window_tiles = at.window > 0 && !masked ? ceil_div(at.window, kBlock) + 1
                                                          : std::numeric_limits<int64_t>::max();
    const bool causal = at.causal && !masked;
    double blocks = 0, longest = 0;
    for (int64_t i = 0; i < nq; ++i) {
      const double vis =
          double(std::min(window_tiles, causal ? std::min(i + 1 + (nk - nq), nk) : nk));
      blocks += vis + kTileOverheadBlocks;
      longest = std::max(longest, vis + kTileOverheadBlocks);
    }
    const double total = double(units) * blocks;
    c.compute_ms = std::max(total / sms, longest) * t_block * 1e3;
    c.memory_ms = c.bytes / (compiled ? m.gpu().dram_sim_gbps() * 1e9 : m.dram_bytes_per_s()) * 1e3;
    c.tile = TileChoice{kBlock, kBlock, 1, units * nq, ceil_div(units * nq, sms)};
    // The reference step's copies beside SDPA (the K and V repeats before a masked SDPA; MLA's
    // key and query concatenations and output copy: llm graph's moved_bytes), eager kernels
    // in series with it.
    if (!compiled && op.moved_bytes > op.bytes()) {
      extra_ms = (op.moved_bytes - op.bytes()) / m.elementwise_bytes_per_s() * 1e3;
    }
  }
  // The compiled kernels pay the simulator's boundary each (one round trip, the kernel gap),
  // as compiled_row_kernels does.
  const double fixed_s = compiled
                             ? c.kernels * (m.gpu().dram_round_trip_ns() * 1e-9 + kernel_gap_s(m))
                             : m.kernel_fixed_s() + (c.kernels - 1) * m.elementwise_fixed_s();
  double t = serial_tiles ? c.compute_ms + c.memory_ms
                          : overlap(c.compute_ms, c.memory_ms, a.overlap_exponent);
  if (c.compute_ms > c.memory_ms && !estimate) t *= throttle(m, c.compute_ms * 1e-3);
  c.ms = t + fixed_s * 1e3 + extra_ms;
  c.bound = c.memory_ms >= c.compute_ms ? "dram" : "compute";
  if (fixed_s * 1e3 > std::max(c.compute_ms, c.memory_ms)) c.bound = "fixed";
  c.tensor_busy_s = op.flops / peak;
  return c;
}

// A linear op's GEMM; a grouped GEMM of `launches` == batch groups (the compiled multi-basis
// binary LUT mpGEMM, llm::Op::launches) as that many kernels, each its own grid.
OpCost linear_cost(const Machine& m, GemmProblem g, int launches) {
  const int64_t kernels = launches > 1 && launches == g.batch ? g.batch : 1;
  if (kernels == 1) return gemm_cost(m, g);
  g.batch = 1;
  g.weight_bytes /= double(kernels);
  g.x_bytes /= double(kernels);
  g.out_bytes /= double(kernels);
  OpCost c = gemm_cost(m, g);
  for (double* v : {&c.ms, &c.compute_ms, &c.memory_ms, &c.flops, &c.bytes, &c.tensor_busy_s}) {
    *v *= double(kernels);
  }
  c.kernels *= int(kernels);
  c.tile.tiles *= kernels;
  c.execution_path += ", one kernel per expert";
  return c;
}

}  // namespace

namespace {

// op_cost, for an op after a kernel that wrote `prev_write` bytes (0: unknown).
OpCost op_cost_after(const Machine& m, const llm::Op& op, const llm::StepConfig& step,
                     double prev_write) {
  const std::string kind(llm::op_kind_name(op.kind));
  switch (op.kind) {
    case llm::OpKind::kLinear: {
      OpCost c = linear_cost(m, gemm_of(op, step), op.launches);
      c.name = op.name;
      c.kind = kind;
      return c;
    }
    case llm::OpKind::kAttention:
      return attention_cost(m, op, step);
    case llm::OpKind::kTablePrecompute: {
      // Fused: the producer computes tables instead of writing activations (no launch, no
      // activation round trip); separate: its own kernel reading activations.
      const bool fused = !op.fused_into.empty();
      OpCost c = step.kernels == llm::KernelPlan::kCompiled
                     ? compiled_row_kernels(m, op, step, kind, op.bytes(), step.acts, prev_write)
                     : memory_bound(m, op.name, kind, op.flops, op.bytes(), op.launches, step.acts,
                                    step.kernels);
      if (fused) c.execution_path = "cuda cores, fused into " + op.fused_into;
      return c;
    }
    case llm::OpKind::kRope:
    case llm::OpKind::kActivation:
    case llm::OpKind::kEmbedding:
    case llm::OpKind::kNorm:
    case llm::OpKind::kResidual:
    case llm::OpKind::kRouting: {
      // The kernels and bytes of the step's kernel plan (llm::KernelPlan: the eager reference's
      // ten RoPE kernels moving 10 elements per rotated element, or one fused kernel).
      OpCost c =
          step.kernels == llm::KernelPlan::kCompiled && op.kind != llm::OpKind::kRouting
              ? compiled_row_kernels(m, op, step, kind, op.moved_bytes, step.hidden, prev_write)
              : memory_bound(m, op.name, kind, op.flops, op.moved_bytes, op.launches, step.hidden,
                             step.kernels);
      const auto& rates = m.achievable();
      // The reference norm's rows, each reduced by one block in a chain as long as the row.
      if (op.kind == llm::OpKind::kNorm && step.kernels == llm::KernelPlan::kReference &&
          c.kernels > 0) {
        const double row_ns = op.layer_norm && rates.layer_norm_row_ns_per_element > 0
                                  ? rates.layer_norm_row_ns_per_element
                                  : rates.norm_row_ns_per_element;
        const double row_ms = row_ns * double(op.row_elements) * 1e-6;
        const double streamed = std::max(c.memory_ms, c.compute_ms);
        if (row_ms > streamed) {
          const double fixed_ms = c.ms - streamed;
          c.ms = fixed_ms + row_ms;
          c.memory_ms = row_ms;
          c.bound = fixed_ms > row_ms ? "fixed" : "row chain";
        }
      }
      // The reference combine's index_add_: one atomic add in L2 per element, at the GPU's
      // achievable atomic rate where that is the slower.
      const double atomic_rate = rates.atomic_add_gops * 1e9;
      if (op.atomic_adds > 0 && atomic_rate > 0) {
        const double t = double(op.atomic_adds) / atomic_rate * 1e3;
        const double before = std::max(c.memory_ms, c.compute_ms);
        if (t > before) {
          c.ms += t - before;
          c.memory_ms = t;
          c.bound = "atomics";
        }
      }
      return c;
    }
  }
  return {};
}

}  // namespace

OpCost op_cost(const Machine& m, const llm::Op& op, const llm::StepConfig& step) {
  return op_cost_after(m, op, step, 0);
}

namespace {

// Bytes the kernel before `op` in `ops` wrote: the last op before it that launches a kernel, with
// its launch group's members (a fused precompute's tables, written by its producer, count with
// it).
double previous_kernel_writes(const std::vector<llm::Op>& ops, const llm::Op& op) {
  const llm::Op* prev = nullptr;
  for (const auto& o : ops) {
    if (&o == &op) break;
    if (o.launches > 0) prev = &o;
  }
  if (prev == nullptr) return 0;
  double bytes = 0;
  for (const auto& o : ops) {
    if (&o == prev ||
        (!prev->name.empty() && (o.launch_with == prev->name || o.fused_into == prev->name))) {
      bytes += o.write_bytes;
    }
  }
  return bytes;
}

// A linear op of a launch group (llm::Op::launch_with: the fused QKV or gate+up linear) costs
// its share, by N, of the group's one GEMM (N concatenated, the input read once); the group's
// first op carries its launches. Any other op: op_cost.
OpCost launch_group_cost(const Machine& m, const std::vector<llm::Op>& ops, const llm::Op& op,
                         const llm::StepConfig& step) {
  if (op.kind != llm::OpKind::kLinear) {
    return op_cost_after(
        m, op, step,
        step.kernels == llm::KernelPlan::kCompiled ? previous_kernel_writes(ops, op) : 0.0);
  }
  const std::string& leader = op.launch_with.empty() ? op.name : op.launch_with;
  const llm::Op* first = nullptr;
  std::vector<const llm::Op*> members;
  for (const auto& o : ops) {
    if (o.kind != llm::OpKind::kLinear) continue;
    if (o.name == leader) first = &o;
    if (o.launch_with == leader) members.push_back(&o);
  }
  if (members.empty() || first == nullptr) return op_cost(m, op, step);
  GemmProblem g = gemm_of(*first, step);
  std::string names;
  for (const auto* o : members) {
    g.n += o->gemm.n;
    g.weight_bytes += o->weight_bytes;
    g.out_bytes += o->write_bytes;
    names += (names.empty() ? "" : ", ") + o->name;
  }
  const OpCost all = linear_cost(m, g, first->launches);
  OpCost c = all;
  c.name = op.name;
  c.kind = std::string(llm::op_kind_name(op.kind));
  const double share = double(op.gemm.n) / double(g.n);
  c.ms = all.ms * share;
  c.compute_ms = all.compute_ms * share;
  c.memory_ms = all.memory_ms * share;
  c.flops = op.flops;
  c.tensor_busy_s = all.tensor_busy_s * share;
  c.bytes = all.bytes * share;
  c.kernels = &op == first ? all.kernels : 0;
  c.execution_path += fmt::format(", one launch: {}{}{} (N = {})", first->name,
                                  names.empty() ? "" : ", ", names, g.n);
  return c;
}

}  // namespace

StepEstimate estimate_step(const Machine& m, const llm::StepGraph& graph) {
  StepEstimate e;
  const auto& s = graph.step;
  e.model = graph.model.name;
  e.gpu = m.gpu().name;
  e.phase = std::string(llm::phase_name(s.phase));
  e.batch = s.batch;
  e.context = s.context;
  e.seq = s.new_tokens();
  e.layers = graph.layers;
  e.weights = s.weights.name();
  e.acts = std::string(golden::dtype_name(s.acts));
  e.precompute = std::string(precompute_name(s.precompute));
  double busy = 0, bytes = 0;
  auto run = [&](const std::vector<llm::Op>& ops, std::vector<OpCost>& out, double times) {
    double ms = 0;
    for (const auto& op : ops) {
      out.push_back(launch_group_cost(m, ops, op, s));
      ms += out.back().ms;
      busy += times * out.back().tensor_busy_s;
      bytes += times * out.back().bytes;
    }
    return ms;
  };
  const double emb_ms = run(graph.embedding, e.embedding, 1);
  e.layer_ms = run(graph.layer, e.layer, double(graph.layers));
  e.layer_kind = layer_kind_name(graph.layer_kind);
  const double head_ms = run(graph.head, e.head, 1);
  e.latency_ms = emb_ms + graph.layers * e.layer_ms + head_ms;
  for (const auto& g : graph.other_layers) {
    LayerGroupCost c;
    c.kind = layer_kind_name(g.kind);
    c.count = g.count;
    c.ms = run(g.ops, c.ops, double(g.count));
    e.latency_ms += double(g.count) * c.ms;
    e.other_layers.push_back(std::move(c));
  }
  e.routing = graph.routing;
  const double tokens = double(s.batch) * s.new_tokens();
  e.tokens_per_s = tokens / (e.latency_ms * 1e-3);
  const auto& gpu = m.gpu();
  const GemmPath path = m.gemm_path(s.weights, s.acts, s.precompute != llm::PrecomputeMode::kNone);
  // A LUT GPU's area and power figures are its LUT cores'; a MAC path on it has none.
  const bool figures_apply = gpu.has_lut_tensor() == (path.unit == GemmUnit::kLut);
  const double area_per_sm = figures_apply ? gpu.tensor_area_mm2_per_sm : 0;
  const double power_per_sm = figures_apply ? gpu.tensor_power_w_per_sm : 0;
  e.tensor_energy_known = power_per_sm > 0;
  e.dram_energy_known = gpu.dram_pj_per_byte > 0;
  e.tensor_energy_j = busy * power_per_sm * gpu.sms;
  e.dram_energy_j = bytes * gpu.dram_pj_per_byte * 1e-12;
  e.energy_mj_per_token = (e.tensor_energy_j + e.dram_energy_j) / tokens * 1e3;
  double weights = double(graph.model.embedding_parameters()) * llm::dtype_bytes(s.hidden);
  // Stored weights: every expert of a MoE layer, not only those a step touches.
  const auto& model = graph.model;
  const double bpw = s.weights.bits_per_weight() / 8;
  const double hidden_bytes = llm::dtype_bytes(s.hidden);
  const double low_bit = double(model.linear_weight_parameters());
  weights += low_bit * bpw +
             (double(model.parameters() - model.embedding_parameters() - model.head_parameters()) -
              low_bit) *
                 hidden_bytes;
  for (const auto& op : graph.head) {
    // A tied LM head reads the embedding matrix, already counted above.
    if (!(graph.model.tied_embeddings && op.kind == llm::OpKind::kLinear)) {
      weights += op.weight_bytes;
    }
  }
  const double kv =
      double(s.batch) * model.kv_cache_elements(s.kv_length()) * llm::dtype_bytes(s.hidden);
  e.memory_gb = (weights + kv) / 1e9;
  e.fits_memory = weights + kv <= gpu.dram.capacity_mb * 1024.0 * 1024.0;
  e.tensor_unit = path.description;
  e.tensor_peak_tops = path.peak_tops;
  e.tensor_area_mm2 = area_per_sm * gpu.sms;
  e.tensor_power_w = power_per_sm * gpu.sms;
  if (e.tensor_area_mm2 > 0) e.tensor_tops_per_mm2 = path.peak_tops / e.tensor_area_mm2;
  if (e.tensor_power_w > 0) e.tensor_tops_per_w = path.peak_tops / e.tensor_power_w;
  return e;
}

void to_json(nlohmann::json& j, const TileChoice& t) {
  j = nlohmann::json{{"tm", t.tm},       {"tn", t.tn},       {"split_k", t.split_k},
                     {"tiles", t.tiles}, {"waves", t.waves}, {"stream_k", t.stream_k}};
}

void to_json(nlohmann::json& j, const OpCost& c) {
  j = nlohmann::json{{"name", c.name},
                     {"kind", c.kind},
                     {"ms", c.ms},
                     {"time_ms", c.ms},
                     {"bound", c.bound},
                     {"flops", c.flops},
                     {"bytes", c.bytes},
                     {"kernels", c.kernels},
                     {"unit", c.execution_path},
                     {"compute_ms", c.compute_ms},
                     {"memory_ms", c.memory_ms}};
  if (c.tile.tiles > 0) j["tile"] = c.tile;
}

std::string layer_kind_name(const llm::LayerKind& k) {
  return std::string(k.moe ? "MoE FFN" : "dense FFN") +
         (k.window > 0 ? ", sliding window " + std::to_string(k.window) : ", full attention");
}

void to_json(nlohmann::json& j, const LayerGroupCost& g) {
  j = nlohmann::json{{"kind", g.kind}, {"layers", g.count}, {"layer_ms", g.ms}, {"ops", g.ops}};
}

void to_json(nlohmann::json& j, const StepEstimate& e) {
  auto known = [](bool is_known, double v) { return is_known ? nlohmann::json(v) : nullptr; };
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& c : e.layer) ops.push_back(c);
  for (const auto& list : {&e.embedding, &e.head}) {
    for (const auto& c : *list) ops.push_back(c);
  }
  j = nlohmann::json{{"model", e.model},
                     {"gpu", e.gpu},
                     {"phase", e.phase},
                     {"batch", e.batch},
                     {"context", e.context},
                     {"seq", e.seq},
                     {"weights", e.weights},
                     {"acts", e.acts},
                     {"precompute", e.precompute},
                     {"layers", e.layers},
                     {"layer_ms", e.layer_ms},
                     {"latency_ms", e.latency_ms},
                     {"time_ms", e.latency_ms},
                     {"tokens_per_s", e.tokens_per_s},
                     {"tensor_energy_j", known(e.tensor_energy_known, e.tensor_energy_j)},
                     {"dram_energy_j", known(e.dram_energy_known, e.dram_energy_j)},
                     {"energy_mj_per_token",
                      known(e.tensor_energy_known && e.dram_energy_known, e.energy_mj_per_token)},
                     {"memory_gb", e.memory_gb},
                     {"fits_memory", e.fits_memory},
                     {"tensor_core",
                      {{"unit", e.tensor_unit},
                       {"peak_tops", e.tensor_peak_tops},
                       {"area_mm2", e.tensor_area_mm2},
                       {"power_w", e.tensor_power_w},
                       {"tops_per_mm2", e.tensor_tops_per_mm2},
                       {"tops_per_w", e.tensor_tops_per_w}}},
                     {"ops", ops}};
  if (!e.path_choice.empty()) j["path_choice"] = e.path_choice;
  j["layer_kind"] = e.layer_kind;
  if (!e.other_layers.empty()) j["other_layers"] = e.other_layers;
  if (!e.routing.empty()) j["routing"] = e.routing;
}

}  // namespace ltc::roofline
