#include "model/hw/gpu.h"
#include "model/hw/gpu_file.h"

#include "common/config_dir.h"
#include "common/error.h"
#include "common/file_io.h"
#include "common/json_fields.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <type_traits>

namespace ltc::hw {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* const kActs[] = {"fp16", "bf16", "int8", "fp8e4m3", "fp8e5m2"};
const char* const kMacWeights[] = {"fp16", "bf16", "int8", "int4", "fp8e4m3", "fp8e5m2"};

bool is_one_of(const std::string& s, const char* const* begin, const char* const* end) {
  return std::find_if(begin, end, [&](const char* v) { return s == v; }) != end;
}

std::string fmt_number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// Each section's plain fields, listed once for the reader (from_json) and the writer (to_json;
// --gpu-set's paths are the writer's keys): v(key, member) for an optional field, v(key, member,
// kRequired) for a required one.
constexpr bool kRequired = true;

template <typename V, typename G>
void top_fields(V&& v, G& g) {
  v("name", g.name);
  v("description", g.description);
  v("sms", g.sms, kRequired);
  v("sub_partitions_per_sm", g.sub_partitions_per_sm);
  v("clock_ghz", g.clock_ghz, kRequired);
  v("tensor_cores_per_sm", g.tensor_cores_per_sm);
  v("cuda_fp32_tflops", g.cuda_fp32_tflops, kRequired);
  v("cuda_fp16_tflops", g.cuda_fp16_tflops);
  v("cuda_int32_tops", g.cuda_int32_tops);
  v("register_file_kb_per_sm", g.register_file_kb_per_sm);
  v("max_registers_per_thread", g.max_registers_per_thread);
  v("shared_memory_kb_per_sm", g.shared_memory_kb_per_sm);
  v("shared_memory_kb_per_block", g.shared_memory_kb_per_block);
  v("l1_kb_per_sm", g.l1_kb_per_sm);
  v("launch_overhead_us", g.launch_overhead_us);
  v("sync_overhead_us", g.sync_overhead_us);
  v("tensor_area_mm2_per_sm", g.tensor_area_mm2_per_sm);
  v("tensor_power_w_per_sm", g.tensor_power_w_per_sm);
  v("dram_pj_per_byte", g.dram_pj_per_byte);
}

template <typename V, typename C>
void cache_fields(V&& v, C& c) {
  v("capacity_mb", c.capacity_mb, kRequired);
  v("bw_gbps", c.bw_gbps, kRequired);
  v("latency_ns", c.latency_ns);
}

template <typename V, typename S>
void sm_fields(V&& v, S& x) {
  v("max_warps", x.max_warps);
  v("max_blocks", x.max_blocks);
  v("scheduler", x.scheduler);
  v("alu_latency_cycles", x.alu_latency_cycles);
  v("sfu_ops_per_cycle", x.sfu_ops_per_cycle);
  v("sfu_latency_cycles", x.sfu_latency_cycles);
  v("mma_latency_cycles", x.mma_latency_cycles);
  v("mma_warpgroup", x.mma_warpgroup);
  v("tma", x.tma);
  v("cluster_size", x.cluster_size);
  v("lmma_latency_cycles", x.lmma_latency_cycles);
  v("smem_banks", x.smem_banks);
  v("smem_latency_cycles", x.smem_latency_cycles);
  v("lsu_bytes_per_cycle", x.lsu_bytes_per_cycle);
  v("l1_latency_cycles", x.l1_latency_cycles);
  v("l1_ways", x.l1_ways);
  v("l2_slices", x.l2_slices);
  v("l2_ways", x.l2_ways);
  v("l2_bytes_per_cycle", x.l2_bytes_per_cycle);
  v("line_bytes", x.line_bytes);
  v("dram_channels", x.dram_channels);
  v("noc_bytes_per_cycle", x.noc_bytes_per_cycle);
  v("kernel_gap_cycles", x.kernel_gap_cycles);
  v("dram_gbps", x.dram_gbps);
  v("tensor_rate_clock_ghz", x.tensor_rate_clock_ghz);
  v("tensor_load_clock_ghz", x.tensor_load_clock_ghz);
  v("source", x.source);
}

// The achievable rates' plain fields (gemm_paths, an array, apart).
template <typename V, typename A>
void achievable_fields(V&& v, A& x) {
  v("dram_bw_fraction", x.dram_bw_fraction);
  v("l2_bw_fraction", x.l2_bw_fraction);
  v("tensor_fraction", x.tensor_fraction);
  v("cuda_core_fraction", x.cuda_core_fraction);
  v("kernel_fixed_us", x.kernel_fixed_us);
  v("elementwise_fixed_us", x.elementwise_fixed_us);
  v("flash_attention_fraction", x.flash_attention_fraction);
  v("decode_attention_fraction", x.decode_attention_fraction);
  v("sm_dram_gbps", x.sm_dram_gbps);
  v("overlap_exponent", x.overlap_exponent);
  v("throttle_per_efold", x.throttle_per_efold);
  v("throttle_onset_ms", x.throttle_onset_ms);
  v("throttle_max", x.throttle_max);
  v("elementwise_bw_fraction", x.elementwise_bw_fraction);
  v("attention_bw_fraction", x.attention_bw_fraction);
  v("unaligned_l2_fraction", x.unaligned_l2_fraction);
  v("atomic_add_gops", x.atomic_add_gops);
  v("norm_row_ns_per_element", x.norm_row_ns_per_element);
  v("layer_norm_row_ns_per_element", x.layer_norm_row_ns_per_element);
  v("source", x.source);
}

template <typename V, typename P>
void gemm_path_fields(V&& v, P& p) {
  v("act", p.act, kRequired);
  v("weight", p.weight, kRequired);
  v("kernel", p.kernel);
  v("tensor_fraction", p.tensor_fraction);
  v("dram_bw_fraction", p.dram_bw_fraction);
  v("tile_m", p.tile_m);
  v("small_tile_fraction", p.small_tile_fraction);
  v("fixed_us", p.fixed_us);
  v("max_split_k", p.max_split_k);
  v("max_tile_m", p.max_tile_m);
  v("l2_bw_fraction", p.l2_bw_fraction);
  v("tile_overhead_k", p.tile_overhead_k);
  v("tile_n", p.tile_n);
  v("data_parallel", p.data_parallel);
  v("group_switch_us", p.group_switch_us);
}

template <typename V, typename T>
void tile_rule_fields(V&& v, T& t) {
  v("tile_m", t.tile_m, kRequired);
  v("tile_n", t.tile_n, kRequired);
  v("min_mn", t.min_mn);
  v("min_k", t.min_k);
  v("tensor_fraction", t.tensor_fraction);
}

// A path's tile choice into its JSON row (`Json`: json or ordered_json), each rule's fields by the
// writer `make(rule)` gives; nothing for an empty list.
template <typename Json, typename MakeWriter>
void write_tile_choice(Json& row, const std::vector<TileRule>& rules, MakeWriter make) {
  if (rules.empty()) return;
  Json& list = row["tile_choice"] = Json::array();
  for (const TileRule& t : rules) {
    Json rule = Json::object();
    tile_rule_fields(make(rule), t);
    list.push_back(std::move(rule));
  }
}

// The energy section (sim/energy.h: each figure's source in `source`).
template <typename V, typename E>
void energy_fields(V&& v, E& e) {
  v("mma_pj_per_op", e.mma_pj_per_op);
  v("cuda_pj_per_op", e.cuda_pj_per_op);
  v("smem_pj_per_byte", e.smem_pj_per_byte);
  v("l1_pj_per_byte", e.l1_pj_per_byte);
  v("l2_pj_per_byte", e.l2_pj_per_byte);
  v("static_w", e.static_w);
  v("source", e.source);
}

// One entry of the energy section's `lut` array.
template <typename V, typename L>
void lut_energy_fields(V&& v, L& e) {
  v("tile", e.tile, kRequired);
  v("pj_per_op", e.pj_per_op, kRequired);
  v("source", e.source, kRequired);
}

// A visitor that writes each field into `j`, and one that reads each from `r`.
auto writer(json& j) {
  return [&j](const char* key, const auto& member, bool = false) { j[key] = member; };
}
auto reader(const FieldReader& r) {
  return [&r](const char* key, auto& member, bool required = false) {
    if (required) {
      r.req(key, member);
    } else {
      r.opt(key, member);
    }
  };
}

void positive(const std::string& where, const char* key, double v) {
  if (!(v > 0))
    throw InputError(where + ": field '" + key + "' must be > 0 (got " + std::to_string(v) + ")");
}

void fraction(const std::string& where, const char* key, double v) {
  if (!(v > 0 && v <= 1)) {
    throw InputError(where + ": field '" + key + "' must be in (0, 1] (got " + std::to_string(v) +
                     ")");
  }
}

std::string read_file(const fs::path& p) {
  return read_input_file(p.string());
}

}  // namespace

double GpuConfig::mac_tops(std::string_view act, std::string_view weight) const {
  for (const auto& r : mac_tensor) {
    if (r.act == act && r.weight == weight) return r.tops;
  }
  return 0;
}

double GpuConfig::lut_tops(std::string_view act, int wbits) const {
  if (!lut_tensor || wbits < 1) return 0;
  const auto& acts = lut_tensor->acts;
  if (std::find(acts.begin(), acts.end(), act) == acts.end()) return 0;
  // One instruction spanning every tile of a tensor core, at lmma_timing's initiation interval.
  const auto& c = lut_tensor->core.shape;
  const golden::LmmaShape all{c.m, c.n * lut_tensor->tiles_per_tensor_core, c.k};
  const double ops = 2.0 * all.m * all.n * all.k;
  return ops / double(lmma_timing(all, wbits).issue_cycles) * tensor_cores() * clock_ghz * 1e9 /
         1e12;
}

TensorCoreConfig GpuConfig::lut_tile(golden::DType act, int wbits) const {
  if (!lut_tensor) {
    throw InputError("gpu '" + name + "' has no LUT tensor cores (no lut_tensor section)");
  }
  const std::string a(golden::dtype_name(act));
  const auto& acts = lut_tensor->acts;
  if (std::find(acts.begin(), acts.end(), a) == acts.end()) {
    std::string valid;
    for (const auto& x : acts) valid += (valid.empty() ? "" : ", ") + x;
    throw InputError("gpu '" + name + "': its LUT tiles take no " + a +
                     " activations (lut_tensor.acts: " + valid + ")");
  }
  const TensorCoreConfig& core = lut_tensor->core;
  TensorCoreConfig c = core;
  if (act != core.act) {
    c = TensorCoreConfig::make(core.design, core.shape, act, wbits);
    c.pipeline_stages = core.pipeline_stages;
  }
  c.wbits = wbits;
  c.validate();
  return c;
}

const LutTileEnergy* EnergyFigures::lut_entry(std::string_view tile) const {
  for (const auto& e : lut) {
    if (e.tile == tile) return &e;
  }
  return nullptr;
}

int64_t lmma_issue_cycles(const golden::LmmaShape& instr, const golden::LmmaShape& core,
                          int tiles_per_core, int wbits) {
  const int64_t tiles = int64_t(instr.m / core.m) * (instr.n / core.n);
  const int64_t per_round = std::max(tiles_per_core, 1);
  return int64_t(wbits) * ((tiles + per_round - 1) / per_round);
}

double overlap(double a, double b, double p) {
  if (a <= 0) return b;
  if (b <= 0) return a;
  if (p >= 64) return std::max(a, b);
  const double hi = std::max(a, b), lo = std::min(a, b);
  return hi * std::pow(1.0 + std::pow(lo / hi, p), 1.0 / p);
}

BlockOccupancy block_occupancy(const GpuConfig& gpu, int64_t warps_per_block,
                               int64_t regs_per_thread, int64_t smem_bytes) {
  BlockOccupancy o;
  const int64_t wpb = std::max<int64_t>(warps_per_block, 1);
  const int64_t regs_per_warp =
      (std::max<int64_t>(regs_per_thread, 1) * 32 + kRegisterAllocationUnit - 1) /
      kRegisterAllocationUnit * kRegisterAllocationUnit;
  const int64_t regs_per_sm = int64_t(gpu.register_file_kb_per_sm) * 1024 / 4;
  o.smem_per_block = smem_bytes > 0 ? smem_bytes + kSmemReservedPerBlock : 0;
  struct Limit {
    int64_t blocks;
    const char* name;
  };
  const Limit limits[] = {
      {gpu.sm.max_warps / wpb, "warps"},
      {gpu.sm.max_blocks, "blocks"},
      {regs_per_sm / (regs_per_warp * wpb), "registers"},
      {o.smem_per_block > 0 ? int64_t(gpu.shared_memory_kb_per_sm) * 1024 / o.smem_per_block
                            : int64_t(1) << 30,
       "shared memory"},
  };
  const Limit* lim =
      std::min_element(std::begin(limits), std::end(limits),
                       [](const Limit& a, const Limit& b) { return a.blocks < b.blocks; });
  o.blocks_per_sm = int(std::max<int64_t>(lim->blocks, 0));
  o.limit = lim->name;
  return o;
}

std::string block_limits_error(const GpuConfig& gpu, int64_t warps_per_block,
                               int64_t regs_per_thread, int64_t smem_bytes) {
  if (warps_per_block > gpu.sm.max_warps) {
    return std::to_string(warps_per_block) + " warps per block exceed the SM's " +
           std::to_string(gpu.sm.max_warps);
  }
  if (regs_per_thread > gpu.max_registers_per_thread) {
    return std::to_string(regs_per_thread) + " registers per thread exceed the GPU's " +
           std::to_string(gpu.max_registers_per_thread);
  }
  if (smem_bytes > int64_t(gpu.shared_memory_kb_per_block) * 1024) {
    return std::to_string(smem_bytes) + " bytes of shared memory exceed the GPU's " +
           std::to_string(gpu.shared_memory_kb_per_block) + " KiB per block";
  }
  const BlockOccupancy o = block_occupancy(gpu, warps_per_block, regs_per_thread, smem_bytes);
  if (o.blocks_per_sm < 1) {
    return std::string("one block needs more ") + o.limit + " than an SM of '" + gpu.name + "' has";
  }
  return "";
}

TensorOpTiming GpuConfig::lmma_timing(const golden::LmmaShape& instr, int wbits) const {
  if (!lut_tensor) throw InputError("gpu '" + name + "' has no LUT tensor core");
  const auto& core = lut_tensor->core;
  const auto& c = core.shape;
  if (instr.m < c.m || instr.n < c.n || instr.m % c.m || instr.n % c.n || instr.k != c.k ||
      wbits < 1) {
    throw InputError("lmma shape " + instr.name() + " with " + std::to_string(wbits) +
                     " weight planes is not a multiple of tensor core " + c.name() +
                     " (M and N multiples, the same K, >= 1 plane)");
  }
  const int64_t tiles = int64_t(instr.m / c.m) * (instr.n / c.n);
  const int64_t rounds =
      (tiles + lut_tensor->tiles_per_tensor_core - 1) / lut_tensor->tiles_per_tensor_core;
  TensorOpTiming t;
  t.issue_cycles = rounds * wbits;
  t.latency_cycles = t.issue_cycles + core.pipeline_stages + sm.lmma_latency_cycles;
  return t;
}

TensorOpTiming GpuConfig::mma_timing(const golden::LmmaShape& instr, std::string_view a,
                                     std::string_view b) const {
  const double tops = mac_tops(a, b);
  if (tops <= 0) {
    throw InputError("gpu '" + name + "' has no MAC tensor-core rate for " + std::string(a) +
                     " x " + std::string(b));
  }
  const double rate_clock = sm.tensor_rate_clock_ghz > 0 ? sm.tensor_rate_clock_ghz : clock_ghz;
  const double ops_per_cycle = tops * 1e12 / (double(tensor_cores()) * rate_clock * 1e9);
  const double ops = 2.0 * instr.m * instr.n * instr.k;
  TensorOpTiming t;
  t.issue_cycles = std::max<int64_t>(1, int64_t(std::ceil(ops / ops_per_cycle - 1e-9)));
  t.latency_cycles = std::max<int64_t>(t.issue_cycles, sm.mma_latency_cycles);
  return t;
}

double GpuConfig::loaded_clock_ghz(double tensor_utilization) const {
  if (!(sm.tensor_load_clock_ghz > 0)) return clock_ghz;
  const double u = std::clamp(tensor_utilization, 0.0, 1.0);
  return clock_ghz - (clock_ghz - sm.tensor_load_clock_ghz) * u;
}

double GpuConfig::l2_sim_bytes_per_cycle() const {
  return sm.l2_bytes_per_cycle > 0 ? sm.l2_bytes_per_cycle : l2.bw_gbps / clock_ghz;
}

int GpuConfig::fp32_lanes_per_sm() const {
  return std::max(1, int(std::lround(cuda_fp32_tflops * 1e12 / (2.0 * sms * clock_ghz * 1e9))));
}

int GpuConfig::int32_lanes_per_sm() const {
  if (cuda_int32_tops <= 0) return 0;
  return std::max(1, int(std::lround(cuda_int32_tops * 1e12 / (double(sms) * clock_ghz * 1e9))));
}

int64_t GpuConfig::step_kernel_gap_cycles() const {
  const double ns = achievable.elementwise_fixed_us * 1e3 - dram_round_trip_ns();
  return std::max<int64_t>(sm.kernel_gap_cycles, std::llround(ns * clock_ghz));
}

double GpuConfig::cuda_core_cycles(double fp_ops, double int_ops) const {
  const double fp_lanes = fp32_lanes_per_sm();
  const double int_lanes = int32_lanes_per_sm();
  if (int_lanes <= 0) return (fp_ops + int_ops) / fp_lanes;
  const double issue_lanes = 32.0 * sub_partitions_per_sm;
  return std::max({fp_ops / fp_lanes, int_ops / int_lanes, (fp_ops + int_ops) / issue_lanes});
}

void GpuConfig::finalize() {
  const std::string w = "gpu '" + name + "'";
  if (sms <= 0) throw InputError(w + ": field 'sms' must be > 0");
  if (tensor_cores_per_sm <= 0) throw InputError(w + ": field 'tensor_cores_per_sm' must be > 0");
  if (sub_partitions_per_sm <= 0) {
    throw InputError(w + ": field 'sub_partitions_per_sm' must be > 0");
  }
  positive(w, "clock_ghz", clock_ghz);
  positive(w, "dram.bw_gbps", dram.bw_gbps);
  positive(w, "l2.bw_gbps", l2.bw_gbps);
  positive(w, "l2.capacity_mb", l2.capacity_mb);
  positive(w, "cuda_fp32_tflops", cuda_fp32_tflops);
  if (cuda_fp16_tflops <= 0) cuda_fp16_tflops = cuda_fp32_tflops;
  if (register_file_kb_per_sm <= 0 || shared_memory_kb_per_sm <= 0) {
    throw InputError(w +
                     ": fields 'register_file_kb_per_sm' and 'shared_memory_kb_per_sm' must "
                     "be > 0");
  }
  // Upper bounds keep products like sms * tensor_cores_per_sm * tiles inside int arithmetic.
  auto in_range = [&](const char* key, double v, double lo, double hi) {
    if (!(v >= lo && v <= hi)) {
      throw InputError(w + ": field '" + key + "' must be in [" + fmt_number(lo) + ", " +
                       fmt_number(hi) + "] (got " + fmt_number(v) + ")");
    }
  };
  in_range("sms", sms, 1, 65536);
  in_range("tensor_cores_per_sm", tensor_cores_per_sm, 1, 64);
  in_range("sub_partitions_per_sm", sub_partitions_per_sm, 1, 64);
  in_range("clock_ghz", clock_ghz, 1e-3, 100);
  in_range("shared_memory_kb_per_block", shared_memory_kb_per_block, 1, shared_memory_kb_per_sm);
  in_range("max_registers_per_thread", max_registers_per_thread, 1, 65536);
  in_range("l1_kb_per_sm", l1_kb_per_sm, 1, 1 << 20);
  in_range("register_file_kb_per_sm", register_file_kb_per_sm, 1, 1 << 20);
  in_range("shared_memory_kb_per_sm", shared_memory_kb_per_sm, 1, 1 << 20);
  positive(w, "dram.capacity_mb", dram.capacity_mb);
  for (auto [key, v] :
       {std::pair{"l2.latency_ns", l2.latency_ns}, std::pair{"dram.latency_ns", dram.latency_ns},
        std::pair{"cuda_fp16_tflops", cuda_fp16_tflops},
        std::pair{"cuda_int32_tops", cuda_int32_tops},
        std::pair{"tensor_area_mm2_per_sm", tensor_area_mm2_per_sm},
        std::pair{"tensor_power_w_per_sm", tensor_power_w_per_sm},
        std::pair{"dram_pj_per_byte", dram_pj_per_byte}}) {
    in_range(key, v, 0, 1e12);
  }
  // Every figure of the energy section (its field table), the source text aside.
  energy_fields(
      [&](const char* key, const auto& v, bool = false) {
        if constexpr (std::is_arithmetic_v<std::decay_t<decltype(v)>>) {
          in_range(("energy." + std::string(key)).c_str(), double(v), 0, 1e12);
        }
      },
      energy);
  for (size_t i = 0; i < energy.lut.size(); ++i) {
    const LutTileEnergy& e = energy.lut[i];
    const std::string key = "energy.lut[" + std::to_string(i) + "]";
    in_range((key + ".pj_per_op").c_str(), e.pj_per_op, 1e-12, 1e12);
    if (e.tile.empty()) throw InputError(w + ": field '" + key + ".tile' must name a tile id");
    for (size_t j = 0; j < i; ++j) {
      if (energy.lut[j].tile == e.tile) {
        throw InputError(w + ": field '" + key + ".tile' repeats '" + e.tile + "' (energy.lut[" +
                         std::to_string(j) + "]): one entry per tile");
      }
    }
  }
  if (mac_tensor.empty()) throw InputError(w + ": field 'mac_tensor' must list at least one rate");
  if (mac_tops("fp16", "fp16") <= 0) {
    throw InputError(w + ": field 'mac_tensor' must include act fp16 x weight fp16");
  }
  fraction(w, "achievable.dram_bw_fraction", achievable.dram_bw_fraction);
  fraction(w, "achievable.l2_bw_fraction", achievable.l2_bw_fraction);
  fraction(w, "achievable.tensor_fraction", achievable.tensor_fraction);
  fraction(w, "achievable.cuda_core_fraction", achievable.cuda_core_fraction);
  fraction(w, "achievable.flash_attention_fraction", achievable.flash_attention_fraction);
  // Fractions whose 0 stands for another one.
  struct ZeroMeans {
    const char* key;
    double value;
    const char* fallback;
  };
  for (const ZeroMeans& f :
       {ZeroMeans{"elementwise_bw_fraction", achievable.elementwise_bw_fraction,
                  "dram_bw_fraction"},
        ZeroMeans{"attention_bw_fraction", achievable.attention_bw_fraction, "dram_bw_fraction"},
        ZeroMeans{"unaligned_l2_fraction", achievable.unaligned_l2_fraction, "l2_bw_fraction"},
        ZeroMeans{"decode_attention_fraction", achievable.decode_attention_fraction,
                  "flash_attention_fraction"}}) {
    if (f.value < 0 || f.value > 1) {
      throw InputError(w + ": field 'achievable." + f.key +
                       "' must be in [0, 1] (0: " + f.fallback + ")");
    }
  }
  for (const auto& p : achievable.gemm_paths) {
    if (!p.kernel.empty() && p.kernel != "grouped") {
      throw InputError(w + ": achievable.gemm_paths " + p.act + " x " + p.weight + ": kernel '" +
                       p.kernel + "' is not known (valid: \"\" for the library's GEMMs, grouped)");
    }
    if (p.tensor_fraction < 0 || p.tensor_fraction > 1 || p.small_tile_fraction < 0 ||
        p.small_tile_fraction > 1 || p.dram_bw_fraction < 0 || p.dram_bw_fraction > 1 ||
        p.tile_m < 0 || p.tile_m > 256 || p.fixed_us < 0 || p.max_split_k < 0 ||
        p.max_split_k > 64 || p.max_tile_m < 0 || p.max_tile_m > 256 ||
        (p.max_tile_m > 0 && p.max_tile_m < p.tile_m) || p.l2_bw_fraction < 0 ||
        p.l2_bw_fraction > 1 || !(p.tile_overhead_k >= 0 && p.tile_overhead_k <= 65536) ||
        p.tile_n < 0 || p.tile_n > 256 || (p.data_parallel != 0 && p.data_parallel != 1) ||
        !(p.group_switch_us >= 0 && p.group_switch_us <= 1000)) {
      throw InputError(w + ": achievable.gemm_paths " + p.act + " x " + p.weight +
                       ": fractions must be in [0, 1] (0: the GPU-wide value), tile_m in 0..256, "
                       "max_tile_m 0 or tile_m..256, fixed_us >= 0, max_split_k in 0..64, "
                       "tile_overhead_k in 0..65536, tile_n in 0..256, data_parallel 0 or 1, "
                       "group_switch_us in 0..1000");
    }
    auto number = [](double x) {
      std::ostringstream o;
      o << x;
      return o.str();
    };
    for (size_t i = 0; i < p.tile_choice.size(); ++i) {
      const TileRule& t = p.tile_choice[i];
      const std::string where = w + ": achievable.gemm_paths " + p.act + " x " + p.weight +
                                ": field 'tile_choice[" + std::to_string(i) + "].";
      if (t.tile_m < 1 || t.tile_m > 256) {
        throw InputError(where + "tile_m' must be in 1..256 (rows of the library's tile), not " +
                         std::to_string(t.tile_m));
      }
      if (t.tile_n < 1 || t.tile_n > 256) {
        throw InputError(where + "tile_n' must be in 1..256 (columns of the library's tile), not " +
                         std::to_string(t.tile_n));
      }
      if (!(t.min_mn >= 0 && t.min_mn < 1e15)) {
        throw InputError(where +
                         "min_mn' must be >= 0 (the fewest outputs M x N it is chosen "
                         "for), not " +
                         number(t.min_mn));
      }
      if (!(t.tensor_fraction >= 0 && t.tensor_fraction <= 1)) {
        throw InputError(where + "tensor_fraction' must be in [0, 1] (0: the path's), not " +
                         number(t.tensor_fraction));
      }
      if (!(t.min_k >= 0 && t.min_k < 1e15)) {
        throw InputError(where + "min_k' must be >= 0 (the least depth K it is chosen for), not " +
                         number(t.min_k));
      }
    }
  }
  positive(w, "achievable.sm_dram_gbps", achievable.sm_dram_gbps);
  if (!(achievable.atomic_add_gops >= 0 && achievable.atomic_add_gops <= 1e6)) {
    throw InputError(w +
                     ": field 'achievable.atomic_add_gops' must be in [0, 1e6] (G/s; 0: not "
                     "limited)");
  }
  for (const auto& [name, ns] :
       {std::pair{"norm_row_ns_per_element", achievable.norm_row_ns_per_element},
        std::pair{"layer_norm_row_ns_per_element", achievable.layer_norm_row_ns_per_element}}) {
    if (!(ns >= 0 && ns <= 1e3)) {
      throw InputError(w + ": field 'achievable." + name +
                       "' must be in [0, 1000] (ns per element of a normalized row; 0: not "
                       "limited)");
    }
  }
  if (achievable.overlap_exponent < 1) {
    throw InputError(w + ": field 'achievable.overlap_exponent' must be >= 1");
  }
  if (achievable.throttle_per_efold < 0 || achievable.throttle_per_efold >= 0.5 ||
      achievable.throttle_onset_ms <= 0) {
    throw InputError(w +
                     ": field 'achievable.throttle_per_efold' must be in [0, 0.5) and "
                     "'achievable.throttle_onset_ms' > 0");
  }
  if (achievable.throttle_max < 1 || achievable.throttle_max > 2) {
    throw InputError(w + ": field 'achievable.throttle_max' must be in [1, 2]");
  }
  if (achievable.kernel_fixed_us < 0 || achievable.elementwise_fixed_us < 0 ||
      launch_overhead_us < 0 || sync_overhead_us < 0) {
    throw InputError(w +
                     ": overheads (launch_overhead_us, sync_overhead_us, "
                     "achievable.kernel_fixed_us, achievable.elementwise_fixed_us) must be >= 0");
  }
  {
    const SmConfig& m = sm;
    const std::string ws = w + ": field 'sm.";
    auto at_least = [&](const char* key, int v, int lo) {
      if (v < lo) throw InputError(ws + key + "' must be >= " + std::to_string(lo));
    };
    at_least("max_warps", m.max_warps, 1);
    at_least("max_blocks", m.max_blocks, 1);
    at_least("alu_latency_cycles", m.alu_latency_cycles, 1);
    at_least("sfu_ops_per_cycle", m.sfu_ops_per_cycle, 1);
    at_least("sfu_latency_cycles", m.sfu_latency_cycles, 1);
    at_least("mma_latency_cycles", m.mma_latency_cycles, 1);
    if (m.mma_warpgroup < 1 || m.mma_warpgroup > sub_partitions_per_sm ||
        sub_partitions_per_sm % m.mma_warpgroup != 0) {
      throw InputError(ws + "mma_warpgroup' is " + std::to_string(m.mma_warpgroup) +
                       " (valid: 1, or a divisor of sub_partitions_per_sm: warps of one "
                       "warpgroup MMA, one per sub-partition)");
    }
    if (m.cluster_size < 1 || m.cluster_size > 16 || (m.cluster_size > 1 && !m.tma)) {
      throw InputError(ws + "cluster_size' is " + std::to_string(m.cluster_size) +
                       " (valid: 1, or 2 .. 16 with 'tma': blocks per cluster whose TMA "
                       "multicasts a shared tile)");
    }
    at_least("lmma_latency_cycles", m.lmma_latency_cycles, 0);
    at_least("smem_banks", m.smem_banks, 1);
    at_least("smem_latency_cycles", m.smem_latency_cycles, 1);
    at_least("lsu_bytes_per_cycle", m.lsu_bytes_per_cycle, 4);
    at_least("l1_latency_cycles", m.l1_latency_cycles, 1);
    at_least("l1_ways", m.l1_ways, 1);
    at_least("l2_slices", m.l2_slices, 1);
    at_least("l2_ways", m.l2_ways, 1);
    at_least("dram_channels", m.dram_channels, 1);
    at_least("noc_bytes_per_cycle", m.noc_bytes_per_cycle, 4);
    at_least("kernel_gap_cycles", m.kernel_gap_cycles, 0);
    if (m.line_bytes < 32 || (m.line_bytes & (m.line_bytes - 1)) != 0) {
      throw InputError(ws + "line_bytes' must be a power of two >= 32");
    }
    if (m.l2_bytes_per_cycle < 0) throw InputError(ws + "l2_bytes_per_cycle' must be >= 0");
    if (m.dram_gbps < 0) throw InputError(ws + "dram_gbps' must be >= 0");
    if (m.tensor_rate_clock_ghz < 0 || m.tensor_rate_clock_ghz > 10) {
      throw InputError(ws + "tensor_rate_clock_ghz' must be in [0, 10]");
    }
    if (m.tensor_load_clock_ghz < 0 || m.tensor_load_clock_ghz > clock_ghz) {
      throw InputError(ws + "tensor_load_clock_ghz' must be in [0, clock_ghz]");
    }
    if (tensor_cores_per_sm % sub_partitions_per_sm != 0) {
      throw InputError(w +
                       ": field 'tensor_cores_per_sm' must be a multiple of "
                       "'sub_partitions_per_sm' (each sub-partition owns its tensor cores)");
    }
    if (m.scheduler != "gto" && m.scheduler != "lrr") {
      throw InputError(ws + "scheduler' is '" + m.scheduler + "' (valid: gto, lrr)");
    }
    if (m.max_warps % sub_partitions_per_sm != 0) {
      throw InputError(ws + "max_warps' must be a multiple of sub_partitions_per_sm");
    }
  }
  if (lut_tensor) {
    auto& lut = *lut_tensor;
    in_range("lut_tensor.tiles_per_tensor_core", lut.tiles_per_tensor_core, 1, 1024);
    if (lut.core.design != TensorCoreDesign::kLut &&
        lut.core.design != TensorCoreDesign::kLutNaive) {
      throw InputError(w + ": field 'lut_tensor.core.design' must be lut or lut-naive");
    }
    const auto& s = lut.core.shape;
    if (s.m <= 0 || s.n <= 0 || s.k <= 0) {
      throw InputError(w + ": field 'lut_tensor.core' shape must have m, n, k > 0");
    }
    try {
      lut.core.validate();
    } catch (const InputError& e) {
      throw InputError(w + ": field 'lut_tensor.core': " + e.what());
    }
    // Thread-block and warp K tiles are powers of two that the instruction's K must divide.
    if ((s.k & (s.k - 1)) != 0) {
      throw InputError(w + ": field 'lut_tensor.core.k' is " + std::to_string(s.k) +
                       " (valid: 1, 2, 4 or 8: K tiles are powers of two the core's K divides)");
    }
    in_range("lut_tensor.core.wbits", lut.core.wbits, 1, golden::kMaxWBits);
    const golden::LmmaShape all{s.m, s.n * lut.tiles_per_tensor_core, s.k};
    lut.w1_tops = 2.0 * all.m * all.n * all.k / double(lmma_timing(all, 1).issue_cycles) *
                  tensor_cores() * clock_ghz * 1e9 / 1e12;
  }
}

// A writer into an ordered object that rounds numbers and leaves empty strings out.
auto rounding_writer(nlohmann::ordered_json& j, double scale) {
  return [&j, scale](const char* key, const auto& member, bool = false) {
    using T = std::decay_t<decltype(member)>;
    if constexpr (std::is_floating_point_v<T>) {
      j[key] = std::round(member * scale) / scale;
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!member.empty()) j[key] = member;
    } else {
      j[key] = member;
    }
  };
}

nlohmann::ordered_json achievable_json(const AchievableRates& a, int decimals) {
  const double scale = std::pow(10.0, decimals);
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  achievable_fields(rounding_writer(j, scale), a);
  j.erase("source");  // written last, after gemm_paths
  nlohmann::ordered_json& paths = j["gemm_paths"] = nlohmann::ordered_json::array();
  for (const auto& p : a.gemm_paths) {
    nlohmann::ordered_json row = nlohmann::ordered_json::object();
    gemm_path_fields(rounding_writer(row, scale), p);
    write_tile_choice(row, p.tile_choice, [&](auto& rule) { return rounding_writer(rule, scale); });
    paths.push_back(std::move(row));
  }
  if (!a.source.empty()) j["source"] = a.source;
  return j;
}

namespace {
std::string device_key(std::string_view device) {
  std::string key;
  for (char ch : device) {
    if (ch != ' ') key += char(std::tolower(static_cast<unsigned char>(ch)));
  }
  return key;
}
}  // namespace

std::string builtin_gpu_of_device(std::string_view device) {
  const std::string key = device_key(device);
  std::string best;
  for (const std::string& n : builtin_gpu_names()) {
    if (n.find('-') == std::string::npos && key.find(n) != std::string::npos &&
        n.size() > best.size()) {
      best = n;
    }
  }
  return best;
}

bool device_is_gpu(std::string_view device, std::string_view gpu) {
  if (device.empty()) return true;
  const std::string_view product = gpu.substr(0, gpu.find('-'));
  return !product.empty() && device_key(device).find(product) != std::string::npos;
}

void to_json(json& j, const GpuConfig& g) {
  j = json::object();
  top_fields(writer(j), g);
  json& mac = j["mac_tensor"] = json::array();
  for (const auto& r : g.mac_tensor)
    mac.push_back({{"act", r.act}, {"weight", r.weight}, {"tops", r.tops}});
  cache_fields(writer(j["l2"]), g.l2);
  cache_fields(writer(j["dram"]), g.dram);
  sm_fields(writer(j["sm"]), g.sm);
  json& a = j["achievable"];
  achievable_fields(writer(a), g.achievable);
  a["gemm_paths"] = json::array();
  for (const auto& p : g.achievable.gemm_paths) {
    json row;
    gemm_path_fields(writer(row), p);
    write_tile_choice(row, p.tile_choice, [&](auto& rule) { return writer(rule); });
    a["gemm_paths"].push_back(row);
  }
  energy_fields(writer(j["energy"]), g.energy);
  if (!g.energy.lut.empty()) {
    json& lut = j["energy"]["lut"] = json::array();
    for (const auto& e : g.energy.lut) {
      json row;
      lut_energy_fields(writer(row), e);
      lut.push_back(row);
    }
  }
  if (g.lut_tensor) {
    json core;
    to_json(core, g.lut_tensor->core);
    j["lut_tensor"] = {{"core", core},
                       {"tiles_per_tensor_core", g.lut_tensor->tiles_per_tensor_core},
                       {"acts", g.lut_tensor->acts}};  // w1_tops is derived, not written
  }
}

void from_json(const json& j, GpuConfig& g) {
  if (!j.is_object()) throw InputError("gpu: the configuration must be a JSON object");
  g = GpuConfig{};
  FieldReader r(j, "gpu");
  r.req("name", g.name);
  const FieldReader f(j, "gpu '" + g.name + "'");
  top_fields(reader(f), g);
  for (const auto& e : f.array("mac_tensor", "{act, weight, tops}")) {
    const FieldReader fr(e, f.where() + " mac_tensor[" + std::to_string(g.mac_tensor.size()) + "]");
    MacTensorRate rate;
    fr.req("act", rate.act);
    fr.req("weight", rate.weight);
    fr.req("tops", rate.tops);
    if (!is_one_of(rate.act, std::begin(kActs), std::end(kActs))) {
      fr.fail("act", "'" + rate.act + "' is not valid (valid: fp16, bf16, int8, fp8e4m3, fp8e5m2)");
    }
    if (!is_one_of(rate.weight, std::begin(kMacWeights), std::end(kMacWeights))) {
      fr.fail("weight", "'" + rate.weight +
                            "' is not valid (valid: fp16, bf16, int8, int4, fp8e4m3, fp8e5m2)");
    }
    positive(fr.where(), "tops", rate.tops);
    fr.reject_unknown();
    g.mac_tensor.push_back(rate);
  }
  for (auto [key, level] : {std::pair{"l2", &g.l2}, std::pair{"dram", &g.dram}}) {
    const FieldReader c(f.obj(key), f.where() + " " + key);
    cache_fields(reader(c), *level);
    c.reject_unknown();
  }
  if (f.has("sm")) {
    const FieldReader a(f.obj("sm"), f.where() + " sm");
    sm_fields(reader(a), g.sm);
    a.reject_unknown();
  }
  if (f.has("achievable")) {
    const FieldReader a(f.obj("achievable"), f.where() + " achievable");
    auto& x = g.achievable;
    achievable_fields(reader(a), x);
    if (a.has("gemm_paths")) {
      for (const auto& e : a.array("gemm_paths", "{act, weight, tensor_fraction, ...}")) {
        const FieldReader p(e,
                            a.where() + " gemm_paths[" + std::to_string(x.gemm_paths.size()) + "]");
        GemmPathRates r;
        gemm_path_fields(reader(p), r);
        if (p.has("tile_choice")) {
          for (const auto& t : p.array("tile_choice", "{tile_m, tile_n, min_mn, min_k}")) {
            const FieldReader q(
                t, p.where() + " tile_choice[" + std::to_string(r.tile_choice.size()) + "]");
            TileRule rule;
            tile_rule_fields(reader(q), rule);
            q.reject_unknown();
            r.tile_choice.push_back(rule);
          }
        }
        p.reject_unknown();
        x.gemm_paths.push_back(r);
      }
    }
    a.reject_unknown();
  }
  if (f.has("energy")) {
    const FieldReader a(f.obj("energy"), f.where() + " energy");
    energy_fields(reader(a), g.energy);
    if (a.has("lut")) {
      for (const auto& e : a.array("lut", "{tile, pj_per_op, source}")) {
        const FieldReader p(e, a.where() + " lut[" + std::to_string(g.energy.lut.size()) + "]");
        LutTileEnergy t;
        lut_energy_fields(reader(p), t);
        p.reject_unknown();
        g.energy.lut.push_back(t);
      }
    }
    a.reject_unknown();
  }
  if (f.has("lut_tensor")) {
    const json& lj = f.obj("lut_tensor");
    const FieldReader l(lj, f.where() + " lut_tensor");
    LutTensorUnit lut;
    try {
      lut.core = l.obj("core").get<TensorCoreConfig>();
    } catch (const json::exception& e) {
      l.fail("core", "is not a valid tensor-core configuration: " + plain_json_error(e));
    } catch (const InputError& e) {
      l.fail("core", std::string("is not a valid tensor-core configuration: ") + e.what());
    }
    l.opt("tiles_per_tensor_core", lut.tiles_per_tensor_core);
    if (l.has("acts")) {
      if (!lj.at("acts").is_array()) l.fail("acts", "must be an array of activation dtypes");
      for (const auto& a : lj.at("acts")) {
        if (!a.is_string() ||
            !is_one_of(a.get<std::string>(), std::begin(kActs), std::end(kActs))) {
          l.fail("acts", "holds '" + a.dump() + "' (valid: fp16, bf16, int8, fp8e4m3, fp8e5m2)");
        }
        lut.acts.push_back(a.get<std::string>());
      }
    } else {
      lut.acts.assign(std::begin(kActs), std::end(kActs));
    }
    l.reject_unknown();
    g.lut_tensor = lut;
  }
  f.reject_unknown();
  g.finalize();
}

const TileRule& chosen_tile(const std::vector<TileRule>& rules, int64_t m, int64_t n, int64_t k) {
  for (const TileRule& t : rules) {
    if (double(m) * double(n) >= t.min_mn && double(k) >= t.min_k) return t;
  }
  return rules.back();
}

const GemmPathRates* AchievableRates::gemm_path(std::string_view act, std::string_view weight,
                                                std::string_view kernel) const {
  for (const auto& p : gemm_paths) {
    if (p.act == act && p.weight == weight && p.kernel == kernel) return &p;
  }
  return nullptr;
}

std::vector<std::string> builtin_gpu_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(config_dir("gpus"), ec)) {
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

// The file a `base` names: a built-in GPU name, or a JSON path relative to the folder of the file
// that names it. InputError naming `origin` when there is no such file.
fs::path base_file(const std::string& base, std::string_view origin) {
  std::error_code ec;
  const bool looks_like_path = base.find('/') != std::string::npos ||
                               (base.size() > 5 && base.substr(base.size() - 5) == ".json");
  if (looks_like_path) {
    fs::path p(base);
    if (p.is_relative()) p = fs::path(origin).parent_path() / p;
    if (!fs::is_regular_file(p, ec)) {
      throw InputError(std::string(origin) + ": base '" + base + "': no such file " + p.string());
    }
    return p;
  }
  const fs::path builtin = fs::path(config_dir("gpus")) / (base + ".json");
  if (!fs::is_regular_file(builtin, ec)) {
    std::string valid;
    for (const auto& n : builtin_gpu_names()) valid += (valid.empty() ? "" : ", ") + n;
    throw InputError(std::string(origin) + ": base '" + base + "' is not a built-in GPU (valid: " +
                     valid + ", or the path of a GPU JSON file)");
  }
  return builtin;
}

// `j` with its `base` resolved: the base GPU's JSON (its own base resolved first) with the fields
// of `j` merged over it (objects field by field, anything else replaced; RFC 7386). `chain` holds
// the files being resolved, to name a cycle.
json resolve_base(json j, std::string_view origin, std::vector<std::string>& chain) {
  if (!j.is_object() || !j.contains("base")) return j;
  if (!j["base"].is_string()) {
    throw InputError(std::string(origin) + ": field 'base' must be a GPU name or JSON path");
  }
  const std::string base = j["base"].get<std::string>();
  j.erase("base");
  const fs::path file = base_file(base, origin);
  const std::string id = fs::weakly_canonical(file).string();
  if (std::find(chain.begin(), chain.end(), id) != chain.end()) {
    std::string cycle;
    for (const auto& c : chain) cycle += fs::path(c).filename().string() + " -> ";
    throw InputError(std::string(origin) + ": base '" + base + "' makes a cycle (" + cycle +
                     file.filename().string() + ")");
  }
  chain.push_back(id);
  json merged = resolve_base(parse_json(read_file(file), file.string()), file.string(), chain);
  chain.pop_back();
  merged.merge_patch(j);
  return merged;
}

}  // namespace

GpuConfig parse_gpu_json(std::string_view text, std::string_view origin) {
  json j = parse_json(text, origin);
  std::vector<std::string> chain;
  std::error_code ec;
  if (fs::is_regular_file(fs::path(origin), ec)) {
    chain.push_back(fs::weakly_canonical(fs::path(origin)).string());
  }
  j = resolve_base(std::move(j), origin, chain);
  try {
    return j.get<GpuConfig>();
  } catch (const InputError& e) {
    throw InputError(std::string(origin) + ": " + e.what());
  } catch (const json::exception& e) {
    throw InputError(std::string(origin) + ": " + plain_json_error(e));
  }
}

namespace {

// The file --gpu names and its text: a path, or a built-in name. InputError naming --gpu.
std::pair<std::string, std::string> gpu_file(std::string_view name_or_path) {
  const std::string arg(name_or_path);
  std::error_code ec;
  const bool looks_like_path = arg.find('/') != std::string::npos ||
                               (arg.size() > 5 && arg.substr(arg.size() - 5) == ".json");
  if (looks_like_path || fs::is_regular_file(arg, ec)) {
    if (!fs::exists(arg, ec)) throw InputError("--gpu: no such file '" + arg + "'");
    try {
      return {arg, read_file(arg)};  // a FIFO, device or directory is named as such
    } catch (const InputError& e) {
      throw InputError(std::string("--gpu: ") + e.what());
    }
  }
  const fs::path builtin = fs::path(config_dir("gpus")) / (arg + ".json");
  if (!fs::is_regular_file(builtin, ec)) {
    std::string valid;
    for (const auto& n : builtin_gpu_names()) valid += (valid.empty() ? "" : ", ") + n;
    throw InputError("--gpu: unknown GPU '" + arg + "' (valid: " + valid +
                     ", or the path of a GPU JSON file)");
  }
  return {builtin.string(), read_file(builtin)};
}

}  // namespace

GpuConfig load_gpu(std::string_view name_or_path) {
  const auto [file, text] = gpu_file(name_or_path);
  return parse_gpu_json(text, file);
}

std::vector<std::pair<std::string, json>> gpu_file_chain(std::string_view name_or_path) {
  load_gpu(name_or_path);  // every error a bad file or base chain raises, named as load_gpu does
  auto [file, text] = gpu_file(name_or_path);
  std::vector<std::pair<std::string, json>> chain;
  json j = parse_json(text, file);
  while (true) {
    chain.emplace_back(file, j);
    if (!j.is_object() || !j.contains("base")) break;
    const fs::path base = base_file(j["base"].get<std::string>(), file);
    file = base.string();
    j = parse_json(read_file(base), file);
  }
  return chain;
}

GpuConfig with_overrides(const GpuConfig& gpu, std::string_view overrides) {
  json j = gpu;
  std::string applied;
  size_t pos = 0;
  const std::string all(overrides);
  while (pos <= all.size()) {
    size_t end = all.find(',', pos);
    if (end == std::string::npos) end = all.size();
    const std::string item = all.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw InputError("--gpu-set: '" + item +
                       "' is not path=value (e.g. register_file_kb_per_sm=512)");
    }
    const std::string path = item.substr(0, eq), text = item.substr(eq + 1);
    json* node = &j;
    size_t p = 0;
    while (true) {
      const size_t dot = path.find('.', p);
      const std::string key =
          path.substr(p, dot == std::string::npos ? std::string::npos : dot - p);
      if (!node->is_object() || !node->contains(key)) {
        std::string valid;
        if (node->is_object()) {
          for (const auto& [k, v] : node->items()) {
            if (!v.is_object() && !v.is_array())
              valid += (valid.empty() ? "" : ", ") + k;
            else if (v.is_object())
              valid += (valid.empty() ? "" : ", ") + k + ".*";
          }
        }
        throw InputError("--gpu-set: gpu '" + gpu.name + "' has no field '" + path + "'" +
                         (valid.empty() ? "" : " (valid here: " + valid + ")"));
      }
      node = &(*node)[key];
      if (dot == std::string::npos) break;
      p = dot + 1;
    }
    if (node->is_object() || node->is_array()) {
      throw InputError("--gpu-set: '" + path + "' is a section, not a value");
    }
    json value;
    try {
      value = json::parse(text);
    } catch (const json::parse_error&) {
      value = text;                       // a plain string
    } catch (const json::exception& e) {  // a number past double's range (1e999)
      throw InputError("--gpu-set: '" + path + "=" + text + "': " + plain_json_error(e));
    }
    if (node->is_number() != value.is_number() || node->is_boolean() != value.is_boolean() ||
        node->is_string() != value.is_string()) {
      throw InputError("--gpu-set: '" + path + "' takes a " +
                       (node->is_number()    ? "number"
                        : node->is_boolean() ? "true or false"
                                             : "string") +
                       ", not '" + text + "'");
    }
    *node = value;
    applied += (applied.empty() ? "" : ",") + item;
  }
  j["description"] = j.value("description", "") + " [--gpu-set " + applied + "]";
  return parse_gpu_json(j.dump(), "--gpu-set " + all);
}

}  // namespace ltc::hw
