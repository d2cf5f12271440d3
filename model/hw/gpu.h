// One GPU: the machine description shared by the roofline (model/roofline), the compiler's
// scheduler (register and shared-memory capacity, tensor-core shape) and the cycle-level simulator.
// Built-in machines are JSON files under configs/gpus/ (SPEC §6 figures); a user's machine is any
// JSON file with the same fields. Datasheet figures are peaks; the `achievable` section holds the
// few fitted fractions (calibrated on H200 measurements) that turn peaks into real rates.
#pragma once

#include "model/hw/tensor_core.h"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ltc::hw {

// Dense MAC tensor-core throughput of the whole GPU for one (activation, weight) operand pair.
// Weight names are the SPEC §9 weight values that a MAC core takes natively: fp16, bf16,
// fp8e4m3, fp8e5m2, int8, int4.
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
struct AchievableRates {
  double dram_bw_fraction = 0.85;  // streaming kernels (GEMV, norms, copies) vs DRAM peak
  double l2_bw_fraction = 0.7;
  double tensor_fraction = 0.75;           // large square GEMM vs dense tensor peak
  double cuda_core_fraction = 0.7;         // elementwise / softmax compute vs CUDA-core peak
  double kernel_fixed_us = 5.0;            // per kernel under CUDA graphs: ramp-up, tail, drain
  double elementwise_fixed_us = 2.0;       // per small memory-bound kernel under CUDA graphs
  double flash_attention_fraction = 0.45;  // prefill attention vs dense tensor peak
  double sm_dram_gbps = 30;        // DRAM bandwidth one SM can pull (outstanding loads / latency)
  double overlap_exponent = 4;     // compute/memory overlap: t = (c^p + m^p)^(1/p); large = max
  double throttle_per_efold = 0;   // sustained-power clock drop per e-fold of busy time
  double throttle_onset_ms = 0.5;  // compute-bound busy time before clocks start to drop
  double throttle_max = 1.25;      // slowdown floor: boost clock / lowest sustained clock
  std::string source;              // where these numbers come from
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

  int register_file_kb_per_sm = 256;
  int max_registers_per_thread = 255;
  int shared_memory_kb_per_sm = 164;  // configurable carve-out maximum
  int shared_memory_kb_per_block = 163;
  int l1_kb_per_sm = 192;  // unified L1 + shared memory
  CacheLevel l2;
  CacheLevel dram;  // capacity_mb holds the HBM/GDDR size

  double launch_overhead_us = 4.0;  // kernel launch without CUDA graphs
  double sync_overhead_us = 1.0;    // grid-wide synchronization / kernel boundary
  AchievableRates achievable;

  // Tensor-core area and power of one SM's tensor cores, where known (paper Table III, or the
  // PPA flow). 0 means unknown.
  double tensor_area_mm2_per_sm = 0;
  double tensor_power_w_per_sm = 0;
  double dram_pj_per_byte = 0;  // DRAM access energy; 0 means unknown

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

  // Fills derived fields (w1_tops) and checks ranges; throws InputError naming the field.
  void finalize();
};

void to_json(nlohmann::json& j, const GpuConfig& g);
// Throws InputError naming the missing or bad field ("gpu: field 'sms' ...").
void from_json(const nlohmann::json& j, GpuConfig& g);

// Directory holding built-in configurations of one kind ("gpus", "models"): $LTC_CONFIG_DIR/<kind>
// if set, else <source tree>/configs/<kind>, else <prefix>/share/ltc/configs/<kind>.
std::string builtin_config_dir(std::string_view kind);
// Names of the built-in GPUs (file stems under configs/gpus), sorted.
std::vector<std::string> builtin_gpu_names();
// A built-in name ("a100", "h200-drm") or the path of a JSON file. Throws InputError naming the
// file and field for bad JSON, and the valid names for an unknown name.
GpuConfig load_gpu(std::string_view name_or_path);
GpuConfig parse_gpu_json(std::string_view text, std::string_view origin);

}  // namespace ltc::hw
