// Power from every net's own switching, as sign-off tools compute it from a SAIF/VCD: the measured
// toggles of each net (gatesim.h) with the liberty's data (liberty.h):
//   switching  per net: toggles/s x C_load x V^2 / 2, C_load = the input-pin capacitances the net
//              drives + the output-port load + a wire-load estimate by fanout;
//   internal   per cell output: toggles/s x the internal-power energy per transition (the mean of
//              the rise and fall tables) at the net's load and the related input's slew, the arcs
//              weighted by how often each input makes the output switch (its toggles x the
//              probability that the cell's function depends on it, from the simulated duties of
//              the other inputs); per input pin with its own (passive) tables, e.g. a flip-flop's
//              clock: toggles/s x the energy per transition at the pin's slew;
//   leakage    per cell: cell_leakage_power.
// Slews: propagated through the netlist in topological order from the liberty's transition tables
// (the worst arc, rise and fall apart, by unateness) at each net's load, from ideal (0 ns) input
// ports and clock, as OpenSTA computes them without a driving cell.
// OpenSTA 2019 (2.0.17, the Debian `sta`) differs in its internal-power conventions, found with its
// power debug output and checked cell by cell in tests/synth/power_test.cpp: it charges the rise
// *plus* the fall energy per output toggle and per clock-pin toggle (2x the liberty's energy per
// transition), half a data pin's passive rise + fall energy per toggle, and sums a multi-input
// cell's arcs with a duty each (0.5, or a guess from the function's top operator) instead of
// weights that add up to 1 (up to 2x more on 4-input cells). PowerOptions::opensta_2019
// reproduces this for the cross-check; the flow's figure uses the liberty's meaning.
#pragma once

#include "synth/gatesim.h"
#include "synth/liberty.h"

#include <memory>
#include <optional>
#include <string>

namespace ltc::synth {

// Wire capacitance by fanout: the liberty's default wire_load when it has one, else an estimate
// from the technology LEF (lef_wire_load).
struct WireLoadEstimate {
  std::string description;
  LibertyWireLoad model;  // capacitance_pf(fanout)
};

// A liberty-style wire load for a library without one: a net of fanout f is f cell pitches long
// (pitch = sqrt(mean cell area) of the design), at the capacitance per um of the LEF's routing
// layer `layer` (WIDTH x CAPACITANCE CPERSQDIST + 2 x EDGECAPACITANCE). Throws when the LEF lacks
// the layer or its capacitances.
WireLoadEstimate lef_wire_load(const std::string& lef_path, const std::string& layer,
                               double mean_cell_area_um2);
// The liberty's default wire_load, if it has one.
std::optional<WireLoadEstimate> liberty_wire_load(const LibertyLibrary& lib);

struct PowerOptions {
  double clock_ns = 10;
  double output_load_pf = 0.01;               // on every output port, as in the STA run
  double vdd = 0;                             // 0: the liberty's nom_voltage
  std::optional<WireLoadEstimate> wire_load;  // none: pin capacitances only (as OpenSTA here)
  // Every net at the same activity (toggles per cycle) with duty 0.5, clocks at 2: what OpenSTA's
  // set_power_activity -global computes with. For the cross-check.
  std::optional<double> uniform_activity;
  bool opensta_2019 = false;  // OpenSTA 2019's internal-power conventions (see above)
};

struct NetPowerResult {
  double internal_mw = 0;
  double switching_mw = 0;        // nets driven by cells
  double input_switching_mw = 0;  // nets driven by the input ports and the clock (the tile's
                                  // operand and clock delivery into its pins)
  double leakage_mw = 0;
  double total_mw = 0;                     // all four
  double pin_cap_pf = 0, wire_cap_pf = 0;  // summed over all nets
  int nets = 0, cells = 0;
  std::string model;  // how it was computed: wire load, slews, activity
};

// Throws std::runtime_error naming the cell when the netlist uses a cell the liberty lacks.
NetPowerResult net_power(const NetActivity& act, const LibertyLibrary& lib,
                         const PowerOptions& opt);

// The liberty with its power data, read once per path per process.
std::shared_ptr<const LibertyLibrary> power_library(const std::string& liberty_path);

}  // namespace ltc::synth
