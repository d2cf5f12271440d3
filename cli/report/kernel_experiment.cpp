#include "cli/report/kernel_experiment.h"

#include "cli/report/paper.h"

#include "compiler/gemm_lowering.h"
#include "model/hw/gpu.h"
#include "model/llm/precision.h"
#include "sim/sampler/sampling.h"
#include "sim/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace ltc::report {
namespace {

struct Config {
  std::string label, gpu, gpu_set, path, weights;
  int64_t m, n, k;
};

KernelExperimentRow run_one(const Config& c, bool full, bool progress) {
  hw::GpuConfig gpu = hw::load_gpu(c.gpu);
  if (!c.gpu_set.empty()) gpu = hw::with_overrides(gpu, c.gpu_set);
  compiler::GemmSpec s;
  s.m = c.m;
  s.n = c.n;
  s.k = c.k;
  s.weights = llm::parse_weight_format(c.weights);
  s.act = golden::DType::kFp16;
  if (c.path == "mma") s.path = traces::GemmPath::kMma;
  const traces::Trace t = compiler::compile_gemm(s, gpu);
  if (progress) std::fprintf(stderr, "kernel experiment: %s ...\n", c.label.c_str());
  const sim::RunStats r = full ? sim::simulate(t, gpu, {}) : sim::simulate_sampled(t, gpu, {});
  KernelExperimentRow row;
  row.label = c.label;
  row.gpu = c.gpu;
  row.gpu_set = c.gpu_set;
  row.path =
      c.path.empty() ? std::string(traces::gemm_path_name(compiler::gemm_path(s, gpu))) : c.path;
  row.weights = c.weights;
  row.acts = "fp16";
  row.m = c.m;
  row.n = c.n;
  row.k = c.k;
  row.tiles_per_tensor_core = gpu.lut_tensor ? gpu.lut_tensor->tiles_per_tensor_core : 0;
  row.register_file_kb = gpu.register_file_kb_per_sm;
  row.area_vs_mac = tensor_area_vs_a100(c.gpu, c.gpu_set);
  const sim::KernelStats total = r.total();
  row.cycles = r.cycles;
  row.time_ms = r.time_ms();
  row.tensor_utilization = total.tensor_utilization();
  // The kernel that takes most of the time says what binds.
  const auto big = std::max_element(
      r.kernels.begin(), r.kernels.end(),
      [](const sim::KernelStats& a, const sim::KernelStats& b) { return a.cycles < b.cycles; });
  if (big != r.kernels.end()) row.top_stall = std::string(sim::stall_name(big->binding_stall()));
  row.wall_s = r.wall_s;
  row.command = fmt::format(
      "ltc compile gemm --m {} --n {} --k {} --weights {} --acts fp16 --gpu {}{}{} --out g.lmt && "
      "ltc sim g.lmt --gpu {}{}{}",
      c.m, c.n, c.k, c.weights, c.gpu, c.path == "mma" ? " --path mac" : "",
      c.gpu_set.empty() ? "" : " --gpu-set " + c.gpu_set, c.gpu,
      c.gpu_set.empty() ? "" : " --gpu-set " + c.gpu_set, full ? "" : " --sample");
  return row;
}

}  // namespace

double tensor_area_vs_a100(const std::string& gpu_name, const std::string& gpu_set) {
  const hw::GpuConfig mac = hw::load_gpu("a100");
  const hw::GpuConfig base = hw::load_gpu(gpu_name);
  if (mac.tensor_area_mm2_per_sm <= 0 || base.tensor_area_mm2_per_sm <= 0) return 0;
  // The JSON's area is for its built-in tile count; --gpu-set may change the tiles.
  const hw::GpuConfig g = gpu_set.empty() ? base : hw::with_overrides(base, gpu_set);
  const double tiles_scale = base.lut_tensor && g.lut_tensor
                                 ? double(g.lut_tensor->tiles_per_tensor_core) /
                                       double(base.lut_tensor->tiles_per_tensor_core)
                                 : 1.0;
  return base.tensor_area_mm2_per_sm * tiles_scale / mac.tensor_area_mm2_per_sm;
}

KernelExperiment run_kernel_experiment(bool full, bool progress) {
  // LLaMA2-13B's FFN up/gate projection, batch of 2048 tokens (the paper's kernel experiment).
  const int64_t m = 2048, n = 27648, k = 5120;
  const std::vector<Config> configs = {
      {"A100, MAC tensor cores, dequantize-then-MAC", "a100", "", "mma", "int1", m, n, k},
      {"A100, MAC tensor cores, W_FP16 (for reference)", "a100", "", "mma", "fp16", m, n, k},
      {"A100 + LUT, 1 tile per tensor core", "a100-lut4x", "lut_tensor.tiles_per_tensor_core=1", "",
       "int1", m, n, k},
      {"A100 + LUT, 2 tiles per tensor core", "a100-lut4x", "lut_tensor.tiles_per_tensor_core=2",
       "", "int1", m, n, k},
      {"A100-LUT-4X (4 tiles)", "a100-lut4x", "", "", "int1", m, n, k},
      {"A100-LUT-4X + doubled register file", "a100-lut4x-drm", "", "", "int1", m, n, k},
      {"A100-LUT-8X (8 tiles)", "a100-lut8x", "", "", "int1", m, n, k},
      {"A100-LUT-8X + doubled register file", "a100-lut8x-drm", "", "", "int1", m, n, k},
  };
  KernelExperiment e;
  e.method = full ? "full" : sim::sample_method({});
  for (const Config& c : configs) e.rows.push_back(run_one(c, full, progress));
  for (auto& r : e.rows) {
    r.speedup = r.cycles > 0 ? double(e.rows[0].cycles) / double(r.cycles) : 0.0;
  }
  e.authors =
      run_one({"the authors' GEMM on A100-LUT-4X", "a100-lut4x", "", "", "int2", 4096, 27648, 5120},
              full, progress);
  return e;
}

nlohmann::json to_json(const KernelExperiment& e) {
  auto row = [](const KernelExperimentRow& r) {
    return nlohmann::json{{"label", r.label},
                          {"gpu", r.gpu},
                          {"gpu_set", r.gpu_set},
                          {"path", r.path},
                          {"weights", r.weights},
                          {"acts", r.acts},
                          {"m", r.m},
                          {"n", r.n},
                          {"k", r.k},
                          {"tiles_per_tensor_core", r.tiles_per_tensor_core},
                          {"register_file_kb", r.register_file_kb},
                          {"area_vs_mac", r.area_vs_mac},
                          {"cycles", r.cycles},
                          {"time_ms", r.time_ms},
                          {"tensor_utilization", r.tensor_utilization},
                          {"speedup", r.speedup},
                          {"top_stall", r.top_stall},
                          {"wall_s", r.wall_s},
                          {"command", r.command}};
  };
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : e.rows) rows.push_back(row(r));
  nlohmann::json authors = row(e.authors);
  authors["accel_sim_cycles"] = paper::kAccelSimGemmCycles;
  return {{"method", e.method}, {"rows", rows}, {"authors", authors}};
}

}  // namespace ltc::report
