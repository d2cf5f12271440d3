// `ltc sim`: cycle-level SystemC simulation of a trace file, or of a model step compiled in
// memory (--model). Thin over sim::simulate(); sim/README.md explains every statistic.
#include "cli/command.h"
#include "cli/model_step.h"
#include "cli/options.h"
#include "common/error.h"
#include "common/units.h"
#include "compiler/model_lowering.h"
#include "model/hw/gpu.h"
#include "model/llm/graph.h"
#include "model/llm/model_config.h"
#include "model/roofline/estimate.h"
#include "model/roofline/workload.h"
#include "sim/energy.h"
#include "sim/sampler/sampling.h"
#include "sim/simulator.h"
#include "traces/trace.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ltc::cli {
namespace {

struct SimFlags {
  std::string file, gpu, gpu_set, tc = "fast", kernel;
  std::string model, phase = "decode", weights = "fp16", acts = "fp16";
  std::string expert_load = "uniform";
  int64_t batch = 1, context = kDefaultContext, seq = 0;
  int64_t quantum = sim::SimOptions{}.quantum_cycles;
  int64_t threads = 0;  // 0: LTC_THREADS, else the hardware's (sim_threads)
  int64_t block_limit = 0;
  bool functional = false, json = false, per_kernel = false, sample = false, host_profile = false;
  std::vector<int64_t> sample_trips;
  int64_t sample_waves = 0;
  int64_t sample_slice = sim::SampleOptions{}.max_slice;
  bool sample_slice_streaming = false;
  uint32_t seed = 1;
  WorkFlags work;
};

// What the simulator does per second on one core of this host, for the up-front estimate
// (--budget-s): warp instructions with the fast tensor-core formula (measured: 7.4e6 on a
// llama2-7b decode step, 1.4e7 on a 4096^3 LUT GEMM), and beats of the verilated tile with --tc
// rtl (one per core tile and weight plane of each LMMA; measured 7.8e4 on a 256 x 4096 x 4096
// int2 GEMM's first two blocks).
constexpr double kFastWarpInstrsPerS = 7.0e6;
constexpr double kRtlBeatsPerS = 7.5e4;

// What a run will do: warp instructions and RTL tile beats of the kernels it simulates (--kernel,
// and --block-limit's blocks), through the loops without expanding them.
struct SimWork {
  double warp_instructions = 0, rtl_beats = 0;
};

SimWork sim_work(const traces::Trace& t, const SimFlags& o, const hw::GpuConfig& gpu) {
  SimWork w;
  for (const traces::Kernel& k : t.kernels) {
    if (!o.kernel.empty() && k.name != o.kernel) continue;
    const double blocks = o.block_limit > 0 ? double(std::min<int64_t>(o.block_limit, k.blocks()))
                                            : double(k.blocks());
    const double warps = blocks * double(k.warps_per_block());
    w.warp_instructions +=
        warps * traces::expanded_sum(k.program, [](const traces::Instr&) { return 1.0; });
    if (!gpu.has_lut_tensor()) continue;
    const golden::LmmaShape& core = gpu.lut_tensor->core.shape;
    w.rtl_beats += warps * traces::expanded_sum(k.program, [&](const traces::Instr& in) {
                     if (in.op != traces::Opcode::kLmma) return 0.0;
                     return std::ceil(double(in.lmma.shape.m) / core.m) *
                            std::ceil(double(in.lmma.shape.n) / core.n) * double(in.lmma.wbits);
                   });
  }
  return w;
}

// Which flags and GPU fields apply to what `ltc sim` was given (FlagRules): `lmma` is unknown
// (nullopt) until the trace is read or compiled.
FlagRules sim_rules(const CLI::App* sub, const SimFlags& o, const std::optional<bool>& lmma) {
  const bool model = !o.model.empty();
  const bool has_lmma = !lmma || *lmma;
  FlagRules r(sub);
  r.flags({"--phase", "--batch", "--context", "--seq", "--weights", "--acts", "--expert-load"},
          "with --model",
          "a trace FILE was compiled with its own step and formats (ltc compile model ...)",
          [model] { return model; })
      .flags({"--seed"}, "with --functional", "only --functional draws random operands",
             [&o] { return o.functional; })
      .flags({"--per-kernel"}, "to the text table", "--json always lists every kernel",
             [&o] { return !o.json; })
      .flags({"--tc"}, "to a trace or model step with lmma instructions",
             "rtl and rtl-naive run LMMAs on the verilated tile and this one has none",
             [&o, has_lmma] { return o.tc == "fast" || has_lmma; })
      .flags({"--threads"}, "with --tc fast",
             "rtl and rtl-naive time every LMMA on one verilated tile for all SMs, which steps "
             "them on one thread (LTC_THREADS and the default do not apply either)",
             [&o] { return o.tc == "fast"; });
  r.gpu_fields({"lut_tensor.core.wbits"}, "to a tile of ltc ppa or ltc verify (their --wbits)",
               "every LMMA's weight planes come from the weights (--weights, or the trace's lmma "
               "instructions), never from the core",
               [] { return false; })
      .gpu_fields({"lut_tensor.core.design", "lut_tensor.core.act", "lut_tensor.core.weight",
                   "lut_tensor.core.table", "lut_tensor.core.acc", "lut_tensor.core.out",
                   "lut_tensor.acts"},
                  "with --model",
                  "a trace's lmma instructions carry their own weight planes and dtypes (its core "
                  "lines); compile the trace for the changed GPU instead (ltc compile ... --gpu "
                  "FILE)",
                  [model] { return model; })
      .gpu_fields({"achievable."}, "with --model",
                  "the simulator times kernels in cycles, never with the roofline's fitted rates "
                  "(the compiler's tiling reads them for a model step)",
                  [model] { return model; })
      .gpu_fields({"lut_tensor."}, "to a trace or model step with lmma instructions",
                  "this one has none", [has_lmma] { return has_lmma; })
      .gpu_fields(
          {"tensor_area_mm2_per_sm", "launch_overhead_us", "sync_overhead_us", "description"},
          "to the roofline (ltc gemm, decode, prefill)", "the simulator does not read it",
          [] { return false; });
  return r;
}

// Useful tensor ops per issued one, by GEMM kernel: 2*M*N*K of its gemm record (per batch and
// sign basis) over the 2*M*N*K its lmma / mma instructions issue across the grid, which pads M,
// N and K to the instruction's shape (an M = 1 GEMV on mma.m16n8k16: 1/16). Kernels without a
// gemm record (attention, norms) are absent: their useful work is not recorded in the trace.
std::map<std::string, double> useful_fractions(const traces::Trace& t) {
  std::map<std::string, double> out;
  for (const traces::Kernel& k : t.kernels) {
    if (k.gemm.m <= 0) continue;
    const double issued = double(k.blocks()) * double(k.warps_per_block()) *
                          traces::expanded_sum(k.program, [](const traces::Instr& in) {
                            const golden::LmmaShape* s =
                                in.op == traces::Opcode::kLmma  ? &in.lmma.shape
                                : in.op == traces::Opcode::kMma ? &in.mma.shape
                                                                : nullptr;
                            return s ? 2.0 * double(s->m) * double(s->n) * double(s->k) : 0.0;
                          });
    const double useful = 2.0 * double(k.gemm.batch) * double(k.gemm.m) * double(k.gemm.n) *
                          double(k.gemm.k) * double(std::max(k.gemm.bases, 1));
    if (issued > 0) out[k.name] = std::min(1.0, useful / issued);
  }
  return out;
}

// The useful share of a kernel's issued tensor ops (all of them when unknown: no gemm record).
double useful_ops(const sim::KernelStats& k, const std::map<std::string, double>& fractions) {
  const auto it = fractions.find(k.name);
  return double(k.tensor_ops) * (it == fractions.end() ? 1.0 : it->second);
}

extern "C" void on_sigint(int) {
  sim::request_stop();
}

// "L12.q_proj.lmma" -> "q_proj.lmma": the per-layer kernels of a model step summed by operator.
std::string op_of(const std::string& kernel) {
  if (kernel.size() > 1 && kernel[0] == 'L' &&
      std::isdigit(static_cast<unsigned char>(kernel[1]))) {
    const auto dot = kernel.find('.');
    if (dot != std::string::npos) return kernel.substr(dot + 1);
  }
  return kernel;
}

std::string top_stall(const sim::KernelStats& k) {
  const size_t best = size_t(k.binding_stall());
  const double all = double(k.issue_cycles) + [&] {
    double s = 0;
    for (auto c : k.stall_cycles) s += double(c);
    return s;
  }();
  return fmt::format("{} {:.0f}%", sim::stall_name(sim::Stall(best)),
                     all > 0 ? 100.0 * double(k.stall_cycles[best]) / all : 0.0);
}

void print_table(const sim::RunStats& r, bool per_kernel, const sim::EnergyCoefficients& ec,
                 const std::map<std::string, double>& useful_fraction) {
  struct Row {
    std::string name;
    int count = 0;
    sim::KernelStats k;
    double us = 0;      // each kernel at its own clock
    double useful = 0;  // useful tensor ops (useful_fractions)
  };
  std::vector<Row> rows;
  std::map<std::string, size_t> index;
  for (const auto& k : r.kernels) {
    const std::string key = per_kernel ? k.name : op_of(k.name);
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(key, rows.size()).first;
      rows.push_back({key, 0, k});
      rows.back().k.cycles = 0;
      rows.back().k = sim::KernelStats{};
      rows.back().k.tensor_cores = k.tensor_cores;
      rows.back().k.sms = k.sms;
      rows.back().k.max_warps_per_sm = k.max_warps_per_sm;
    }
    Row& row = rows[it->second];
    ++row.count;
    row.k += k;
    row.k.cycles += k.cycles;
    row.us += k.time_ms() * 1e3;
    row.useful += useful_ops(k, useful_fraction);
  }
  // tensor: busy tensor-core cycles; useful: that share of them doing the GEMMs' own 2*M*N*K,
  // the padding to the instruction's shape left out.
  fmt::print("{:<28} {:>5} {:>12} {:>10} {:>7} {:>7} {:>7} {:>9} {:>7} {:>10}  {}\n", "kernel",
             "count", "cycles", "time_us", "tensor", "useful", "occup", "dram_GB/s", "l2_hit",
             "energy_uJ", "top stall");
  for (const Row& row : rows) {
    const sim::KernelStats& k = row.k;
    const double us = row.us;
    const double dram =
        double(k.mem.dram_read_bytes + k.mem.dram_write_bytes) / (us > 0 ? us * 1e3 : 1);
    const double l2 =
        k.mem.l2_sectors ? double(k.mem.l2_hit_sectors) / double(k.mem.l2_sectors) : 0.0;
    sim::KernelStats timed = k;  // the row's time at its kernels' clocks
    timed.clock_ghz = us > 0 ? double(k.cycles) / (us * 1e3) : 0;
    const double uj = sim::kernel_energy(timed, ec).total_j() * 1e6;
    const double useful = k.tensor_ops ? row.useful / double(k.tensor_ops) : 1.0;
    fmt::print(
        "{:<28} {:>5} {:>12} {:>10.2f} {:>6.1f}% {:>6.1f}% {:>6.1f}% {:>9.1f} {:>6.1f}% {:>10.4g}  "
        "{}\n",
        row.name.size() > 28 ? row.name.substr(0, 28) : row.name, row.count, k.cycles, us,
        100 * k.tensor_utilization(), 100 * k.tensor_utilization() * useful,
        100 * k.achieved_occupancy(), dram, 100 * l2, uj, top_stall(k));
  }
  fmt::print(
      "total: {} cycles, {:.4f} ms (at {:.3f} GHz on average), {} kernels; simulated in {:.2f} "
      "s{}\n",
      r.cycles, r.time_ms(), r.total().clock_ghz, r.kernels.size(), r.wall_s,
      r.interrupted ? " (INTERRUPTED: partial)" : "");
  if (r.host.on) {
    const auto& busy = r.host.thread_busy_s;
    double sum = 0, most = 0;
    for (const double b : busy) sum += b, most = std::max(most, b);
    fmt::print(
        "host: {} quanta; {} batches of SM and L2 work {:.2f} s, SystemC's thread alone {:.2f} s; "
        "L2 items before the SMs with lines {:.2f} s; {} threads busy {:.2f} s on average, {:.2f} "
        "s the most; of all threads' busy time, L2 items {:.2f} s and SMs waiting for L2 items "
        "{:.2f} s\n",
        r.host.quanta, r.host.batches, r.host.batch_s, r.host.serial_s(r.wall_s), r.host.l2_chain_s,
        busy.size(), busy.empty() ? 0.0 : sum / double(busy.size()), most, r.host.l2_serve_s,
        r.host.l2_wait_s);
  }
  if (!r.sample_method.empty()) {
    std::map<std::string, int> methods;
    for (const auto& k : r.kernels) ++methods[k.sample.method];
    std::string counts;
    for (const auto& [m, n] : methods)
      counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, m);
    const uint64_t full = r.total().warp_instructions();
    fmt::print(
        "sampled: {}; kernels: {}; {} of {} warp instructions simulated ({:.2f}%); confidence: "
        "cycle error {:.1f}% expected, {:.1f}% at most (from the errors ltc bench sim --only "
        "sample measured per method; sim/sampler/README.md)\n",
        r.sample_method, counts, r.sample_simulated_instructions, full,
        full ? 100.0 * double(r.sample_simulated_instructions) / double(full) : 0.0,
        100 * r.sample_error_expected, 100 * r.sample_error_max);
  }
}

// What a model step's energy is compared with: the roofline's estimate of the same step on the
// same GPU, costing the compiled kernels the simulator ran (tokens: the step's new tokens).
struct StepComparison {
  int64_t tokens = 0;
  roofline::StepEstimate roofline;
};

void print_energy(const sim::Energy& e, const sim::EnergyCoefficients& c,
                  const std::optional<StepComparison>& step) {
  // A part the GPU file has no figure for is "unknown", never 0; a sum that leaves parts out
  // says so.
  auto part = [&](double j, std::initializer_list<const char*> names) {
    if (std::none_of(names.begin(), names.end(), [&](const char* n) { return e.is_unknown(n); })) {
      return si_text(j, "J");
    }
    return j > 0 ? si_text(j, "J") + " + unknown" : std::string("unknown");
  };
  const std::string some = e.unknown.empty() ? "" : " of the known parts";
  fmt::print(
      "energy: {}{} (tensor {} of which LUT {}, cuda {}, smem {}, l1 {}, l2 {}, dram {}, static "
      "{}), average {:.4g} W{} over {:.4g} ms\n",
      si_text(e.total_j(), "J"), some, part(e.tensor_j, {"mma", "lmma"}), part(e.lmma_j, {"lmma"}),
      part(e.cuda_j, {"cuda"}), part(e.smem_j, {"smem"}), part(e.l1_j, {"l1"}),
      part(e.l2_j, {"l2"}), part(e.dram_j, {"dram"}), part(e.static_j, {"static"}), e.average_w(),
      some, e.time_s * 1e3);
  if (e.lmma_j > 0 || !c.lmma_source.empty()) {
    fmt::print("LUT tile energy: {:.4g} pJ per op and weight plane: {}\n", c.lmma_pj_per_plane_op,
               c.lmma_source);
  }
  if (!e.unknown.empty()) {
    std::string parts;
    for (const auto& u : e.unknown) {
      if (parts.find(u) == std::string::npos) parts += (parts.empty() ? "" : ", ") + u;
    }
    fmt::print("energy left out: {} (no figure in the GPU file; ltc show gpu lists them)\n", parts);
  }
  if (!step || step->tokens <= 0) return;
  const auto& rf = step->roofline;
  const double t = double(step->tokens);
  auto per_token = [&](bool known, double j) {
    return known ? si_text(j / t, "J") : std::string("unknown");
  };
  fmt::print(
      "per token ({} tokens): {}{} (tensor {}, dram {}); roofline, same step: {} (tensor {}, dram "
      "{}; it charges tensor cores at peak-rate busy time and DRAM bytes only)\n",
      step->tokens, si_text(e.total_j() / t, "J"), some, part(e.tensor_j / t, {"mma", "lmma"}),
      part(e.dram_j / t, {"dram"}),
      rf.tensor_energy_known && rf.dram_energy_known
          ? si_text((rf.tensor_energy_j + rf.dram_energy_j) / t, "J")
          : std::string("unknown"),
      per_token(rf.tensor_energy_known, rf.tensor_energy_j),
      per_token(rf.dram_energy_known, rf.dram_energy_j));
}

nlohmann::json energy_json(const sim::Energy& e, const sim::EnergyCoefficients& c,
                           const std::optional<StepComparison>& step) {
  nlohmann::json j = e;
  j["coefficients"] = c;
  if (step && step->tokens > 0) {
    const auto& rf = step->roofline;
    const double t = double(step->tokens);
    auto known = [](bool k, double v) { return k ? nlohmann::json(v) : nlohmann::json(nullptr); };
    j["tokens"] = step->tokens;
    j["j_per_token"] = e.total_j() / t;
    j["roofline"] = {{"tensor_j", known(rf.tensor_energy_known, rf.tensor_energy_j)},
                     {"dram_j", known(rf.dram_energy_known, rf.dram_energy_j)},
                     {"j_per_token", known(rf.tensor_energy_known && rf.dram_energy_known,
                                           (rf.tensor_energy_j + rf.dram_energy_j) / t)},
                     {"time_ms", rf.latency_ms}};
  }
  return j;
}

bool has_lmma(const traces::Trace& t) {
  for (const auto& k : t.kernels) {
    for (const auto& in : k.program) {
      if (in.op == traces::Opcode::kLmma) return true;
    }
  }
  return false;
}

void run(const SimFlags& o, const CLI::App* sub) {
  if (o.file.empty() == o.model.empty()) {
    throw InputError("ltc sim: give a trace FILE or --model (one of them)");
  }
  sim_rules(sub, o, std::nullopt).check(o.gpu_set);
  traces::Trace trace;
  std::string gpu_name = o.gpu;
  if (!o.file.empty()) {
    trace = traces::read_trace_file(o.file);
    if (gpu_name.empty()) gpu_name = trace.gpu;
    sim_rules(sub, o, has_lmma(trace)).check(o.gpu_set);
  } else {
    if (gpu_name.empty()) throw InputError("--gpu: required with --model");
  }
  hw::GpuConfig gpu = hw::load_gpu(gpu_name);
  if (!o.gpu_set.empty()) gpu = hw::with_overrides(gpu, o.gpu_set);
  std::optional<StepComparison> step;
  std::string routing;  // MoE models: the expert routing the compiled step assumes
  if (!o.model.empty()) {
    const llm::ModelConfig model = load_model_reporting(o.model);
    const llm::StepConfig sc = step_from_flags(model, o.phase, o.batch, o.context, o.seq, o.weights,
                                               o.acts, o.expert_load);
    trace = compiler::compile_model(model, sc, gpu);
    sim_rules(sub, o, has_lmma(trace)).check(o.gpu_set);
    if (model.is_moe()) routing = llm::build_step_graph(model, sc).routing;
    if (o.kernel.empty() && o.block_limit == 0) {
      // The whole step runs: its energy per token against the roofline's, which costs the same
      // kernels on the same path (LUT tables fused into their producers, as the compiler
      // lowers them), as ltc bench agreement does.
      llm::StepConfig rs = roofline::make_step(
          sc.phase, sc.batch, sc.phase == llm::Phase::kDecode ? sc.context : sc.new_tokens(),
          sc.weights, sc.acts, gpu);
      rs.kernels = llm::KernelPlan::kCompiled;
      rs.expert_load = sc.expert_load;
      step = StepComparison{sc.rows(), roofline::estimate_step(roofline::Machine(gpu),
                                                               llm::build_step_graph(model, rs))};
    }
  }
  if (!o.sample) {
    // A sampled run simulates a bounded part of every kernel by design (sim/sampler/README.md).
    const SimWork w = sim_work(trace, o, gpu);
    const bool rtl = o.tc != "fast";
    const double seconds =
        w.warp_instructions / kFastWarpInstrsPerS + (rtl ? w.rtl_beats / kRtlBeatsPerS : 0.0);
    check_work_budget(o.work, "simulation",
                      rtl ? fmt::format("{:.3g} warp instructions, {:.3g} beats of the RTL tile",
                                        w.warp_instructions, w.rtl_beats)
                          : fmt::format("{:.3g} warp instructions", w.warp_instructions),
                      seconds);
  }
  sim::SimOptions so;
  so.tc = o.tc;
  so.functional = o.functional;
  so.seed = o.seed;
  so.kernel = o.kernel;
  if (o.quantum > sim::longest_quantum(gpu)) {
    throw InputError("--quantum: " + std::to_string(o.quantum) + " is longer than the L2 hit " +
                     "latency of '" + gpu.name + "' (valid: 1 to " +
                     std::to_string(sim::longest_quantum(gpu)) + " cycles)");
  }
  so.quantum_cycles = o.quantum;
  // --tc rtl steps on one thread (SimOptions::threads); the JSON says what ran.
  so.threads = o.tc == "fast" ? sim_threads(o.threads) : 1;
  so.host_profile = o.host_profile;
  so.block_limit = o.block_limit;
  if (progress_enabled(o.work.progress)) {
    if (stderr_is_terminal()) {
      so.progress = [](const sim::Progress& p) {
        fmt::print(stderr, "\rsim: kernel {}/{} {} blocks {}/{}, {} cycles, {:.0f} s   ",
                   p.kernel + 1, p.kernels, p.name, p.blocks_done, p.blocks, p.cycles, p.wall_s);
      };
    } else {
      // A log or a pipe: whole lines, one every 5 s.
      so.progress_every_s = 5;
      so.progress = [](const sim::Progress& p) {
        fmt::print(stderr, "sim: kernel {}/{} {} blocks {}/{}, {} cycles, {:.0f} s\n", p.kernel + 1,
                   p.kernels, p.name, p.blocks_done, p.blocks, p.cycles, p.wall_s);
      };
    }
  }
  auto previous = std::signal(SIGINT, on_sigint);
  sim::RunStats r;
  try {
    if (o.sample) {
      sim::SampleOptions sample;
      if (!o.sample_trips.empty()) std::copy_n(o.sample_trips.begin(), 2, sample.trips);
      if (o.sample_waves > 0) sample.min_waves = o.sample_waves;
      sample.max_slice = o.sample_slice;
      sample.slice_streaming = o.sample_slice_streaming;
      r = sim::simulate_sampled(trace, gpu, so, sample);
    } else {
      r = sim::simulate(trace, gpu, so);
    }
  } catch (...) {
    std::signal(SIGINT, previous);
    throw;
  }
  std::signal(SIGINT, previous);
  if (stderr_is_terminal() && so.progress) fmt::print(stderr, "\r\033[K");
  if (r.interrupted) step.reset();
  const sim::EnergyCoefficients ec = sim::energy_coefficients(gpu, &trace);
  const sim::Energy energy = sim::run_energy(r, ec);
  const std::map<std::string, double> useful = useful_fractions(trace);
  int64_t blocks_run = 0, blocks_all = 0;
  for (const auto& k : r.kernels) blocks_run += k.blocks;
  for (const auto& k : trace.kernels) {
    if (o.kernel.empty() || k.name == o.kernel) blocks_all += k.blocks();
  }
  nlohmann::json defaults =
      o.model.empty()
          ? defaults_taken(sub, {"--tc"})
          : defaults_taken(sub, {"--phase", "--batch", "--context", "--weights", "--acts", "--tc"});
  if (o.quantum == 0) defaults["--quantum"] = std::to_string(sim::longest_quantum(gpu));
  if (o.json) {
    nlohmann::json j = r;
    j["defaults"] = defaults;
    if (!o.gpu_set.empty()) j["gpu_set"] = o.gpu_set;
    j["gpu"] = gpu.name;
    j["tc"] = o.tc;
    j["threads"] = so.threads;
    double useful_total = 0;
    for (size_t i = 0; i < r.kernels.size(); ++i) {
      const sim::KernelStats& k = r.kernels[i];
      j["kernels"][i]["energy"] = sim::kernel_energy(k, ec);
      // Issued ops are tensor_ops; useful ones leave out the padding (GEMM kernels only).
      const double u = useful_ops(k, useful);
      useful_total += u;
      if (useful.count(k.name)) {
        j["kernels"][i]["useful_tensor_ops"] = u;
        j["kernels"][i]["useful_tensor_utilization"] =
            k.tensor_ops ? k.tensor_utilization() * u / double(k.tensor_ops) : 0.0;
      }
    }
    j["total"]["useful_tensor_ops"] = useful_total;
    if (!routing.empty()) j["routing"] = routing;
    j["energy"] = energy_json(energy, ec, step);
    if (o.block_limit > 0) j["blocks_run"] = {{"run", blocks_run}, {"of", blocks_all}};
    fmt::print("{}\n", j.dump());
  } else {
    print_table(r, o.per_kernel || o.model.empty(), ec, useful);
    if (o.block_limit > 0) {
      fmt::print("--block-limit {}: the figures cover {} of the {} blocks{}\n", o.block_limit,
                 blocks_run, blocks_all, blocks_run < blocks_all ? "" : " (all of them)");
    }
    print_energy(energy, ec, step);
    if (!routing.empty()) fmt::print("experts: {}\n", routing);
    fmt::print("gpu {}{}\n{}", gpu.name, o.gpu_set.empty() ? "" : " with --gpu-set " + o.gpu_set,
               defaults_line(defaults));
    if (r.functional) {
      fmt::print("functional (seed {}): {} outputs, {} mismatches vs the golden model\n", o.seed,
                 r.functional_outputs, r.functional_mismatches);
    }
  }
  if (r.functional && r.functional_mismatches) set_exit_code(kExitFailed);
  if (r.interrupted) set_exit_code(kExitFailed);
}

CommandRegistrar reg{
    55, [](CLI::App& app) {
      auto o = std::make_shared<SimFlags>();
      CLI::App* s = app.add_subcommand(
          "sim",
          "Cycle-level SystemC simulation of a trace (or of a model step with --model)\n"
          "  e.g. ltc compile gemm --m 256 --n 4096 --k 4096 --gpu a100-lut4x --out g.lmt\n"
          "       ltc sim g.lmt --json\n"
          "       ltc sim --model llama2-7b --phase decode --context 1024 --gpu h200 "
          "--weights fp16 --acts fp16");
      s->add_option("file", o->file, "trace file (text .lmt or binary .ltcb)");
      s->add_option("--gpu", o->gpu,
                    "built-in GPU name or GPU JSON path (default: the GPU the trace names; "
                    "required with --model)");
      s->add_option("--gpu-set", o->gpu_set,
                    "change fields of the GPU: path=value[,path=value...], dotted paths into the "
                    "GPU JSON, e.g. lut_tensor.tiles_per_tensor_core=8,register_file_kb_per_sm=512 "
                    "(a model step is compiled for the changed GPU)");
      s->add_option("--tc", o->tc,
                    "tensor-core back end: fast (model/hw's formula), rtl (the verilated "
                    "ltc_lut_tile runs every LMMA; built and cached like ltc verify's models), "
                    "rtl-naive (ltc_lut_naive_tile)")
          ->capture_default_str();
      s->add_flag("--functional", o->functional,
                  "also compute every GEMM on random operands and compare bit for bit with the "
                  "golden model");
      s->add_option("--seed", o->seed, "operands of --functional")->capture_default_str();
      s->add_option("--kernel", o->kernel, "simulate only the kernel(s) with this name");
      s->add_option("--quantum", o->quantum,
                    "cycles an SM runs ahead of the memory system's time (TLM-2.0 quantum; "
                    "default and most: the GPU's L2 hit latency in cycles, so that a load's data, "
                    "known after the quantum that sent it, is never late); smaller is slower")
          ->check(in_range(1, 65535));
      s->add_option("--threads", o->threads,
                    "host threads that step the SMs (default: $LTC_THREADS, else the hardware's "
                    "threads); the results are the same for every count")
          ->check(in_range(1, 4096));
      CLI::Option* sample = s->add_flag(
          "--sample", o->sample,
          "sampled simulation (sim/sampler/README.md): repeated kernels once, each kernel from "
          "reduced runs over its main loop and its waves, extrapolated; timing only");
      s->add_flag("--host-profile", o->host_profile,
                  "also time where the host's wall goes: the batches of SM and L2 work, SystemC's "
                  "thread alone, the L2's items the SMs with lines wait for, each thread's busy "
                  "time (sim/README.md, \"Parallel stepping\"); a full run")
          ->excludes(sample);
      s->add_option("--sample-trips", o->sample_trips,
                    "with --sample: the main loop's trips in the two reduced runs")
          ->needs(sample)
          ->expected(2)
          ->check(in_range(1, 1 << 20));
      s->add_option("--sample-waves", o->sample_waves,
                    "with --sample: full waves before the tail a wave cut's run keeps at least "
                    "(it stops once its blocks' time is flat, never before 7 waves)")
          ->needs(sample)
          ->check(in_range(4, 1 << 20));
      s->add_option("--sample-slice", o->sample_slice,
                    "with --sample: a kernel too short to cut in waves whose blocks re-read "
                    "their tiles (a GEMM) runs on at most 1 / N of the GPU (its SMs, L2 slices "
                    "and DRAM channels) with 1 / N of its blocks, where that keeps its major "
                    "tile's sharing; 1: never")
          ->needs(sample)
          ->check(in_range(1, 64))
          ->capture_default_str();
      s->add_flag("--sample-slice-streaming", o->sample_slice_streaming,
                  "with --sample: slices for streaming kernels too (GEMVs, attention, "
                  "elementwise: faster, about twice the error of whole runs; sim/sampler/)")
          ->needs(sample);
      s->add_option("--block-limit", o->block_limit,
                    "run only the first N thread blocks (launch order) of each kernel (0: all)")
          ->check(in_range(0, 9.2e18));
      s->add_flag("--per-kernel", o->per_kernel,
                  "text output: one row per kernel (default for trace files; --model sums layers)");
      s->add_option("--model", o->model, "built-in model or Hugging Face config.json");
      s->add_option("--phase", o->phase, "with --model: decode or prefill")->capture_default_str();
      s->add_option("--batch", o->batch, "with --model: sequences")->capture_default_str();
      s->add_option("--context", o->context,
                    "with --model: decode KV-cache length; prefill length if no --seq")
          ->capture_default_str();
      s->add_option("--seq", o->seq, "with --model: prefill tokens per sequence");
      s->add_option("--weights", o->weights, "with --model: fp16, int1..int8, ternary, binary")
          ->capture_default_str();
      s->add_option("--acts", o->acts, "with --model: int8, fp16, bf16, fp8e4m3, fp8e5m2")
          ->capture_default_str();
      s->add_option("--expert-load", o->expert_load,
                    std::string("with --model: ") + kExpertLoadHelp)
          ->capture_default_str();
      s->add_flag("--json", o->json, "print one JSON object: cycles, time_ms, clock_ghz, kernels");
      add_work_options(s, o->work);
      set_examples(s, {"ltc sim traces/examples/gemm-m3n100k70-int2-int8.lmt --functional",
                       "ltc sim --model llama2-7b --phase decode --context 1024 --gpu a100-lut4x "
                       "--json"});
      s->callback([o, s] { run(*o, s); });
    }};

}  // namespace
}  // namespace ltc::cli
