// `ltc bench sim`: the cycle-level simulator measured. The default run: its speed on the LUT
// Tensor Core authors' GEMM (W_INT2 A_FP16, M=4096 N=27648 K=5120 on a100-lut4x; their Accel-Sim
// run: report::paper::kAccelSimGemm*) in full and sampled, and a LLaMA2-70B decode step (B1,
// L4096, W_INT2 A_INT8). `--only h200`: the simulator against the 42 cuBLAS FP16 GEMMs measured
// on an H200 (configs/calibration/h200-gemm.json). `--only rtl`: the verilated tile as the tensor
// core against the fast one. `--only sample`: sampled against full simulation on the cases of
// configs/sampling/ (sim/sampler/README.md), per case and, with --per-kernel, per method (the
// confidence table, --confidence-out). `--only paper`: the paper's kernel experiment.
// `--only moe`: sampled simulation of the compiled FP16 steps of MoE, sliding-window and latent-
// attention models against the H200 reference steps (configs/calibration/h200-moe-profile.json,
// h200-mla-profile.json) and the roofline,
// and of a LUT MoE decode and prefill step against the roofline's compiled plan.
// `--markdown` writes any of them but rtl as a results file (cli/report/sim_bench.h).
#include "cli/command.h"
#include "cli/options.h"
#include "cli/report/kernel_experiment.h"
#include "cli/report/paper.h"
#include "cli/report/sim_bench.h"
#include "cli/sample_cases.h"
#include "common/config_dir.h"
#include "common/error.h"
#include "common/file_io.h"
#include "common/process.h"
#include "compiler/gemm_lowering.h"
#include "compiler/model_lowering.h"
#include "model/hw/gpu.h"
#include "model/llm/graph.h"
#include "model/llm/model_config.h"
#include "model/roofline/calibrate.h"
#include "model/roofline/estimate.h"
#include "sim/sampler/sampling.h"
#include "sim/simulator.h"
#include "sim/step_pool.h"

#include <fmt/core.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/resource.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ltc::cli {
namespace {

using report::times;

struct BenchSimFlags {
  std::string only;  // "", "gemm", "decode", "h200", "rtl"
  std::string calibration;
  std::string kind = "fp16";  // h200: the GEMM kind (the others measured in h200-gemm-kinds.json)
  std::string gpu = "h200";
  int64_t max_m = 0;  // h200: only GEMMs with M <= max_m (0: all)
  bool full = false;  // paper: full simulation instead of sampled
  bool json = false;
  // sample: full runs' results kept in this JSON file and reused (the full simulator's cycles
  // do not change between sampler experiments); only the cases whose name contains one of these.
  std::string full_cache;
  std::vector<std::string> cases;
  std::vector<int64_t> trips;  // sample: the main loop's trips in the two reduced runs
  bool per_kernel = false;     // sample: each simulated kernel's error too
  int64_t slice = sim::SampleOptions{}.max_slice;  // sample: the largest slice of the GPU
  bool slice_streaming = false;                    // sample: slices for streaming kernels too
  bool large = false;  // sample: whole steps at serving sizes instead of the default cases
  // sample: the cases of these files instead (configs/sampling/README.md), run one after another.
  std::vector<std::string> case_files;
  std::string confidence_out;  // sample: write the per-method errors as the confidence table
  std::string markdown;        // write the run's tables as Markdown (cli/report/sim_bench.h)
  // --threads: the speed at these host thread counts (empty: 1, 2 and the hardware's), against
  // `baseline` (an ltc binary of the serial simulator) when given.
  bool threads_table = false;
  std::vector<std::string> threads;
  std::string baseline;
  int64_t repeat = 1;  // --threads: runs per count, in rounds; the table gives the median
};

// --case: a text with a colon names one case exactly (`label`, e.g. the H200 GEMM NAME:M), other
// texts pick the cases whose name contains them; no --case picks all.
bool case_picked(const std::vector<std::string>& cases, const std::string& name,
                 const std::string& label) {
  return cases.empty() || std::any_of(cases.begin(), cases.end(), [&](const std::string& c) {
           return c.find(':') != std::string::npos ? c == label : name.find(c) != std::string::npos;
         });
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0;
}

nlohmann::json figures(const std::string& what, const sim::RunStats& r) {
  const sim::KernelStats t = r.total();
  const uint64_t warp_instructions = t.warp_instructions();
  return {{"workload", what},
          {"kernels", r.kernels.size()},
          {"cycles", r.cycles},
          {"time_ms", r.time_ms()},
          {"wall_s", r.wall_s},
          {"cycles_per_s", r.wall_s > 0 ? double(r.cycles) / r.wall_s : 0.0},
          {"warp_instructions", warp_instructions},
          {"warp_instructions_per_s", r.wall_s > 0 ? double(warp_instructions) / r.wall_s : 0.0},
          {"tensor_utilization", t.tensor_utilization()},
          {"peak_rss_mib", peak_rss_mib()}};
}

// A sampled run's work taken off, independent of the host's speed: the warp instructions the
// full run issues (the sampled run's counts, which are exact) over those it simulated.
double work_ratio(const sim::RunStats& sampled) {
  const double simulated = double(sampled.sample_simulated_instructions);
  return simulated > 0 ? double(sampled.total().warp_instructions()) / simulated : 0.0;
}

// Issue #12's goal for the authors' GEMM sampled, and the runs whose fastest is measured against
// it (this host's wall times move by up to 2x from run to run).
constexpr double kSampledGoalWallS = 3.0;
constexpr int kSampledRuns = 3;

// The operands of a GEMM kind of the H200 measurements (tools/profile-gpu: fp16 and bf16
// F.linear, int8 torch._int_mm, fp8 torch._scaled_mm), as a dense MMA kernel runs them.
std::pair<const char*, golden::DType> kind_operands(const std::string& kind) {
  if (kind == "bf16") return {"bf16", golden::DType::kBf16};
  if (kind == "int8") return {"int8", golden::DType::kInt8};
  if (kind == "fp8") return {"fp8e4m3", golden::DType::kFp8E4M3};
  return {"fp16", golden::DType::kFp16};
}

// The simulator against measured GEMMs: every entry of the calibration file as a dense mma
// kernel on `o.gpu`, one line each as it finishes. Another kind than FP16: the same GEMMs'
// (M, N, K) as that kind measured in configs/calibration/h200-gemm-kinds.json (those it holds),
// simulated at the M the measurement ran (PyTorch pads INT8 M <= 16 to 17).
void run_calibration(const BenchSimFlags& o) {
  const std::string path =
      o.calibration.empty() ? config_dir("calibration") + "/h200-gemm.json" : o.calibration;
  const hw::GpuConfig gpu = hw::load_gpu(o.gpu);
  std::vector<roofline::GemmCheck> gemms = roofline::load_gemm_measurements(path);
  std::string measured_in = path;
  std::vector<int64_t> run_m;  // per GEMM: the M simulated (the measurement's)
  if (o.kind != "fp16") {
    measured_in = config_dir("calibration") + "/h200-gemm-kinds.json";
    const roofline::Measurements kinds = roofline::load_measurements({measured_in});
    std::vector<roofline::GemmCheck> found;
    for (const auto& g : gemms) {
      for (const auto& k : kinds.gemms) {
        if (k.dtype == o.kind && k.m == g.m && k.n == g.n && k.k == g.k) {
          found.push_back({g.name, g.m, g.n, g.k, k.ms, 0});
          run_m.push_back(k.m_run);
          break;
        }
      }
    }
    if (!o.json) {
      fmt::print("{} of the {} GEMMs of {} measured as {} in {}\n", found.size(), gemms.size(),
                 path, o.kind, measured_in);
    }
    gemms = found;
  }
  for (size_t i = run_m.size(); i < gemms.size(); ++i) run_m.push_back(gemms[i].m);
  {
    std::vector<roofline::GemmCheck> kept;
    std::vector<int64_t> kept_m;
    for (size_t i = 0; i < gemms.size(); ++i) {
      const auto& g = gemms[i];
      if ((o.max_m > 0 && g.m > o.max_m) ||
          !case_picked(o.cases, g.name, g.name + ":" + std::to_string(g.m))) {
        continue;
      }
      kept.push_back(g);
      kept_m.push_back(run_m[i]);
    }
    gemms = kept;
    run_m = kept_m;
  }
  nlohmann::json rows = nlohmann::json::array();
  double ape = 0, wall = 0;
  if (!o.json) {
    fmt::print("simulator vs {} ({} {} GEMMs on --gpu {}; ltc bench sim --only h200)\n",
               measured_in, gemms.size(), o.kind, gpu.name);
    fmt::print("  {:<18} {:>5} {:>6} {:>6} {:>10} {:>10} {:>8} {:>6} {:>7}\n", "gemm", "M", "N",
               "K", "measured", "sim ms", "error", "tc", "wall s");
  }
  const auto [weights, act] = kind_operands(o.kind);
  for (size_t i = 0; i < gemms.size(); ++i) {
    roofline::GemmCheck& g = gemms[i];
    compiler::GemmSpec s;
    s.name = g.name;
    s.m = run_m[i];
    s.n = g.n;
    s.k = g.k;
    s.weights = llm::parse_weight_format(weights);
    s.act = act;
    s.path = traces::GemmPath::kMma;
    const traces::Trace t = compiler::compile_gemm(s, gpu);
    const sim::RunStats r = sim::simulate(t, gpu, {});
    if (r.interrupted) break;
    // The measurements replay each GEMM back to back in a CUDA graph, so a call's time holds its
    // kernels, the gaps between them, and the gap before the next replay: one more
    // sm.kernel_gap_cycles (on the H200 the measured 0.50 us per empty kernel in a graph,
    // configs/calibration/h200-microbench.json launch.graph_empty_kernel_us_per_kernel).
    g.model_ms = r.time_ms() + double(gpu.sm.kernel_gap_cycles) / (gpu.clock_ghz * 1e6);
    ape += std::abs(g.error());
    wall += r.wall_s;
    const double tc = r.total().tensor_utilization();
    rows.push_back({{"name", g.name},
                    {"m", g.m},
                    {"m_run", s.m},
                    {"n", g.n},
                    {"k", g.k},
                    {"measured_ms", g.measured_ms},
                    {"sim_ms", g.model_ms},
                    {"error", g.error()},
                    {"tensor_utilization", tc},
                    {"wall_s", r.wall_s}});
    if (!o.json) {
      fmt::print("  {:<18} {:>5} {:>6} {:>6} {:>10.4f} {:>10.4f} {:>+7.1f}% {:>5.0f}% {:>7.1f}\n",
                 g.name, g.m, g.n, g.k, g.measured_ms, g.model_ms, 100 * g.error(), 100 * tc,
                 r.wall_s);
      std::fflush(stdout);
    }
  }
  const double mape = rows.empty() ? 0.0 : ape / double(rows.size());
  const nlohmann::json result = {{"bench", "sim"}, {"calibration", measured_in},
                                 {"kind", o.kind}, {"gpu", gpu.name},
                                 {"gemms", rows},  {"mape", mape},
                                 {"wall_s", wall}};
  if (!o.markdown.empty()) write_text_atomic(o.markdown, report::sim_h200_markdown(result));
  if (o.json) {
    fmt::print("{}\n", result.dump());
  } else {
    fmt::print("  MAPE {:.1f}% over {} GEMMs ({:.0f} s of simulation)\n", 100 * mape, rows.size(),
               wall);
  }
}

// The compiled FP16 step of MoE, sliding-window and latent-attention models, simulated sampled on
// the H200, per decoder layer of the main kind, against the eager reference step measured there
// (configs/calibration/h200-moe-profile.json, h200-mla-profile.json) and against the roofline's two
// kernel plans: the reference (what was measured) and the compiled one (what is simulated). The
// compiler's kernels are not PyTorch's: one fused kernel per operator (no eager RoPE, routing, cast
// or copy kernels), the experts' GEMMs as its own MMA kernels in FP16, FlashAttention-style
// attention. Then Mixtral's W_INT2 A_INT8 decode and prefill on a100-lut4x (the experts as grouped
// LUT mpGEMMs), which no GPU measured: the simulator against the roofline's compiled plan only.
void run_moe(const BenchSimFlags& o) {
  struct Case {
    const char* model;
    llm::Phase phase;
    int64_t batch, length;
  };
  const llm::Phase d = llm::Phase::kDecode, p = llm::Phase::kPrefill;
  // Decode points across batch and context, and prefills: every family of the file (MoE, MoE with
  // shared experts, latent attention with MoE, sliding window).
  const Case cases[] = {{"mixtral-8x7b", d, 1, 512},       {"mixtral-8x7b", d, 16, 4096},
                        {"mixtral-8x7b", p, 1, 512},       {"qwen1.5-moe-a2.7b", d, 16, 512},
                        {"qwen1.5-moe-a2.7b", p, 1, 2048}, {"qwen3-30b-a3b", d, 1, 512},
                        {"qwen3-30b-a3b", d, 64, 512},     {"qwen3-30b-a3b", p, 8, 512},
                        {"deepseek-v2-lite", d, 1, 512},   {"deepseek-v2-lite", d, 16, 4096},
                        {"deepseek-v2-lite", p, 1, 512},   {"mistral-7b", d, 1, 512},
                        {"mistral-7b", d, 64, 4096},       {"mistral-7b", d, 16, 16384},
                        {"mistral-7b", p, 1, 512},         {"mistral-7b", p, 1, 8192},
                        {"minicpm3-4b", d, 1, 512},        {"minicpm3-4b", d, 16, 4096},
                        {"minicpm3-4b", p, 1, 512},        {"deepseek-v2", d, 1, 512},
                        {"deepseek-v2", d, 64, 4096},      {"deepseek-v2", p, 1, 512}};
  const std::vector<std::string> paths = {config_dir("calibration") + "/h200-moe-profile.json",
                                          config_dir("calibration") + "/h200-mla-profile.json"};
  const roofline::Measurements data = roofline::load_measurements(paths);
  const hw::GpuConfig gpu = hw::load_gpu("h200");
  const roofline::Machine machine(gpu);
  nlohmann::json rows = nlohmann::json::array(), lut_rows = nlohmann::json::array();
  double sim_err = 0, ref_err = 0, sim_vs_compiled = 0, lut_vs_compiled = 0, wall = 0;
  // A layer's simulated time: from its first kernel's start to the next layer's, averaged over
  // the consecutive layers of the main kind (gaps between kernels included).
  auto layer_ms = [](const std::string& what, const llm::StepGraph& graph, const sim::RunStats& r) {
    std::vector<int64_t> start(size_t(graph.all_layers()), -1);
    for (const auto& k : r.kernels) {
      if (k.name.size() < 2 || k.name[0] != 'L') continue;
      const size_t dot = k.name.find('.');
      const size_t l = size_t(std::stoll(k.name.substr(1, dot - 1)));
      if (l < start.size() && start[l] < 0) start[l] = k.start_cycle;
    }
    double cycles = 0;
    int spans = 0;
    for (size_t l = 0; l + 1 < start.size(); ++l) {
      if (graph.layer_group[l] != 0 || graph.layer_group[l + 1] != 0) continue;
      if (start[l] < 0 || start[l + 1] < 0) continue;
      cycles += double(start[l + 1] - start[l]);
      ++spans;
    }
    if (spans == 0) throw std::logic_error(what + ": no two consecutive layers of the main kind");
    return cycles / spans / (r.clock_ghz * 1e6);
  };
  if (!o.json) {
    fmt::print(
        "compiled FP16 steps simulated (sampled) on h200 vs {} (ms per layer; ltc bench "
        "sim --only moe)\n",
        fmt::join(paths, ", "));
    fmt::print("  {:<34} {:>9} {:>9} {:>8} {:>9} {:>8} {:>9} {:>8} {:>7}\n", "step", "measured",
               "sim", "error", "roof ref", "error", "roof cmp", "sim/cmp", "wall s");
  }
  auto case_name = [&](const Case& c) {
    return fmt::format("{} {} B{} {}{}", c.model, llm::phase_name(c.phase), c.batch,
                       c.phase == d ? "L" : "S", c.length);
  };
  auto step_of = [&](const Case& c) {
    return c.phase == d ? llm::StepConfig::decode(c.batch, c.length)
                        : llm::StepConfig::prefill(c.batch, c.length);
  };
  // A step compiled for `g` and simulated sampled: ms per layer of its main kind (none when
  // interrupted) and the run's wall time.
  auto simulate_layer = [&](const std::string& what, const llm::ModelConfig& model,
                            const llm::StepConfig& step, const hw::GpuConfig& g,
                            double& wall_s) -> std::optional<double> {
    const llm::StepGraph graph = llm::build_step_graph(model, step);
    const sim::RunStats r =
        sim::simulate_sampled(compiler::compile_model(model, step, g), g, {}, {});
    if (r.interrupted) return std::nullopt;
    wall_s = r.wall_s;
    return layer_ms(what, graph, r);
  };
  for (const Case& c : cases) {
    const std::string what = case_name(c);
    if (!case_picked(o.cases, what, what)) continue;
    const roofline::StepMeasurement* m = nullptr;
    for (const auto& st : data.steps) {
      if (st.model == c.model && st.phase == c.phase && st.batch == c.batch &&
          st.length == c.length) {
        m = &st;
      }
    }
    if (!m) throw std::logic_error("the MoE and MLA profiles have no step " + what);
    const llm::ModelConfig& model = data.model(c.model);
    double wall_s = 0;
    const std::optional<double> sim = simulate_layer(what, model, step_of(c), gpu, wall_s);
    if (!sim) break;
    const double sim_ms = *sim;
    roofline::StepRequest q = roofline::step_request(*m);
    const double ref_ms = roofline::estimate(machine, model, q).layer_ms;
    q.kernels = llm::KernelPlan::kCompiled;
    const double cmp_ms = roofline::estimate(machine, model, q).layer_ms;
    sim_err += std::abs(sim_ms / m->ms - 1);
    ref_err += std::abs(ref_ms / m->ms - 1);
    sim_vs_compiled += std::abs(sim_ms / cmp_ms - 1);
    wall += wall_s;
    rows.push_back({{"step", what},
                    {"family", roofline::layer_family(model)},
                    {"measured_ms", m->ms},
                    {"sim_ms", sim_ms},
                    {"sim_error", sim_ms / m->ms - 1},
                    {"roofline_reference_ms", ref_ms},
                    {"roofline_reference_error", ref_ms / m->ms - 1},
                    {"roofline_compiled_ms", cmp_ms},
                    {"sim_vs_roofline_compiled", sim_ms / cmp_ms - 1},
                    {"wall_s", wall_s}});
    if (!o.json) {
      fmt::print(
          "  {:<34} {:>9.4f} {:>9.4f} {:>+7.1f}% {:>9.4f} {:>+7.1f}% {:>9.4f} {:>+7.1f}% "
          "{:>7.1f}\n",
          what, m->ms, sim_ms, 100 * (sim_ms / m->ms - 1), ref_ms, 100 * (ref_ms / m->ms - 1),
          cmp_ms, 100 * (sim_ms / cmp_ms - 1), wall_s);
      std::fflush(stdout);
    }
  }
  // The LUT steps: the compiler's and the roofline's LUT path (--precompute fused), sampled.
  const hw::GpuConfig lut_gpu = hw::load_gpu("a100-lut4x");
  const roofline::Machine lut_machine(lut_gpu);
  const Case lut_cases[] = {{"mixtral-8x7b", d, 16, 4096}, {"mixtral-8x7b", p, 1, 512}};
  for (const Case& c : lut_cases) {
    const std::string what = case_name(c) + " " + lut_gpu.name + " int2 x int8";
    if (!case_picked(o.cases, what, what)) continue;
    const llm::ModelConfig model = llm::load_model(c.model);
    llm::StepConfig step = step_of(c);
    step.weights = llm::parse_weight_format("int2");
    step.acts = golden::DType::kInt8;
    double wall_s = 0;
    const std::optional<double> sim = simulate_layer(what, model, step, lut_gpu, wall_s);
    if (!sim) break;
    const double sim_ms = *sim;
    roofline::StepRequest q;
    q.model = c.model;
    q.gpu = lut_gpu.name;
    q.phase = c.phase;
    q.batch = c.batch;
    q.length = c.length;
    q.weights = "int2";
    q.acts = "int8";
    q.precompute = "fused";
    q.kernels = llm::KernelPlan::kCompiled;
    const double cmp_ms = roofline::estimate(lut_machine, model, q).layer_ms;
    lut_vs_compiled += std::abs(sim_ms / cmp_ms - 1);
    wall += wall_s;
    lut_rows.push_back({{"step", what},
                        {"family", roofline::layer_family(model)},
                        {"sim_ms", sim_ms},
                        {"roofline_compiled_ms", cmp_ms},
                        {"sim_vs_roofline_compiled", sim_ms / cmp_ms - 1},
                        {"wall_s", wall_s}});
    if (!o.json) {
      fmt::print("  {:<34} {:>9} {:>9.4f} {:>8} {:>9} {:>8} {:>9.4f} {:>+7.1f}% {:>7.1f}\n", what,
                 "-", sim_ms, "", "", "", cmp_ms, 100 * (sim_ms / cmp_ms - 1), wall_s);
      std::fflush(stdout);
    }
  }
  const double n = std::max<double>(1, double(rows.size()));
  const double n_lut = std::max<double>(1, double(lut_rows.size()));
  const nlohmann::json result = {{"bench", "sim"},
                                 {"measurements", paths},
                                 {"gpu", gpu.name},
                                 {"steps", rows},
                                 {"sim_mape", sim_err / n},
                                 {"roofline_reference_mape", ref_err / n},
                                 {"sim_vs_roofline_compiled_mape", sim_vs_compiled / n},
                                 {"lut_steps", lut_rows},
                                 {"lut_sim_vs_roofline_compiled_mape", lut_vs_compiled / n_lut},
                                 {"wall_s", wall}};
  if (!o.markdown.empty()) write_text_atomic(o.markdown, report::sim_moe_markdown(result));
  if (o.json) {
    fmt::print("{}\n", result.dump());
  } else {
    fmt::print(
        "  mean |error|: simulator {:.1f}%, roofline (reference plan) {:.1f}%; simulator vs the "
        "roofline's compiled plan {:.1f}%, on the LUT steps {:.1f}% ({:.0f} s of simulation)\n",
        100 * sim_err / n, 100 * ref_err / n, 100 * sim_vs_compiled / n,
        100 * lut_vs_compiled / n_lut, wall);
  }
}

// The RTL back end against the fast one on the same trace (W_INT2 A_FP16 and W_INT4 A_INT8).
void run_rtl(const BenchSimFlags& o) {
  const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [w, act] : {std::pair<const char*, golden::DType>{"int2", golden::DType::kFp16},
                               {"int4", golden::DType::kInt8}}) {
    compiler::GemmSpec s;
    s.m = 64;
    s.n = 1024;
    s.k = 1024;
    s.weights = llm::parse_weight_format(w);
    s.act = act;
    const traces::Trace t = compiler::compile_gemm(s, gpu);
    sim::SimOptions so;
    so.functional = true;
    const sim::RunStats fast = sim::simulate(t, gpu, so);
    so.tc = "rtl";
    so.rtl_optimized = true;
    const sim::RunStats rtl = sim::simulate(t, gpu, so);  // the first run also builds the models
    const sim::RunStats rtl2 = sim::simulate(t, gpu, so);
    // Timing only: the fast back end does no arithmetic, the RTL one still clocks every LMMA.
    so.functional = false;
    const sim::RunStats rtl_timing = sim::simulate(t, gpu, so);
    so.tc = "fast";
    const sim::RunStats fast_timing = sim::simulate(t, gpu, so);
    auto cps = [](const sim::RunStats& r) {
      return r.wall_s > 0 ? double(r.cycles) / r.wall_s : 0.0;
    };
    const std::string what =
        fmt::format("W_{} A_{} {}x{}x{} on a100-lut4x", w, golden::dtype_name(act), s.m, s.n, s.k);
    nlohmann::json j = {
        {"workload", what},
        {"cycles_fast", fast.cycles},
        {"cycles_rtl", rtl2.cycles},
        {"cycles_equal", fast.cycles == rtl2.cycles && rtl.cycles == rtl2.cycles &&
                             fast_timing.cycles == rtl_timing.cycles &&
                             fast.cycles == fast_timing.cycles},
        {"outputs", rtl2.functional_outputs},
        {"mismatches_fast", fast.functional_mismatches},
        {"mismatches_rtl", rtl2.functional_mismatches},
        {"wall_s_fast", fast.wall_s},
        {"wall_s_rtl", rtl2.wall_s},
        {"cycles_per_s_fast", cps(fast)},
        {"cycles_per_s_rtl", cps(rtl2)},
        {"slowdown", cps(rtl2) > 0 ? cps(fast) / cps(rtl2) : 0.0},
        {"timing_only",
         {{"cycles_per_s_fast", cps(fast_timing)},
          {"cycles_per_s_rtl", cps(rtl_timing)},
          {"wall_s_fast", fast_timing.wall_s},
          {"wall_s_rtl", rtl_timing.wall_s},
          {"tile_cycles", rtl_timing.rtl_tile_cycles},
          {"slowdown", cps(rtl_timing) > 0 ? cps(fast_timing) / cps(rtl_timing) : 0.0}}}};
    out.push_back(j);
    if (!o.json) {
      fmt::print(
          "{}: {} cycles fast, {} cycles rtl ({}), {} outputs, {} / {} mismatches vs golden\n"
          "  --functional: fast {:.3g} cycles/s ({:.2f} s), rtl {:.3g} cycles/s ({:.2f} s): "
          "{:.2f}x slower\n"
          "  timing only:  fast {:.3g} cycles/s ({:.2f} s), rtl {:.3g} cycles/s ({:.2f} s, {} tile "
          "cycles): {:.1f}x slower\n",
          what, fast.cycles, rtl2.cycles, j["cycles_equal"].get<bool>() ? "equal" : "DIFFERENT",
          rtl2.functional_outputs, fast.functional_mismatches, rtl2.functional_mismatches,
          cps(fast), fast.wall_s, cps(rtl2), rtl2.wall_s, j["slowdown"].get<double>(),
          cps(fast_timing), fast_timing.wall_s, cps(rtl_timing), rtl_timing.wall_s,
          rtl_timing.rtl_tile_cycles, j["timing_only"]["slowdown"].get<double>());
    }
  }
  if (o.json) fmt::print("{}\n", nlohmann::json{{"bench", "sim-rtl"}, {"runs", out}}.dump());
}

// Sampled against full simulation on the cases of a file (by default the ones the simulator issue
// names: configs/sampling/bench.json).
void run_sample(const BenchSimFlags& o) {
  // The built-in sets are data (configs/sampling/); --case-file a user's own (or several, run one
  // after another), each checked whole before anything runs.
  std::vector<std::string> files = o.case_files;
  if (files.empty()) {
    files.push_back(config_dir("sampling") + (o.large ? "/large.json" : "/bench.json"));
  }
  std::vector<SampleCase> cases;
  std::vector<std::string> case_file;  // parallel to cases
  for (const std::string& f : files) {
    for (SampleCase& c : load_sample_cases(f)) {
      if (!case_picked(o.cases, c.name, c.name)) continue;
      cases.push_back(std::move(c));
      case_file.push_back(f);
    }
  }
  const std::string file = fmt::format("{}", fmt::join(files, ", "));
  if (cases.empty()) throw InputError("--case: no case of " + file + " has that in its name");
  // Every case compiled before the first runs: a case the compiler refuses fails now.
  std::vector<std::pair<hw::GpuConfig, traces::Trace>> compiled;
  for (const SampleCase& c : cases) {
    hw::GpuConfig gpu = hw::load_gpu(c.gpu);
    try {
      traces::Trace t = compile_case(c, gpu);
      compiled.emplace_back(std::move(gpu), std::move(t));
    } catch (const InputError& e) {
      throw InputError(case_file[size_t(&c - cases.data())] + ": case \"" + c.name +
                       "\": " + e.what());
    }
  }
  nlohmann::json cache = nlohmann::json::object();
  if (!o.full_cache.empty()) {
    std::error_code ec;
    if (std::filesystem::exists(o.full_cache, ec)) {
      cache = nlohmann::json::parse(read_input_file(o.full_cache), nullptr, false);
      if (!cache.is_object()) {
        throw InputError("--full-cache: " + o.full_cache +
                         " is not a JSON object of saved full runs (delete it to start afresh)");
      }
    }
  }
  sim::SampleOptions so;
  if (!o.trips.empty()) std::copy_n(o.trips.begin(), 2, so.trips);
  so.max_slice = o.slice;
  so.slice_streaming = o.slice_streaming;
  // --per-kernel: each method's |cycle errors| (the rows of configs/calibration/
  // sampling-confidence.json; a run's first kernel simulated in full is exact and left out).
  const bool per_kernel = o.per_kernel || !o.confidence_out.empty();
  sim::ConfidenceTally by_method;
  if (!o.json) {
    fmt::print("sampled vs full simulation ({}; ltc bench sim --only sample)\n",
               sim::sample_method(so));
    fmt::print("  {:<30} {:<10} {:>12} {:>12} {:>8} {:>8} {:>8} {:>8} {:>7} {:>7} {:>7}\n", "case",
               "gpu", "full cyc", "sampled", "error", "full s", "samp s", "speedup", "work", "conf",
               "max");
  }
  nlohmann::json rows = nlohmann::json::array();
  double worst = 0, min_speedup = 1e30, expected = 0;
  // GEMMs and model steps apart (0, 1; a step's kernels repeat over its layers), summed for all.
  struct Group {
    double abs_err = 0, full_wall = 0, samp_wall = 0;
    double full_instr = 0, samp_instr = 0;  // warp instructions: all of them, those simulated
    int n = 0;
  } groups[2];
  int within = 0;
  std::string worst_case;
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const SampleCase& c = cases[ci];
    const hw::GpuConfig& gpu = compiled[ci].first;
    const traces::Trace& t = compiled[ci].second;
    const std::string key = c.name + "|" + c.gpu;
    sim::RunStats full;
    if (cache.contains(key)) {
      full.cycles = cache[key]["cycles"].get<int64_t>();
      full.wall_s = cache[key]["wall_s"].get<double>();
      for (const auto& kc : cache[key]["kernels"]) {
        sim::KernelStats ks;
        ks.name = kc["name"].get<std::string>();
        ks.cycles = kc["cycles"].get<int64_t>();
        full.kernels.push_back(ks);
      }
    } else {
      full = sim::simulate(t, gpu, {});
      if (full.interrupted) break;
      if (!o.full_cache.empty()) {
        nlohmann::json ks = nlohmann::json::array();
        for (const auto& k : full.kernels) ks.push_back({{"name", k.name}, {"cycles", k.cycles}});
        cache[key] = {{"cycles", full.cycles}, {"wall_s", full.wall_s}, {"kernels", ks}};
        write_text_atomic(o.full_cache, cache.dump(1) + "\n");  // never half-written
      }
    }
    const sim::RunStats sampled = sim::simulate_sampled(t, gpu, {}, so);
    // --per-kernel --json: each kernel's method, confidence row and error (a repeat: its
    // distance from its kernel; a run's first kernel simulated in full: "exact").
    nlohmann::json kernel_rows = nlohmann::json::array();
    if (per_kernel) {
      for (const sim::KernelComparison& k : sim::compare_to_full(sampled, full, t, gpu)) {
        if (k.row != "exact") by_method.add(k.method, k.gemm, std::abs(k.error));
        if (k.method == "repeat") {
          kernel_rows.push_back({{"name", k.name},
                                 {"method", k.method},
                                 {"row", k.row},
                                 {"repeats", k.repeats},
                                 {"error", std::abs(k.error)}});
          continue;
        }
        if (!o.json) {
          fmt::print(
              "    {:<28} {:<17} {:>10} {:>10} {:>+7.2f}% {:>6.2f} waves {:>5.1f}% simulated\n",
              k.name, k.method, k.full_cycles, k.sampled_cycles, 100 * k.error, k.waves,
              100 * k.share);
        }
        kernel_rows.push_back({{"name", k.name},
                               {"method", k.method},
                               {"row", k.row},
                               {"full_cycles", k.full_cycles},
                               {"sampled_cycles", k.sampled_cycles},
                               {"error", k.error},
                               {"waves", k.waves}});
      }
    }
    const double err = double(sampled.cycles) / double(full.cycles) - 1;
    const double speedup = sampled.wall_s > 0 ? full.wall_s / sampled.wall_s : 0.0;
    const double full_instr = double(sampled.total().warp_instructions());
    const double samp_instr = double(sampled.sample_simulated_instructions);
    const double work = work_ratio(sampled);
    if (std::abs(err) >= std::abs(worst)) {
      worst = err;
      worst_case = c.name;
    }
    min_speedup = std::min(min_speedup, speedup);
    Group& g = groups[c.is_step() ? 1 : 0];
    g.abs_err += std::abs(err);
    g.full_wall += full.wall_s;
    g.samp_wall += sampled.wall_s;
    g.full_instr += full_instr;
    g.samp_instr += samp_instr;
    ++g.n;
    rows.push_back({{"case", c.name},
                    {"gpu", c.gpu},
                    {"full_cycles", full.cycles},
                    {"sampled_cycles", sampled.cycles},
                    {"error", err},
                    {"full_wall_s", full.wall_s},
                    {"sampled_wall_s", sampled.wall_s},
                    {"speedup", speedup},
                    {"full_warp_instructions", full_instr},
                    {"simulated_warp_instructions", samp_instr},
                    {"work_ratio", work},
                    {"error_expected", sampled.sample_error_expected},
                    {"error_max", sampled.sample_error_max}});
    if (per_kernel) rows.back()["kernels"] = kernel_rows;
    within += std::abs(err) <= sampled.sample_error_max ? 1 : 0;
    expected += sampled.sample_error_expected;
    if (!o.json) {
      fmt::print(
          "  {:<30} {:<10} {:>12} {:>12} {:>+7.2f}% {:>8.2f} {:>8.3f} {:>8} {:>7} "
          "{:>6.2f}% {:>6.2f}%\n",
          c.name, c.gpu, full.cycles, sampled.cycles, 100 * err, full.wall_s, sampled.wall_s,
          times(speedup), times(work), 100 * sampled.sample_error_expected,
          100 * sampled.sample_error_max);
      std::fflush(stdout);
    }
  }
  const double abs_err = groups[0].abs_err + groups[1].abs_err;
  const double full_wall = groups[0].full_wall + groups[1].full_wall;
  const double samp_wall = groups[0].samp_wall + groups[1].samp_wall;
  const double mean = rows.empty() ? 0.0 : abs_err / double(rows.size());
  const double total_speedup = samp_wall > 0 ? full_wall / samp_wall : 0.0;
  const double samp_instr = groups[0].samp_instr + groups[1].samp_instr;
  const double total_work =
      samp_instr > 0 ? (groups[0].full_instr + groups[1].full_instr) / samp_instr : 0.0;
  const double mean_expected = rows.empty() ? 0.0 : expected / double(rows.size());
  nlohmann::json by_kind = nlohmann::json::object();
  for (int i = 0; i < 2; ++i) {
    const Group& g = groups[i];
    if (g.n == 0) continue;
    by_kind[i == 0 ? "gemms" : "steps"] = {
        {"cases", g.n},
        {"mean_abs_error", g.abs_err / g.n},
        {"full_wall_s", g.full_wall},
        {"sampled_wall_s", g.samp_wall},
        {"speedup_total", g.samp_wall > 0 ? g.full_wall / g.samp_wall : 0.0},
        {"work_ratio_total", g.samp_instr > 0 ? g.full_instr / g.samp_instr : 0.0}};
  }
  const std::vector<sim::ConfidenceRow> methods = by_method.rows();
  nlohmann::json method_rows = nlohmann::json::array();
  for (const sim::ConfidenceRow& m : methods) {
    method_rows.push_back({{"row", sim::confidence_row(m.method, m.gemm)},
                           {"kernels", m.kernels},
                           {"mean", m.mean},
                           {"max", m.max}});
  }
  nlohmann::json result = {{"bench", "sim-sample"},
                           {"method", sim::sample_method(so)},
                           {"cases", rows},
                           {"mean_abs_error", mean},
                           {"worst_error", worst},
                           {"worst_case", worst_case},
                           {"speedup_total", total_speedup},
                           {"work_ratio_total", total_work},
                           {"mean_error_expected", mean_expected},
                           {"within_error_max", within},
                           {"speedup_min", min_speedup},
                           {"by_kind", by_kind}};
  if (per_kernel) result["by_method"] = method_rows;
  if (!o.markdown.empty()) write_text_atomic(o.markdown, report::sim_sample_markdown(result));
  if (!o.confidence_out.empty()) {
    const std::string what = fmt::format(
        "Confidence of sampled simulation (sim/sampler/README.md): per sampling method, the "
        "kernels "
        "compared and the mean and largest |cycle error| of each against the same kernel of the "
        "full run (largest rounded up; a 'repeat' row: how far a repeat's own full-run cycles are "
        "from its kernel's). Written by `ltc bench sim --only sample --confidence-out` on {} "
        "({}); rows this run did not measure are kept from the file as it was.",
        file, sim::sample_method(so));
    // The rows this run did not measure stay as the file had them (measured by earlier runs:
    // with --slice-streaming, on other sets).
    std::error_code ec;
    const std::vector<sim::ConfidenceRow> before = std::filesystem::exists(o.confidence_out, ec)
                                                       ? sim::read_confidence(o.confidence_out)
                                                       : std::vector<sim::ConfidenceRow>{};
    write_text_atomic(o.confidence_out,
                      sim::confidence_file(sim::merge_confidence(methods, before), what));
  }
  if (o.json) {
    fmt::print("{}\n", result.dump());
  } else {
    fmt::print(
        "  mean |error| {:.2f}%, worst {:+.2f}% ({}); speedup {} in total ({:.1f} s -> "
        "{:.2f} s), {} at least; work {} in total (warp instructions of the full runs "
        "over those simulated)\n"
        "  confidence: {:.2f}% expected on average (conf), {} of {} cases within their stated "
        "maximum (max)\n",
        100 * mean, 100 * worst, worst_case, times(total_speedup), full_wall, samp_wall,
        times(min_speedup), times(total_work), 100 * mean_expected, within, rows.size());
    for (const auto& [kind, g] : by_kind.items()) {
      fmt::print(
          "  {:<5} {:>2} cases: mean |error| {:.2f}%, speedup {} in total ({:.1f} s -> "
          "{:.2f} s), work {}\n",
          kind, g["cases"].get<int>(), 100 * g["mean_abs_error"].get<double>(),
          times(g["speedup_total"].get<double>()), g["full_wall_s"].get<double>(),
          g["sampled_wall_s"].get<double>(), times(g["work_ratio_total"].get<double>()));
    }
    if (!methods.empty()) fmt::print("  per method (|cycle error| of its kernels):\n");
    for (const auto& m : method_rows) {
      fmt::print("    {:<22} {:>3} kernels  mean {:.2f}%  largest {:.2f}%\n",
                 m["row"].get<std::string>(), m["kernels"].get<int64_t>(),
                 100 * m["mean"].get<double>(), 100 * m["max"].get<double>());
    }
  }
}

// The paper's kernel experiment (cli/report/kernel_experiment.h), sampled unless --full.
void run_paper(const BenchSimFlags& o) {
  const report::KernelExperiment e = report::run_kernel_experiment(o.full, !o.json);
  if (!o.markdown.empty()) write_text_atomic(o.markdown, report::sim_paper_markdown(to_json(e)));
  if (o.json) {
    fmt::print("{}\n", report::to_json(e).dump());
    return;
  }
  fmt::print(
      "LLaMA2-13B mpGEMM M=2048 N=27648 K=5120 W_INT1 A_FP16 ({}; ltc bench sim --only paper)\n",
      e.method);
  fmt::print("  {:<48} {:>6} {:>6} {:>11} {:>9} {:>7} {:>8}  {}\n", "configuration", "tiles",
             "RF KB", "cycles", "speedup", "tensor", "area", "binding stall");
  for (const auto& r : e.rows) {
    fmt::print("  {:<48} {:>6} {:>6} {:>11} {:>8.2f}x {:>6.1f}% {:>7.1f}%  {}\n", r.label,
               r.tiles_per_tensor_core, r.register_file_kb, r.cycles, r.speedup,
               100 * r.tensor_utilization, 100 * r.area_vs_mac, r.top_stall);
  }
  fmt::print(
      "  area: tensor-core area per SM vs the A100's MAC tensor cores (GPU JSON, the paper's Table "
      "III, INT8-activation tiles); paper: LUT matches MAC at {:.1f}% of the area, {:g}x with more "
      "registers at +{:.1f}%\n",
      100 * report::paper::kKernelLutMatchesMacAtArea, report::paper::kKernelMoreRegistersSpeedup,
      100 * report::paper::kKernelMoreRegistersExtraArea);
  fmt::print(
      "authors' GEMM W_INT2 A_FP16 4096x27648x5120 on a100-lut4x: {} cycles (their Accel-Sim: "
      "{}), tensor {:.1f}%, binding stall {}\n",
      e.authors.cycles, report::paper::kAccelSimGemmCycles, 100 * e.authors.tensor_utilization,
      e.authors.top_stall);
}

// The runs (--only; "": the default run) each flag goes with; a flag given to another run is
// refused, naming those it goes with. --json goes with every run.
const std::vector<std::pair<std::string, std::vector<std::string>>> kFlagRuns = {
    {"--full", {"paper"}},
    {"--calibration", {"h200"}},
    {"--kind", {"h200"}},
    {"--gpu", {"h200"}},
    {"--max-m", {"h200"}},
    {"--case", {"sample", "h200", "moe"}},
    {"--full-cache", {"sample"}},
    {"--trips", {"sample"}},
    {"--slice", {"sample"}},
    {"--slice-streaming", {"sample"}},
    {"--large", {"sample"}},
    {"--case-file", {"sample"}},
    {"--per-kernel", {"sample"}},
    {"--confidence-out", {"sample"}},
    {"--markdown", {"", "gemm", "decode", "h200", "sample", "paper", "moe"}},
    {"--threads", {"", "gemm", "decode"}},
    {"--baseline", {"", "gemm", "decode"}},
    {"--repeat", {"", "gemm", "decode"}},
};

void check_flags(const CLI::App& app, const std::string& only) {
  for (const auto& [flag, runs] : kFlagRuns) {
    if (app.get_option(flag)->count() == 0 ||
        std::find(runs.begin(), runs.end(), only) != runs.end()) {
      continue;
    }
    std::string names;
    for (const std::string& r : runs) {
      names += (names.empty() ? "" : ", ") + (r.empty() ? "the default run" : "--only " + r);
    }
    throw InputError(flag + " goes with " + names + ", not " +
                     (only.empty() ? "the default run" : "--only " + only));
  }
}

// The authors' GEMM and the LLaMA2-70B decode step (the default run's full workloads).
traces::Trace authors_gemm(const hw::GpuConfig& gpu) {
  compiler::GemmSpec s;
  s.m = 4096;
  s.n = 27648;
  s.k = 5120;
  s.weights = llm::parse_weight_format("int2");
  s.act = golden::DType::kFp16;
  return compiler::compile_gemm(s, gpu);
}

traces::Trace llama70b_decode(const hw::GpuConfig& gpu) {
  llm::StepConfig step = llm::StepConfig::decode(1, 4096);
  step.weights = llm::parse_weight_format("int2");
  step.acts = golden::DType::kInt8;
  return compiler::compile_model(llm::load_model("llama2-70b"), step, gpu);
}

// `ltc bench sim --threads`: each workload at each thread count (wall s, speedup over 1 thread,
// over the baseline binary's serial run), its results checked identical at every count.
void run_threads(const BenchSimFlags& o) {
  std::vector<int64_t> counts;
  for (const std::string& t : o.threads) {
    if (!t.empty()) counts.push_back(parse_thread_count(t, "--threads"));  // empty: no list
  }
  if (counts.empty()) counts = {1, 2, sim::hardware_threads()};
  if (std::find(counts.begin(), counts.end(), 1) == counts.end()) counts.push_back(1);
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  struct Workload {
    std::string name;
    traces::Trace trace;
  };
  std::vector<Workload> workloads;
  if (o.only.empty() || o.only == "gemm") {
    workloads.push_back({"authors' GEMM W_INT2 A_FP16 4096x27648x5120", authors_gemm(gpu)});
  }
  if (o.only.empty() || o.only == "decode") {
    workloads.push_back({"llama2-70b decode B1 L4096 W_INT2 A_INT8", llama70b_decode(gpu)});
  }
  nlohmann::json out = nlohmann::json::array();
  for (const Workload& w : workloads) {
    nlohmann::json row = {{"workload", w.name + " on " + gpu.name},
                          {"host_threads", sim::hardware_threads()}};
    if (!o.baseline.empty()) {
      // The serial simulator: the baseline binary on the same trace, its wall time from its JSON.
      const std::filesystem::path dir = std::filesystem::temp_directory_path();
      const std::string trace =
          (dir / fmt::format("ltc-bench-threads-{}.lmt", ::getpid())).string();
      const std::string log = trace + ".log";
      traces::write_trace_file(w.trace, trace);
      const ProcessResult p = run_process(
          {o.baseline, "sim", trace, "--gpu", gpu.name, "--json", "--yes"}, ".", log, 0);
      const std::string text = read_text(log);
      std::filesystem::remove(trace);
      std::filesystem::remove(log);
      const size_t brace = text.find('{');
      if (p.exit_code != 0 || brace == std::string::npos) {
        throw InputError("--baseline: " + o.baseline + " sim failed (exit " +
                         std::to_string(p.exit_code) + "): " + text.substr(0, 400));
      }
      const nlohmann::json b = nlohmann::json::parse(text.substr(brace));
      row["baseline_wall_s"] = b.at("wall_s").get<double>();
      row["baseline_cycles"] = b.at("cycles").get<int64_t>();
      if (!o.json) {
        fmt::print("{}: the serial simulator ({}) {:.2f} s, {} cycles\n", w.name, o.baseline,
                   row["baseline_wall_s"].get<double>(), row["baseline_cycles"].get<int64_t>());
        std::fflush(stdout);
      }
    }
    // Rounds of every count once (a drift of the host's speed shows in every count alike); each
    // count's wall time is the median of its runs.
    nlohmann::json reference;
    std::vector<std::vector<double>> walls(counts.size());
    std::vector<double> loads(counts.size(), -1);
    nlohmann::json runs;
    const auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      const size_t h = v.size() / 2;
      return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
    };
    for (int64_t round = 0; round < o.repeat; ++round) {
      for (size_t c = 0; c < counts.size(); ++c) {
        const int64_t n = counts[c];
        sim::SimOptions so;
        so.threads = int(n);
        // The host's load (runnable threads, 1-minute mean) as the run starts: wall times on a
        // host busy with other work say little about the threads.
        double load = -1;
        if (getloadavg(&load, 1) != 1) load = -1;
        loads[c] = std::max(loads[c], load);
        const sim::RunStats r = sim::simulate(w.trace, gpu, so);
        nlohmann::json j = r;
        j.erase("wall_s");
        if (reference.is_null()) {
          reference = j;
          row["cycles"] = r.cycles;
          row["warp_instructions"] = r.total().warp_instructions();
        } else if (j != reference) {
          throw std::runtime_error("bench sim --threads: " + w.name + " at " + std::to_string(n) +
                                   " threads differs from 1 thread: " +
                                   nlohmann::json::diff(reference, j).dump().substr(0, 400));
        }
        walls[c].push_back(r.wall_s);
        const double one_s = median(walls[0]);  // counts[0] is 1
        const double speedup = r.wall_s > 0 ? one_s / r.wall_s : 0.0;
        if (!o.json) {
          fmt::print(
              "{}: {} threads {:.2f} s ({:.2f}x over 1 thread{}{}), {} cycles, host load "
              "{:.1f}\n",
              w.name, n, r.wall_s, speedup,
              row.contains("baseline_wall_s")
                  ? fmt::format(", {:.2f}x over the serial simulator's {:.2f} s",
                                row["baseline_wall_s"].get<double>() / r.wall_s,
                                row["baseline_wall_s"].get<double>())
                  : std::string(),
              o.repeat > 1 ? fmt::format("; round {} of {}", round + 1, o.repeat) : std::string(),
              r.cycles, load);
          std::fflush(stdout);
        }
        // The table so far (each count's median of its runs so far), rewritten after each
        // run: a run cut off by a time limit keeps its finished rows.
        runs = nlohmann::json::array();
        for (size_t k = 0; k < counts.size() && !walls[k].empty(); ++k) {
          const double m = median(walls[k]);
          nlohmann::json run = {{"threads", counts[k]},
                                {"wall_s", m},
                                {"runs_wall_s", walls[k]},
                                {"host_load", loads[k]},
                                {"speedup", m > 0 ? median(walls[0]) / m : 0.0}};
          if (row.contains("baseline_wall_s")) {
            run["speedup_vs_baseline"] = m > 0 ? row["baseline_wall_s"].get<double>() / m : 0.0;
          }
          runs.push_back(run);
        }
        if (!o.markdown.empty()) {
          nlohmann::json done = out;
          done.push_back(row);
          done.back()["runs"] = runs;
          write_text_atomic(o.markdown, report::sim_threads_markdown(done));
        }
      }
    }
    row["runs"] = runs;
    out.push_back(row);
  }
  if (o.json)
    fmt::print("{}\n", nlohmann::json{{"bench", "sim-threads"}, {"workloads", out}}.dump());
}

void run(const BenchSimFlags& o) {
  // Outputs never overwrite an input (a case file, the calibration, the full runs' cache).
  std::vector<std::string> inputs = o.case_files;
  for (const std::string& f : {o.calibration, o.full_cache, o.baseline}) {
    if (!f.empty()) inputs.push_back(f);
  }
  if (!o.markdown.empty()) check_not_an_input(o.markdown, "--markdown", inputs);
  if (!o.confidence_out.empty()) check_not_an_input(o.confidence_out, "--confidence-out", inputs);
  if (o.threads_table) return run_threads(o);
  if (o.only == "paper") return run_paper(o);
  if (o.only == "h200") return run_calibration(o);
  if (o.only == "moe") return run_moe(o);
  if (o.only == "sample") return run_sample(o);
  if (o.only == "rtl") return run_rtl(o);
  nlohmann::json out = nlohmann::json::array();
  auto report = [&](const nlohmann::json& j) {
    out.push_back(j);
    if (!o.json) {
      fmt::print(
          "{}: {} kernels, {} cycles ({:.3f} ms), {} warp instructions in {:.1f} s: "
          "{:.3g} cycles/s, {:.3g} warp instructions/s, peak RSS {:.0f} MiB\n",
          j["workload"].get<std::string>(), j["kernels"].get<size_t>(), j["cycles"].get<int64_t>(),
          j["time_ms"].get<double>(), j["warp_instructions"].get<uint64_t>(),
          j["wall_s"].get<double>(), j["cycles_per_s"].get<double>(),
          j["warp_instructions_per_s"].get<double>(), j["peak_rss_mib"].get<double>());
    }
  };
  if (o.only.empty() || o.only == "gemm") {
    const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
    const traces::Trace t = authors_gemm(gpu);
    const sim::RunStats r = sim::simulate(t, gpu, {});
    nlohmann::json j = figures("authors' GEMM W_INT2 A_FP16 4096x27648x5120 on a100-lut4x", r);
    j["accel_sim_s"] = report::paper::kAccelSimGemmWallS;
    j["speedup_vs_accel_sim"] = r.wall_s > 0 ? report::paper::kAccelSimGemmWallS / r.wall_s : 0.0;
    report(j);
    if (!o.json) {
      fmt::print("  vs the authors' Accel-Sim run ({} cycles, {:g} s): {:.0f}x faster\n",
                 report::paper::kAccelSimGemmCycles, report::paper::kAccelSimGemmWallS,
                 j["speedup_vs_accel_sim"].get<double>());
    }
    // The same trace sampled, against the full run above: the fastest of kSampledRuns.
    sim::RunStats sr;
    std::vector<double> walls;
    for (int run = 0; run < kSampledRuns; ++run) {
      sim::RunStats one = sim::simulate_sampled(t, gpu, {});
      walls.push_back(one.wall_s);
      if (run == 0 || one.wall_s < sr.wall_s) sr = std::move(one);
    }
    nlohmann::json sj =
        figures("authors' GEMM W_INT2 A_FP16 4096x27648x5120 on a100-lut4x, sampled", sr);
    const double simulated = double(sr.sample_simulated_instructions);
    sj["error_vs_full"] = double(sr.cycles) / double(r.cycles) - 1;
    sj["simulated_instructions"] = sr.sample_simulated_instructions;
    sj["work_ratio"] = work_ratio(sr);
    sj["speedup_vs_full"] = sr.wall_s > 0 ? r.wall_s / sr.wall_s : 0.0;
    sj["goal_wall_s"] = kSampledGoalWallS;
    sj["wall_s_runs"] = walls;
    // Per second of what was simulated, not of the counts extrapolated to the whole kernel.
    sj["warp_instructions_per_s"] = sr.wall_s > 0 ? simulated / sr.wall_s : 0.0;
    out.push_back(sj);
    if (!o.json) {
      fmt::print(
          "{}: {} cycles ({:+.2f}% against the full run), {} of its {} warp instructions "
          "simulated ({:.1f}x less) in {:.2f} s, the fastest of {:.2f} s (goal: <= {:g} s; {:.1f}x "
          "faster than the full run): {:.3g} warp instructions/s, peak RSS {:.0f} MiB\n",
          sj["workload"].get<std::string>(), sr.cycles, 100 * sj["error_vs_full"].get<double>(),
          sr.sample_simulated_instructions, sr.total().warp_instructions(),
          sj["work_ratio"].get<double>(), sr.wall_s, fmt::join(walls, " / "), kSampledGoalWallS,
          sj["speedup_vs_full"].get<double>(), sj["warp_instructions_per_s"].get<double>(),
          sj["peak_rss_mib"].get<double>());
    }
  }
  if (o.only.empty() || o.only == "decode") {
    const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
    const traces::Trace t = llama70b_decode(gpu);
    const sim::RunStats r = sim::simulate(t, gpu, {});
    report(figures("llama2-70b decode B1 L4096 W_INT2 A_INT8 on a100-lut4x", r));
  }
  if (!o.markdown.empty()) write_text_atomic(o.markdown, report::sim_speed_markdown(out));
  if (o.json) fmt::print("{}\n", nlohmann::json{{"bench", "sim"}, {"runs", out}}.dump());
}

CommandRegistrar reg{
    95, [](CLI::App& app) {
      CLI::App& bench = bench_command(app);
      auto o = std::make_shared<BenchSimFlags>();
      CLI::App* s = bench.add_subcommand(
          "sim", "Simulator speed: the authors' GEMM and a LLaMA2-70B decode step");
      s->add_option("--only", o->only,
                    "gemm, decode (default: both), h200: the simulator vs "
                    "the 42 GEMMs measured on an H200, or rtl: --tc rtl vs --tc fast on one "
                    "LUT GEMM, sample: sampled vs full simulation on 28 GEMMs and 3 model steps, "
                    "paper: the LUT "
                    "Tensor Core paper's kernel experiment, moe: compiled MoE and sliding-window "
                    "steps sampled vs the H200 reference steps and the roofline")
          ->check(CLI::IsMember({"gemm", "decode", "h200", "rtl", "sample", "paper", "moe"}));
      s->add_flag("--full", o->full, "--only paper: full simulation instead of sampled");
      s->add_option("--calibration", o->calibration,
                    "--only h200: measurement file (default: "
                    "configs/calibration/h200-gemm.json)");
      s->add_option("--kind", o->kind,
                    "--only h200: the GEMM kind: fp16 (the 42 GEMMs of --calibration), or bf16, "
                    "int8, fp8 (the same GEMMs as measured in "
                    "configs/calibration/h200-gemm-kinds.json)")
          ->check(CLI::IsMember({"fp16", "bf16", "int8", "fp8"}))
          ->capture_default_str();
      s->add_option("--gpu", o->gpu, "--only h200: GPU to simulate")->capture_default_str();
      s->add_option("--max-m", o->max_m, "--only h200: only the GEMMs with M <= this (0: all)")
          ->check(in_range(0, 2147483647));
      s->add_option("--full-cache", o->full_cache,
                    "--only sample: keep the full runs' cycles in this JSON file and reuse them "
                    "(wall times then come from the run that saved them; delete the file when "
                    "the simulator's results change)");
      s->add_option("--case", o->cases,
                    "--only sample, moe: only the cases whose name contains this; --only h200: the "
                    "GEMM NAME:M, or those whose name contains this (repeatable)");
      s->add_option("--trips", o->trips,
                    "--only sample: the main loop's trips in the two reduced runs (default 16 32)")
          ->expected(2);
      s->add_option("--slice", o->slice,
                    "--only sample: a kernel whose blocks re-read their tiles runs on at most 1 / "
                    "N of the GPU (`ltc sim --sample-slice`; 1: never)")
          ->check(in_range(1, 64))
          ->capture_default_str();
      s->add_flag("--slice-streaming", o->slice_streaming,
                  "--only sample: slices for streaming kernels too (`ltc sim "
                  "--sample-slice-streaming`)");
      CLI::Option* large = s->add_flag(
          "--large", o->large,
          "--only sample: whole steps at serving sizes (LLaMA2-70B decode, 13B decode at "
          "batch 16, 7B and 13B prefill) instead of the default cases; their full runs take "
          "minutes each");
      s->add_option("--case-file", o->case_files,
                    "--only sample: the GEMMs and model steps of this JSON file instead of the "
                    "built-in cases (configs/sampling/*.json: bench.json, large.json, "
                    "held-out.json; the format in configs/sampling/README.md); repeatable: the "
                    "files' cases one after another")
          ->excludes(large);
      s->add_option("--confidence-out", o->confidence_out,
                    "--only sample: write each sampling method's measured error (implies "
                    "--per-kernel) as a confidence table, the format of "
                    "configs/calibration/sampling-confidence.json");
      s->add_option("--markdown", o->markdown,
                    "write the run's tables as Markdown to this file (the default run, --only "
                    "h200, sample, paper or moe: docs/results/sim*.md)");
      s->add_flag(
          "--per-kernel", o->per_kernel,
          "--only sample: also each simulated kernel's cycles against the full run's, and each "
          "sampling method's mean and largest error (with --json: each case's \"kernels\")");
      s->add_option("--threads", o->threads,
                    "the speed table instead: the authors' GEMM and the LLaMA2-70B decode step "
                    "on these host thread counts (comma-separated; none: 1, 2 and the "
                    "hardware's; with --only gemm or decode: that workload), the results checked "
                    "identical at each; each row printed (and --markdown rewritten) as it is "
                    "measured")
          ->expected(0, -1)
          ->delimiter(',');
      s->add_option("--baseline", o->baseline,
                    "with --threads: an ltc binary of the serial simulator (before parallel "
                    "stepping) to run the same traces for the speedup over it");
      s->add_option("--repeat", o->repeat,
                    "with --threads: run each thread count this many times, in rounds (every "
                    "count once per round); the table gives each count's median wall time and "
                    "every run's")
          ->check(in_range(1, 100));
      s->add_flag("--json", o->json, "print one JSON object");
      set_examples(
          s, {"ltc bench sim", "ltc bench sim --only gemm --json",
              "ltc bench sim --only h200 --max-m 256",
              "ltc bench sim --only h200 --case llama2-70b-o:4096", "ltc bench sim --only rtl",
              "ltc bench sim --only moe --markdown docs/results/sim-moe.md",
              "ltc bench sim --only sample --full-cache /tmp/full.json --per-kernel",
              "ltc bench sim --only sample --case-file configs/sampling/held-out.json",
              "ltc bench sim --markdown docs/results/sim.md",
              "ltc bench sim --threads --markdown docs/results/sim-threads.md",
              "ltc bench sim --threads 1,2,16 --baseline /path/to/serial/ltc",
              "ltc bench sim --threads 1,2,16 --repeat 3 --markdown docs/results/sim-threads.md",
              "ltc bench sim --only sample --per-kernel --markdown docs/results/sim-sample.md "
              "--confidence-out configs/calibration/sampling-confidence.json"});
      s->callback([o, s] {
        check_flags(*s, o->only);
        o->threads_table = s->get_option("--threads")->count() > 0;
        if (!o->baseline.empty() && !o->threads_table) {
          throw InputError("--baseline goes with --threads");
        }
        if (s->get_option("--repeat")->count() > 0 && !o->threads_table) {
          throw InputError("--repeat goes with --threads");
        }
        if (!o->baseline.empty() && (!std::filesystem::is_regular_file(o->baseline) ||
                                     ::access(o->baseline.c_str(), X_OK) != 0)) {
          throw InputError("--baseline: '" + o->baseline +
                           "' is not an executable file (valid: an ltc binary)");
        }
        run(*o);
      });
    }};

}  // namespace
}  // namespace ltc::cli
