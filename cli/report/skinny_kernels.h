// How well the compiler's skinny GEMM kernels stream their bytes in the cycle-level simulator:
// every decoder linear layer of the LLaMA2 models (the step graph's launch groups, so QKV and
// gate+up are one GEMM each, as both performance models run them) at decode rows M (1: a GEMV;
// 16: a batch of 16), for each weight width on each GPU. A width of 1..8 bits runs on the LUT
// tensor cores where the GPU has them (A_FP16 tables), else dequantize-then-MAC; 16 is a dense
// FP16 GEMM. Each row gives the GEMM kernel's time, the bytes it must move (packed weights and
// their scales, activations or tables, outputs), their rate against the GPU's DRAM streaming
// bandwidth (hw::GpuConfig::dram_sim_gbps) and, where that is under the target, the stall that
// binds it. `ltc bench kernels` prints it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ltc::report {

// The share of the DRAM streaming bandwidth a skinny GEMM kernel must reach.
inline constexpr double kSkinnyBandwidthTarget = 0.80;

struct SkinnyCase {
  std::string model, layer, gpu;
  int64_t m = 0, n = 0, k = 0;
  int wbits = 16;  // 1..8: integer codes; 16: dense fp16
};

struct SkinnyResult {
  SkinnyCase c;
  std::string path;  // "lut", "dequant" (dequantize-then-MAC), "fp16"
  std::string block, warp;
  int k_slices = 1;
  int64_t blocks = 0;
  int64_t cycles = 0;
  double time_us = 0;
  double bytes = 0;               // compulsory: weights + scales + activations/tables + outputs
  double dram_read_bytes = 0;     // what the simulator's DRAM read
  double gbps = 0, fraction = 0;  // bytes / time, and against the streaming bandwidth
  double occupancy = 0;
  std::string binding_stall;  // the stall with the most cycles
  double wall_s = 0;
  bool meets() const { return fraction >= kSkinnyBandwidthTarget; }
};

struct SkinnyOptions {
  std::vector<std::string> models{"llama2-7b", "llama2-13b", "llama2-70b"};
  std::vector<std::string> gpus{"a100", "a100-lut4x", "a100-lut8x", "h200"};
  std::vector<int64_t> rows{1, 16};
  std::vector<int> widths{1, 2, 3, 4, 5, 6, 7, 8, 16};
};

// The cases in table order (GPU, model, layer, M, width); InputError for an unknown model, GPU
// or width outside 1..8, 16.
std::vector<SkinnyCase> skinny_cases(const SkinnyOptions& o);
// Compiles and simulates one case in full (only its GEMM kernel).
SkinnyResult run_skinny_case(const SkinnyCase& c);

nlohmann::json to_json(const SkinnyResult& r);
SkinnyResult skinny_from_json(const nlohmann::json& j);  // to_json's inverse
// The table as Markdown, with a summary line per GPU (cases meeting the target, the lowest).
std::string skinny_markdown(const std::vector<SkinnyResult>& rows);

}  // namespace ltc::report
