#include "model/roofline/machine.h"

#include <fmt/core.h>

#include <algorithm>

#include "model/tiling/tiling.h"

namespace ltc::roofline {

using golden::DType;

std::string_view gemm_unit_name(GemmUnit u) {
  switch (u) {
    case GemmUnit::kMac:
      return "mac";
    case GemmUnit::kMacDequant:
      return "mac-dequant";
    case GemmUnit::kLut:
      return "lut";
  }
  return "?";
}

Machine::Machine(hw::GpuConfig gpu) : gpu_(std::move(gpu)) {
  const auto& a = gpu_.achievable;
  dram_bps_ = gpu_.dram.bw_gbps * 1e9 * a.dram_bw_fraction;
  l2_bps_ = gpu_.l2.bw_gbps * 1e9 * a.l2_bw_fraction;
  sm_dram_bps_ = a.sm_dram_gbps * 1e9;
  auto or_dram = [&](double f) { return f > 0 ? gpu_.dram.bw_gbps * 1e9 * f : dram_bps_; };
  elementwise_bps_ = or_dram(a.elementwise_bw_fraction);
  attention_bps_ = or_dram(a.attention_bw_fraction);
}

double Machine::cuda_flops_per_s(DType t) const {
  const bool half = t == DType::kFp16 || t == DType::kBf16;
  return (half ? gpu_.cuda_fp16_tflops : gpu_.cuda_fp32_tflops) * 1e12 *
         gpu_.achievable.cuda_core_fraction;
}

double Machine::mac_tops(DType t) const {
  const std::string n(golden::dtype_name(t));
  const double r = gpu_.mac_tops(n, n);
  return r > 0 ? r : gpu_.mac_tops("fp16", "fp16");
}

namespace {

// The MAC weight operand a kernel library would run a weight format on natively: the format
// itself for floats and int4/int8, else the narrowest integer operand of the GPU's MAC cores
// (for `act`) that holds every code losslessly (int1..int3, ternary, binary widen to int4, as
// sub-4-bit kernels pack them; int5..int7 to int8); "" when there is none (multi-basis binary,
// whose per-basis scales need a dequantize step).
std::string mac_weight_name(const hw::GpuConfig& gpu, const std::string& act,
                            const llm::WeightFormat& w) {
  if (w.kind == llm::WeightFormatKind::kFloat) return std::string(golden::dtype_name(w.dtype));
  if (w.kind == llm::WeightFormatKind::kMultiBasisBinary) return "";
  for (int bits : {4, 8}) {
    if (w.bits <= bits && gpu.mac_tops(act, "int" + std::to_string(bits)) > 0) {
      return "int" + std::to_string(bits);
    }
  }
  return "";
}

}  // namespace

GemmPath Machine::gemm_path(const llm::WeightFormat& w, DType act, bool tables) const {
  const std::string act_name(golden::dtype_name(act));
  GemmPath p;
  if (w.is_low_bit() && tables && gpu_.has_lut_tensor()) {
    const int planes = std::max(1, w.planes());
    const double r = gpu_.lut_tops(act_name, planes);
    if (r > 0) {
      p.unit = GemmUnit::kLut;
      p.peak_tops = r;
      p.description = fmt::format("lut {} x {} ({} plane{})", act_name, w.name(), planes,
                                  planes == 1 ? "" : "s");
      return p;
    }
  }
  const std::string wname = mac_weight_name(gpu_, act_name, w);
  if (!wname.empty()) {
    const double r = gpu_.mac_tops(act_name, wname);
    if (r > 0) {
      p.unit = GemmUnit::kMac;
      p.peak_tops = r;
      p.description = fmt::format("mac {} x {}", act_name, wname);
      const bool widened =
          w.kind != llm::WeightFormatKind::kFloat &&
          !(w.kind == llm::WeightFormatKind::kInt && "int" + std::to_string(w.bits) == wname);
      if (widened) p.description += fmt::format(" ({} codes widened to {})", w.name(), wname);
      return p;
    }
  }
  // Dequantize-then-MAC: weights are converted to the activation format in registers, then the
  // MAC core runs act x act. Per weight code: tiling::kDequantOpsPerCode thread instructions
  // (unpack, convert, zero point, scale; the count the compiler's kernels emit), per basis for
  // multi-basis binary (each basis a 1-bit code with its own scale); a float-to-float
  // conversion is one.
  p.unit = GemmUnit::kMacDequant;
  p.peak_tops = mac_tops(act);
  if (w.kind == llm::WeightFormatKind::kFloat) {
    p.dequant_ops_per_weight = 1;
  } else if (w.kind == llm::WeightFormatKind::kMultiBasisBinary) {
    p.dequant_ops_per_weight = double(tiling::kDequantOpsPerCode) * w.bases;
    p.dequant_int_ops_per_weight = double(tiling::kDequantIntOpsPerCode) * w.bases;
  } else {
    p.dequant_ops_per_weight = tiling::kDequantOpsPerCode;
    p.dequant_int_ops_per_weight = tiling::kDequantIntOpsPerCode;
  }
  // A GPU without tensor cores for `act` (FP8 on A100) upcasts to FP16: say so in the path.
  const bool native = gpu_.mac_tops(act_name, act_name) > 0;
  const std::string mac_name = native ? act_name : "fp16";
  p.description = fmt::format("{}dequant {} -> {}, mac {} x {}{}", tables ? "tables on MAC, " : "",
                              w.name(), mac_name, mac_name, mac_name,
                              native ? "" : " (no " + act_name + " tensor cores: upcast to fp16)");
  return p;
}

Machine::KernelTile Machine::kernel_tile(const TileKey& key,
                                         const std::function<KernelTile()>& choose) const {
  {
    std::lock_guard<std::mutex> lock(kernel_tiles_->mutex);
    const auto it = kernel_tiles_->tiles.find(key);
    if (it != kernel_tiles_->tiles.end()) return it->second;
  }
  // The search runs unlocked; two threads racing on one key compute the same answer.
  const KernelTile tile = choose();
  std::lock_guard<std::mutex> lock(kernel_tiles_->mutex);
  return kernel_tiles_->tiles.emplace(key, tile).first->second;
}

}  // namespace ltc::roofline
