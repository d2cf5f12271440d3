// One design point through the whole flow: Yosys synthesis, measured switching activity,
// OpenSTA timing and power, and the derived figures the paper reports
// (docs/published-figures.md#ppa):
//   ops/cycle (TensorCoreConfig::ops_per_cycle), TOPS = ops/cycle x f, TOPS/mm^2, TOPS/W.
// Absolute numbers are for the chosen cell library (cell_library.h: OSU 0.18 um or NanGate
// 45 nm); ratios between designs are what compares with the paper's 28 nm figures.
#pragma once

#include "model/hw/tensor_core.h"
#include "synth/activity.h"
#include "synth/cell_library.h"
#include "synth/design_source.h"
#include "synth/sta_flow.h"
#include "synth/yosys_flow.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>

namespace ltc::synth {

enum class ActivityMode : uint8_t {
  kMeasured,  // gate-level simulation: input-port average + average over all other nets
  kAssumed,   // fixed defaults (no simulation): 0.1 toggles/cycle on nets, 0.5 on inputs
};

struct PpaOptions {
  // Clock for power and the derived figures; 0 = the design's own maximum (1 / critical path).
  double clock_ns = 0;
  double timing_clock_ns = 10;  // period of the STA run when clock_ns is 0
  ActivityMode activity = ActivityMode::kMeasured;
  ActivityOptions sim;      // cycles, seed, timeout of the activity simulation
  bool gate_check = false;  // also simulate the RTL and compare outputs cycle by cycle
  // The cell library (cell_library.h: osu018, nangate45): its liberty, cells and, when the liberty
  // has no wire_load, the LEF routing layer of the wire-load estimate (power.h, lef_wire_load).
  std::string library = "osu018";
  std::string workdir;  // where scripts, logs and netlists go (required)
  double tool_timeout_s = 3600;
  // Tiles with at least this many units (M*N) keep their per-unit modules as hierarchy
  // (kUnitModules): synthesized once instead of M*N times, minutes instead of hours for an
  // M2N64K4 tile, at a few percent of area (no optimization across the unit boundary; measured
  // +7% on an M1N4K4 FP16 LUT tile). Smaller tiles are flattened whole. 0: always flatten.
  int hierarchical_from_units = 16;
  std::vector<std::string> keep_modules;  // for run_ppa(DesignSource): modules kept as hierarchy
  // Timing-driven synthesis (yosys_flow.h): ABC's delay target (1 ps: as fast as it maps, with its
  // buffering and gate sizing; 0: area mapping, no buffers) and the fanout limit of the buffering
  // pass across kept modules (fanout_buffer.h; 0: off).
  double delay_target_ps = 1;
  int max_fanout = 16;
};

// The per-unit modules of the rtl/ tiles (LUT lookup, accumulator, plane scaling, ADD and MAC
// units). Keeping ltc_lut_unit matters at K = 8: its 128-entry mux flattened 64 times took Yosys
// ~6 min on an M2N32K8 tile.
inline const std::vector<std::string> kUnitModules = {
    "ltc_lut_unit", "ltc_accumulator", "ltc_plane_scale", "ltc_add_unit", "ltc_mac_unit"};

// The modules a tensor-core point keeps as hierarchy under `opt` (empty: flattened whole).
std::vector<std::string> kept_modules(const hw::TensorCoreConfig& config, const PpaOptions& opt);

struct PpaResult {
  std::string id;
  std::string library;  // cell_library.h name
  double area_um2 = 0;
  int cells = 0, flip_flops = 0;
  std::map<std::string, int> cells_by_type;
  double delay_ns = 0;  // critical path incl. setup
  double fmax_mhz = 0;
  double clock_ns = 0;  // the period power and throughput are taken at
  // The flow's power (power.h): every net's measured toggles with its own load and slew; the
  // switching of the nets the input ports and the clock drive (operand and clock delivery into
  // the tile's pins) is part of switching_mw and also given alone. Without per-net activity
  // (assumed activity, or the iverilog netlist simulator), OpenSTA's figure.
  double power_mw = 0, internal_mw = 0, switching_mw = 0, leakage_mw = 0;
  double input_switching_mw = 0;
  std::string power_model;  // how power_mw was computed
  // With timed activity (PpaOptions::sim.timing): power_mw counts every transition, glitches
  // too; this is the same model on the zero-delay toggles of the same simulation.
  std::string activity_timing = "zero";  // gatesim.h DelayModel name
  double power_zero_delay_mw = 0;
  // OpenSTA's report_power with one average activity for all nets (and one for the inputs).
  double power_avg_activity_mw = 0, avg_internal_mw = 0, avg_switching_mw = 0, avg_leakage_mw = 0;
  double ops_per_cycle = 0;
  double tops = 0, tops_per_mm2 = 0, tops_per_w = 0;
  std::string activity_kind;  // how OpenSTA received activity
  double input_activity = 0, net_activity = 0;
  int activity_cycles = 0, activity_nets = 0;
  std::optional<int> gate_check_mismatches;  // when PpaOptions::gate_check
  int gate_check_cycles = 0;
  std::string rtl_hash;
  std::string synth_mode;                   // "flat" or "units kept: ...", and the mapping
  int fanout_buffers = 0, fanout_nets = 0;  // inserted by the fanout pass (in area_um2, cells)
  int max_fanout_before = 0;
  std::map<std::string, double> seconds;  // per stage: yosys, activity, sta, gate_check, total
  std::string workdir;
};

// Tool versions ({"yosys": "...", "sta": "...", "iverilog": "..."}), probed once per process.
const nlohmann::json& tool_versions();

// Runs the flow for `src`; `ops_per_cycle` feeds the derived figures. Throws std::runtime_error
// when a tool fails (message with the tool's error lines and the log path).
PpaResult run_ppa(const DesignSource& src, double ops_per_cycle, const PpaOptions& opt);

// The flow for a tensor-core design point, synthesizing the RTL that rtl/rtl_design.h maps it to.
PpaResult run_ppa(const hw::TensorCoreConfig& config, const PpaOptions& opt);

// The RTL sources, top and parameters of a design point (rtl/rtl_design.h), with port roles for
// realistic stimulus. Throws InputError when the RTL does not implement the point.
DesignSource design_source(const hw::TensorCoreConfig& config);

void to_json(nlohmann::json& j, const PpaResult& r);

// Optional scaling of the derived figures to another process node, classical constant-field
// (Dennard) scaling with the supply as given: lambda = to_nm / from_nm; area x lambda^2, gate
// delay x lambda, switched capacitance x lambda so dynamic energy per operation
// x lambda * (to_vdd / from_vdd)^2; leakage is not scaled (it is left out of the scaled power:
// at 180 nm it is < 0.01% here, at deep-submicron nodes it is not, and no classical rule holds).
// Classical scaling misses deep-submicron effects by large factors (Stillmaker & Baas,
// "Scaling equations for the accurate prediction of CMOS device performance from 180 nm to
// 7 nm", Integration 58, 2017): use the scaled figures for orders of magnitude; ratios between
// designs do not change under any uniform scaling.
struct NodeScaling {
  double from_nm = 180, from_vdd = 1.8;  // the result's library (CellLibrary node_nm, vdd)
  double to_nm = 0, to_vdd = 0;          // to_nm 0: no scaling
};
struct ScaledFigures {
  double area_um2 = 0, delay_ns = 0, clock_ns = 0, power_mw = 0;
  double tops = 0, tops_per_mm2 = 0, tops_per_w = 0;
  std::string model;  // the formula and citation, printed with the figures
};
// Throws InputError on non-positive nodes or voltages. Power is dynamic power at the scaled
// clock: (internal + switching at r.clock_ns) x lambda x (V'/V)^2 x (r.clock_ns / scaled clock).
ScaledFigures scale_to_node(const PpaResult& r, const NodeScaling& s);
void to_json(nlohmann::json& j, const ScaledFigures& f);

}  // namespace ltc::synth
