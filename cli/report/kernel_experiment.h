// The LUT Tensor Core paper's kernel-level experiment with the cycle-level simulator (issue #12
// part 3): the LLaMA2-13B mpGEMM M=2048 N=27648 K=5120 W_INT1 A_FP16 on an A100 with MAC tensor
// cores (dequantize-then-MAC) and on A100s with LUT tensor cores (tiles per tensor core, the
// doubled register file), and the authors' own GEMM (W_INT2 A_FP16 M=4096 N=27648 K=5120 on
// A100-LUT-4X) beside their Accel-Sim cycles. `ltc bench sim --only paper` prints it; the DSE
// report shows it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ltc::report {

struct KernelExperimentRow {
  std::string label;
  std::string gpu, gpu_set;  // built-in GPU and --gpu-set overrides (ltc sim)
  std::string path;          // "mma" (dequantize-then-MAC / dense) or "lut"
  std::string weights, acts;
  int64_t m = 0, n = 0, k = 0;
  int tiles_per_tensor_core = 0;  // LUT tiles (0: MAC only)
  int register_file_kb = 0;
  // Tensor-core area of one SM relative to the A100's MAC tensor cores: from the GPU JSON
  // (tensor_area_mm2_per_sm, the paper's Table III) scaled by the tiles.
  double area_vs_mac = 0;
  int64_t cycles = 0;
  double time_ms = 0, tensor_utilization = 0, speedup = 0;  // speedup over the first row
  std::string top_stall;
  double wall_s = 0;
  std::string command;  // the ltc commands that reproduce it
};

struct KernelExperiment {
  std::vector<KernelExperimentRow> rows;  // the 13B mpGEMM; first row: the MAC baseline
  KernelExperimentRow authors;            // the authors' GEMM on a100-lut4x
  std::string method;                     // sampled simulation's method line, or "full"
};

// Tensor-core area of one SM of `gpu_name` (with --gpu-set `gpu_set`) relative to the A100's MAC
// tensor cores: the GPU files' tensor_area_mm2_per_sm (the paper's Table III), scaled by the
// LUT tiles per tensor core; 0 when a file gives no area.
double tensor_area_vs_a100(const std::string& gpu_name, const std::string& gpu_set);

// Runs every configuration (sampled simulation unless `full`); `progress` lines go to stderr.
KernelExperiment run_kernel_experiment(bool full, bool progress);

nlohmann::json to_json(const KernelExperiment& e);

}  // namespace ltc::report
