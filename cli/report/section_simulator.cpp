// The cycle-level simulator (sim/) on one small model step: its per-operator time beside the
// tile-level roofline's, where its cycles go (issue vs stalls by cause), and its energy per token
// by GPU design beside the roofline's (docs/energy.md).
#include "cli/report/html.h"
#include "cli/report/section.h"
#include "cli/report/step_request.h"
#include "compiler/model_lowering.h"
#include "model/golden/dtype.h"
#include "model/hw/gpu.h"
#include "model/llm/model_config.h"
#include "model/llm/precision.h"
#include "model/roofline/workload.h"
#include "sim/energy.h"
#include "sim/sampler/sampling.h"
#include "sim/simulator.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <vector>

namespace ltc::report {
using nlohmann::json;

namespace {

// The step's energy per token on each design, simulator beside roofline (docs/energy.md): the
// section's own run for its GPU, a sampled run (sim/sampling.h; a few seconds) for the others.
std::string energy_by_design(const llm::ModelConfig& model, const std::string& model_name,
                             const std::string& own_gpu, const sim::RunStats& own_run,
                             int64_t batch, int64_t context) {
  struct Design {
    const char *gpu, *weights, *acts;
  };
  std::vector<std::vector<std::string>> rows;
  for (const Design& d : {Design{"h200", "fp16", "fp16"}, Design{"a100", "fp16", "fp16"},
                          Design{"a100-lut4x", "int2", "int8"}}) {
    const hw::GpuConfig gpu = hw::load_gpu(d.gpu);
    llm::StepConfig step = roofline::make_step(llm::Phase::kDecode, batch, context,
                                               llm::parse_weight_format(d.weights, "--weights"),
                                               golden::parse_act_dtype(d.acts, "--acts"), gpu);
    step.kernels = llm::KernelPlan::kCompiled;
    const bool own = own_gpu == d.gpu;
    // The trace also gives the lmma precision whose LUT tile energy applies (sim/energy.h).
    const traces::Trace trace = compiler::compile_model(model, step, gpu);
    const sim::RunStats run = own ? own_run : sim::simulate_sampled(trace, gpu, {});
    const roofline::StepEstimate est =
        roofline::estimate_step(roofline::Machine(gpu), llm::build_step_graph(model, step));
    const sim::Energy e = sim::run_energy(run, sim::energy_coefficients(gpu, &trace));
    const double tokens = double(step.rows());
    auto known = [&](const char* part) {
      return std::find(e.unknown.begin(), e.unknown.end(), part) == e.unknown.end();
    };
    auto mj = [&](bool is_known, double j) {
      return is_known ? fixed(j / tokens * 1e3, 3) : std::string("unknown");
    };
    const double on_chip = e.cuda_j + e.smem_j + e.l1_j + e.l2_j;
    std::string left_out;
    for (const auto& u : e.unknown) {
      if (left_out.find(u) == std::string::npos) left_out += (left_out.empty() ? "" : ", ") + u;
    }
    const bool tensor_known = known("mma") && known("lmma");
    const std::string tensor =
        !tensor_known  ? "unknown"
        : e.lmma_j > 0 ? fmt::format("{} (LUT {})", mj(true, e.tensor_j), mj(true, e.lmma_j))
                       : mj(true, e.tensor_j);
    rows.push_back(
        {d.gpu, std::string(d.weights) + " x " + d.acts, own ? "full" : "sampled",
         mj(true, e.total_j()), tensor, mj(true, e.dram_j), mj(true, on_chip),
         mj(known("static"), e.static_j), left_out.empty() ? "-" : left_out,
         mj(est.tensor_energy_known, est.tensor_energy_j),
         mj(est.dram_energy_known, est.dram_energy_j),
         fmt::format("ltc sim --model {} --phase decode --batch {} --context {} --gpu {} --weights "
                     "{} --acts {}{}",
                     model_name, batch, context, d.gpu, d.weights, d.acts,
                     own ? "" : " --sample")});
  }
  std::string html = para(
      "Energy per token of the same decode step by GPU design, in mJ: the simulator charges every "
      "counter at the GPU file's cited figures (tensor ops issued, CUDA-core ops, shared-memory, "
      "L1, L2 and DRAM bytes, static power over the time); the roofline charges tensor-core power "
      "over the step's peak-rate busy time and DRAM bytes only. DRAM agrees to the extent the "
      "bytes do. The simulator's tensor energy is higher: it pays for the ops the tensor cores "
      "issue, padding included (a decode GEMV's one row on mma.m16n8k16's 16; on the LUT tile's "
      "M = 2, two), and attention runs on the MAC cores at their energy per op; the roofline "
      "counts the step's useful ops. 'sim, known parts' leaves out the parts whose figure the GPU "
      "file does not cite (the H200's tensor cores, the A100's static power; 'left out').");
  html += table(
      {"GPU", "weights x acts", "simulation", "sim, known parts", "sim tensor", "sim DRAM",
       "sim on-chip", "sim static", "left out", "roofline tensor", "roofline DRAM", "reproduce"},
      rows);
  return html;
}

bool in_layer(const std::string& kernel) {
  return kernel.size() > 1 && kernel[0] == 'L' &&
         std::isdigit(static_cast<unsigned char>(kernel[1]));
}

std::string build(SectionContext& ctx) {
  // --quick: a 1B model (16 layers) instead of 3B (26), so tests stay short.
  const std::string model_name =
      ctx.quick() ? "configs/calibration/profile-models/llama3.2-1b.json" : "llama-3b";
  const std::string gpu_name = "h200";
  const int64_t batch = 1, context = ctx.quick() ? 64 : 128;
  // The roofline costs the kernels the simulator runs (llm::KernelPlan::kCompiled).
  roofline::StepRequest q = step_request(model_name, gpu_name, llm::Phase::kDecode, batch, context);
  q.kernels = llm::KernelPlan::kCompiled;
  const std::string sim_cmd = fmt::format(
      "ltc sim --model {} --phase decode --batch {} --context {} --weights fp16 --acts fp16 "
      "--gpu {} --json",
      model_name, batch, context, gpu_name);
  const llm::ModelConfig model =
      llm::load_model(ctx.quick() ? std::string(LTC_SOURCE_DIR) + "/" + model_name : model_name);
  llm::StepConfig step = llm::StepConfig::decode(batch, context);
  step.weights = llm::parse_weight_format("fp16", "--weights");
  step.acts = golden::parse_act_dtype("fp16", "--acts");
  const hw::GpuConfig gpu = hw::load_gpu(gpu_name);
  ctx.progress("simulating " + sim_cmd);
  const sim::RunStats run = sim::simulate(compiler::compile_model(model, step, gpu), gpu, {});
  ctx.write("simulator-step.json", json(run).dump(1) + "\n");
  const roofline::StepEstimate est = roofline::estimate(roofline::Machine(gpu), model, q);
  // A launch group (QKV, gate+up) is one GEMM in the simulator: its members' roofline time
  // goes to its first op's row.
  std::map<std::string, double> group_ms;
  std::set<std::string> members;
  {
    const llm::StepGraph g = llm::build_step_graph(model, step);
    for (size_t i = 0; i < g.layer.size() && i < est.layer.size(); ++i) {
      const llm::Op& op = g.layer[i];
      group_ms[op.launch_with.empty() ? op.name : op.launch_with] += est.layer[i].ms;
      if (!op.launch_with.empty()) members.insert(op.name);
    }
  }

  struct Op {
    double sim_ms = 0, cycles = 0;  // per layer for the layers' operators
    int kernels = 0;
    sim::KernelStats stats;
  };
  std::map<std::string, Op> ops;
  for (const auto& k : run.kernels) {
    Op& op = ops[compiler::kernel_graph_op(k.name)];
    const double share = in_layer(k.name) ? 1.0 / double(est.layers) : 1.0;
    op.sim_ms += k.time_ms() * share;
    op.cycles += double(k.cycles) * share;
    ++op.kernels;
    op.stats += k;
  }
  json times = json::array(), stalls = json::array();
  std::vector<std::vector<std::string>> rows;
  auto add_op = [&](roofline::OpCost r, bool per_layer) {
    if (per_layer && members.count(r.name)) return;
    if (per_layer && group_ms.count(r.name)) r.ms = group_ms.at(r.name);
    const auto it = ops.find(r.name);
    const double sim_ms = it == ops.end() ? 0.0 : it->second.sim_ms;
    const double cycles = it == ops.end() ? 0.0 : it->second.cycles;
    if (sim_ms <= 0 && r.ms <= 0) return;  // fused: no time on either side
    const std::string name = per_layer ? r.name : r.name + " (once)";
    using Bar = std::tuple<const char*, double, std::string>;
    for (const auto& [who, ms, cmd] :
         std::vector<Bar>{{"simulator", sim_ms, sim_cmd}, {"roofline", r.ms, step_command(q)}}) {
      times.push_back({{"operator", name},
                       {"model", who},
                       {"us", 1e3 * ms},
                       {"sim_cycles", std::string(who) == "simulator" ? fixed(cycles, 0) : "-"},
                       {"bound", r.bound},
                       {"reproduce", cmd}});
    }
    rows.push_back({name, fixed(cycles, 0), fixed(1e3 * sim_ms, 2), fixed(1e3 * r.ms, 2),
                    r.ms > 1e-4 ? percent((sim_ms - r.ms) / r.ms) : "-", r.bound});
    if (it == ops.end()) return;
    const sim::KernelStats& k = it->second.stats;
    double all = double(k.issue_cycles);
    for (auto c : k.stall_cycles) all += double(c);
    if (all <= 0) return;
    stalls.push_back({{"operator", name},
                      {"cause", "issued"},
                      {"share", double(k.issue_cycles) / all},
                      {"reproduce", sim_cmd}});
    for (int s = 0; s < sim::kStallKinds; ++s) {
      if (k.stall_cycles[s] == 0) continue;
      stalls.push_back({{"operator", name},
                        {"cause", std::string(sim::stall_name(sim::Stall(s)))},
                        {"share", double(k.stall_cycles[s]) / all},
                        {"reproduce", sim_cmd}});
    }
  };
  for (const auto& r : est.layer) add_op(r, true);
  for (const auto& r : est.head) add_op(r, false);

  json time_spec = {
      {"title", "Time per operator: simulator vs roofline (per layer; head once)"},
      {"height", 240},
      {"mark", "bar"},
      {"encoding",
       {{"x",
         {{"field", "operator"},
          {"type", "nominal"},
          {"sort", nullptr},
          {"title", nullptr},
          {"axis", {{"labelAngle", -30}}}}},
        {"xOffset", {{"field", "model"}}},
        {"y", {{"field", "us"}, {"type", "quantitative"}, {"title", "time (us)"}}},
        {"color", {{"field", "model"}, {"type", "nominal"}, {"title", nullptr}}},
        {"tooltip", vl_tooltip({"operator", "model", "us", "sim_cycles", "bound", "reproduce"})}}}};
  json stall_spec = {
      {"title", "Where the simulator's sub-partition cycles go, per operator"},
      {"height", 240},
      {"mark", "bar"},
      {"encoding",
       {{"x",
         {{"field", "operator"},
          {"type", "nominal"},
          {"sort", nullptr},
          {"title", nullptr},
          {"axis", {{"labelAngle", -30}}}}},
        {"y",
         {{"field", "share"},
          {"type", "quantitative"},
          {"stack", "normalize"},
          {"title", "share of cycles"},
          {"axis", {{"format", "%"}}}}},
        {"color", {{"field", "cause"}, {"type", "nominal"}, {"title", "issue or stall cause"}}},
        {"tooltip", vl_tooltip({"operator", "cause", "share", "reproduce"})}}}};
  std::string html = para(fmt::format(
      "{} decode (batch {}, context {}, FP16) on the {} configuration, compiled to LMMA/MMA "
      "kernels (compiler/) and run cycle by cycle by the SystemC simulator (sim/): {} kernels, "
      "{:.3f} ms simulated in {:.1f} s of wall time; the roofline says {:.3f} ms. Per-kernel "
      "statistics: simulator-step.json.",
      model_name, batch, context, gpu_name, run.kernels.size(), run.time_ms(), run.wall_s,
      est.latency_ms));
  html += ctx.plot("simulator-vs-roofline", time_spec, times);
  html += ctx.plot("simulator-stalls", stall_spec, stalls);
  html += details(
      "per operator as a table",
      table({"operator", "simulator (us)", "roofline (us)", "difference", "roofline bound"}, rows));
  html += reproduce(sim_cmd);
  ctx.progress("energy per token by design (sampled runs)");
  html += energy_by_design(model, model_name, gpu_name, run, batch, context);
  html += reproduce("scripts/sim-vs-roofline --model " + model_name + " --gpu " + gpu_name +
                    " --phase decode --context " + std::to_string(context) +
                    " --weights fp16 --acts fp16");
  Comparison c;
  c.figure = "Simulator vs roofline, " + model_name + " decode step on " + gpu_name;
  c.paper = "(no paper figure: two ltc models of one step)";
  c.ours = fmt::format("{:.3f} ms vs {:.3f} ms ({})", run.time_ms(), est.latency_ms,
                       percent((run.time_ms() - est.latency_ms) / est.latency_ms));
  c.verdict = std::abs(run.time_ms() / est.latency_ms - 1) <= 0.2 ? Comparison::Verdict::kMatch
                                                                  : Comparison::Verdict::kDiffers;
  c.reason = c.verdict == Comparison::Verdict::kMatch
                 ? "the cycle-level and tile-level models agree within 20%"
                 : "the models disagree by more than 20%: see the per-operator plot";
  ctx.compare(c);
  return html;
}

}  // namespace

SectionDef simulator_section() {
  return {"simulator", "Cycle-level simulator beside the roofline: one decode step", build};
}

}  // namespace ltc::report
