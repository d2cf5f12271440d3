// What the machine is, as the cost model sees it: the shared GPU configuration (model/hw/gpu.h)
// turned into achievable rates, and which tensor-core path runs a GEMM of a given precision.
#pragma once

#include "model/golden/dtype.h"
#include "model/hw/gpu.h"
#include "model/llm/precision.h"
#include "model/tiling/tiling.h"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>

namespace ltc::roofline {

// How a linear layer's product is executed.
enum class GemmUnit : uint8_t {
  kMac,         // native MAC tensor core for (act, weight): fp16 x fp16, int8 x int8, int8 x int4
  kMacDequant,  // low-bit or foreign weights converted on CUDA cores, then MAC at act x act
  kLut,         // LUT tensor core reading precomputed tables, one weight plane per cycle
};
std::string_view gemm_unit_name(GemmUnit u);  // "mac", "mac-dequant", "lut"

struct GemmPath {
  GemmUnit unit = GemmUnit::kMac;
  double peak_tops = 0;  // dense tensor rate of the path, whole GPU
  // kMacDequant: CUDA-core thread instructions per weight element per M-tile, of them on the
  // INT32 lanes (tiling::kDequantOpsPerCode, kDequantIntOpsPerCode for integer codes), timed by
  // GpuConfig::cuda_core_cycles
  double dequant_ops_per_weight = 0;
  double dequant_int_ops_per_weight = 0;
  std::string description;  // "lut int8 x int2 (2 planes)", "mac fp16 x fp16"
};

class Machine {
 public:
  explicit Machine(hw::GpuConfig gpu);

  const hw::GpuConfig& gpu() const { return gpu_; }
  const hw::AchievableRates& achievable() const { return gpu_.achievable; }
  int sms() const { return gpu_.sms; }

  double dram_bytes_per_s() const { return dram_bps_; }  // achievable, whole GPU
  double l2_bytes_per_s() const { return l2_bps_; }      // achievable operand bandwidth
  double sm_dram_bytes_per_s() const { return sm_dram_bps_; }
  double elementwise_bytes_per_s() const { return elementwise_bps_; }  // eager CUDA-core kernels
  double attention_bytes_per_s() const { return attention_bps_; }      // decode KV streaming
  // Decode attention's tensor efficiency on its padded query tiles (a fraction of the peak).
  double decode_attention_fraction() const {
    const auto& a = gpu_.achievable;
    return a.decode_attention_fraction > 0 ? a.decode_attention_fraction
                                           : a.flash_attention_fraction;
  }
  double l2_capacity_bytes() const { return gpu_.l2_bytes(); }
  double register_bytes_per_sm() const { return gpu_.register_file_kb_per_sm * 1024.0; }
  // CUDA-core rate (FLOP/s, achievable) for elementwise work in `t` (fp16/bf16 use the half rate).
  double cuda_flops_per_s(golden::DType t) const;
  double kernel_fixed_s() const { return gpu_.achievable.kernel_fixed_us * 1e-6; }
  double elementwise_fixed_s() const { return gpu_.achievable.elementwise_fixed_us * 1e-6; }

  // Tensor path for Y = X W^T with weights `w`, activations `act`, and (tables) X arriving as LUT
  // tables. Low-bit weights use the LUT tensor core when the GPU has one and tables are given,
  // a native MAC pair when one exists (int8 x int4 on A100), else dequantize-then-MAC.
  GemmPath gemm_path(const llm::WeightFormat& w, golden::DType act, bool tables) const;
  // Dense activation x activation products (attention) in `t`: the MAC rate for t x t.
  double mac_tops(golden::DType t) const;

  // The compiler's kernel of a GEMM (model/tiling at kernel level: its tiles and estimate;
  // nullopt for none) per key: LUT (m, n, k, planes, table bits x 64, weight bits x 64, 0), MMA
  // (m, n, k, code bits, A dtype, B dtype, batch >= 1). `choose` runs once per key (the choice is a
  // search, and sweeps repeat shapes) and the answer is remembered. Safe to call from several
  // threads; copies of a Machine share the memo (they describe the same GPU).
  using TileKey = std::tuple<int64_t, int64_t, int64_t, int, int, int, int>;
  using KernelTile = std::optional<tiling::TileChoice>;
  KernelTile kernel_tile(const TileKey& key, const std::function<KernelTile()>& choose) const;

 private:
  struct KernelTileMemo {
    std::mutex mutex;
    std::map<TileKey, KernelTile> tiles;
  };
  std::shared_ptr<KernelTileMemo> kernel_tiles_ = std::make_shared<KernelTileMemo>();
  hw::GpuConfig gpu_;
  double dram_bps_ = 0, l2_bps_ = 0, sm_dram_bps_ = 0, elementwise_bps_ = 0, attention_bps_ = 0;
};

}  // namespace ltc::roofline
