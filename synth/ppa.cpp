#include "synth/ppa.h"

#include "common/error.h"
#include "common/file_io.h"
#include "common/process.h"
#include "synth/power.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <stdexcept>

namespace ltc::synth {

const nlohmann::json& tool_versions() {
  static std::once_flag once;
  static nlohmann::json versions;
  std::call_once(once, [] {
    versions = {{"yosys", tool_version({"yosys", "-V"})},
                {"sta", "OpenSTA " + tool_version({"sta", "-version"})},
                {"iverilog", tool_version({"iverilog", "-V"})}};
  });
  return versions;
}

PpaResult run_ppa(const DesignSource& src, double ops_per_cycle, const PpaOptions& options) {
  if (options.workdir.empty()) throw std::invalid_argument("run_ppa: workdir is required");
  // Every tool runs with the workdir as its current directory: paths handed to them must not be
  // relative to ours (a relative --out made iverilog miss the netlist).
  PpaOptions opt = options;
  opt.workdir = std::filesystem::absolute(opt.workdir).lexically_normal().string();
  if (opt.clock_ns < 0) throw std::invalid_argument("run_ppa: negative clock");
  const auto t0 = std::chrono::steady_clock::now();
  std::filesystem::create_directories(opt.workdir);
  PpaResult r;
  r.workdir = opt.workdir;
  r.rtl_hash = src.source_hash();
  r.ops_per_cycle = ops_per_cycle;

  const CellLibrary& lib = cell_library(opt.library);
  r.library = lib.name;
  if (opt.activity == ActivityMode::kMeasured && opt.sim.netlist_simulator == "iverilog") {
    if (lib.cell_models.empty()) {
      throw InputError("--netlist-sim iverilog: the " + lib.name +
                       " library ships no Verilog cell models (valid with it: ltc)");
    }
    if (opt.sim.timing != DelayModel::kZero) {
      throw InputError("--activity-timing " + std::string(delay_model_name(opt.sim.timing)) +
                       ": timed activity needs the ltc netlist simulator (--netlist-sim ltc)");
    }
  }
  SynthOptions so = synth_options(lib);
  so.timeout_s = opt.tool_timeout_s;
  so.keep_modules = opt.keep_modules;
  so.delay_target_ps = opt.delay_target_ps;
  so.max_fanout = opt.max_fanout;
  r.synth_mode = "flat";
  if (!so.keep_modules.empty()) {
    r.synth_mode = "units kept:";
    for (const auto& m : so.keep_modules) r.synth_mode += " " + m;
  }
  r.synth_mode += opt.delay_target_ps > 0
                      ? fmt::format("; abc -D {:g} with buffering and sizing", opt.delay_target_ps)
                      : std::string("; abc area mapping");
  if (opt.max_fanout > 0)
    r.synth_mode += fmt::format("; fanout <= {} across modules", opt.max_fanout);
  const SynthResult syn = run_yosys(src, so, opt.workdir);
  r.fanout_buffers = syn.fanout_buffers;
  r.fanout_nets = syn.fanout_nets;
  r.max_fanout_before = syn.max_fanout_before;
  r.area_um2 = syn.area_um2;
  r.cells = syn.cells;
  r.flip_flops = syn.flip_flops;
  r.cells_by_type = syn.cells_by_type;
  r.seconds["yosys"] = syn.seconds;

  const auto liberty = power_library(lib.liberty);
  StaOptions sta;
  sta.liberty = lib.liberty;
  sta.cap_unit_pf = liberty->cap_unit_pf;
  sta.timeout_s = opt.tool_timeout_s;
  sta.clock_ns = opt.clock_ns > 0 ? opt.clock_ns : opt.timing_clock_ns;
  std::shared_ptr<const NetActivity> nets;
  if (opt.activity == ActivityMode::kMeasured) {
    ActivityOptions ao = opt.sim;
    ao.timeout_s = opt.tool_timeout_s;
    ao.liberty = lib.liberty;
    ao.cell_models = lib.cell_models;
    ao.output_load_pf = sta.output_load_pf;
    if (ao.cycles <= 0) {
      // Auto: gatesim simulates ~1M cell-cycles in well under a second, so 200 cycles at any
      // size; iverilog needs ~0.5 ms per 1k cells and cycle: fewer for larger netlists, >= 32.
      ao.cycles =
          ao.netlist_simulator == "iverilog"
              ? std::max(32,
                         std::min(200, static_cast<int>(200.0 * 20000 / std::max(1, syn.cells))))
              : 200;
    }
    const ActivityResult act = measure_activity(src, syn, ao, opt.workdir);
    nets = act.nets;
    sta.global_activity = act.net_activity;
    sta.input_activity = act.input_activity;
    r.activity_timing = delay_model_name(ao.timing);
    r.activity_kind = "measured: gate-level " +
                      std::string(ao.timing == DelayModel::kZero
                                      ? "zero-delay"
                                      : fmt::format("timed ({} delay, glitches counted)",
                                                    delay_model_name(ao.timing))) +
                      " simulation (" + act.simulator +
                      "), input-port average + average over all other nets (OpenSTA 2019 "
                      "ignores per-pin activity)";
    r.activity_cycles = act.cycles;
    r.activity_nets = act.net_bits + act.input_bits;
    r.seconds["activity"] = act.seconds;
    if (opt.gate_check) {
      const auto ports = parse_netlist_ports(read_text(syn.netlist), src.top);
      const auto t = std::chrono::steady_clock::now();
      const std::string rtl_out = simulate_rtl_outputs(src, ports, ao, opt.workdir);
      std::vector<std::string> diffs;
      r.gate_check_mismatches = compare_outputs(act.outputs_path, rtl_out, &diffs);
      r.gate_check_cycles = ao.cycles;
      r.seconds["gate_check"] =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    }
  } else {
    sta.global_activity = 0.1;
    sta.input_activity = 0.5;
    r.activity_kind = "assumed: 0.1 toggles/cycle on nets, 0.5 on inputs (no simulation)";
  }
  r.input_activity = sta.input_activity;
  r.net_activity = sta.global_activity;

  const StaResult st = run_sta(syn.netlist, src.top, src.clock_port, sta, opt.workdir);
  r.seconds["sta"] = st.seconds;
  r.delay_ns = st.delay_ns;
  if (r.delay_ns <= 0) throw std::runtime_error("sta reported a non-positive critical path");
  r.fmax_mhz = 1000.0 / r.delay_ns;
  r.clock_ns = opt.clock_ns > 0 ? opt.clock_ns : r.delay_ns;
  // Dynamic power in OpenSTA is activity per cycle x f: rescale it to the chosen clock.
  const double dyn_scale = st.clock_ns / r.clock_ns;
  r.avg_internal_mw = st.internal_mw * dyn_scale;
  r.avg_switching_mw = st.switching_mw * dyn_scale;
  r.avg_leakage_mw = st.leakage_mw;
  r.power_avg_activity_mw = st.total_mw_at(r.clock_ns);
  if (nets) {
    const auto t = std::chrono::steady_clock::now();
    PowerOptions po;
    po.clock_ns = r.clock_ns;
    po.output_load_pf = sta.output_load_pf;
    po.wire_load = liberty_wire_load(*liberty);
    if (!po.wire_load && !lib.lef.empty()) {
      po.wire_load = lef_wire_load(lib.lef, lib.wire_layer, syn.area_um2 / syn.cells);
    }
    const NetPowerResult np = net_power(*nets, *liberty, po);
    r.internal_mw = np.internal_mw;
    r.switching_mw = np.switching_mw + np.input_switching_mw;
    r.input_switching_mw = np.input_switching_mw;
    r.leakage_mw = np.leakage_mw;
    r.power_mw = np.total_mw;
    r.power_model = np.model;
    r.power_zero_delay_mw = np.total_mw;
    if (nets->toggles != nets->settled_toggles) {
      NetActivity settled = *nets;
      settled.toggles = settled.settled_toggles;
      r.power_zero_delay_mw = net_power(settled, *liberty, po).total_mw;
    }
    r.seconds["power"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  } else {
    r.internal_mw = r.avg_internal_mw;
    r.switching_mw = r.avg_switching_mw;
    r.leakage_mw = r.avg_leakage_mw;
    r.power_mw = r.power_avg_activity_mw;
    r.power_zero_delay_mw = r.power_mw;
    r.power_model = "OpenSTA report_power at the average activity (no per-net activity: " +
                    std::string(opt.activity == ActivityMode::kMeasured
                                    ? "the iverilog netlist simulator gives only the averages)"
                                    : "activity assumed)");
  }

  r.tops = ops_per_cycle / r.clock_ns / 1000.0;
  r.tops_per_mm2 = r.tops / (r.area_um2 * 1e-6);
  r.tops_per_w = r.power_mw > 0 ? r.tops / (r.power_mw * 1e-3) : 0;
  r.seconds["total"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::vector<std::string> kept_modules(const hw::TensorCoreConfig& config, const PpaOptions& opt) {
  const int units = config.shape.m * config.shape.n;
  if (opt.hierarchical_from_units > 0 && units >= opt.hierarchical_from_units) return kUnitModules;
  return {};
}

PpaResult run_ppa(const hw::TensorCoreConfig& config, const PpaOptions& opt) {
  config.validate();
  const DesignSource src = design_source(config);
  PpaOptions o = opt;
  o.keep_modules = kept_modules(config, opt);
  PpaResult r = run_ppa(src, config.ops_per_cycle(), o);
  r.id = config.id();
  return r;
}

void to_json(nlohmann::json& j, const PpaResult& r) {
  j = nlohmann::json{
      {"id", r.id},
      {"area_um2", r.area_um2},
      {"cells", r.cells},
      {"flip_flops", r.flip_flops},
      {"cells_by_type", r.cells_by_type},
      {"delay_ns", r.delay_ns},
      {"fmax_mhz", r.fmax_mhz},
      {"clock_ns", r.clock_ns},
      {"power_mw", r.power_mw},
      {"internal_mw", r.internal_mw},
      {"switching_mw", r.switching_mw},
      {"leakage_mw", r.leakage_mw},
      {"input_switching_mw", r.input_switching_mw},
      {"power_model", r.power_model},
      {"activity_timing", r.activity_timing},
      {"power_zero_delay_mw", r.power_zero_delay_mw},
      {"power_avg_activity_mw", r.power_avg_activity_mw},
      {"power_avg_activity",
       {{"internal_mw", r.avg_internal_mw},
        {"switching_mw", r.avg_switching_mw},
        {"leakage_mw", r.avg_leakage_mw}}},
      {"ops_per_cycle", r.ops_per_cycle},
      {"tops", r.tops},
      {"tops_per_mm2", r.tops_per_mm2},
      {"tops_per_w", r.tops_per_w},
      {"activity",
       {{"kind", r.activity_kind},
        {"input", r.input_activity},
        {"nets", r.net_activity},
        {"cycles", r.activity_cycles},
        {"net_bits", r.activity_nets}}},
      {"rtl_hash", r.rtl_hash},
      {"synth_mode", r.synth_mode},
      {"fanout_buffers", r.fanout_buffers},
      {"fanout_nets", r.fanout_nets},
      {"max_fanout_before", r.max_fanout_before},
      {"tools", tool_versions()},
      {"seconds", r.seconds},
      {"library", r.library.empty() ? std::string() : cell_library(r.library).description},
      {"lib", r.library}};
  if (r.gate_check_mismatches) {
    j["gate_check"] = {{"cycles", r.gate_check_cycles}, {"mismatches", *r.gate_check_mismatches}};
  }
}

ScaledFigures scale_to_node(const PpaResult& r, const NodeScaling& s) {
  if (s.from_nm <= 0 || s.to_nm <= 0) {
    throw InputError("node scaling: nodes must be > 0 nm (got " +
                     fmt::format("{} -> {}", s.from_nm, s.to_nm) + ")");
  }
  if (s.from_vdd <= 0 || s.to_vdd <= 0) {
    throw InputError("node scaling: supply voltages must be > 0 V (got " +
                     fmt::format("{} -> {}", s.from_vdd, s.to_vdd) + ")");
  }
  if (r.clock_ns <= 0 || r.ops_per_cycle <= 0) {
    throw std::invalid_argument("scale_to_node: result without a clock or operations");
  }
  const double lambda = s.to_nm / s.from_nm;
  const double v2 = (s.to_vdd / s.from_vdd) * (s.to_vdd / s.from_vdd);
  ScaledFigures f;
  f.area_um2 = r.area_um2 * lambda * lambda;
  f.delay_ns = r.delay_ns * lambda;
  f.clock_ns = r.clock_ns * lambda;
  // Dynamic energy per cycle at the measured activity, scaled, then at the scaled clock.
  const double energy_pj_per_cycle = (r.internal_mw + r.switching_mw) * r.clock_ns;  // mW*ns = pJ
  f.power_mw = energy_pj_per_cycle * lambda * v2 / f.clock_ns;
  f.tops = r.ops_per_cycle / f.clock_ns / 1000.0;
  f.tops_per_mm2 = f.tops / (f.area_um2 * 1e-6);
  f.tops_per_w = f.power_mw > 0 ? f.tops / (f.power_mw * 1e-3) : 0;
  f.model = fmt::format(
      "classical constant-field scaling {} nm {} V -> {} nm {} V: area x {:.4g}, delay x {:.4g}, "
      "dynamic energy x {:.4g}, leakage not scaled and left out (Dennard et al., JSSC 1974; "
      "deep-submicron deviations: Stillmaker & Baas, Integration 58, 2017)",
      s.from_nm, s.from_vdd, s.to_nm, s.to_vdd, lambda * lambda, lambda, lambda * v2);
  return f;
}

void to_json(nlohmann::json& j, const ScaledFigures& f) {
  j = nlohmann::json{
      {"area_um2", f.area_um2},     {"delay_ns", f.delay_ns}, {"clock_ns", f.clock_ns},
      {"power_mw", f.power_mw},     {"tops", f.tops},         {"tops_per_mm2", f.tops_per_mm2},
      {"tops_per_w", f.tops_per_w}, {"model", f.model}};
}

}  // namespace ltc::synth
