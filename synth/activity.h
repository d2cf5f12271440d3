// Measured switching activity and the gate-level check. The synthesized netlist is driven with
// realistic operands: LLM-like activations (Gaussian with rare large outliers), half tables
// precomputed from them, weights uniform over their codes, and the toggles of every net are
// counted. Two netlist simulators run the same stimulus files: ltc's own zero-delay gate-level
// simulator (gatesim.h, the default: seconds on a 261k-cell tile) and iverilog on the OSU cell
// models (a generated testbench dumping a VCD; hours on large tiles), which the tests use to check
// the first toggle for toggle. The same stimulus applied to the RTL must give the same outputs
// cycle by cycle (the gate-level check).
#pragma once

#include "synth/design_source.h"
#include "synth/gatesim.h"
#include "synth/yosys_flow.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ltc::synth {

struct PortDecl {
  std::string name;
  bool input = true;
  int width = 1;
};

// Hierarchical paths (below the top) of the instances of netlist-defined modules (not cells), in
// Verilog syntax ("\\g_row[0].g_col[0].u_acc "): the scopes whose nets the activity counts.
std::vector<std::string> netlist_module_instances(const std::string& netlist_text,
                                                  const std::string& top);

// The top module's ports as yosys's write_verilog declares them.
std::vector<PortDecl> parse_netlist_ports(const std::string& netlist_text, const std::string& top);

struct ActivityOptions {
  int cycles = 200;       // measured cycles
  int warmup_cycles = 8;  // after reset, not measured (pipelines fill)
  int reset_cycles = 2;
  uint64_t seed = 1;
  double timeout_s = 1800;
  // RTL simulator of the gate-level check: "verilator" (--binary --timing) or "iverilog".
  // Icarus 11 mis-simulates some of the RTL's SystemVerilog (X outputs on the lut-naive tile),
  // so Verilator is the default; the netlist (plain cells with UDPs) always runs on iverilog.
  std::string rtl_simulator = "verilator";
  // Netlist simulator: "ltc" (gatesim.h, on the JSON netlist and the liberty's cell functions) or
  // "iverilog" (the Verilog netlist with the OSU cell models).
  std::string netlist_simulator = "ltc";
  std::string liberty = kDefaultLiberty;
  std::string cell_models = kDefaultCellModels;
  // Timed activity (gatesim.h, DelayModel; ltc's simulator only): every transition counts,
  // glitches included; the zero-delay toggles come along (NetActivity::settled_toggles).
  DelayModel timing = DelayModel::kZero;
  double output_load_pf = 0.01;  // on output ports, for the liberty delays (as the STA run)
};

struct ActivityResult {
  int cycles = 0;
  int input_bits = 0, net_bits = 0;  // nets counted (bits), clock excluded
  double input_activity = 0;         // mean toggles per cycle over input-port bits
  double net_activity = 0;           // mean toggles per cycle over every other net bit
  std::string outputs_path;          // per-cycle outputs (hex), for the gate-level check
  std::string simulator;             // "ltc gatesim" or "iverilog"
  // Every net's toggles and the cells (gatesim only; null with iverilog): the per-net power.
  std::shared_ptr<const NetActivity> nets;
  double seconds = 0;
};

// Writes the stimulus files (stim_<port>.hex) for `ports` into `workdir`. Exposed for tests.
void write_stimulus(const std::vector<PortDecl>& ports, const DesignSource& src,
                    const ActivityOptions& opt, const std::string& workdir);

// Simulates the synthesized netlist (opt.netlist_simulator) on the stimulus and measures toggles:
// input-port bits and every other net bit (the clock excluded), over the measured cycles.
ActivityResult measure_activity(const DesignSource& src, const SynthResult& netlist,
                                const ActivityOptions& opt, const std::string& workdir);

// Applies the stimulus already in `workdir` to the RTL (opt.rtl_simulator, with the parameter
// overrides) and returns the path of its per-cycle outputs.
std::string simulate_rtl_outputs(const DesignSource& src, const std::vector<PortDecl>& ports,
                                 const ActivityOptions& opt, const std::string& workdir);

// Number of cycles whose outputs differ between two output files (first `max_report` listed in
// `first_diffs`); throws when the files differ in length.
int compare_outputs(const std::string& a_path, const std::string& b_path,
                    std::vector<std::string>* first_diffs = nullptr, int max_report = 3);

// Toggle statistics from VCD text: `input_names` are the input ports, `clock` is skipped.
ActivityResult count_vcd_toggles(std::istream& vcd, const std::vector<std::string>& input_names,
                                 const std::string& clock, int cycles);

}  // namespace ltc::synth
