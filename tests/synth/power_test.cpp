// The per-net power model (synth/power.h): a hand calculation from the osu018 liberty's tables, and
// the cross-check against OpenSTA's report_power where every net has the same activity.
#include "synth/power.h"

#include "common/file_io.h"
#include "synth/activity.h"
#include "synth/gatesim.h"
#include "synth/ppa.h"
#include "synth/sta_flow.h"
#include "synth/yosys_flow.h"
#include "synth_test_util.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

namespace ltc::synth {
namespace {

using test::scratch_dir;

const LibertyLibrary& osu018() {
  return *power_library(kDefaultLiberty);
}

// Nodes 0 and 1 are the constants, as in gatesim.
NetActivity two_cell_design() {
  NetActivity a;
  a.cycles = 10;
  // 2 a (input), 3 y (output of INVX1), 4 clk, 5 d (input), 6 q (DFFPOSX1 Q, output port).
  a.toggles = {0, 0, 10, 10, 20, 5, 5};
  a.high_fraction = {0, 1, 0.5, 0.5, 0.5, 0.5, 0.5};
  a.cells.push_back({"DFFPOSX1", {4, 5}, {6}});  // pins in liberty order: CLK, D; Q
  a.cells.push_back({"INVX1", {2}, {3}});
  a.input_nodes = {2, 5};
  a.clock_nodes = {4};
  a.output_nodes = {3, 6};
  return a;
}

TEST(NetPower, MatchesAHandCalculationFromTheLibertyTables) {
  PowerOptions o;
  o.clock_ns = 10;
  o.output_load_pf = 0.0125;  // a breakpoint of the energy tables' load axis
  const NetPowerResult r = net_power(two_cell_design(), osu018(), o);
  // osu018_stdcells.lib, input slews 0 ns (ideal ports and clock) extrapolated linearly from the
  // first two breakpoints of the slew axis (0.06, 0.18 -> 1.5 v0 - 0.5 v1; 0.06, 0.24 -> (4 v0 -
  // v1) / 3); energies in pJ per transition, per-toggle energy = (rise + fall) / 2.
  // INVX1 Y from A at 0.0125 pF: rise 1.5 * 0.023165 - 0.5 * 0.028621, fall 1.5 * 0.009047 -
  // 0.5 * 0.005677; 1 toggle per cycle.
  const double inv = ((1.5 * 0.023165 - 0.5 * 0.028621) + (1.5 * 0.009047 - 0.5 * 0.005677)) / 2;
  // DFFPOSX1 CLK pin (2 toggles per cycle): rise (4 * 0.006865 - 0.006943) / 3, fall
  // (4 * 0.11034 - 0.129769) / 3; D pin (0.5 per cycle): rise 1.5 * 0.045424 - 0.5 * 0.045977,
  // fall 1.5 * 0.08841 - 0.5 * 0.087952; Q from CLK at 0.0125 pF (0.5 per cycle): rise
  // (4 * 0.041217 - 0.062027) / 3, fall (4 * 0.063395 - 0.075613) / 3.
  const double clk = ((4 * 0.006865 - 0.006943) / 3 + (4 * 0.11034 - 0.129769) / 3) / 2 * 2;
  const double d = ((1.5 * 0.045424 - 0.5 * 0.045977) + (1.5 * 0.08841 - 0.5 * 0.087952)) / 2 * 0.5;
  const double q = ((4 * 0.041217 - 0.062027) / 3 + (4 * 0.063395 - 0.075613) / 3) / 2 * 0.5;
  EXPECT_NEAR(r.internal_mw, (inv + clk + d + q) / 10, 1e-9);  // pJ per cycle / 10 ns = mW
  // Switching, C V^2 / 2 per toggle at 1.8 V: y and q drive the 0.0125 pF port loads.
  const double v2 = 1.8 * 1.8;
  EXPECT_NEAR(r.switching_mw, 0.5 * 0.0125 * v2 * (1.0 + 0.5) / 10, 1e-12);
  // The ports' nets: a -> INVX1.A (0.00932456 pF), d -> D (0.00882947), clk -> CLK (0.0279235).
  EXPECT_NEAR(r.input_switching_mw,
              0.5 * v2 * (0.00932456 * 1.0 + 0.00882947 * 0.5 + 0.0279235 * 2.0) / 10, 1e-12);
  EXPECT_NEAR(r.leakage_mw, (0.0221741 + 0.160725) * 1e-6, 1e-15);  // nW
  EXPECT_NEAR(r.total_mw, r.internal_mw + r.switching_mw + r.input_switching_mw + r.leakage_mw,
              1e-15);
}

TEST(NetPower, QuietNetsCostNothingButLeakage) {
  NetActivity a = two_cell_design();
  std::fill(a.toggles.begin(), a.toggles.end(), 0.0);
  PowerOptions o;
  const NetPowerResult r = net_power(a, osu018(), o);
  EXPECT_EQ(r.internal_mw, 0);
  EXPECT_EQ(r.switching_mw + r.input_switching_mw, 0);
  EXPECT_GT(r.leakage_mw, 0);
}

TEST(NetPower, WireLoadAddsCapacitanceByFanout) {
  const auto w = lef_wire_load(kDefaultLef, "metal2", 64.0);
  // metal2: WIDTH 0.3 x CPERSQDIST 1.9e-05 + 2 x EDGECAPACITANCE 6e-05 pF/um, 8 um per fanout.
  EXPECT_NEAR(w.model.capacitance_pf(3), 3 * 8.0 * (0.3 * 1.9e-5 + 2 * 6e-5), 1e-12);
  PowerOptions o;
  const NetPowerResult bare = net_power(two_cell_design(), osu018(), o);
  o.wire_load = w;
  const NetPowerResult wired = net_power(two_cell_design(), osu018(), o);
  EXPECT_NEAR(wired.wire_cap_pf, 5 * w.model.capacitance_pf(1), 1e-12);  // five nets, fanout 1
  EXPECT_GT(wired.switching_mw, bare.switching_mw);
  EXPECT_THROW(lef_wire_load(kDefaultLef, "metal9", 64.0), std::runtime_error);
}

TEST(NetPower, UnknownCellIsAnError) {
  NetActivity a = two_cell_design();
  a.cells[1].type = "NOSUCHCELL";
  EXPECT_THROW(net_power(a, osu018(), PowerOptions{}), std::runtime_error);
}

// Every net at activity 0.1 (OpenSTA's set_power_activity -global) with OpenSTA 2019's
// conventions: the model and report_power must agree within a few percent on a real netlist.
void expect_agrees_with_opensta(const DesignSource& src, const std::vector<std::string>& keep,
                                double tolerance) {
  const auto dir = scratch_dir(src.top);
  SynthOptions so;
  so.keep_modules = keep;
  const SynthResult syn = run_yosys(src, so, dir);
  StaOptions sta;
  sta.clock_ns = 10;
  sta.global_activity = 0.1;
  sta.input_activity = 0.1;
  const StaResult st = run_sta(syn.netlist, src.top, src.clock_port, sta, dir);
  GateSim sim(syn.json_netlist, src.top, osu018().cells);
  std::vector<std::string> inputs;
  for (const auto& p : parse_netlist_ports(read_text(syn.netlist), src.top)) {
    if (p.input && p.name != src.clock_port) inputs.push_back(p.name);
  }
  const NetActivity act = sim.net_activity(inputs, {src.clock_port}, 1);
  PowerOptions o;
  o.clock_ns = 10;
  o.output_load_pf = sta.output_load_pf;
  o.uniform_activity = 0.1;
  o.opensta_2019 = true;
  const NetPowerResult r = net_power(act, osu018(), o);
  const double ours = r.internal_mw + r.switching_mw + r.leakage_mw;  // OpenSTA: no port nets
  fmt::print(
      "{}: per-net model {:.6f} mW (internal {:.6f}, switching {:.6f}), OpenSTA {:.6f} mW "
      "(internal {:.6f}, switching {:.6f}): {:+.2f}%\n",
      src.top, ours, r.internal_mw, r.switching_mw, st.total_mw, st.internal_mw, st.switching_mw,
      100 * (ours / st.total_mw - 1));
  EXPECT_NEAR(r.switching_mw, st.switching_mw, 0.01 * st.switching_mw);
  EXPECT_NEAR(r.leakage_mw, st.leakage_mw, 1e-4 * st.leakage_mw);
  EXPECT_NEAR(ours, st.total_mw, tolerance * st.total_mw);
  EXPECT_NEAR(r.internal_mw, st.internal_mw, tolerance * st.internal_mw);
}

TEST(NetPower, AgreesWithOpenStaAtOneActivityOnTheTestAdder) {
  expect_agrees_with_opensta(test::reg_adder(16), {}, 0.03);
}

TEST(NetPower, AgreesWithOpenStaAtOneActivityOnALutTile) {
  // The DP4 sweep's LUT unit: M1N1K4 W_INT1 A_FP16, flattened.
  const auto config = hw::TensorCoreConfig::make(
      hw::TensorCoreDesign::kLut, golden::LmmaShape{1, 1, 4}, golden::DType::kFp16, 1);
  expect_agrees_with_opensta(design_source(config), {}, 0.03);
}

}  // namespace
}  // namespace ltc::synth

namespace ltc::synth {
namespace {

// One instance of every cell with its inputs on ports and its outputs on ports (0.01 pF), every
// net at activity 0.1 (a flip-flop's clock pin on the clock): the model's per-cell internal,
// switching and leakage power against report_power's, with OpenSTA 2019's conventions.
TEST(NetPower, EveryCellAgreesWithOpenSta) {
  const auto dir = scratch_dir("");
  int checked = 0;
  for (const auto& [name, cell] : osu018().cells) {
    bool tristate = false;
    std::string clock = "clk_i";
    for (const auto& p : cell.pins) {
      tristate |= !p.three_state.empty();
      if (p.clock) clock = "p_" + p.name;
    }
    if (cell.has_latch || tristate) continue;  // gatesim maps neither; Yosys's flow uses neither
    std::string ports, decl, conns;
    NetActivity a;
    a.cycles = 1;
    NetActivity::Cell c{name, {}, {}};
    uint32_t node = 2;
    if (clock == "clk_i") {
      ports = "clk_i";
      decl = "  input clk_i;\n";
      a.clock_nodes = {node++};
    }
    for (const auto& p : cell.pins) {
      const std::string port = "p_" + p.name;
      ports += std::string(ports.empty() ? "" : ", ") + port;
      decl += std::string(p.input ? "  input " : "  output ") + port + ";\n";
      conns += std::string(conns.empty() ? "" : ", ") + "." + p.name + "(" + port + ")";
      if (p.input) {
        c.in.push_back(node);
        (port == clock ? a.clock_nodes : a.input_nodes).push_back(node);
      } else {
        c.out.push_back(node);
        a.output_nodes.push_back(node);
      }
      ++node;
    }
    a.toggles.assign(node, 0);
    a.high_fraction.assign(node, 0.5);
    a.cells.push_back(c);
    std::ofstream(dir + "/" + name + ".v")
        << "module top (" << ports << ");\n"
        << decl << "  " << name << " u (" << conns << ");\nendmodule\n";
    StaOptions sta;
    sta.clock_ns = 10;
    sta.global_activity = 0.1;
    sta.input_activity = 0.1;
    const StaResult st = run_sta(dir + "/" + name + ".v", "top", clock, sta, dir);
    PowerOptions o;
    o.clock_ns = 10;
    o.uniform_activity = 0.1;
    o.opensta_2019 = true;
    const NetPowerResult r = net_power(a, osu018(), o);
    // report_power prints 7 significant digits.
    EXPECT_NEAR(r.internal_mw, st.internal_mw, 2e-6 * st.internal_mw) << name;
    EXPECT_NEAR(r.switching_mw, st.switching_mw, 2e-6 * st.switching_mw) << name;
    EXPECT_NEAR(r.leakage_mw, st.leakage_mw, 2e-6 * st.leakage_mw) << name;
    ++checked;
  }
  EXPECT_GE(checked, 28);
}

}  // namespace
}  // namespace ltc::synth
