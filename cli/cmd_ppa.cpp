// `ltc ppa`: one tensor-core design point through Yosys + OpenSTA (synth/ppa.h): area, critical
// path, power with measured switching activity, ops/cycle, TOPS/mm^2 and TOPS/W (docs/cli.md).
// The point comes from the tile flags, or with --gpu from a GPU's LUT tile (lut_tensor.core after
// --gpu-set; hw::GpuConfig::lut_tile), so a GPU file's tile and its energy per op
// (`ltc gpu-energy`) come from one run.
#include "cli/command.h"
#include "cli/design_point.h"
#include "cli/options.h"
#include "common/error.h"
#include "model/golden/dtype.h"
#include "model/hw/gpu.h"
#include "synth/ppa.h"

#include <fmt/core.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <optional>

namespace ltc::cli {
namespace {

struct PpaFlags {
  DesignPointFlags point;
  std::string gpu, gpu_set;  // the design point is this GPU's LUT tile
  double clock_ns = 0;
  std::string activity = "measured";
  int cycles = 0;
  std::string netlist_sim = "ltc";
  std::string lib = "osu018";
  std::string timing = "zero";
  uint64_t seed = 1;
  bool gate_check = false;
  std::string workdir;
  double timeout_s = 3600;
  bool json = false;
  const CLI::App* sub = nullptr;  // for the defaults it took
  double scale_nm = 0, scale_vdd = 0;
};

bool given(const CLI::App* sub, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (sub->get_option(n)->count() > 0) return true;
  }
  return false;
}

// --gpu: the GPU's LUT tile at --acts and --weights (each defaulting to the tile's own).
hw::TensorCoreConfig gpu_design_point(const hw::GpuConfig& g, const PpaFlags& o) {
  if (!g.has_lut_tensor()) {
    throw InputError("--gpu: gpu '" + g.name +
                     "' has no LUT tensor cores (no lut_tensor section); ltc ppa --gpu "
                     "synthesizes a GPU's LUT tile (for another tile give --design, --m, --n, "
                     "--k without --gpu)");
  }
  const hw::TensorCoreConfig& core = g.lut_tensor->core;
  const golden::DType act =
      given(o.sub, {"--acts", "--act"}) ? golden::parse_act_dtype(o.point.act, "--acts") : core.act;
  const int wbits = given(o.sub, {"--weights", "--wbits"})
                        ? weight_planes(o.point.weights, o.point.wbits)
                        : core.wbits;
  try {
    return g.lut_tile(act, wbits);
  } catch (const InputError& e) {
    throw InputError(std::string("--acts: ") + e.what());
  }
}

// The design point and, with --gpu, the GPU it came from (after --gpu-set, each field of which
// must change the tile).
hw::TensorCoreConfig design_point(const PpaFlags& o, std::optional<hw::GpuConfig>& gpu) {
  if (o.gpu.empty()) return make_design_point(o.point);
  gpu = apply_gpu_set(
      hw::load_gpu(o.gpu), o.gpu_set,
      [&o](const hw::GpuConfig& g) { return nlohmann::json(gpu_design_point(g, o)); },
      "design point (ltc ppa --gpu synthesizes the GPU's LUT tile, lut_tensor.core, and reads "
      "no other field");
  return gpu_design_point(*gpu, o);
}

// The defaults the point took: the tile flags' own, or with --gpu the GPU tile's --acts and
// --weights.
nlohmann::json point_defaults(const PpaFlags& o, const std::optional<hw::GpuConfig>& gpu) {
  if (!gpu) return design_point_defaults(o.sub);
  nlohmann::json d = nlohmann::json::object();
  const hw::TensorCoreConfig& core = gpu->lut_tensor->core;
  if (!given(o.sub, {"--acts", "--act"})) d["--acts"] = golden::dtype_name(core.act);
  if (!given(o.sub, {"--weights", "--wbits"})) d["--weights"] = "int" + std::to_string(core.wbits);
  return d;
}

void run(const PpaFlags& o) {
  std::optional<hw::GpuConfig> gpu;
  const hw::TensorCoreConfig config = design_point(o, gpu);
  const nlohmann::json defaults = point_defaults(o, gpu);
  if (o.scale_nm < 0 || (o.scale_nm > 0 && o.scale_vdd <= 0) ||
      (o.scale_nm == 0 && o.scale_vdd != 0)) {
    throw InputError(
        "--scale-to-nm N --scale-vdd V: both > 0 together (e.g. --scale-to-nm 28 "
        "--scale-vdd 0.9), or neither");
  }
  synth::PpaOptions po;
  const synth::CellLibrary& lib = synth::cell_library(o.lib);
  po.library = lib.name;
  po.clock_ns = o.clock_ns;
  if (o.activity == "measured") {
    po.activity = synth::ActivityMode::kMeasured;
  } else if (o.activity == "assumed") {
    po.activity = synth::ActivityMode::kAssumed;
  } else {
    throw InputError("--activity: '" + o.activity + "' is not valid (valid: measured, assumed)");
  }
  po.sim.cycles = o.cycles;
  if (o.netlist_sim != "ltc" && o.netlist_sim != "iverilog") {
    throw InputError("--netlist-sim: '" + o.netlist_sim + "' is not valid (valid: ltc, iverilog)");
  }
  po.sim.netlist_simulator = o.netlist_sim;
  po.sim.timing = synth::parse_delay_model(o.timing, "--activity-timing");
  po.sim.seed = o.seed;
  po.gate_check = o.gate_check;
  po.tool_timeout_s = o.timeout_s;
  const bool temp = o.workdir.empty();
  po.workdir = temp ? (std::filesystem::temp_directory_path() /
                       fmt::format("ltc-ppa-{}-{}", config.id(), ::getpid()))
                          .string()
                    : o.workdir;
  if (progress_enabled()) fmt::print(stderr, "ltc ppa: {} in {}\n", config.id(), po.workdir);
  // A failed run keeps its folder: the error message names the log in it.
  const synth::PpaResult r = synth::run_ppa(config, po);
  if (temp) std::filesystem::remove_all(po.workdir);
  const bool mismatch = r.gate_check_mismatches && *r.gate_check_mismatches != 0;
  if (mismatch) set_exit_code(kExitFailed);

  std::optional<synth::ScaledFigures> scaled;
  if (o.scale_nm > 0) {
    synth::NodeScaling ns;
    ns.from_nm = lib.node_nm;
    ns.from_vdd = lib.vdd;
    ns.to_nm = o.scale_nm;
    ns.to_vdd = o.scale_vdd;
    scaled = synth::scale_to_node(r, ns);
  }
  if (o.json) {
    nlohmann::json j = r;
    j["config"] = config;
    if (scaled) j["scaled"] = *scaled;
    if (temp) j.erase("workdir");
    j["defaults"] = defaults;
    j["gpu"] = gpu ? nlohmann::json(gpu->name) : nlohmann::json(nullptr);
    j["gpu_set"] = o.gpu_set;
    fmt::print("{}\n", j.dump());
    return;
  }
  fmt::print("{}  ({}, Yosys + OpenSTA)\n{}", config.id(), lib.description,
             defaults_line(defaults, gpu ? "gpu " + gpu->name + "'s LUT tile precision" : ""));
  if (gpu) {
    fmt::print("  gpu        {}'s LUT tile (lut_tensor.core){}\n", gpu->name,
               o.gpu_set.empty() ? "" : ", overrides: --gpu-set " + o.gpu_set);
  }
  fmt::print("  area       {:12.1f} um2  ({} cells, {} flip-flops, {} fanout buffers)\n",
             r.area_um2, r.cells, r.flip_flops, r.fanout_buffers);
  fmt::print("  delay      {:12.3f} ns   (fmax {:.1f} MHz; {})\n", r.delay_ns, r.fmax_mhz,
             r.synth_mode);
  fmt::print(
      "  power      {:12.4f} mW   at {:.3f} ns (internal {:.4f}, switching {:.4f} of which "
      "input-port nets {:.4f}, leakage {:.6f}): {}\n",
      r.power_mw, r.clock_ns, r.internal_mw, r.switching_mw, r.input_switching_mw, r.leakage_mw,
      r.power_model);
  if (r.activity_timing != "zero") {
    fmt::print(
        "  zero-delay {:12.4f} mW   (the same model on the settled toggles: glitches {:+.1f}%)\n",
        r.power_zero_delay_mw,
        r.power_zero_delay_mw > 0 ? 100 * (r.power_mw / r.power_zero_delay_mw - 1) : 0.0);
  }
  fmt::print(
      "  power avg  {:12.4f} mW   (OpenSTA report_power at the average activity: internal {:.4f}, "
      "switching {:.4f})\n",
      r.power_avg_activity_mw, r.avg_internal_mw, r.avg_switching_mw);
  fmt::print("  ops/cycle  {:12.1f}\n", r.ops_per_cycle);
  fmt::print("  TOPS       {:12.5f}\n  TOPS/mm2   {:12.5f}\n  TOPS/W     {:12.4f}\n", r.tops,
             r.tops_per_mm2, r.tops_per_w);
  if (scaled) {
    fmt::print(
        "  scaled     {:.1f} um2, {:.3f} ns, {:.4f} mW dynamic, {:.4f} TOPS/mm2, {:.3f} TOPS/W\n"
        "             ({})\n",
        scaled->area_um2, scaled->delay_ns, scaled->power_mw, scaled->tops_per_mm2,
        scaled->tops_per_w, scaled->model);
  }
  fmt::print("  activity   nets {:.4f}, inputs {:.4f} toggles/cycle ({})\n", r.net_activity,
             r.input_activity, r.activity_kind);
  if (r.gate_check_mismatches) {
    fmt::print("  gate-level check: {} mismatching cycles of {} (netlist vs RTL)\n",
               *r.gate_check_mismatches, r.gate_check_cycles);
  }
  auto sec = [&r](const char* stage) {
    const auto it = r.seconds.find(stage);
    return it == r.seconds.end() ? 0.0 : it->second;
  };
  fmt::print("  time       yosys {:.1f} s, activity {:.1f} s, sta {:.1f} s, power {:.1f} s\n",
             sec("yosys"), sec("activity"), sec("sta"), sec("power"));
}

CommandRegistrar reg{
    60, [](CLI::App& app) {
      auto o = std::make_shared<PpaFlags>();
      CLI::App* sub = app.add_subcommand(
          "ppa", "One design point through Yosys + OpenSTA: area, delay, power, density");
      add_gpu_option(sub, o->gpu,
                     "synthesize this GPU's LUT tile (lut_tensor.core; --acts and --weights "
                     "default to the tile's): ");
      add_gpu_set_option(sub, o->gpu_set, "tile (lut_tensor.core fields; with --gpu)");
      sub->add_option("--design", o->point.design, "lut, lut-naive, mac, add")
          ->capture_default_str();
      add_tile_options(sub, o->point.m, o->point.n, o->point.k, o->point.wbits,
                       "--weights intN: N");
      add_operand_options(sub, &o->point.act, o->point.weights, o->point.wbits);
      sub->add_option("--acc", o->point.acc, "accumulator dtype (default: int32 / fp32 by --acts)");
      sub->add_option(
          "--weight", o->point.weight,
          "mac only: weight dtype (default: --acts; int8 with a float --acts and --weights)");
      sub->add_option("--pipeline-stages", o->point.pipeline_stages,
                      "datapath register stages, 1..8")
          ->capture_default_str()
          ->check(in_range(1, 8));
      sub->add_option("--lib", o->lib,
                      "cell library: osu018 (OSU 0.18 um) or nangate45 (NanGate 45 nm)")
          ->capture_default_str();
      sub->add_option("--clock-ns", o->clock_ns,
                      "clock period for power and throughput, 0.001..1e6 (default: the design's "
                      "maximum)")
          ->check(in_range(0.001, 1e6));
      sub->add_option("--activity", o->activity,
                      "measured (gate-level simulation) or assumed (fixed 0.1 / 0.5)")
          ->capture_default_str();
      sub->add_option("--cycles", o->cycles,
                      "simulated cycles for the activity, 0..1e6 (0: auto: 200; with iverilog 200 "
                      "down to 32 by netlist size)")
          ->capture_default_str()
          ->check(in_range(0, 1e6));
      sub->add_option("--netlist-sim", o->netlist_sim,
                      "gate-level simulator of the activity: ltc (built in, seconds) or iverilog "
                      "(the OSU cell models, osu018 only; hours on large tiles)")
          ->capture_default_str();
      sub->add_option("--activity-timing", o->timing,
                      "delay model of the activity simulation: zero (settled values), unit or "
                      "liberty (every transition, glitches included; ltc simulator only)")
          ->capture_default_str();
      sub->add_option("--seed", o->seed, "stimulus seed")->capture_default_str();
      sub->add_flag("--gate-check", o->gate_check,
                    "also simulate the RTL and compare outputs with the netlist");
      sub->add_option("--workdir", o->workdir,
                      "keep scripts, logs and netlists here (default: a temporary folder)");
      sub->add_option("--timeout-s", o->timeout_s, "limit per tool run")
          ->capture_default_str()
          ->check(in_range(1, 1e6));
      sub->add_option("--scale-to-nm", o->scale_nm,
                      "also report the figures scaled to this node (classical scaling; needs "
                      "--scale-vdd)");
      sub->add_option("--scale-vdd", o->scale_vdd, "supply voltage at --scale-to-nm (V)");
      sub->add_flag("--json", o->json, "print one JSON object");
      set_examples(sub, {"ltc ppa --design lut --m 2 --n 64 --k 4 --weights int1 --acts fp16",
                         "ltc ppa --design mac --acts int8 --clock-ns 5 --json",
                         "ltc ppa --gpu a100-lut4x --weights int1 --acts fp16 --json",
                         "ltc ppa --gpu a100-lut4x --gpu-set lut_tensor.core.k=8"});
      o->sub = sub;
      sub->callback([o, sub] {
        o->point.wbits_given =
            sub->get_option("--wbits")->count() + sub->get_option("--weights")->count() > 0;
        const bool gpu = !o->gpu.empty();
        if (gpu) {
          check_older_spellings(sub);
        } else {
          check_design_point_flags(sub, o->point);
        }
        FlagRules(sub)
            .flags({"--design", "--m", "--n", "--k", "--acc", "--weight", "--pipeline-stages"},
                   "without --gpu",
                   "the GPU's LUT tile (lut_tensor.core) fixes it; change it with --gpu-set "
                   "lut_tensor.core.<field>=V",
                   [gpu] { return !gpu; })
            .flags({"--gpu-set"}, "with --gpu", "it changes the fields of a GPU's LUT tile",
                   [gpu] { return gpu; })
            .flags({"--cycles", "--netlist-sim", "--seed", "--gate-check", "--activity-timing"},
                   "with --activity measured", "assumed activity simulates no netlist",
                   [o] { return o->activity == "measured"; })
            .check();
        run(*o);
      });
    }};

}  // namespace
}  // namespace ltc::cli
