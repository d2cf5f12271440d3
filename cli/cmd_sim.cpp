// `ltc sim`: cycle-level SystemC simulation of a trace file, or of a model step compiled in
// memory (--model). Thin over sim::simulate(); sim/README.md explains every statistic.
#include "cli/command.h"
#include "cli/model_step.h"
#include "cli/options.h"
#include "common/error.h"
#include "compiler/model_lowering.h"
#include "model/hw/gpu.h"
#include "model/llm/graph.h"
#include "model/llm/model_config.h"
#include "sim/sampling.h"
#include "sim/simulator.h"
#include "traces/trace.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <csignal>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ltc::cli {
namespace {

struct SimFlags {
  std::string file, gpu, gpu_set, tc = "fast", kernel;
  std::string model, phase = "decode", weights = "int2", acts = "int8";
  int64_t batch = 1, context = kDefaultContext, seq = 0;
  int64_t quantum = sim::SimOptions{}.quantum_cycles;
  int64_t block_limit = 0;
  bool functional = false, json = false, per_kernel = false, sample = false;
  std::vector<int64_t> sample_trips;
  int64_t sample_waves = 0;
  int64_t sample_slice = sim::SampleOptions{}.max_slice;
  bool sample_slice_streaming = false;
  uint32_t seed = 1;
};

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

void print_table(const sim::RunStats& r, bool per_kernel) {
  struct Row {
    std::string name;
    int count = 0;
    sim::KernelStats k;
    double us = 0;  // each kernel at its own clock
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
  }
  fmt::print("{:<28} {:>5} {:>12} {:>10} {:>7} {:>7} {:>9} {:>7}  {}\n", "kernel", "count",
             "cycles", "time_us", "tensor", "occup", "dram_GB/s", "l2_hit", "top stall");
  for (const Row& row : rows) {
    const sim::KernelStats& k = row.k;
    const double us = row.us;
    const double dram =
        double(k.mem.dram_read_bytes + k.mem.dram_write_bytes) / (us > 0 ? us * 1e3 : 1);
    const double l2 =
        k.mem.l2_sectors ? double(k.mem.l2_hit_sectors) / double(k.mem.l2_sectors) : 0.0;
    fmt::print("{:<28} {:>5} {:>12} {:>10.2f} {:>6.1f}% {:>6.1f}% {:>9.1f} {:>6.1f}%  {}\n",
               row.name.size() > 28 ? row.name.substr(0, 28) : row.name, row.count, k.cycles, us,
               100 * k.tensor_utilization(), 100 * k.achieved_occupancy(), dram, 100 * l2,
               top_stall(k));
  }
  fmt::print(
      "total: {} cycles, {:.4f} ms (at {:.3f} GHz on average), {} kernels; simulated in {:.2f} "
      "s{}\n",
      r.cycles, r.time_ms(), r.total().clock_ghz, r.kernels.size(), r.wall_s,
      r.interrupted ? " (INTERRUPTED: partial)" : "");
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
        "sample measured per method; sim/README.md)\n",
        r.sample_method, counts, r.sample_simulated_instructions, full,
        full ? 100.0 * double(r.sample_simulated_instructions) / double(full) : 0.0,
        100 * r.sample_error_expected, 100 * r.sample_error_max);
  }
}

void run(const SimFlags& o) {
  if (o.file.empty() == o.model.empty()) {
    throw InputError("ltc sim: give a trace FILE or --model (one of them)");
  }
  traces::Trace trace;
  std::string gpu_name = o.gpu;
  if (!o.file.empty()) {
    trace = traces::read_trace_file(o.file);
    if (gpu_name.empty()) gpu_name = trace.gpu;
  } else {
    if (gpu_name.empty()) throw InputError("--gpu: required with --model");
  }
  hw::GpuConfig gpu = hw::load_gpu(gpu_name);
  if (!o.gpu_set.empty()) gpu = hw::with_overrides(gpu, o.gpu_set);
  if (!o.model.empty()) {
    const llm::ModelConfig model = load_model_reporting(o.model);
    trace = compiler::compile_model(
        model, step_from_flags(model, o.phase, o.batch, o.context, o.seq, o.weights, o.acts), gpu);
  }
  sim::SimOptions so;
  so.tc = o.tc;
  so.functional = o.functional;
  so.seed = o.seed;
  so.kernel = o.kernel;
  so.quantum_cycles = o.quantum;
  so.block_limit = o.block_limit;
  if (progress_enabled()) {
    so.progress = [](const sim::Progress& p) {
      fmt::print(stderr, "\rsim: kernel {}/{} {} blocks {}/{}, {} cycles, {:.0f} s   ",
                 p.kernel + 1, p.kernels, p.name, p.blocks_done, p.blocks, p.cycles, p.wall_s);
    };
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
  if (progress_enabled() && so.progress) fmt::print(stderr, "\r\033[K");
  if (o.json) {
    nlohmann::json j = r;
    j["gpu"] = gpu.name;
    j["tc"] = o.tc;
    fmt::print("{}\n", j.dump());
  } else {
    print_table(r, o.per_kernel || o.model.empty());
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
                    "built-in GPU name or GPU JSON path (default: the GPU the trace names)");
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
                    "cycles an SM runs ahead of the memory system's time (TLM-2.0 quantum): "
                    "larger is faster, requests reach L2 and DRAM less in time order")
          ->check(in_range(1, 4096))
          ->capture_default_str();
      CLI::Option* sample = s->add_flag(
          "--sample", o->sample,
          "sampled simulation (sim/sampling.h): repeated kernels once, each kernel from "
          "reduced runs over its main loop and its waves, extrapolated; timing only");
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
                  "elementwise: faster, about twice the error of whole runs; sim/README.md)")
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
      s->add_flag("--json", o->json, "print one JSON object: cycles, time_ms, clock_ghz, kernels");
      set_examples(s, {"ltc sim traces/examples/gemm-m3n100k70-int2-int8.lmt --functional",
                       "ltc sim --model llama2-7b --phase decode --context 1024 --gpu a100-lut4x "
                       "--json"});
      s->callback([o] { run(*o); });
    }};

}  // namespace
}  // namespace ltc::cli
