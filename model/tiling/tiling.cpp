#include "model/tiling/tiling.h"

#include "common/error.h"
#include "common/int_math.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <utility>

namespace ltc::tiling {
namespace {

int64_t pow2_at_least(int64_t x) {
  int64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

// Registers a thread needs besides its fragments: indices, addresses, loop counters.
constexpr int kOverheadRegisters = 24;
constexpr int kWarpThreads = 32;
constexpr int kMaxWarpsPerBlock = 16;
constexpr int kMaxStages = 4;        // cp.async pipeline depth the scheduler considers
constexpr int64_t kSkinnyRows = 16;  // GEMMs of at most this M may take K tiles up to 1024
constexpr double kSmBandwidthShare = 4;

}  // namespace

golden::LmmaShape choose_lmma_shape(const golden::LmmaShape& core, int tiles_per_core, int wbits,
                                    const Tile& warp) {
  golden::LmmaShape s = core;
  const int64_t max_b = std::min<int64_t>(std::max(tiles_per_core, 1), warp.n / core.n);
  const int64_t max_a = warp.m / core.m;
  int64_t a = 1, b = 1;
  // The next multiple that still divides the warp tile's tile count along that side.
  auto next = [](int64_t cur, int64_t max, int64_t count) {
    for (int64_t v = cur + 1; v <= max; ++v) {
      if (count % v == 0) return v;
    }
    return cur;
  };
  // Every tile of the tensor core takes part (an instruction on fewer leaves tiles idle: the
  // core accepts one instruction at a time), and one issue keeps it busy for several cycles.
  while (a * b < tiles_per_core ||
         lmma_issue_cycles({int(a * core.m), int(b * core.n), core.k}, core, tiles_per_core,
                           wbits) < kMinLmmaIssueCycles) {
    const int64_t nb = next(b, max_b, warp.n / core.n);
    if (nb != b) {
      b = nb;
      continue;
    }
    const int64_t na = next(a, max_a, warp.m / core.m);
    if (na == a) break;
    a = na;
  }
  s.m = int(a * core.m);
  s.n = int(b * core.n);
  return s;
}

double max_lines_per_slice(double lines, int slices) {
  if (lines <= 0) return 0;
  if (slices <= 1) return lines;
  const int64_t n = int64_t(std::llround(lines));
  const double q = 1.0 / slices;
  double pmf = std::pow(1.0 - q, double(n)), cdf = 0, expected = 0;
  for (int64_t x = 0; x < n; ++x) {
    cdf += pmf;
    const double below = std::pow(std::min(1.0, cdf), double(slices));
    if (1.0 - below < 1e-9) break;
    expected += 1.0 - below;
    pmf *= double(n - x) / double(x + 1) * q / (1.0 - q);
  }
  return std::max({expected, 1.0, lines / slices});
}

std::string Tile::name() const {
  return "[" + std::to_string(m) + "," + std::to_string(n) + "," + std::to_string(k) + "]";
}

std::string GemmProblem::invalid_reason() const {
  if (m < 1 || n < 1 || k < 1) {
    return "gemm: M, N, K must be >= 1 (got " + std::to_string(m) + ", " + std::to_string(n) +
           ", " + std::to_string(k) + ")";
  }
  if (batch < 1) return "gemm: batch must be >= 1 (got " + std::to_string(batch) + ")";
  if (instr.m < 1 || instr.n < 1 || instr.k < 1) return "gemm: bad instruction shape";
  if (!(a_bits > 0 && w_bits > 0 && acc_bits > 0 && out_bits > 0)) {
    return "gemm: operand sizes must be positive";
  }
  if (!(tensor_tops > 0)) return "gemm: the GPU has no tensor rate for these operands";
  return "";
}

void GemmProblem::validate() const {
  if (const std::string why = invalid_reason(); !why.empty()) throw InputError(why);
}

GemmProblem lut_gemm_problem(const hw::GpuConfig& gpu, int64_t m, int64_t n, int64_t k,
                             golden::DType act, int wbits, double extra_weight_bits,
                             bool quantize_tables) {
  if (!gpu.has_lut_tensor()) {
    throw InputError("--gpu: '" + gpu.name + "' has no LUT tensor core (try a100-lut4x)");
  }
  const hw::TensorCoreConfig& core = gpu.lut_tensor->core;
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.instr = core.shape;
  const golden::DType table = golden::lut_table_dtype(act, quantize_tables);
  p.a_bits = (double(core.shape.half_table_size()) * golden::dtype_bits(table) +
              (quantize_tables ? 32.0 : 0.0)) /
             core.shape.k;
  p.w_bits = wbits + extra_weight_bits;
  p.acc_bits = golden::dtype_bits(golden::is_int(act) ? golden::DType::kInt32 : core.acc);
  p.out_bits = 16;
  p.passes = wbits;
  p.lut_tiles_per_core = gpu.lut_tensor->tiles_per_tensor_core;
  p.tensor_tops = gpu.lut_tops(golden::dtype_name(act), wbits);
  if (!(p.tensor_tops > 0)) {
    throw InputError("--acts: the LUT tensor core of '" + gpu.name + "' cannot build tables from " +
                     std::string(golden::dtype_name(act)));
  }
  return p;
}

GemmProblem mac_gemm_problem(const hw::GpuConfig& gpu, int64_t m, int64_t n, int64_t k,
                             golden::DType act, golden::DType weight) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  // 8-bit operands (int8, fp8) take K = 32 per mma, 16-bit ones K = 16.
  p.instr = golden::LmmaShape{16, 8, golden::dtype_bits(act) == 8 ? 32 : 16};
  p.a_bits = golden::dtype_bits(act);
  p.w_bits = golden::dtype_bits(weight);
  p.acc_bits = 32;
  p.out_bits = 16;
  p.tensor_tops = gpu.mac_tops(golden::dtype_name(act), golden::dtype_name(weight));
  if (!(p.tensor_tops > 0)) p.tensor_tops = gpu.mac_tops("fp16", "fp16");
  p.warpgroup = gpu.sm.mma_warpgroup;
  // The rate the tensor_tops above fell back to when the pair has none of its own.
  p.mma_timing = gpu.mac_tops(golden::dtype_name(act), golden::dtype_name(weight)) > 0
                     ? gpu.mma_timing(p.instr, golden::dtype_name(act), golden::dtype_name(weight))
                     : gpu.mma_timing(p.instr, "fp16", "fp16");
  return p;
}

GemmProblem mac_mpgemm_problem(const hw::GpuConfig& gpu, int64_t m, int64_t n, int64_t k,
                               golden::DType act, int weight_bits) {
  if (weight_bits < 1 || weight_bits > 8) {
    throw InputError("gemm: weight codes of 1..8 bits for a MAC mpGEMM (got " +
                     std::to_string(weight_bits) + ")");
  }
  GemmProblem p = mac_gemm_problem(gpu, m, n, k, act, act);
  p.w_bits = weight_bits;
  const bool codes_direct = act == golden::DType::kInt8 && weight_bits == 8;
  p.dequant_bits = codes_direct ? 0 : golden::dtype_bits(act);
  // Skinny weight-only GEMMs run mma.sync warps (one warp row, sliced K, codes dequantized in
  // registers), as weight-only GEMV kernels do on Hopper: a warpgroup spans 64 rows of mostly
  // padding and reads its dequantized B from shared memory.
  if (m <= kSkinnyRows) p.warpgroup = 1;
  return p;
}

GemmProblem mma_kernel_problem(const hw::GpuConfig& gpu, int64_t m, int64_t n, int64_t k,
                               golden::DType a, golden::DType b, int weight_bits) {
  using golden::DType;
  const bool native =
      a == DType::kInt8 || a == DType::kFp8E4M3 || a == DType::kFp8E5M2 || a == DType::kBf16;
  const DType mma_a = native ? a : DType::kFp16;
  return weight_bits > 0 ? mac_mpgemm_problem(gpu, m, n, k, mma_a, weight_bits)
                         : mac_gemm_problem(gpu, m, n, k, mma_a, b);
}

LinearMma linear_mma(bool low_bit, golden::DType acts, double bits_per_weight) {
  LinearMma r;
  r.a = low_bit && golden::is_int(acts) ? golden::DType::kInt8 : golden::DType::kFp16;
  r.weight_bits = low_bit ? int(std::ceil(bits_per_weight)) : 0;
  return r;
}

SliceCopy slice_copy(int64_t rows, int64_t row_bytes, int64_t warps, int64_t own_rows) {
  if (rows % warps == 0) return {warps, rows / warps, row_bytes, false};
  if (row_bytes % warps == 0) return {warps, rows, row_bytes / warps, false};
  return {warps, own_rows, row_bytes, true};
}

double SliceCopy::line_cycles(int64_t line_bytes) const {
  const double lines = double(std::max<int64_t>(1, ceil_div(bytes_per_copy, line_bytes)));
  return double(warps) * double(copies_per_warp) * lines;
}

int64_t mma_cluster(const GemmProblem& p, const hw::GpuConfig& gpu, int64_t grid_n) {
  const bool shares_a = p.tile_warpgroup() > 1 || p.m <= kSkinnyRows;
  return p.lut_tiles_per_core == 0 && shares_a && gpu.sm.tma && gpu.sm.cluster_size > 1 &&
                 grid_n > 1
             ? int64_t(gpu.sm.cluster_size)
             : 1;
}

bool dequantizes_in_registers(const GemmProblem& p) {
  return p.dequant_bits > 0 && p.tile_warpgroup() == 1;
}

TileChoice evaluate_tiles(const GemmProblem& p, const hw::GpuConfig& gpu, const Tile& block,
                          const Tile& warp, bool* fits, int k_slices) {
  TileChoice c;
  c.block = block;
  c.warp = warp;
  c.instr = p.instr;
  *fits = false;
  if (block.m < 1 || block.n < 1 || block.k < 1 || warp.m < 1 || warp.n < 1) return c;
  if (block.m % warp.m || block.n % warp.n || warp.m % p.instr.m || warp.n % p.instr.n ||
      block.k % p.instr.k) {
    return c;
  }
  const int64_t warpgroup = p.tile_warpgroup();
  // Sliced K: one warp row spanning the block's M, whole instructions per slice, and an output
  // tile the slices can share out for the reduction (by rows or by columns).
  if (k_slices < 1 ||
      (k_slices > 1 && (block.m != warp.m || block.k % (int64_t(k_slices) * p.instr.k) != 0 ||
                        (warp.m % k_slices != 0 && warp.n % k_slices != 0) || warpgroup > 1))) {
    return c;
  }
  c.k_slices = k_slices;
  c.warp.k = block.k / k_slices;
  if (p.lut_tiles_per_core > 0) {
    c.instr = choose_lmma_shape(p.instr, p.lut_tiles_per_core, p.passes, c.warp);
  }
  c.warps_per_block = int((block.m / warp.m) * (block.n / warp.n)) * k_slices;
  if (c.warps_per_block > kMaxWarpsPerBlock) return c;
  if (warpgroup > 1 && block.m / warp.m != warpgroup) return c;

  c.stage_bytes = (double(block.m) * block.k * p.a_bits + double(block.n) * block.k * p.w_bits) / 8;
  const double dequant_bytes =
      dequantizes_in_registers(p) ? 0.0 : double(block.n) * block.k * p.dequant_bits / 8;
  c.smem_bytes_per_block = c.stages * c.stage_bytes + dequant_bytes;
  // The slices' partial sums (fp32) meet in shared memory after the main loop, in the stages.
  const double reduce_bytes = k_slices > 1 ? double(k_slices) * block.m * block.n * 4 : 0.0;
  const double smem_block_limit = gpu.shared_memory_kb_per_block * 1024.0;
  if (std::max(c.smem_bytes_per_block, reduce_bytes) > smem_block_limit) return c;

  // Per thread: accumulators of the warp tile + two instruction steps of A and W fragments
  // (register double buffering: the next step's are loaded while the current one computes).
  // A warpgroup MMA reads both operands from shared memory: only accumulators in registers.
  const double frag_bits = double(warp.m) * warp.n * p.acc_bits +
                           (warpgroup > 1 ? 0.0
                                          : 2 * double(warp.m) * p.instr.k * p.a_bits +
                                                2 * double(warp.n) * p.instr.k * p.w_bits);
  c.registers_per_thread = int(std::ceil(frag_bits / 32.0 / kWarpThreads)) + kOverheadRegisters;
  if (c.registers_per_thread > gpu.max_registers_per_thread) return c;
  // Resident blocks by the simulator's rule (hw::block_occupancy: register allocation units, the
  // runtime's shared-memory reservation).
  auto resident_blocks = [&](double smem_bytes) {
    return hw::block_occupancy(gpu, c.warps_per_block, c.registers_per_thread,
                               int64_t(std::ceil(std::max(smem_bytes, reduce_bytes))))
        .blocks_per_sm;
  };
  const int fit_blocks = resident_blocks(c.smem_bytes_per_block);
  if (fit_blocks < 1) return c;
  // Deepen the pipeline while a block still fits and the SM keeps as many blocks: more stages
  // keep more bytes in flight (what memory-bound tiles need, see memory_us below).
  const double stage_bytes = c.stage_bytes;
  const int64_t k_tiles = ceil_div(p.k, block.k);
  const int64_t grid_blocks = ceil_div(p.m, block.m) * ceil_div(p.n, block.n) * p.batch;
  const int64_t resident = std::min<int64_t>(fit_blocks, ceil_div(grid_blocks, gpu.sms));
  while (c.stages < kMaxStages && c.stages <= k_tiles &&
         (c.stages + 1) * stage_bytes + dequant_bytes <= smem_block_limit &&
         resident_blocks((c.stages + 1) * stage_bytes + dequant_bytes) >= resident) {
    ++c.stages;
  }
  c.smem_bytes_per_block = c.stages * stage_bytes + dequant_bytes;
  const int bps = resident_blocks(c.smem_bytes_per_block);
  c.blocks_per_sm = bps;

  c.grid_m = ceil_div(p.m, block.m);
  c.grid_n = ceil_div(p.n, block.n);
  c.k_steps = ceil_div(p.k, block.k);
  c.grid_z = p.batch;
  const int64_t slots = int64_t(gpu.sms) * bps;
  c.waves = ceil_div(c.blocks(), slots);
  const double k_pad = double(c.k_steps) * block.k;
  c.padding_fraction =
      1.0 - double(p.m) * p.n * p.k / (double(c.grid_m * block.m) * (c.grid_n * block.n) * k_pad);

  // Time: each wave's blocks share their SM's tensor rate; traffic shares DRAM.
  const double block_ops = 2.0 * block.m * block.n * k_pad;
  // An LMMA over fewer core tiles than a tensor core has leaves the others idle.
  const double tile_share =
      p.lut_tiles_per_core > 0
          ? std::min(1.0, double((c.instr.m / p.instr.m) * (c.instr.n / p.instr.n)) /
                              p.lut_tiles_per_core)
          : 1.0;
  // The tensor cores' rate at the SM clock, as the simulator issues them: a MAC instruction takes
  // its mma_timing issue cycles (the H200's m16n8k16 4 cycles: 1070 TOP/s at 1.98 GHz, the
  // datasheet's 989 being that rate at sm.tensor_rate_clock_ghz); a LUT problem's rate
  // (GpuConfig::lut_tops) comes from its instructions' cycles already.
  const double tensor_tops = p.lut_tiles_per_core == 0 && p.mma_timing.issue_cycles > 0
                                 ? 2.0 * double(p.instr.m * p.instr.n * p.instr.k) /
                                       double(p.mma_timing.issue_cycles) * gpu.tensor_cores() *
                                       gpu.clock_ghz * 1e-3
                                 : p.tensor_tops;
  // Each sub-partition owns its tensor cores and runs the warps dealt to it: an SM with `blocks`
  // resident goes at the pace of its busiest sub-partition (6 warps on 4: two hold 2, so 3/4 of
  // the SM's rate; fewer warps than sub-partitions leave some idle).
  auto block_tensor_us = [&](int64_t blocks) {
    const double warps = double(c.warps_per_block * blocks);
    const double sps = gpu.sub_partitions_per_sm;
    const double balance = warps / (sps * std::ceil(warps / sps));
    return block_ops / (tensor_tops * 1e6 / gpu.sms * tile_share * balance);
  };
  // Closed form over the waves: every full wave runs bps blocks per SM back to back; the last
  // wave runs ceil(left / SMs) on its busiest SM, at the pace those blocks' warps set.
  const int64_t last = c.blocks() - (c.waves - 1) * slots;
  const int64_t full_blocks = (c.waves - 1) * bps, tail_blocks = ceil_div(last, gpu.sms);
  // Shared-memory bandwidth bounds the tensor cores too: each K step every warp reads its A (or
  // table) and W fragments through the SM's shared-memory data path (sm.lsu_bytes_per_cycle),
  // and the stage fill takes that path for a cycle per L2 line of each copy its warps issue
  // (slice_copy: the compiler's split of a slice between warps; a copy shorter than a line costs
  // the whole line's cycle, as the simulator times an ldgsts; a MAC GEMM shorter than its block
  // copies only its rows); a tensor memory accelerator (sm.tma) fills the stages beside it.
  const double read_bits = double(block.m) * block.n / warp.n * p.a_bits +
                           double(block.m) * block.n / warp.m / double(warpgroup) * p.w_bits;
  // A LUT kernel's weights are packed by core tile: one row per core tile's N columns.
  const bool lut = p.lut_tiles_per_core > 0;
  auto row_bytes = [&](double bits) { return int64_t(std::ceil(double(block.k) * bits / 8)); };
  const int64_t a_copy_rows = lut ? block.m : std::min(p.m, block.m);
  const SliceCopy a_copy = slice_copy(a_copy_rows, row_bytes(p.a_bits), c.warps_per_block,
                                      std::min(c.warp.m, a_copy_rows));
  const SliceCopy w_copy =
      lut ? slice_copy(block.n / p.instr.n, row_bytes(p.w_bits * p.instr.n), c.warps_per_block,
                       c.warp.n / p.instr.n)
          : slice_copy(block.n, row_bytes(p.w_bits), c.warps_per_block, c.warp.n);
  const double fill_lines =
      gpu.sm.tma ? 0.0
                 : a_copy.line_cycles(gpu.sm.line_bytes) + w_copy.line_cycles(gpu.sm.line_bytes);
  const double smem_us_per_block = (read_bits / 8 * k_pad / double(gpu.sm.lsu_bytes_per_cycle) +
                                    fill_lines * double(c.k_steps)) /
                                   (gpu.clock_ghz * 1e3);
  // Dequantize-then-MAC: the block dequantizes its W tile's codes once per K step on the SM's
  // CUDA cores, beside the tensor cores (what binds it when the block is short in M); in
  // registers every warp row repeats it. The estimate times it as the simulator and the roofline
  // do (GpuConfig::cuda_core_cycles: FP32 and INT32 lanes side by side); tiles are ranked at the
  // FP32 lanes' rate alone (half that on the A100): the ranking has no latency model, and the
  // faster rate picks tiles whose dequantize then binds in the simulator.
  const double dequant_readers = dequantizes_in_registers(p) ? double(block.m / warp.m) : 1.0;
  const double dequant_codes = p.dequant_bits > 0 ? double(block.n) * k_pad * dequant_readers : 0;
  const double dequant_us_per_block =
      dequant_codes *
      gpu.cuda_core_cycles(kDequantOpsPerCode - kDequantIntOpsPerCode, kDequantIntOpsPerCode) /
      (gpu.clock_ghz * 1e3);
  const double dequant_rank_us_per_block = dequant_codes * double(kDequantOpsPerCode) /
                                           (double(gpu.fp32_lanes_per_sm()) * gpu.clock_ghz * 1e3);
  // One warp's tensor-core instructions on one accumulator tile depend on each other: per K step
  // it issues its warp tile's instructions, and the next step's on the same tile wait for the
  // result. Resident blocks overlap their chains, so each wave takes at least one chain.
  const hw::TensorOpTiming op =
      p.lut_tiles_per_core > 0 ? gpu.lmma_timing(c.instr, p.passes) : p.mma_timing;
  const double warp_tiles = double((warp.m / c.instr.m) * (warp.n / c.instr.n));
  const double chain_cycles =
      k_pad / double(c.instr.k * k_slices) *
      std::max(warp_tiles * double(op.issue_cycles), double(op.latency_cycles));
  c.chain_us = double(c.waves) * chain_cycles / (gpu.clock_ghz * 1e3);
  // Per K step a warp waits at the block's barrier, loads its fragments from shared memory and
  // then issues the tensor-core instructions that read them. A sub-partition holding one warp
  // (the resident blocks' warps no more than the sub-partitions) has no other warp to issue
  // while that one loads: there the K step's shared-memory (and dequantize) time and its
  // tensor-core time add up. With more warps a sub-partition issues one warp's MMAs while
  // another loads, but a warp waiting on the shared-memory path (or its dequantize) issues none:
  // the two overlap as far as the roofline overlaps two resources a kernel uses in turn
  // (achievable.overlap_exponent), not as their maximum. The estimate of an MMA kernel times
  // both; the ranking (`serial` false) and the LUT kernels' estimate take the maximum (the
  // agreement of the two, per kernel: docs/results/agreement.md).
  auto in_turn_us = [&](int64_t blocks, int64_t resident, double dequant_us, bool serial) {
    const double tensor = block_tensor_us(resident), cuda = std::max(smem_us_per_block, dequant_us);
    const bool mma = serial && p.lut_tiles_per_core == 0;
    const double warps_per_sp =
        double(int64_t(c.warps_per_block) * resident) / double(gpu.sub_partitions_per_sm);
    const bool alone = mma && warps_per_sp <= 1;
    // Dequantize in registers (GEMMs beyond kSkinnyRows): a warp dequantizes what its own
    // fragment loads brought, so its shared-memory wait and its dequantize come one after the
    // other in its instruction stream while the sub-partition's other warps issue MMAs. Two warps
    // per sub-partition (a tile of two resident blocks, which run the same K steps together) have
    // no third to cover the chain: its sum overlaps the MMAs; w warps share it between w / 2
    // pairs, down to the larger of the two (the simulator's W4A16 prefill GEMMs on the A100:
    // 128x128x64 tiles at 2 warps per sub-partition, 64x128x64 at 4). Skinny tiles, which the
    // estimate ranks, keep the larger.
    const double shared =
        dequantizes_in_registers(p) && p.m > kSkinnyRows
            ? std::max(cuda, (smem_us_per_block + dequant_us) * 2.0 / warps_per_sp)
            : cuda;
    return double(blocks) * (alone ? tensor + cuda
                             : mma ? hw::overlap(tensor, shared, gpu.achievable.overlap_exponent)
                                   : std::max(tensor, cuda));
  };
  auto compute_at = [&](double dequant_us, bool serial) {
    return std::max(c.chain_us, in_turn_us(full_blocks, bps, dequant_us, serial) +
                                    in_turn_us(tail_blocks, tail_blocks, dequant_us, serial));
  };
  const double compute_us = compute_at(dequant_us_per_block, true);
  {
    const double tensor = double(full_blocks) * block_tensor_us(bps) +
                          double(tail_blocks) * block_tensor_us(tail_blocks);
    const double blocks = double(full_blocks + tail_blocks);
    c.bound = compute_us == c.chain_us && c.chain_us > tensor ? "chain"
              : blocks * smem_us_per_block > tensor && smem_us_per_block >= dequant_us_per_block
                  ? "smem"
              : blocks * dequant_us_per_block > tensor ? "dequant"
                                                       : "compute";
  }
  // Traffic: A is read once per block column, W once per block row. An operand whose unique
  // bytes fit in half of L2 is fetched from DRAM once and re-read from L2. So is every operand
  // when one wave's working set fits there: blocks run in raster order (bx fastest), so the
  // blocks that share a row of A or a column of W run in the same or the next wave. A batch's
  // GEMMs share nothing and run one after another (grid z outermost): each GEMM's traffic, with
  // at most its own blocks in a wave, times the batch.
  // A MAC GEMM shorter than its block tile loads only its M rows (compiler/gemm_lowering.cpp);
  // a LUT kernel loads the block's table rows, padding included.
  const double a_rows = !lut && c.grid_m == 1 ? double(std::min(p.m, block.m)) : double(block.m);
  const double a_unique = double(c.grid_m) * a_rows * k_pad * p.a_bits / 8;
  const double w_unique = double(c.grid_n * block.n) * k_pad * p.w_bits / 8;
  const double out_bytes = double(p.m) * p.n * p.out_bits / 8;
  const double batch = double(p.batch);
  c.global_bytes = (a_unique * c.grid_n + w_unique * c.grid_m + out_bytes) * batch;
  const double l2_half = gpu.l2_bytes() / 2;
  const double wave_blocks = double(std::min<int64_t>(slots, c.grid_m * c.grid_n));
  const double wave_bytes = (std::ceil(wave_blocks / double(c.grid_n)) * a_rows * p.a_bits +
                             std::min(wave_blocks, double(c.grid_n)) * double(block.n) * p.w_bits) *
                            k_pad / 8;
  const bool wave_fits = wave_bytes <= l2_half;
  // The blocks of one wave walk K together, so those sharing a slice of A (one
  // block row) or of W (one block column) read it from L2 after the first; only later waves
  // re-read from DRAM an operand that does not fit in L2.
  const double rows_per_wave =
      std::clamp(std::floor(wave_blocks / double(c.grid_n)), 1.0, double(c.grid_m));
  const double cols_per_wave = std::min(wave_blocks, double(c.grid_n));
  // A cluster's blocks read their shared A tile from L2 once (mma_cluster: TMA multicast). The
  // estimate counts it for skinny mma.sync kernels, whose A re-reads bind them; the warpgroup
  // GEMMs' estimate (fit to the simulated H200 GEMMs and decode steps) leaves it out.
  const bool skinny = p.m <= kSkinnyRows;
  const int64_t cluster = skinny && warpgroup == 1 ? mma_cluster(p, gpu, c.grid_n) : 1;
  const int64_t a_reads = ceil_div(c.grid_n, cluster);
  const double a_readers_per_wave = std::max(1.0, std::ceil(cols_per_wave / double(cluster)));
  double dram_bytes = out_bytes, l2_bytes = 0;
  for (auto [unique, reads, per_wave] : {std::tuple{a_unique, a_reads, a_readers_per_wave},
                                         std::tuple{w_unique, c.grid_m, rows_per_wave}}) {
    if (unique <= l2_half || wave_fits) {
      dram_bytes += unique;
      l2_bytes += unique * double(reads - 1);
    } else {
      const double fetches = std::ceil(double(reads) / per_wave);
      dram_bytes += unique * fetches;
      l2_bytes += unique * (double(reads) - fetches);
    }
  }
  dram_bytes *= batch;
  l2_bytes *= batch;
  // Few resident blocks cannot pull the whole bandwidth: one SM draws at most kSmBandwidthShare
  // times its fair share (so a 27-block grid on 108 SMs is not DRAM-peak bound).
  const double active = std::min<double>(gpu.sms, double(c.blocks()));
  const double share = std::min(1.0, kSmBandwidthShare * active / gpu.sms);
  // DRAM and L2 are separate resources working in parallel, each at the bandwidth the simulator
  // gives it (hw::GpuConfig::dram_sim_gbps, l2_sim_bytes_per_cycle).
  const double dram_sim_per_us = gpu.dram_sim_gbps() * 1e3;
  const double l2_sim_per_us = gpu.l2_sim_bytes_per_cycle() * gpu.clock_ghz * 1e3;
  double memory_us = std::max(dram_bytes / dram_sim_per_us, l2_bytes / l2_sim_per_us) / share;
  const char* memory_bound =
      l2_bytes / l2_sim_per_us > dram_bytes / dram_sim_per_us ? "l2" : "dram";
  // Hot lines: the blocks of a wave that share a K slice of A (or W) ask for the same lines at
  // about the same time, and each line is served by one L2 slice, so a K step takes at least
  // readers x slice bytes / (the slices holding them x one slice's bandwidth). A skinny GEMM's
  // blocks start together and run the same short K loop in lockstep, wave after wave: every
  // reader of a K step asks for its lines at once, so the step waits for the fullest slice
  // (max_lines_per_slice), and each wave pays its K steps again.
  const double slice_per_us = l2_sim_per_us / double(gpu.sm.l2_slices);
  auto hot_us = [&](double readers, double tile_bytes) {
    const double lines = std::ceil(tile_bytes / gpu.sm.line_bytes);
    if (skinny) {
      return readers * max_lines_per_slice(lines, gpu.sm.l2_slices) * gpu.sm.line_bytes /
             slice_per_us;
    }
    return readers * tile_bytes / (std::min(lines, double(gpu.sm.l2_slices)) * slice_per_us);
  };
  const double per_k_step =
      std::max(hot_us(a_readers_per_wave, a_rows * block.k * p.a_bits / 8),
               hot_us(rows_per_wave, double(block.n) * block.k * p.w_bits / 8));
  const double hot_total = per_k_step * double(c.k_steps) * (skinny ? double(c.waves) : 1.0);
  if (hot_total > memory_us) memory_bound = "l2";
  memory_us = std::max(memory_us, hot_total);
  // Little's law: an SM has at most (stages - 1) stages of each resident block in flight, so
  // the active SMs cannot pull more than that per DRAM latency.
  const double round_trip_us = gpu.dram_round_trip_ns() * 1e-3;
  if (gpu.dram.latency_ns > 0) {
    const double loaded_stage_bytes =
        (a_rows * block.k * p.a_bits + double(block.n) * block.k * p.w_bits) / 8;
    const double in_flight =
        double(std::min<int64_t>(slots, c.blocks())) * (c.stages - 1) * loaded_stage_bytes;
    const double latency_bound_us = dram_bytes / (in_flight / round_trip_us);
    if (latency_bound_us > memory_us) memory_bound = "latency";
    memory_us = std::max(memory_us, latency_bound_us);
  }
  // Tiles are ranked by their bottleneck (skinny MAC GEMMs by the estimate, choose_tiles). The
  // time: the SM's work and the memory
  // system overlap as far as measured kernels overlap them (achievable.overlap_exponent, the
  // roofline's rule), between the pipeline's fill and drain, in which one does not overlap the
  // other: the first stage's round trip through L2 and DRAM before anything computes, and after
  // the last stage arrives its K step's work and the output's trip to L2.
  c.bottleneck_us = std::max(compute_at(dequant_rank_us_per_block, false), memory_us);
  const double drain_us =
      in_turn_us(1, std::min<int64_t>(bps, c.blocks()), dequant_us_per_block, true) /
          double(c.k_steps) +
      gpu.l2.latency_ns * 1e-3;
  c.estimated_us = round_trip_us + drain_us +
                   hw::overlap(compute_us, memory_us, gpu.achievable.overlap_exponent);
  // Those are the kernel's cycles at the SM clock. The simulator runs a kernel's cycles at the
  // clock its tensor cores' duty allows (GpuConfig::loaded_clock_ghz: the H200's power cap holds
  // sustained wgmma at 1.546 of its 1.98 GHz), the duty being every issued instruction's busy
  // cycles (padding included) over the kernel's cycles on every tensor core.
  const double tensor_busy_us = double(c.blocks()) * block_ops / (tensor_tops * 1e6 * tile_share);
  c.clock_ghz = gpu.loaded_clock_ghz(tensor_busy_us / c.estimated_us);
  const double slower = gpu.clock_ghz / c.clock_ghz;
  c.estimated_us *= slower;
  c.chain_us *= slower;
  c.compute_us = compute_us * slower;
  c.memory_us = memory_us * slower;
  c.dram_bytes = dram_bytes;
  c.fill_lines = fill_lines;
  if (memory_us > compute_us) c.bound = memory_bound;
  *fits = true;
  return c;
}

std::optional<TileChoice> choose_tiles(const GemmProblem& p, const hw::GpuConfig& gpu) {
  p.validate();
  const auto& in = p.instr;
  // A warpgroup GEMM needs one warp per sub-partition along M (evaluate_tiles).
  const int64_t min_bm = in.m * p.tile_warpgroup();
  const int64_t max_bm = std::min<int64_t>(std::max<int64_t>(min_bm, pow2_at_least(p.m)), 256);
  const int64_t max_bn = std::min<int64_t>(std::max<int64_t>(in.n, pow2_at_least(p.n)), 1024);
  // Skinny GEMMs stream their weights: longer K tiles keep more bytes in flight per block.
  const int64_t max_bk = std::min<int64_t>(std::max<int64_t>(in.k, pow2_at_least(p.k)),
                                           p.m <= kSkinnyRows ? 1024 : 256);
  const bool skinny_mac = p.m <= kSkinnyRows && p.lut_tiles_per_core == 0;
  TileChoice best;
  bool have = false;
  for (int64_t bm = in.m; bm <= std::max<int64_t>(max_bm, in.m); bm *= 2) {
    for (int64_t bn = in.n; bn <= std::max<int64_t>(max_bn, in.n); bn *= 2) {
      for (int64_t bk = in.k; bk <= std::max<int64_t>(max_bk, in.k); bk *= 2) {
        for (int64_t wm = in.m; wm <= bm; wm *= 2) {
          for (int64_t wn = in.n; wn <= bn; wn *= 2) {
            // Sliced K only where one warp row spans the block (skinny GEMMs).
            const int max_slices = wm == bm && p.m <= kSkinnyRows ? kMaxWarpsPerBlock : 1;
            for (int ks = 1; ks <= max_slices; ks *= 2) {
              bool fits = false;
              TileChoice c = evaluate_tiles(p, gpu, {bm, bn, bk}, {wm, wn, bk}, &fits, ks);
              if (!fits) continue;
              // Lower bottleneck (to 1%; a skinny MAC GEMM's estimate: its tiles trade A re-reads
              // from L2 against SMs in use and bytes in flight, which only the estimate weighs
              // together; LUT kernels keep the bottleneck, whose picks the simulator runs faster
              // at M <= 16); then more SMs in use (each pulls memory through its own
              // port); then more resident warps, up to two per sub-partition of every SM (one warp
              // issues while the other waits at a barrier or on shared memory); then more bytes in
              // flight per SM (stages beyond the one computing); then less traffic, fewer
              // padded MACs, larger warp tiles.
              const int64_t enough = int64_t(gpu.sms) * 2 * gpu.sub_partitions_per_sm;
              auto key = [enough, &gpu, skinny_mac](const TileChoice& t) {
                const int64_t resident = std::min<int64_t>(
                    enough, std::min<int64_t>(t.blocks(), int64_t(gpu.sms) * t.blocks_per_sm) *
                                t.warps_per_block);
                const int64_t active_sms = std::min<int64_t>(t.blocks(), gpu.sms);
                // Estimates within 1% of each other tie (they differ by rounding, not design).
                const double rank_us = skinny_mac ? t.estimated_us : t.bottleneck_us;
                const double bucket = std::round(std::log(std::max(rank_us, 1e-9)) / 0.01);
                const double in_flight =
                    double(t.stages - 1) * t.stage_bytes * double(t.blocks_per_sm);
                return std::make_tuple(bucket, -active_sms, -resident, -in_flight, t.global_bytes,
                                       t.padding_fraction, -double(t.warp.m * t.warp.n),
                                       -double(t.block.k));
              };
              if (!have || key(c) < key(best)) {
                best = c;
                have = true;
              }
            }
          }
          if (wm * 2 > bm) break;
        }
      }
      if (bn * 2 > max_bn) break;
    }
    if (bm * 2 > max_bm) break;
  }
  if (!have) return std::nullopt;
  return best;
}

TileChoice require_tiles(const GemmProblem& p, const hw::GpuConfig& gpu) {
  if (auto c = choose_tiles(p, gpu)) return *c;
  throw InputError("tiling: no tile of instruction " + p.instr.name() + " fits the registers (" +
                   std::to_string(gpu.register_file_kb_per_sm) + " KB/SM) and shared memory (" +
                   std::to_string(gpu.shared_memory_kb_per_block) + " KB/block) of '" + gpu.name +
                   "'");
}

}  // namespace ltc::tiling
