// The NanGate 45 nm Open Cell Library as a flow option (cell_library.h, --lib nangate45): the
// shipped liberty read through gzip with its units (fF, nW, fJ) converted, numbers checked by
// hand against the file; cell delays of the timed activity from its tables by hand; the flow's
// area as the sum of the liberty's cell areas; and a whole PPA point.
#include "common/error.h"
#include "common/file_io.h"
#include "synth/cell_library.h"
#include "synth/gatesim.h"
#include "synth/liberty.h"
#include "synth/power.h"
#include "synth/ppa.h"
#include "synth/sweep.h"
#include "synth/yosys_flow.h"
#include "synth_test_util.h"

#include <gtest/gtest.h>

namespace ltc::synth {
namespace {

using test::reg_adder;
using test::scratch_dir;

const CellLibrary& nangate() {
  return cell_library("nangate45");
}

const LibertyPin& pin(const LibertyCell& c, const std::string& name) {
  for (const auto& p : c.pins) {
    if (p.name == name) return p;
  }
  throw std::runtime_error("no pin " + name);
}

TEST(NanGate45, LibraryNamesAndErrors) {
  EXPECT_EQ(cell_library_names(), (std::vector<std::string>{"osu018", "nangate45"}));
  EXPECT_EQ(nangate().node_nm, 45);
  EXPECT_EQ(nangate().vdd, 1.1);
  try {
    cell_library("tsmc28");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--lib: 'tsmc28' is not a cell library (valid: osu018, "
                                         "nangate45)"),
              std::string::npos)
        << e.what();
  }
}

// Numbers copied by hand from NangateOpenCellLibrary_typical.lib: INV_X1 area 0.532000, pin A
// rise_capacitance 1.700230 and fall_capacitance 1.549360 (fF), the ZN arc's rise_power first
// entry 1.846618 (fJ at slew 0.00117378 ns and load 0.365616 fF), cell_leakage_power 14.353185
// (nW); DFF_X1 area 4.522; wire_load 5K_hvratio_1_1: 0.1774 fF per unit length, fanout 1 is 1.7460
// long; nom_voltage 1.10.
TEST(NanGate45, LibertyNumbersByHand) {
  const auto lib = power_library(nangate().liberty);
  EXPECT_EQ(lib->name, "NangateOpenCellLibrary");
  EXPECT_DOUBLE_EQ(lib->nom_voltage, 1.1);
  EXPECT_DOUBLE_EQ(lib->cap_unit_pf, 1e-3);
  const LibertyCell& inv = lib->cells.at("INV_X1");
  EXPECT_DOUBLE_EQ(inv.area, 0.532);
  EXPECT_NEAR(pin(inv, "A").rise_capacitance, 1.700230e-3, 1e-12);
  EXPECT_NEAR(pin(inv, "A").fall_capacitance, 1.549360e-3, 1e-12);
  EXPECT_NEAR(inv.leakage_mw, 14.353185e-6, 1e-15);
  const auto& ip = pin(inv, "ZN").internal_power.at(0);
  EXPECT_EQ(ip.related_pin, "A");
  EXPECT_NEAR(ip.rise.lookup(0.365616e-3, 0.00117378), 1.846618e-3, 1e-12);  // pJ
  EXPECT_DOUBLE_EQ(lib->cells.at("DFF_X1").area, 4.522);
  ASSERT_EQ(lib->default_wire_load, "5K_hvratio_1_1");
  EXPECT_NEAR(lib->wire_loads.at("5K_hvratio_1_1").capacitance_pf(1), 1.7460 * 0.1774e-3, 1e-12);
  // State-dependent internal power (`when`) is read, not refused: AOI21_X1's A arcs.
  int conditional = 0;
  for (const auto& g : pin(lib->cells.at("AOI21_X1"), "ZN").internal_power) {
    conditional += g.related_pin == "A" && !g.when.empty();
  }
  EXPECT_EQ(conditional, 3);
  // The decompressed copy for the tools is the same text.
  EXPECT_EQ(read_text(plain_liberty(nangate().liberty)), read_liberty_text(nangate().liberty));
}

// Port a -> INV_X1 -> m -> INV_X1 -> port y (no wire load, 10 fF on the port), by hand from
// INV_X1's tables (slew index 0.00117378 / 0.00472397 ns, load index 0.365616 / 1.897810 /
// ... / 15.1825 fF): the first inverter at load (1.700230 + 1.549360) / 2 = 1.624795 fF and slew 0
// (extrapolated): cell_fall 0.0044726, cell_rise 0.0083151 -> 0.0063939 ns = 6394 fs; its slew
// (fall 0.0027230 + rise 0.0061274) / 2 = 0.0044252 ns. The second at 10 fF and that slew:
// 0.0236015 ns = 23601 fs.
TEST(NanGate45, CellDelaysFromTheTablesByHand) {
  const std::string path = scratch_dir("") + "/chain.json";
  write_text_atomic(path, R"({"modules": {"chain": {
    "ports": {"a": {"direction": "input", "bits": [2]}, "y": {"direction": "output", "bits": [4]}},
    "cells": {"i1": {"type": "INV_X1", "connections": {"A": [2], "ZN": [3]}},
              "i2": {"type": "INV_X1", "connections": {"A": [3], "ZN": [4]}}},
    "netnames": {"m": {"bits": [3]}, "y": {"bits": [4]}}}}})");
  const auto lib = power_library(nangate().liberty);
  GateSim sim(path, "chain", lib->cells);
  sim.set_timing(DelayModel::kLiberty, lib->cells, nullptr, 0.01);
  EXPECT_EQ(sim.output_delay("m"), 6394u);
  EXPECT_EQ(sim.output_delay("y"), 23601u);
}

TEST(NanGate45, AreaIsTheSumOfLibertyCellAreas) {
  const SynthResult r = run_yosys(reg_adder(8), synth_options(nangate()), scratch_dir(""));
  const auto areas = test::liberty_text_areas(read_liberty_text(nangate().liberty));
  EXPECT_DOUBLE_EQ(areas.at("DFFR_X1"), 5.32);  // by hand, as above
  double sum = 0;
  int cells = 0;
  for (const auto& [type, n] : r.cells_by_type) {
    ASSERT_TRUE(areas.count(type)) << type << " is not a NanGate cell";
    sum += areas.at(type) * n;
    cells += n;
  }
  EXPECT_NEAR(r.area_um2, sum, 1e-6 * sum);
  EXPECT_EQ(r.cells, cells);
  EXPECT_EQ(r.flip_flops, 25);  // a_q, b_q, sum_o: 8 + 8 + 9
}

// A whole point: yosys + gatesim + OpenSTA + per-net power on NanGate, zero-delay and timed.
TEST(NanGate45, PpaPointZeroDelayAndTimed) {
  PpaOptions opt;
  opt.library = "nangate45";
  opt.sim.cycles = 64;
  opt.workdir = scratch_dir("zero");
  const PpaResult z = run_ppa(reg_adder(8), 16, opt);
  EXPECT_EQ(z.library, "nangate45");
  EXPECT_GT(z.area_um2, 0);
  // A 45 nm 8-bit add between registers: a few hundred ps (osu018: a few ns).
  EXPECT_GT(z.delay_ns, 0.1);
  EXPECT_LT(z.delay_ns, 1.5);
  EXPECT_GT(z.power_mw, z.leakage_mw);
  EXPECT_DOUBLE_EQ(z.power_zero_delay_mw, z.power_mw);
  opt.sim.timing = DelayModel::kLiberty;
  opt.workdir = scratch_dir("timed");
  const PpaResult t = run_ppa(reg_adder(8), 16, opt);
  EXPECT_EQ(t.activity_timing, "liberty");
  EXPECT_DOUBLE_EQ(t.area_um2, z.area_um2);
  // The same stimulus: the settled toggles give the zero-delay run's power; glitches add to it.
  EXPECT_NEAR(t.power_zero_delay_mw, z.power_mw, 1e-9 * z.power_mw);
  EXPECT_GE(t.power_mw, t.power_zero_delay_mw);
  EXPECT_NE(t.activity_kind.find("glitches counted"), std::string::npos) << t.activity_kind;
}

TEST(NanGate45, SweepKeyNamesTheLibraryAndTiming) {
  SweepSpec spec;
  hw::TensorCoreConfig c;
  const std::string osu = point_key(spec, c, "h");
  EXPECT_EQ(osu.find("lib="), std::string::npos);  // osu018 keys as before
  EXPECT_EQ(osu.find("timing="), std::string::npos);
  spec.library = "nangate45";
  spec.timing = DelayModel::kUnit;
  const std::string ng = point_key(spec, c, "h");
  EXPECT_NE(ng.find("|lib=nangate45"), std::string::npos) << ng;
  EXPECT_NE(ng.find("|timing=unit"), std::string::npos) << ng;
  nlohmann::json j = {
      {"name", "t"},
      {"library", "nangate9"},
      {"grid", {{{"design", "lut"}, {"m", 1}, {"n", 1}, {"k", 4}, {"act", "fp16"}}}}};
  EXPECT_THROW(SweepSpec::parse(j, "t.json"), InputError);
  j["library"] = "nangate45";
  j["activity_timing"] = "liberty";
  const SweepSpec s = SweepSpec::parse(j, "t.json");
  EXPECT_EQ(s.library, "nangate45");
  EXPECT_EQ(s.timing, DelayModel::kLiberty);
}

// A sweep point on NanGate with timed activity goes through the task path (job -> run_ppa) with
// both settings, and its row says so.
TEST(NanGate45, SweepRunsThePointOnTheLibraryWithTiming) {
  const nlohmann::json j = {
      {"name", "tiny-nangate"},
      {"library", "nangate45"},
      {"activity_timing", "liberty"},
      {"cycles", 32},
      {"grid", {{{"design", "lut"}, {"m", 1}, {"n", 1}, {"k", 1}, {"act", "int8"}, {"wbits", 1}}}}};
  SweepOptions so;
  so.out_dir = scratch_dir("");
  const SweepSummary sum = run_sweep(SweepSpec::parse(j, "tiny.json"), so);
  ASSERT_EQ(sum.ok, 1) << (sum.rows.empty() ? "" : sum.rows[0].dump());
  const auto& row = sum.rows.at(0);
  EXPECT_EQ(row.value("library", ""), "nangate45");
  EXPECT_EQ(row.value("activity_timing", ""), "liberty");
  EXPECT_GE(row.value("pj_per_op", 0.0), row.value("pj_per_op_zero_delay", 1e9));
}

}  // namespace
}  // namespace ltc::synth
