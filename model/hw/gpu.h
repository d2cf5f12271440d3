// One GPU: the machine description shared by the roofline (model/roofline), the compiler's
// scheduler (register and shared-memory capacity, tensor-core shape) and the cycle-level simulator.
// Built-in machines are JSON files under configs/gpus/
// (docs/published-figures.md#gpu-datasheet-figures); a user's machine is any JSON file with the
// same fields. Datasheet figures are peaks; the `achievable` section holds the few fitted fractions
// (calibrated on H200 measurements) that turn peaks into real rates.
#pragma once

#include "model/hw/tensor_core.h"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ltc::hw {

// Dense MAC tensor-core throughput of the whole GPU for one (activation, weight) operand pair.
// Weight names are the weight values of docs/cli.md#values that a MAC core takes natively: fp16,
// bf16, fp8e4m3, fp8e5m2, int8, int4.
struct MacTensorRate {
  std::string act;     // "fp16", "bf16", "int8", "fp8e4m3", "fp8e5m2"
  std::string weight;  // "fp16", "bf16", "int8", "int4", "fp8e4m3", "fp8e5m2"
  double tops = 0;     // dense TOP/s (TFLOP/s for floats)
};

// LUT tensor cores (absent on real GPUs): `tiles_per_tensor_core` tiles of `core.shape` in each
// tensor core, one weight bit-plane per cycle, so W_INTn runs at the 1-bit rate divided by n.
struct LutTensorUnit {
  TensorCoreConfig core;          // design lut, shape (e.g. M2N64K4), formats
  int tiles_per_tensor_core = 1;  // parallel tiles per tensor core
  std::vector<std::string> acts;  // activation dtypes the tables may be built from
  // Whole-GPU 1-bit-weight rate in TOP/s: 2*M*N*K * tiles * tensor cores * SMs * clock.
  double w1_tops = 0;  // filled by GpuConfig::finalize(); JSON may not set it
};

struct CacheLevel {
  double capacity_mb = 0;
  double bw_gbps = 0;     // peak bandwidth, GB/s (1e9 bytes/s)
  double latency_ns = 0;  // load-to-use latency
};

// Fractions of peak a tuned kernel reaches, and fixed costs: the calibrated part of the machine.
// One tile of a GEMM library's tile selection (GemmPathRates::tile_choice): the library runs its
// tile_m x tile_n kernel on a problem of M x N outputs and depth K when M * N >= min_mn and
// K >= min_k, unless an entry before it in the list applies. Its kernel's tensor efficiency is
// `tensor_fraction` of the path's dense peak (0: the path's, by its rows).
struct TileRule {
  int tile_m = 0, tile_n = 0;
  double min_mn = 0;
  double min_k = 0;
  double tensor_fraction = 0;
};

// Achievable rates of one GEMM operand path whose kernels differ from the dense FP16 ones
// (INT8 x INT8, FP8, weight-only INT4 as bf16 x int4 on a GPU without that MAC pair): fitted by
// `ltc calibrate` on the path's measured GEMMs. A 0 falls back to the GPU-wide value.
struct GemmPathRates {
  std::string act, weight;         // operand names as in mac_tensor ("int8", "fp8e4m3", "int4")
  double tensor_fraction = 0;      // of the path's dense peak (dequantize paths: act x act peak)
  double dram_bw_fraction = 0;     // streaming weights and activations
  int tile_m = 0;                  // rows of the path's smallest kernel tile (M padded up to it)
  double small_tile_fraction = 0;  // tensor efficiency of its tiles under 128 rows (0: as above)
  double fixed_us = 0;             // per launch (0: kernel_fixed_us)
  int max_split_k = 0;             // K splits its kernels use at most (0: the library's 16)
  // Rows of the path's largest kernel tile (0: the library's 256). A kernel with a fixed row tile
  // (tinygemm's m16 tiles; cuBLASLt's INT8 CUTLASS kernels) repeats its per-tile work (weight
  // dequantization, operand loads) for every tile row of M.
  int max_tile_m = 0;
  double l2_bw_fraction = 0;  // operand feed of its kernels from L2 (0: the GPU-wide value)
  // Per thread-block tile: its prologue (pipeline fill) and epilogue (the output tile converted
  // and stored; INT32 for INT8) as the K depth of main loop they cost at the tile's tensor rate.
  double tile_overhead_k = 0;
  // Columns of the path's one kernel tile, tile_m x tile_n (0: the library's tiles of
  // tile_m..max_tile_m rows and 64..256 columns). tinygemm's thread block is one m16n8k16 tile,
  // so each row of X present is read from L2 once per 8 output columns.
  int tile_n = 0;
  // 1: the path's kernels run whole tiles in waves over the SMs, never stream-K (cuBLASLt's
  // INT8 CUTLASS sm80 kernels: their time steps with ceil(tiles / SMs)); 0: the library may
  // deal K loops evenly over the SMs.
  int data_parallel = 0;
  // Which kernels: "" the library's GEMMs (cuBLAS, cuBLASLt, tinygemm); "grouped" the routed
  // experts' grouped GEMM of the MoE reference step (torch._grouped_mm, one CUTLASS kernel over
  // all groups; docs/performance-models.md). A grouped entry's 0 falls back to the plain entry of
  // its (act, weight), then to the GPU-wide value.
  std::string kernel{};
  // How the library picks its tile. Empty: the fastest of the candidate tiles above (a tuned
  // library's best). Else its heuristic, as a decision list: the first entry whose conditions
  // the problem meets, the last one when none does (cuBLASLt's INT8 CUTLASS kernels on the H200:
  // 128x256, 128x128 or 128x64 by M x N and K, 64x64 below; the roofline then costs that tile,
  // faster or not).
  std::vector<TileRule> tile_choice{};
  // A grouped kernel (persistent thread blocks over all groups' tiles): what a thread block
  // spends each time its next tile is in another group (that group's operand descriptors
  // rewritten), in us; 0: nothing.
  double group_switch_us = 0;
};

// The tile `rules` (GemmPathRates::tile_choice, not empty) pick for an m x n x k problem.
const TileRule& chosen_tile(const std::vector<TileRule>& rules, int64_t m, int64_t n, int64_t k);

struct AchievableRates {
  double dram_bw_fraction = 0.85;  // streaming kernels (GEMV, norms, copies) vs DRAM peak
  double l2_bw_fraction = 0.7;
  double tensor_fraction = 0.75;           // large square GEMM vs dense tensor peak
  double cuda_core_fraction = 0.7;         // elementwise / softmax compute vs CUDA-core peak
  double kernel_fixed_us = 5.0;            // per kernel under CUDA graphs: ramp-up, tail, drain
  double elementwise_fixed_us = 2.0;       // per small memory-bound kernel under CUDA graphs
  double flash_attention_fraction = 0.45;  // prefill attention vs dense tensor peak
  // Decode attention's MMA and softmax on its query tile (one KV group's heads padded to 16 rows)
  // vs dense tensor peak; 0: flash_attention_fraction.
  double decode_attention_fraction = 0;
  double sm_dram_gbps = 30;        // DRAM bandwidth one SM can pull (outstanding loads / latency)
  double overlap_exponent = 4;     // compute/memory overlap: t = (c^p + m^p)^(1/p); large = max
  double throttle_per_efold = 0;   // sustained-power clock drop per e-fold of busy time
  double throttle_onset_ms = 0.5;  // compute-bound busy time before clocks start to drop
  double throttle_max = 1.25;      // slowdown floor: boost clock / lowest sustained clock
  // Eager elementwise kernels (norms, RoPE, activations, residuals, KV-cache copies: often
  // strided views, not vectorized) vs DRAM peak; 0: dram_bw_fraction.
  double elementwise_bw_fraction = 0;
  // Decode attention (split-KV FlashAttention streaming the KV cache) vs DRAM peak; 0:
  // dram_bw_fraction.
  double attention_bw_fraction = 0;
  // Operand feed from L2 of cuBLAS's alignment-1 kernels, vs L2 peak: a batched GEMM gets them
  // when a row of an operand or of its output is not a multiple of 16 bytes (the MLA reference
  // decode's score and value GEMMs over L + 1 cached latents), and they load element by element
  // instead of in 16-byte vectors; 0: l2_bw_fraction.
  double unaligned_l2_fraction = 0;
  // Atomic adds per second into L2, in G/s (the MoE reference combine's index_add_ of FP16 rows:
  // one atomic per element); 0: not limited beyond the eager kernels' bandwidth.
  double atomic_add_gops = 0;
  // An eager norm kernel reduces each row in one thread block, in a chain of loads and
  // reductions whose length grows with the row: ns per element of the normalized width, which
  // bounds a norm over few rows whatever their number (0: not limited).
  double norm_row_ns_per_element = 0;        // RMSNorm
  double layer_norm_row_ns_per_element = 0;  // LayerNorm; 0: norm_row_ns_per_element
  std::vector<GemmPathRates> gemm_paths;
  std::string source;  // where these numbers come from

  // The entry for (act, weight) and kernel ("" or "grouped"), or nullptr.
  const GemmPathRates* gemm_path(std::string_view act, std::string_view weight,
                                 std::string_view kernel = "") const;
};

// The SM microarchitecture the cycle-level simulator (sim/) needs beyond the rates above: what
// datasheets and microbenchmarks give (configs/calibration/*-microbench.json). Unit throughputs
// are derived, not stored: CUDA-core lanes from cuda_fp32_tflops, tensor-core cycles from the
// tensor rates (GpuConfig::lmma_timing / mma_timing), L2 and DRAM bandwidth and latency from the
// l2 / dram sections.
struct SmConfig {
  int max_warps = 64;             // resident warps per SM
  int max_blocks = 32;            // resident thread blocks per SM
  std::string scheduler = "gto";  // warp scheduler policy per sub-partition: gto, lrr
  int alu_latency_cycles = 4;     // dependent FP32 FFMA
  int sfu_ops_per_cycle = 16;     // MUFU operations per cycle per SM
  int sfu_latency_cycles = 18;
  int mma_latency_cycles = 32;  // dependent mma.m16n8k16 chain, issue to issue
  // Warps of one warpgroup MMA (Hopper wgmma: 4, one per sub-partition) whose tensor cores read
  // the shared B operand from shared memory once for the group; 1: every warp loads its own
  // fragments (Ampere mma.sync). The compiler's dense GEMM kernels then use one warpgroup along M.
  int mma_warpgroup = 1;
  // A tensor memory accelerator (Hopper TMA) copies global tiles into shared memory (the
  // trace's ldgsts) without the SM's load/store path; false: every ldgsts line takes an LSU
  // cycle (Ampere cp.async).
  bool tma = false;
  // Thread-block clusters with TMA multicast (Hopper, sm_90): the compiler's dense warpgroup
  // GEMMs launch `cluster_size` blocks adjacent along the grid's x (N) as one cluster; a K tile
  // of A, which they share, is read from L2 once and delivered to every block's shared memory
  // (CUTLASS sm90 kernels, cuBLAS: 2x1 clusters; sim/README.md). 1: no clusters.
  int cluster_size = 1;
  int lmma_latency_cycles = 6;    // LUT core: operand read + writeback beyond the plane beats
  int smem_banks = 32;            // 4-byte banks
  int smem_latency_cycles = 23;   // lds load-to-use, no conflict
  int lsu_bytes_per_cycle = 128;  // L1 / shared-memory data path per SM
  int l1_latency_cycles = 33;     // ldg hit in L1
  int l1_ways = 4;
  int l2_slices = 80;
  int l2_ways = 16;
  // Physical L2 bandwidth of the whole GPU in bytes per cycle, as a microbenchmark measures it;
  // 0: l2.bw_gbps (which for a fitted GPU may be the roofline's effective operand bandwidth).
  double l2_bytes_per_cycle = 0;
  int line_bytes = 128;  // L1 and L2 line; 32-byte sectors
  int dram_channels = 40;
  int noc_bytes_per_cycle = 64;  // one SM's port into the L2 crossbar
  // Between replays of one kernel under CUDA graphs (drain, launch, ramp; measured with empty
  // kernels). Between different kernels: GpuConfig::step_kernel_gap_cycles.
  int kernel_gap_cycles = 2000;
  // DRAM bandwidth the channels deliver, as a streaming microbenchmark measures it (refresh and
  // page misses included); 0: dram.bw_gbps.
  double dram_gbps = 0;
  // The clock at which the datasheet's mac_tensor TOP/s are quoted (0: clock_ghz); the tensor
  // cores' MACs per cycle follow from it (GpuConfig::mma_timing).
  double tensor_rate_clock_ghz = 0;
  // SM clock while the tensor cores run flat out (the board's power cap lowers it; 0: no
  // drop). A kernel's clock falls from clock_ghz toward it with its tensor utilization
  // (GpuConfig::loaded_clock_ghz).
  double tensor_load_clock_ghz = 0;
  std::string source;  // where these numbers come from
};

// One tensor-core warp instruction: the core is busy `issue_cycles` (the initiation interval
// before it accepts the next), the result is ready `latency_cycles` after issue.
struct TensorOpTiming {
  int64_t issue_cycles = 0;
  int64_t latency_cycles = 0;
};

// Cycles a tensor core of `tiles_per_core` tiles of shape `core` is busy with an LMMA of shape
// `instr` (a x b core tiles in M and N, the core's K) and `wbits` weight planes: one beat per
// plane for each round of ceil(a*b / tiles_per_core) tiles. The one definition the roofline,
// the compiler's scheduler (model/tiling) and the simulator use (through lmma_timing below).
int64_t lmma_issue_cycles(const golden::LmmaShape& instr, const golden::LmmaShape& core,
                          int tiles_per_core, int wbits);

// Energy per operation and per byte moved that the cycle-level simulator charges to its counters
// after a run (sim/energy.h); each figure's origin is in `source` (docs/published-figures.md#
// energy-per-operation-and-per-access). 0 means unknown: that part of the energy is left out and
// the output says so. DRAM energy is GpuConfig::dram_pj_per_byte, shared with the roofline.
// The PPA flow's energy per operation of one LUT tile design point (`ltc gpu-energy` writes
// them from `ltc ppa --json` or sweep results): `tile` is its TensorCoreConfig::id ("lut-m2n64k4-
// int8-w2-tint16-int32": design, shape, activations, weight planes, table, accumulator), so an
// entry applies only to the tile, precision and shape it was measured at.
struct LutTileEnergy {
  std::string tile;
  double pj_per_op = 0;  // per op of an lmma (2 per multiply-add), all its weight planes
  std::string source;    // the PPA run it comes from (library, clock, activity, node scaling)
};

struct EnergyFigures {
  double mma_pj_per_op = 0;  // MAC tensor core, per op of an mma (2 per multiply-add)
  // LUT tiles, per precision (sim/energy.h: the entry for the trace's lmma precision; without
  // one, tensor_power_w_per_sm over one SM's share of the W1 rate, the roofline's figure).
  std::vector<LutTileEnergy> lut;
  double cuda_pj_per_op = 0;    // CUDA-core thread operation (alu, sfu, precompute, dequant)
  double smem_pj_per_byte = 0;  // shared-memory bytes read and written
  double l1_pj_per_byte = 0;    // L1 lookups (32-byte sectors)
  double l2_pj_per_byte = 0;    // bytes read from and written to the L2
  double static_w = 0;          // whole GPU at idle (leakage, clocks, DRAM refresh), over the time
  std::string source;

  // The entry for tile id `tile`, or nullptr.
  const LutTileEnergy* lut_entry(std::string_view tile) const;
};

struct GpuConfig {
  std::string name;         // "h200"
  std::string description;  // one line, with the datasheet it comes from
  int sms = 0;
  int sub_partitions_per_sm = 4;
  double clock_ghz = 0;  // boost clock
  int tensor_cores_per_sm = 4;

  std::vector<MacTensorRate> mac_tensor;    // native MAC tensor-core rates
  std::optional<LutTensorUnit> lut_tensor;  // LUT tensor cores, when the GPU has them

  double cuda_fp32_tflops = 0;  // non-tensor FP32 (FMA counted as 2)
  double cuda_fp16_tflops = 0;  // non-tensor FP16
  // Non-tensor INT32 (one op each) on lanes of their own beside the FP32 lanes (Volta and
  // later: 16 of each per sub-partition on the A100, 16 INT32 beside 32 FP32 on the H100); 0:
  // integer work runs on the FP32 lanes.
  double cuda_int32_tops = 0;

  int register_file_kb_per_sm = 256;
  int max_registers_per_thread = 255;
  int shared_memory_kb_per_sm = 164;  // configurable carve-out maximum
  int shared_memory_kb_per_block = 163;
  int l1_kb_per_sm = 192;  // unified L1 + shared memory
  CacheLevel l2;
  CacheLevel dram;  // capacity_mb holds the HBM/GDDR size

  SmConfig sm;                      // the SM for the cycle-level simulator
  double launch_overhead_us = 4.0;  // kernel launch without CUDA graphs
  double sync_overhead_us = 1.0;    // grid-wide synchronization / kernel boundary
  AchievableRates achievable;

  // Tensor-core area and power of one SM's tensor cores, where known (paper Table III, or the
  // PPA flow). 0 means unknown.
  double tensor_area_mm2_per_sm = 0;
  double tensor_power_w_per_sm = 0;
  double dram_pj_per_byte = 0;  // DRAM access energy; 0 means unknown
  EnergyFigures energy;         // the simulator's energy figures

  // Derived helpers ------------------------------------------------------------------------
  int tensor_cores() const { return sms * tensor_cores_per_sm; }
  double dram_bw_bytes_per_s() const { return dram.bw_gbps * 1e9; }
  double l2_bytes() const { return l2.capacity_mb * 1024.0 * 1024.0; }
  // Dense MAC rate for (act, weight) in TOP/s, or 0 when the MAC cores do not take the pair.
  double mac_tops(std::string_view act, std::string_view weight) const;
  // LUT tensor-core rate for activations `act` and `wbits`-plane weights, 0 if no LUT cores or
  // `act` unsupported.
  double lut_tops(std::string_view act, int wbits) const;
  bool has_lut_tensor() const { return lut_tensor.has_value(); }
  // The LUT tile that runs activations `act` with `wbits` weight planes: lut_tensor.core with
  // those (its table, accumulator and output as written when `act` is the core's own, else
  // TensorCoreConfig::make's for `act`). The one rule `ltc ppa --gpu`, sweep points with a `gpu`
  // and the simulator's energy per op (sim/energy.h) use. InputError when the GPU has no LUT
  // tensor cores or its tables do not take `act` (naming lut_tensor.acts).
  TensorCoreConfig lut_tile(golden::DType act, int wbits) const;
  // The one definition of an LMMA's cycles, used by the roofline, the compiler's scheduler and
  // the simulator: an instruction of shape instr (a multiple a x b of the core's tile in M and
  // N, the core's K) on one tensor core of `tiles_per_tensor_core` tiles takes one beat per
  // weight plane for each round of ceil(a*b / tiles) tiles; the result follows after the tile's
  // pipeline stages and the SM's fixed tensor latency. Throws InputError for a shape that is not
  // such a multiple or a GPU without LUT cores.
  TensorOpTiming lmma_timing(const golden::LmmaShape& instr, int wbits) const;
  // A dense MMA (mma.m16n8k16 etc.) on one tensor core, from the GPU's MAC rate for (a, b):
  // issue = 2*M*N*K / ops per cycle per tensor core; latency the measured dependent-chain time.
  TensorOpTiming mma_timing(const golden::LmmaShape& instr, std::string_view a,
                            std::string_view b) const;
  // The SM clock of a kernel whose tensor cores are busy `tensor_utilization` of its cycles:
  // clock_ghz, falling linearly to sm.tensor_load_clock_ghz at full use (power cap).
  double loaded_clock_ghz(double tensor_utilization) const;
  // The simulator's DRAM bandwidth in GB/s (sm.dram_gbps, else dram.bw_gbps).
  double dram_sim_gbps() const { return sm.dram_gbps > 0 ? sm.dram_gbps : dram.bw_gbps; }
  // What one of the simulator's DRAM channels serves, in bytes per SM clock cycle.
  double dram_channel_bytes_per_cycle() const {
    return dram_sim_gbps() / double(sm.dram_channels) / clock_ghz;
  }
  // Cycles the simulator puts between two different kernels of a trace: the per-kernel floor of
  // a small kernel that the roofline fits on measured steps (achievable.elementwise_fixed_us:
  // launch, cold instruction and constant caches, drain, and the kernel's own memory round
  // trip) less that round trip (l2 + dram latency), which the simulator times inside the kernel;
  // at least sm.kernel_gap_cycles. One calibration of the kernel boundary for both models.
  int64_t step_kernel_gap_cycles() const;
  // A load that misses in L2 crosses it before DRAM: its round trip is both latencies (ns).
  double dram_round_trip_ns() const { return l2.latency_ns + dram.latency_ns; }
  // FP32 lanes of one SM (cuda_fp32_tflops / (2 * sms * clock)).
  int fp32_lanes_per_sm() const;
  // INT32 lanes of one SM beside the FP32 ones (cuda_int32_tops / (sms * clock)); 0 when shared.
  int int32_lanes_per_sm() const;
  // Cycles one SM's CUDA cores take for `fp_ops` thread instructions on the FP32 lanes and
  // `int_ops` on the INT32 lanes (on the FP32 lanes when the GPU has none apart): each kind at
  // its lanes' rate, together at most one warp instruction per cycle per sub-partition. The
  // one rule the simulator (per sub-partition) and the roofline use (the compiler's tiling ranks
  // tiles at the FP32 lanes' rate: model/tiling/tiling.cpp says why).
  double cuda_core_cycles(double fp_ops, double int_ops) const;
  // The simulator's L2 bandwidth in bytes per cycle (sm.l2_bytes_per_cycle, else l2.bw_gbps).
  double l2_sim_bytes_per_cycle() const;

  // Fills derived fields (w1_tops) and checks ranges; throws InputError naming the field.
  void finalize();
};

void to_json(nlohmann::json& j, const GpuConfig& g);
// Throws InputError naming the missing or bad field ("gpu: field 'sms' ...").
void from_json(const nlohmann::json& j, GpuConfig& g);

// Compute and memory time overlapped, (a^p + b^p)^(1/p): p = 1 is their sum, p -> inf their
// maximum. The roofline and the compiler's scheduler (model/tiling) take p from
// achievable.overlap_exponent, fitted on measured GEMMs and steps.
double overlap(double a, double b, double p);

// Resident blocks per SM of a kernel and what limits them: warps, blocks, registers (allocated in
// units of kRegisterAllocationUnit per warp) and shared memory (plus the kSmemReservedPerBlock the
// CUDA runtime reserves per block). The one rule the simulator runs blocks by and the compiler's
// scheduler (model/tiling) ranks tiles by. blocks_per_sm 0: one block does not fit.
inline constexpr int64_t kRegisterAllocationUnit = 256;
inline constexpr int64_t kSmemReservedPerBlock = 1024;
struct BlockOccupancy {
  int blocks_per_sm = 0;
  const char* limit = "";      // "warps", "blocks", "registers" or "shared memory"
  int64_t smem_per_block = 0;  // bytes, reservation included (0: no shared memory)
};
BlockOccupancy block_occupancy(const GpuConfig& gpu, int64_t warps_per_block,
                               int64_t regs_per_thread, int64_t smem_bytes);
// What keeps one block of a kernel off every SM of `gpu` ("" when it fits): more warps per block
// than an SM holds, more registers per thread or shared memory per block than the GPU allows, or
// no SM with room for one block. The simulator refuses such a kernel and the compiler refuses to
// emit one, both by this rule.
std::string block_limits_error(const GpuConfig& gpu, int64_t warps_per_block,
                               int64_t regs_per_thread, int64_t smem_bytes);

// Names of the built-in GPUs (file stems under configs/gpus), sorted.
std::vector<std::string> builtin_gpu_names();
// A built-in name ("a100", "h200-drm") or the path of a JSON file. Throws InputError naming the
// file and field for bad JSON, and the valid names for an unknown name.
GpuConfig load_gpu(std::string_view name_or_path);
// The files a GPU is read from, the one named first, then its `base`, that file's base, ...: each
// file's path and its JSON as written (its base not merged). For `ltc show gpu`, which says
// which file set each field. Throws InputError as load_gpu does.
std::vector<std::pair<std::string, nlohmann::json>> gpu_file_chain(std::string_view name_or_path);
// `gpu` with fields of its JSON form replaced: `overrides` is "path=value[,path=value...]" with
// dotted paths into the GPU JSON (the fields of GpuConfig above, docs/hardware.md#gpus), e.g.
// "lut_tensor.tiles_per_tensor_core=8,register_file_kb_per_sm=512,lut_tensor.core.m=1". Values
// are JSON (numbers, true/false) or plain strings. The result goes through the same checks as a
// GPU file; its name stays, its description gets the overrides appended.
// Throws InputError naming the path (and the keys valid there) or the value.
GpuConfig with_overrides(const GpuConfig& gpu, std::string_view overrides);
// A GPU from JSON text read from `origin` (a file name, for messages and for resolving `base`).
// A file may name a `base` GPU (a built-in name, or a JSON path relative to its folder) and give
// only the fields that differ: objects merge field by field, anything else replaces the base's
// value. InputError naming the file for a missing base or a cycle of bases.
GpuConfig parse_gpu_json(std::string_view text, std::string_view origin);

}  // namespace ltc::hw
