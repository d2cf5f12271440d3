// ltc's gate-level simulator and the liberty reader under it: liberty Boolean functions against
// hand truth tables, the OSU cells' logic, a hand netlist clocked cycle by cycle with its toggles
// counted by hand, and the netlist errors (loop, two drivers, unknown cell) named clearly. The
// comparison with iverilog on real tiles is in tensor_core_test.cpp.
#include "synth/gatesim.h"
#include "common/file_io.h"
#include "synth/liberty.h"
#include "synth/yosys_flow.h"
#include "synth_test_util.h"

#include <gtest/gtest.h>

namespace ltc::synth {
namespace {

using test::scratch_dir;

std::vector<uint8_t> table(const std::string& f, const std::vector<std::string>& vars) {
  return BoolExpr::parse(f, vars).truth_table(static_cast<int>(vars.size()));
}

TEST(BoolExpr, LibertyOperatorsAndPrecedence) {
  // Index bit 0 = A, bit 1 = B, bit 2 = C.
  EXPECT_EQ(table("(A B)", {"A", "B"}), (std::vector<uint8_t>{0, 0, 0, 1}));
  EXPECT_EQ(table("A&B", {"A", "B"}), table("A*B", {"A", "B"}));
  EXPECT_EQ(table("!(A+B)", {"A", "B"}), (std::vector<uint8_t>{1, 0, 0, 0}));
  EXPECT_EQ(table("(A|B)'", {"A", "B"}), (std::vector<uint8_t>{1, 0, 0, 0}));
  EXPECT_EQ(table("A^B", {"A", "B"}), (std::vector<uint8_t>{0, 1, 1, 0}));
  // AND binds tighter than OR: A + B C = A | (B & C).
  EXPECT_EQ(table("A + B C", {"A", "B", "C"}), (std::vector<uint8_t>{0, 1, 0, 1, 0, 1, 1, 1}));
  EXPECT_EQ(table("A' B", {"A", "B"}), (std::vector<uint8_t>{0, 0, 1, 0}));
  EXPECT_EQ(table("1", {"A"}), (std::vector<uint8_t>{1, 1}));
}

TEST(BoolExpr, ErrorsNameTheExpressionAndPosition) {
  try {
    BoolExpr::parse("(A B", {"A", "B"});
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("missing ')'"), std::string::npos) << e.what();
  }
  try {
    BoolExpr::parse("A & Q", {"A", "B"});
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown pin or variable 'Q'"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("position 5"), std::string::npos) << e.what();
  }
}

TEST(Liberty, OsuCellsHaveTheirLogic) {
  const auto cells = read_liberty_cells(kDefaultLiberty);
  ASSERT_TRUE(cells.count("NAND2X1"));
  auto out_table = [&](const std::string& cell, const std::string& pin) {
    const LibertyCell& c = cells.at(cell);
    std::vector<std::string> ins;
    std::string f;
    for (const auto& p : c.pins) {
      if (p.input) ins.push_back(p.name);
      if (p.name == pin) f = p.function;
    }
    return table(f, ins);
  };
  EXPECT_EQ(out_table("NAND2X1", "Y"), (std::vector<uint8_t>{1, 1, 1, 0}));
  // Full adder, inputs A B C: carry = majority, sum = parity.
  for (uint32_t i = 0; i < 8; ++i) {
    const int ones = __builtin_popcount(i);
    EXPECT_EQ(out_table("FAX1", "YC")[i], ones >= 2 ? 1 : 0) << i;
    EXPECT_EQ(out_table("FAX1", "YS")[i], ones % 2) << i;
  }
  // MUX2X1 is inverting: Y = !(S ? A : B).
  const LibertyCell& mux = cells.at("MUX2X1");
  std::vector<std::string> mux_in;
  for (const auto& p : mux.pins) {
    if (p.input) mux_in.push_back(p.name);
  }
  const auto mt = out_table("MUX2X1", "Y");
  for (uint32_t i = 0; i < 8; ++i) {
    std::map<std::string, int> v;
    for (size_t k = 0; k < mux_in.size(); ++k) v[mux_in[k]] = (i >> k) & 1;
    EXPECT_EQ(mt[i], v["S"] ? !v["A"] : !v["B"]) << i;
  }
  const LibertyCell& dffsr = cells.at("DFFSR");
  EXPECT_TRUE(dffsr.has_ff);
  EXPECT_EQ(dffsr.ff.clocked_on, "CLK");
  EXPECT_EQ(dffsr.ff.clear, "(!R)");
  EXPECT_EQ(dffsr.ff.preset, "(!S)");
  EXPECT_TRUE(cells.at("LATCH").has_latch);
  EXPECT_FALSE(cells.at("TBUFX1").pins.back().three_state.empty());
}

TEST(Liberty, SyntaxErrorNamesFileAndLine) {
  try {
    parse_liberty_cells("library(x) {\n  cell (A) {\n    area : 1 ;\n    pin (Y) {\n  }\n",
                        "bad.lib");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.lib:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not closed"), std::string::npos) << e.what();
  }
}

// y = !q, q <= a ^ b on the rising clock (Yosys's mapping of a tiny module, in its JSON form).
const char* kToggleNetlist = R"({"modules": {"t": {
  "ports": {"clk": {"direction": "input", "bits": [2]}, "a": {"direction": "input", "bits": [3]},
            "b": {"direction": "input", "bits": [4]}, "y": {"direction": "output", "bits": [5]}},
  "cells": {
    "inv": {"type": "INVX1", "connections": {"A": [6], "Y": [5]}},
    "x": {"type": "XOR2X1", "connections": {"A": [4], "B": [3], "Y": [7]}},
    "ff": {"type": "DFFPOSX1", "connections": {"CLK": [2], "D": [7], "Q": [6]}}}}}})";

std::string write_netlist(const std::string& name, const std::string& text) {
  const std::string path = scratch_dir(name) + "/n.json";
  write_text_atomic(path, text);
  return path;
}

TEST(GateSim, ClocksAFlopAndCountsTogglesByHand) {
  const auto lib = read_liberty_cells(kDefaultLiberty);
  GateSim sim(write_netlist("", kToggleNetlist), "t", lib);
  EXPECT_EQ(sim.cells(), 3);
  EXPECT_EQ(sim.flip_flops(), 1);
  EXPECT_EQ(sim.output("y"), std::vector<uint8_t>{1});  // q = 0 after power-up
  sim.count_toggles(true);
  // Cycle 1: a=1, b=0 -> xor 1; clock -> q 1, y 0.
  sim.set_input("a", {1});
  sim.step();
  sim.set_input("clk", {1});
  sim.step();
  EXPECT_EQ(sim.output("y"), std::vector<uint8_t>{0});
  sim.set_input("clk", {0});
  sim.step();
  // Cycle 2: a=1, b=1 -> xor 0; clock -> q 0, y 1. Setting a and b in the same step: no glitch.
  sim.set_input("b", {1});
  sim.step();
  sim.set_input("clk", {1});
  sim.step();
  EXPECT_EQ(sim.output("y"), std::vector<uint8_t>{1});
  const auto s = sim.toggle_sums({"clk", "a", "b"}, {"clk"});
  // Inputs a (1 toggle) and b (1); nets: xor out 0->1->0 (2), q 0->1->0 (2), y 1->0->1 (2).
  EXPECT_EQ(s.input_bits, 2);
  EXPECT_EQ(s.input_toggles, 2u);
  EXPECT_EQ(s.net_bits, 3);
  EXPECT_EQ(s.net_toggles, 6u);
}

TEST(GateSim, NamesLoopsDoubleDriversAndUnknownCells) {
  const auto lib = read_liberty_cells(kDefaultLiberty);
  const std::string loop = R"({"modules": {"t": {
    "ports": {"y": {"direction": "output", "bits": [2]}},
    "cells": {"i1": {"type": "INVX1", "connections": {"A": [2], "Y": [3]}},
              "i2": {"type": "INVX1", "connections": {"A": [3], "Y": [2]}}}}}})";
  const std::string two = R"({"modules": {"t": {
    "ports": {"a": {"direction": "input", "bits": [2]}, "y": {"direction": "output", "bits": [3]}},
    "cells": {"i1": {"type": "INVX1", "connections": {"A": [2], "Y": [3]}},
              "i2": {"type": "BUFX2", "connections": {"A": [2], "Y": [3]}}}}}})";
  const std::string unknown = R"({"modules": {"t": {
    "ports": {"a": {"direction": "input", "bits": [2]}, "y": {"direction": "output", "bits": [3]}},
    "cells": {"i1": {"type": "NAND9X9", "connections": {"A": [2], "Y": [3]}}}}}})";
  auto error_of = [&](const std::string& name, const std::string& text) {
    try {
      GateSim sim(write_netlist(name, text), "t", lib);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("loop", loop).find("combinational loop through cell i"), std::string::npos)
      << error_of("loop", loop);
  EXPECT_NE(error_of("two", two).find("net driven twice"), std::string::npos);
  EXPECT_NE(error_of("unknown", unknown).find("NAND9X9 is not in the liberty"), std::string::npos);
  EXPECT_NE(error_of("json", "{not json").find("not a Yosys JSON netlist"), std::string::npos);
}

}  // namespace
}  // namespace ltc::synth
