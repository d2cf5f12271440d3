#include "cli/report/sim_bench.h"

#include "cli/report/paper.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

namespace ltc::report {
namespace {

double num(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}

}  // namespace

std::string times(double r) {
  return fmt::format(r < 9.95 ? "{:.1f}x" : "{:.0f}x", r);
}

std::string sim_speed_markdown(const nlohmann::json& runs) {
  std::string s =
      "Simulator speed (`ltc bench sim --markdown docs/results/sim.md`): every warp instruction "
      "and memory request simulated on one host thread, then the authors' GEMM sampled (the "
      "fastest of its runs). Wall times are this host's.\n\n"
      "| workload | kernels | simulated cycles | warp instructions | wall s | warp instructions/s "
      "| peak RSS MiB | against |\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : runs) {
    std::string against;
    if (r.contains("accel_sim_s")) {
      against = fmt::format("{} faster than the authors' Accel-Sim ({:.0f} s)",
                            times(num(r, "speedup_vs_accel_sim")), num(r, "accel_sim_s"));
    } else if (r.contains("error_vs_full")) {
      against = fmt::format(
          "the full run: {:+.2f}% cycles, {} less work ({} warp instructions simulated), {} "
          "faster; goal <= {:g} s",
          100 * num(r, "error_vs_full"), times(num(r, "work_ratio")),
          r.value("simulated_instructions", uint64_t(0)), times(num(r, "speedup_vs_full")),
          num(r, "goal_wall_s"));
    }
    s += fmt::format("| {} | {} | {} | {} | {:.2f} | {:.3g} | {:.0f} | {} |\n",
                     r.value("workload", std::string()), r.value("kernels", 0),
                     r.value("cycles", int64_t(0)), r.value("warp_instructions", uint64_t(0)),
                     num(r, "wall_s"), num(r, "warp_instructions_per_s"), num(r, "peak_rss_mib"),
                     against);
  }
  return s;
}

std::string sim_threads_markdown(const nlohmann::json& workloads) {
  std::string s =
      "Simulator speed per host thread count (`ltc bench sim --threads --markdown "
      "docs/results/sim-threads.md`; `--baseline BIN` adds the serial simulator's run): every "
      "SM and memory request simulated, the SMs stepped a quantum at a time on the threads "
      "(sim/README.md, \"Parallel stepping\"); the results are identical at every count (the "
      "bench checks). Wall times are this host's: with `--repeat N`, the median of a count's N "
      "runs (the counts run in rounds), their range beside it; host load: its runnable threads "
      "(the 1-minute load average) as a run started, the most of a count's runs (above its "
      "hardware threads no count gains).\n\n"
      "| workload | simulated cycles | warp instructions | host threads | host load | threads | "
      "wall s | over 1 thread | over the serial simulator |\n"
      "|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& w : workloads) {
    for (const auto& r : w.value("runs", nlohmann::json::array())) {
      const std::string serial =
          r.contains("speedup_vs_baseline")
              ? fmt::format("{:.2f}x ({:.2f} s)", num(r, "speedup_vs_baseline"),
                            num(w, "baseline_wall_s"))
              : std::string("-");
      std::string wall = fmt::format("{:.2f}", num(r, "wall_s"));
      const nlohmann::json each = r.value("runs_wall_s", nlohmann::json::array());
      if (each.size() > 1) {
        const auto [lo, hi] = std::minmax_element(each.begin(), each.end());
        wall += fmt::format(" ({:.2f}-{:.2f}, {} runs)", lo->get<double>(), hi->get<double>(),
                            each.size());
      }
      s += fmt::format("| {} | {} | {} | {} | {:.1f} | {} | {} | {:.2f}x | {} |\n",
                       w.value("workload", std::string()), w.value("cycles", int64_t(0)),
                       w.value("warp_instructions", uint64_t(0)), w.value("host_threads", 0),
                       num(r, "host_load"), r.value("threads", 0), wall, num(r, "speedup"), serial);
    }
  }
  return s;
}

namespace {
// The measurement files of a result, by file name: "a.json" or "a.json, b.json".
std::string measurement_names(const nlohmann::json& result) {
  std::string names;
  const nlohmann::json m = result.value("measurements", nlohmann::json());
  for (const auto& p : m.is_array() ? m : nlohmann::json::array({m})) {
    if (!p.is_string()) continue;
    names += (names.empty() ? "" : ", ") +
             std::filesystem::path(p.get<std::string>()).filename().string();
  }
  return names;
}
}  // namespace

std::string sim_moe_markdown(const nlohmann::json& result) {
  const nlohmann::json steps = result.value("steps", nlohmann::json::array());
  std::string s = fmt::format(
      "The compiled FP16 steps of MoE, sliding-window and latent-attention models, simulated "
      "sampled on the H200 "
      "(`ltc bench sim --only moe --markdown docs/results/sim-moe.md`; measurements: {}), per "
      "decoder layer of the main kind, against the eager reference step measured there and the "
      "roofline's two kernel plans. Mean |error| over {} steps: simulator vs measured {:.1f}%, "
      "roofline (reference plan, the kernels that were measured) vs measured {:.1f}%, simulator "
      "vs the roofline's compiled plan (the kernels that are simulated) {:.1f}%; {:.0f} s of "
      "simulation.\n\n"
      "The compiled kernels are not PyTorch's eager ones: one fused kernel per operator (RoPE, "
      "the gated activation, the norms), no routing, cast, copy or `index_add_` kernels of the "
      "eager MoE FFN, the experts' GEMMs as the compiler's grouped FP16 MMA kernels (one per "
      "projection, the experts its grid z) instead of BF16 `torch._grouped_mm`, attention as the "
      "compiler's split-KV FlashAttention. The simulator "
      "times that step: it is below the measured eager step by what those kernels cost, as the "
      "roofline's compiled plan is below its reference plan; latent attention's decode is "
      "the compiler's FlashMLA-style kernel (the warps split the latent values; DeepSeek-V2's "
      "128 heads run as two blocks of 64).\n\n",
      measurement_names(result), steps.size(), 100 * num(result, "sim_mape"),
      100 * num(result, "roofline_reference_mape"),
      100 * num(result, "sim_vs_roofline_compiled_mape"), num(result, "wall_s"));
  s += "| step | family | measured ms | simulated ms | error | roofline (reference) ms | error | "
       "roofline (compiled) ms | simulated vs compiled |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : steps) {
    s += fmt::format(
        "| {} | {} | {:.4f} | {:.4f} | {:+.1f}% | {:.4f} | {:+.1f}% | {:.4f} | {:+.1f}% |\n",
        r.value("step", std::string()), r.value("family", std::string()), num(r, "measured_ms"),
        num(r, "sim_ms"), 100 * num(r, "sim_error"), num(r, "roofline_reference_ms"),
        100 * num(r, "roofline_reference_error"), num(r, "roofline_compiled_ms"),
        100 * num(r, "sim_vs_roofline_compiled"));
  }
  const nlohmann::json lut = result.value("lut_steps", nlohmann::json::array());
  if (lut.empty()) return s;
  s += fmt::format(
      "\nMixtral's W_INT2 A_INT8 steps on a LUT GPU, simulated sampled, per decoder layer, "
      "against the roofline's compiled plan (its LUT path, `--precompute fused`): the experts' "
      "GEMMs as the compiler's grouped LUT mpGEMMs (one per projection, the experts its grid z). "
      "No GPU measures these steps. Mean |simulated vs compiled| {:.1f}% over {} steps.\n\n"
      "| step | family | simulated ms | roofline (compiled) ms | simulated vs compiled |\n"
      "|---|---|---|---|---|\n",
      100 * num(result, "lut_sim_vs_roofline_compiled_mape"), lut.size());
  for (const auto& r : lut) {
    s += fmt::format("| {} | {} | {:.4f} | {:.4f} | {:+.1f}% |\n", r.value("step", std::string()),
                     r.value("family", std::string()), num(r, "sim_ms"),
                     num(r, "roofline_compiled_ms"), 100 * num(r, "sim_vs_roofline_compiled"));
  }
  return s;
}

std::string sim_h200_markdown(const nlohmann::json& result) {
  const nlohmann::json gemms = result.value("gemms", nlohmann::json::array());
  double small = 0, large = 0;
  int n_small = 0, n_large = 0;
  for (const auto& g : gemms) {
    const double e = std::abs(num(g, "error"));
    if (g.value("m", int64_t(0)) <= 64) {
      small += e;
      ++n_small;
    } else {
      large += e;
      ++n_large;
    }
  }
  // The kind's measured kernels (tools/profile-gpu) and the flag and file that regenerate it.
  const std::string kind = result.value("kind", std::string("fp16"));
  const std::string what = kind == "fp16"   ? "cuBLAS FP16"
                           : kind == "bf16" ? "cuBLAS BF16"
                           : kind == "int8" ? "cuBLASLt INT8 (torch._int_mm)"
                                            : "FP8 E4M3 (torch._scaled_mm)";
  const std::string gpu = result.value("gpu", std::string());
  const std::string command = (kind == "fp16" ? "" : "--kind " + kind + " ") +
                              (gpu.empty() || gpu == "h200" ? "" : "--gpu " + gpu + " ") +
                              "--markdown docs/results/sim-h200" +
                              (kind == "fp16" ? "" : "-" + kind) + ".md";
  std::string s = fmt::format(
      "The simulator against {} GEMMs measured on an H200 (`ltc bench sim --only h200 {}`; "
      "measurements: {}): {} GEMMs, each compiled to the dense mma kernel and simulated on "
      "`--gpu {}`. MAPE {:.2f}% over all, {:.2f}% for M <= 64 ({}), {:.2f}% for M > 64 ({}); "
      "{:.0f} s of simulation.\n\n",
      what, command,
      std::filesystem::path(result.value("calibration", std::string())).filename().string(),
      gemms.size(), gpu, 100 * num(result, "mape"), n_small ? 100 * small / n_small : 0.0, n_small,
      n_large ? 100 * large / n_large : 0.0, n_large, num(result, "wall_s"));
  s += "| GEMM | M | N | K | measured ms | simulated ms | error | tensor util. |\n"
       "|---|---|---|---|---|---|---|---|\n";
  for (const auto& g : gemms) {
    s += fmt::format("| {} | {} | {} | {} | {:.4f} | {:.4f} | {:+.1f}% | {:.0f}% |\n",
                     g.value("name", std::string()), g.value("m", int64_t(0)),
                     g.value("n", int64_t(0)), g.value("k", int64_t(0)), num(g, "measured_ms"),
                     num(g, "sim_ms"), 100 * num(g, "error"), 100 * num(g, "tensor_utilization"));
  }
  return s;
}

std::string sim_sample_markdown(const nlohmann::json& result) {
  const nlohmann::json cases = result.value("cases", nlohmann::json::array());
  std::string s = fmt::format(
      "Sampled against full simulation (`ltc bench sim --only sample --per-kernel --markdown "
      "docs/results/sim-sample.md`; method: {}). Mean |cycle error| {:.2f}%, worst {:+.2f}% ({}); "
      "work {} in total (warp instructions of the full runs over those simulated), wall time {} "
      "in total; stated confidence {:.2f}% expected on average, {} of {} cases within their "
      "stated maximum.\n\n",
      result.value("method", std::string()), 100 * num(result, "mean_abs_error"),
      100 * num(result, "worst_error"), result.value("worst_case", std::string()),
      times(num(result, "work_ratio_total")), times(num(result, "speedup_total")),
      100 * num(result, "mean_error_expected"), result.value("within_error_max", 0), cases.size());
  s +=
      "| case | gpu | full cycles | sampled cycles | error | work | wall speedup | stated expected "
      "| stated max |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& c : cases) {
    s += fmt::format("| {} | {} | {} | {} | {:+.2f}% | {} | {} | {:.2f}% | {:.2f}% |\n",
                     c.value("case", std::string()), c.value("gpu", std::string()),
                     c.value("full_cycles", int64_t(0)), c.value("sampled_cycles", int64_t(0)),
                     100 * num(c, "error"), times(num(c, "work_ratio")), times(num(c, "speedup")),
                     100 * num(c, "error_expected"), 100 * num(c, "error_max"));
  }
  s += "\n| kind | cases | mean \\|error\\| | work | wall speedup |\n|---|---|---|---|---|\n";
  const nlohmann::json by_kind = result.value("by_kind", nlohmann::json::object());
  for (const auto& [kind, g] : by_kind.items()) {
    s += fmt::format("| {} | {} | {:.2f}% | {} | {} |\n", kind, g.value("cases", 0),
                     100 * num(g, "mean_abs_error"), times(num(g, "work_ratio_total")),
                     times(num(g, "speedup_total")));
  }
  s += "\nPer method (each sampled kernel against the same kernel of the full run; a repeat: its "
       "own full-run cycles against its kernel's; the run's first kernel simulated in full is "
       "exact and in no row). `--confidence-out` writes these rows as "
       "configs/calibration/sampling-confidence.json.\n\n"
       "| method | kernels | mean \\|error\\| | largest |\n|---|---|---|---|\n";
  for (const auto& m : result.value("by_method", nlohmann::json::array())) {
    s += fmt::format("| {} | {} | {:.2f}% | {:.2f}% |\n", m.value("row", std::string()),
                     m.value("kernels", 0), 100 * num(m, "mean"), 100 * num(m, "max"));
  }
  return s;
}

std::string sim_paper_markdown(const nlohmann::json& result) {
  std::string s = fmt::format(
      "The LUT Tensor Core paper's kernel experiment (`ltc bench sim --only paper --markdown "
      "docs/results/sim-paper.md`; {}): the LLaMA2-13B mpGEMM M=2048 N=27648 K=5120 W_INT1 "
      "A_FP16. Area: tensor-core area per SM against the A100's MAC tensor cores (the GPU files' "
      "Table III figures, scaled by the tiles).\n\n",
      result.value("method", std::string()));
  s += "| configuration | tiles | RF KB | cycles | speedup | tensor util. | area | binding stall "
       "|\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : result.value("rows", nlohmann::json::array())) {
    s += fmt::format("| {} | {} | {} | {} | {:.2f}x | {:.1f}% | {:.1f}% | {} |\n",
                     r.value("label", std::string()), r.value("tiles_per_tensor_core", 0),
                     r.value("register_file_kb", 0), r.value("cycles", int64_t(0)),
                     num(r, "speedup"), 100 * num(r, "tensor_utilization"),
                     100 * num(r, "area_vs_mac"), r.value("top_stall", std::string()));
  }
  const nlohmann::json a = result.value("authors", nlohmann::json::object());
  s += fmt::format(
      "\nThe authors' GEMM (W_INT2 A_FP16 4096x27648x5120 on a100-lut4x): {} cycles, tensor "
      "cores busy {:.1f}%, binding stall {}; their Accel-Sim run: {} cycles.\n",
      a.value("cycles", int64_t(0)), 100 * num(a, "tensor_utilization"),
      a.value("top_stall", std::string()), a.value("accel_sim_cycles", int64_t(0)));
  s += fmt::format(
      "\nThe paper: the LUT tensor core matches the MAC's speed at {:.1f}% of its tensor-core "
      "area, "
      "and is {:g}x faster with more registers (+{:.1f}% area). Why ours differ: sim/README.md, "
      "\"Results\".\n",
      100 * paper::kKernelLutMatchesMacAtArea, paper::kKernelMoreRegistersSpeedup,
      100 * paper::kKernelMoreRegistersExtraArea);
  return s;
}

}  // namespace ltc::report
