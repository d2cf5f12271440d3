#include "cli/report/model_agreement.h"

#include "common/error.h"
#include "compiler/model_lowering.h"
#include "model/hw/gpu.h"
#include "model/llm/model_config.h"
#include "model/roofline/cost.h"
#include "model/roofline/workload.h"
#include "sim/energy.h"
#include "sim/sampler/sampling.h"
#include "sim/simulator.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>

namespace ltc::report {
namespace {

// The op whose kernel does `op`'s work: a fused op's producer, a launch group's first op.
std::string runs_in(const llm::Op& op) {
  if (!op.fused_into.empty()) return op.fused_into;
  if (!op.launch_with.empty()) return op.launch_with;
  return op.name;
}

}  // namespace

std::string AgreementCase::label() const {
  return fmt::format("{} {} B{} {}{} {} W {} A {}", model, llm::phase_name(phase), batch,
                     phase == llm::Phase::kDecode ? "L" : "S", length, gpu, weights, acts);
}

std::vector<AgreementCase> agreement_cases(const AgreementOptions& o) {
  struct Setup {
    const char *gpu, *weights, *acts;
  };
  const Setup setups[] = {{"h200", "fp16", "fp16"},
                          {"a100", "fp16", "fp16"},
                          {"a100", "int4", "fp16"},
                          {"a100-lut4x", "int2", "int8"},
                          {"a100-lut4x", "int1", "fp16"}};
  struct Step {
    llm::Phase phase;
    int64_t batch, length;
  };
  const Step steps[] = {{llm::Phase::kDecode, 1, 1024},
                        {llm::Phase::kDecode, 16, 2048},
                        {llm::Phase::kPrefill, 1, 1024}};
  std::vector<AgreementCase> cases;
  for (const auto& model : o.models) {
    try {
      llm::load_model(model);  // an unknown model fails before any simulation
    } catch (const InputError& e) {
      throw InputError(std::string("--model: ") + e.what());
    }
    for (const Step& s : steps) {
      for (const Setup& u : setups) {
        cases.push_back({model, u.gpu, u.weights, u.acts, s.phase, s.batch, s.length});
      }
    }
  }
  return cases;
}

AgreementResult run_agreement(const AgreementCase& c, bool full) {
  const auto t0 = std::chrono::steady_clock::now();
  const hw::GpuConfig gpu = hw::load_gpu(c.gpu);
  const llm::ModelConfig model = llm::load_model(c.model);
  const auto weights = llm::parse_weight_format(c.weights, "--weights");
  const auto acts = golden::parse_act_dtype(c.acts, "--acts");
  // The compiler's path: LUT tables fused into their producers wherever the GPU runs them.
  llm::StepConfig step = roofline::make_step(c.phase, c.batch, c.length, weights, acts, gpu);
  step.kernels = llm::KernelPlan::kCompiled;  // both models cost the compiler's kernels
  // One step graph for both: the compiler lowers it, the roofline costs it.
  const llm::StepGraph graph = llm::build_step_graph(model, step);
  const roofline::StepEstimate est = roofline::estimate_step(roofline::Machine(gpu), graph);

  const traces::Trace trace = compiler::compile_model(model, step, gpu);
  const sim::RunStats run =
      full ? sim::simulate(trace, gpu, {}) : sim::simulate_sampled(trace, gpu, {}, {});

  AgreementResult r;
  r.c = c;
  r.sim_ms = run.time_ms();
  r.roofline_ms = est.latency_ms;
  r.sim_method = full ? "full" : run.sample_method;
  const sim::Energy energy = sim::run_energy(run, sim::energy_coefficients(gpu, &trace));
  constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
  r.sim_tensor_j =
      energy.is_unknown("mma") || energy.is_unknown("lmma") ? kUnknown : energy.tensor_j;
  r.sim_dram_j = energy.is_unknown("dram") ? kUnknown : energy.dram_j;
  r.sim_total_j = energy.total_j();
  r.sim_total_partial = !energy.unknown.empty();
  r.roofline_tensor_j = est.tensor_energy_known ? est.tensor_energy_j : kUnknown;
  r.roofline_dram_j = est.dram_energy_known ? est.dram_energy_j : kUnknown;
  r.tokens = step.rows();

  // Operators in step order, each folded into the op whose kernel runs it.
  std::map<std::string, size_t> index;
  std::map<std::string, sim::KernelStats> stats;
  auto row = [&](const std::string& op) -> OpGap& {
    auto it = index.find(op);
    if (it == index.end()) {
      it = index.emplace(op, r.ops.size()).first;
      r.ops.push_back({op, 0, 0, "", ""});
    }
    return r.ops[it->second];
  };
  auto add_ops = [&](const std::vector<llm::Op>& ops, const std::vector<roofline::OpCost>& costs,
                     double times) {
    for (size_t i = 0; i < ops.size() && i < costs.size(); ++i) {
      const std::string key = runs_in(ops[i]);
      OpGap& g = row(key);
      g.roofline_ms += costs[i].ms * times;
      if (ops[i].name == key) g.roofline_bound = costs[i].bound;
    }
  };
  add_ops(graph.embedding, est.embedding, 1);
  add_ops(graph.layer, est.layer, double(est.layers));
  add_ops(graph.head, est.head, 1);
  // Each kernel with the boundary the simulator waits after it (GpuConfig::
  // step_kernel_gap_cycles), as the roofline costs every launch: the operators add up to the step.
  const double gap_ms = double(gpu.step_kernel_gap_cycles()) / (gpu.clock_ghz * 1e6);
  for (size_t i = 0; i < run.kernels.size(); ++i) {
    const sim::KernelStats& k = run.kernels[i];
    const std::string op = compiler::kernel_graph_op(k.name);
    row(op).sim_ms += k.time_ms() + (i + 1 < run.kernels.size() ? gap_ms : 0.0);
    stats[op] += k;
  }
  for (auto& g : r.ops) {
    if (stats.count(g.op)) g.sim_stall = std::string(sim::stall_name(stats[g.op].binding_stall()));
  }
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

nlohmann::json to_json(const AgreementResult& r) {
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& g : r.ops) {
    ops.push_back({{"op", g.op},
                   {"sim_ms", g.sim_ms},
                   {"roofline_ms", g.roofline_ms},
                   {"diff", g.diff()},
                   {"sim_stall", g.sim_stall},
                   {"roofline_bound", g.roofline_bound}});
  }
  return {
      {"step", r.c.label()},
      {"model", r.c.model},
      {"gpu", r.c.gpu},
      {"weights", r.c.weights},
      {"acts", r.c.acts},
      {"phase", std::string(llm::phase_name(r.c.phase))},
      {"batch", r.c.batch},
      {"length", r.c.length},
      {"sim_ms", r.sim_ms},
      {"roofline_ms", r.roofline_ms},
      {"diff", r.diff()},
      {"sim_method", r.sim_method},
      {"ops", ops},
      {"wall_s", r.wall_s},
      {"energy",
       {{"tokens", r.tokens},
        // JSON has no NaN: null is unknown.
        {"sim_tensor_j",
         std::isnan(r.sim_tensor_j) ? nlohmann::json(nullptr) : nlohmann::json(r.sim_tensor_j)},
        {"sim_dram_j",
         std::isnan(r.sim_dram_j) ? nlohmann::json(nullptr) : nlohmann::json(r.sim_dram_j)},
        {"sim_total_j", r.sim_total_j},
        {"sim_total_partial", r.sim_total_partial},
        {"roofline_tensor_j", std::isnan(r.roofline_tensor_j)
                                  ? nlohmann::json(nullptr)
                                  : nlohmann::json(r.roofline_tensor_j)},
        {"roofline_dram_j", std::isnan(r.roofline_dram_j) ? nlohmann::json(nullptr)
                                                          : nlohmann::json(r.roofline_dram_j)}}}};
}

AgreementResult agreement_from_json(const nlohmann::json& j) {
  AgreementResult r;
  r.c = {j.at("model"),
         j.at("gpu"),
         j.at("weights"),
         j.at("acts"),
         llm::parse_phase(j.at("phase").get<std::string>()),
         j.at("batch"),
         j.at("length")};
  r.sim_ms = j.at("sim_ms");
  r.roofline_ms = j.at("roofline_ms");
  r.sim_method = j.at("sim_method");
  r.wall_s = j.at("wall_s");
  const nlohmann::json& e = j.at("energy");
  r.tokens = e.at("tokens");
  auto known = [](const nlohmann::json& v) {
    return v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>();
  };
  r.sim_tensor_j = known(e.at("sim_tensor_j"));
  r.sim_dram_j = known(e.at("sim_dram_j"));
  r.sim_total_j = e.at("sim_total_j");
  r.sim_total_partial = e.at("sim_total_partial");
  r.roofline_tensor_j = known(e.at("roofline_tensor_j"));
  r.roofline_dram_j = known(e.at("roofline_dram_j"));
  for (const auto& o : j.at("ops")) {
    r.ops.push_back({o.at("op"), o.at("sim_ms"), o.at("roofline_ms"), o.at("sim_stall"),
                     o.at("roofline_bound")});
  }
  return r;
}

std::string agreement_markdown(const std::vector<AgreementResult>& rows) {
  double worst = 0, sum = 0;
  int within = 0;
  for (const auto& r : rows) {
    worst = std::max(worst, std::abs(r.diff()));
    sum += std::abs(r.diff());
    within += std::abs(r.diff()) <= kStepAgreementMax ? 1 : 0;
  }
  const double mean = rows.empty() ? 0 : sum / double(rows.size());
  std::string s = fmt::format(
      "Simulator (`ltc sim --model ... --sample`) against the roofline (`ltc decode|prefill`) on "
      "the same step and path. {} of {} steps within {:.0f}% (target: all), mean |difference| "
      "{:.1f}% (target {:.0f}%), worst {:.1f}%.\n\n",
      within, rows.size(), kStepAgreementMax * 100, mean * 100, kStepAgreementMean * 100,
      worst * 100);
  s += "| step | simulator ms | roofline ms | sim / roofline |\n|---|---|---|---|\n";
  for (const auto& r : rows) {
    s += fmt::format("| {} | {:.3f} | {:.3f} | {:+.1f}% |\n", r.c.label(), r.sim_ms, r.roofline_ms,
                     r.diff() * 100);
  }
  s += fmt::format(
      "\nOperators more than {:.0f}% apart (a launch group under its first op; layers summed; "
      "each kernel with the kernel boundary after it), with the simulator's binding stall and the "
      "roofline's bound:\n\n",
      kOpGapListed * 100);
  s += "| step | operator | simulator ms | roofline ms | sim / roofline | sim stall | roofline "
       "bound |\n|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    for (const auto& g : r.ops) {
      if (std::abs(g.diff()) <= kOpGapListed || g.roofline_ms <= 0) continue;
      s += fmt::format("| {} | {} | {:.4f} | {:.4f} | {:+.1f}% | {} | {} |\n", r.c.label(), g.op,
                       g.sim_ms, g.roofline_ms, g.diff() * 100, g.sim_stall, g.roofline_bound);
    }
  }
  return s;
}

std::string energy_markdown(const std::vector<AgreementResult>& rows) {
  auto mj = [](double j, int64_t tokens) {
    return std::isnan(j) ? std::string("unknown") : fmt::format("{:.4g}", j / double(tokens) * 1e3);
  };
  auto ratio = [](double sim, double roofline) {
    return std::isnan(roofline) || roofline <= 0 ? std::string("-")
                                                 : fmt::format("{:.2f}x", sim / roofline);
  };
  std::string s =
      "Energy per token of each step (mJ), the simulator's (`ltc sim --model ...`: every counter "
      "at "
      "the GPU file's figures, docs/energy.md) beside the roofline's (tensor-core power x "
      "peak-rate busy time, DRAM bytes x pJ/B). `ltc bench agreement --energy FILE` writes this "
      "file.\n\n| step | sim tensor | roofline tensor | sim / roofline | sim DRAM | roofline DRAM "
      "| sim / roofline | sim all parts |\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    if (r.tokens <= 0) continue;
    s += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", r.c.label(),
                     mj(r.sim_tensor_j, r.tokens), mj(r.roofline_tensor_j, r.tokens),
                     ratio(r.sim_tensor_j, r.roofline_tensor_j), mj(r.sim_dram_j, r.tokens),
                     mj(r.roofline_dram_j, r.tokens), ratio(r.sim_dram_j, r.roofline_dram_j),
                     mj(r.sim_total_j, r.tokens) + (r.sim_total_partial ? " (known parts)" : ""));
  }
  return s;
}

}  // namespace ltc::report
