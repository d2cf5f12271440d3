// Switching activity and the gate-level check: VCD toggle counting against hand counts, the
// measured activity of the test adder against its stimulus, netlist vs RTL outputs.
#include "synth/activity.h"
#include "common/file_io.h"
#include "model/golden/dtype.h"
#include "synth/yosys_flow.h"
#include "synth_test_util.h"

#include "tests/test_seed.h"

#include <gtest/gtest.h>

#include <sstream>

namespace ltc::synth {
namespace {

using test::reg_adder;
using test::scratch_dir;

TEST(VcdToggles, CountsBitTransitionsPerCycleByHand) {
  // Over 4 cycles: input a (2 bits) toggles 0->3->0 = 4 bit toggles; net n (1 bit) toggles
  // 0->1->0->1->0 = 4 times; x -> 1 does not count; the clock is skipped; an alias id is counted
  // once.
  const std::string vcd =
      "$timescale 1ps $end\n$scope module tb $end\n$scope module dut $end\n"
      "$var wire 1 ! clk_i $end\n$var wire 2 \" a [1:0] $end\n$var wire 1 # n $end\n"
      "$var wire 1 # n_alias $end\n$var wire 1 $ m $end\n"
      "$upscope $end\n$upscope $end\n$enddefinitions $end\n"
      "#0\n$dumpvars\n0!\nb0 \"\n0#\nx$\n$end\n"
      "#5\n1!\nb11 \"\n1#\n1$\n#10\n0!\n0#\n#15\n1!\nb0 \"\n1#\n#20\n0!\n#25\n1!\n0#\n";
  std::istringstream in(vcd);
  const ActivityResult r = count_vcd_toggles(in, {"a"}, "clk_i", 4);
  EXPECT_EQ(r.input_bits, 2);
  EXPECT_EQ(r.net_bits, 2);  // n and m
  EXPECT_DOUBLE_EQ(r.input_activity, 4.0 / 2 / 4);
  EXPECT_DOUBLE_EQ(r.net_activity, 4.0 / 2 / 4);
}

TEST(VcdToggles, DumpOffHidesChanges) {
  const std::string vcd =
      "$scope module tb $end\n$scope module dut $end\n$var wire 1 ! n $end\n$upscope $end\n"
      "$upscope $end\n$enddefinitions $end\n"
      "#0\n$dumpvars\n0!\n$end\n$dumpoff\nx!\n$end\n#10\n$dumpon\n1!\n$end\n#20\n0!\n";
  std::istringstream in(vcd);
  EXPECT_DOUBLE_EQ(count_vcd_toggles(in, {}, "clk", 1).net_activity, 1.0);
}

TEST(NetlistPorts, ReadsDirectionsAndWidths) {
  const auto ports = parse_netlist_ports(
      "module top(clk_i, a_i, y_o);\n  input clk_i;\n  input [7:0] a_i;\n  output [8:0] y_o;\n"
      "  wire x;\nendmodule\n",
      "top");
  ASSERT_EQ(ports.size(), 3u);
  EXPECT_EQ(ports[1].name, "a_i");
  EXPECT_EQ(ports[1].width, 8);
  EXPECT_FALSE(ports[2].input);
  EXPECT_EQ(ports[2].width, 9);
}

TEST(NetlistPorts, FindsInstancesOfNetlistModulesButNotCells) {
  const std::string netlist =
      "module \\$paramod$ab\\unit (a, y);\n  input a;\n  output y;\n  INVX1 _1_ (\n"
      "    .A(a),\n    .Y(y)\n  );\nendmodule\n"
      "module top(a, y);\n  input [1:0] a;\n  output [1:0] y;\n"
      "  \\$paramod$ab\\unit  \\g[0].u  (\n    .a(a[0]),\n    .y(y[0])\n  );\n"
      "  \\$paramod$ab\\unit  \\g[1].u  (\n    .a(a[1]),\n    .y(y[1])\n  );\n"
      "  BUFX2 _2_ (\n    .A(a[0]),\n    .Y(x)\n  );\nendmodule\n";
  const auto paths = netlist_module_instances(netlist, "top");
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_EQ(paths[0], "\\g[0].u ");
  EXPECT_EQ(paths[1], "\\g[1].u ");
}

TEST(Activity, RandomOperandsToggleHalfTheInputBits) {
  const auto dir = scratch_dir("");
  const DesignSource src = reg_adder(8);
  const SynthResult syn = run_yosys(src, SynthOptions{}, dir);
  ActivityOptions opt;
  opt.cycles = 400;
  opt.seed = uint32_t(ltc::test_support::test_seed(7));
  const ActivityResult r = measure_activity(src, syn, opt, dir);
  // 16 random data bits toggle with probability 1/2 per cycle; rst_ni and valid_i stay put:
  // 16 * 0.5 / 18 input bits.
  EXPECT_EQ(r.input_bits, 18);
  EXPECT_NEAR(r.input_activity, 8.0 / 18, 0.03) << ltc::test_support::seed_note(opt.seed);
  EXPECT_GT(r.net_activity, 0.1);
  EXPECT_LT(r.net_activity, 1.0);
}

TEST(GateLevel, NetlistMatchesRtlOnRandomVectors) {
  const auto dir = scratch_dir("");
  const DesignSource src = reg_adder(6);
  const SynthResult syn = run_yosys(src, SynthOptions{}, dir);
  ActivityOptions opt;
  opt.cycles = 200;
  opt.seed = uint32_t(ltc::test_support::test_seed(11));
  const ActivityResult act = measure_activity(src, syn, opt, dir);
  const auto ports = parse_netlist_ports(read_text(syn.netlist), src.top);
  const std::string rtl = simulate_rtl_outputs(src, ports, opt, dir);
  std::vector<std::string> diffs;
  EXPECT_EQ(compare_outputs(act.outputs_path, rtl, &diffs), 0)
      << ltc::test_support::seed_note(opt.seed);
}

TEST(GateLevel, DetectsADifferentDesign) {
  const auto dir = scratch_dir("");
  const DesignSource adder = reg_adder(6);
  const SynthResult syn = run_yosys(adder, SynthOptions{}, dir);
  ActivityOptions opt;
  opt.cycles = 50;
  const ActivityResult act = measure_activity(adder, syn, opt, dir);
  const auto ports = parse_netlist_ports(read_text(syn.netlist), adder.top);
  opt.rtl_simulator = "iverilog";
  const std::string rtl = simulate_rtl_outputs(reg_adder(6, "reg_subber"), ports, opt, dir);
  EXPECT_GT(compare_outputs(act.outputs_path, rtl), 25);
}

TEST(Stimulus, TablesArePrecomputedFromInt8Activations) {
  // K = 2 half table of int16 entries: H0 = -a0 - a1, H1 = a0 - a1, so a0 = (H1 - H0) / 2 and
  // a1 = -(H0 + H1) / 2 must be int8 values, and the draws must not all be equal.
  const auto dir = scratch_dir("");
  DesignSource src;
  src.top = "x";
  PortStimulus t{"tab_i", PortRole::kTable};
  t.dtype = golden::DType::kInt16;
  t.act_dtype = golden::DType::kInt8;
  t.table_k = 2;
  src.ports = {t};
  ActivityOptions opt;
  opt.cycles = 50;
  opt.seed = uint32_t(ltc::test_support::test_seed(3));
  write_stimulus({{"tab_i", true, 64}}, src, opt, dir);  // two tables of two entries
  std::istringstream in(read_text(dir + "/stim_tab_i.hex"));
  std::string hex;
  int lines = 0, distinct_a0 = 0, last_a0 = 1000;
  while (in >> hex) {
    ASSERT_EQ(hex.size(), 16u);
    const uint64_t v = std::stoull(hex, nullptr, 16);
    for (int table = 0; table < 2; ++table) {
      const int h0 = static_cast<int16_t>((v >> (32 * table)) & 0xffff);
      const int h1 = static_cast<int16_t>((v >> (32 * table + 16)) & 0xffff);
      ASSERT_EQ((h1 - h0) % 2, 0) << hex;
      const int a0 = (h1 - h0) / 2, a1 = -(h0 + h1) / 2;
      EXPECT_GE(a0, -128);
      EXPECT_LE(a0, 127);
      EXPECT_GE(a1, -128);
      EXPECT_LE(a1, 127);
      if (a0 != last_a0) ++distinct_a0;
      last_a0 = a0;
    }
    ++lines;
  }
  EXPECT_EQ(lines, opt.reset_cycles + opt.warmup_cycles + opt.cycles);
  EXPECT_GT(distinct_a0, lines);  // activations change every beat
}

TEST(Stimulus, FirstAndLastFrameEveryPeriodBeats) {
  const auto dir = scratch_dir("");
  DesignSource src;
  src.top = "x";
  PortStimulus first{"first_i", PortRole::kFirst}, last{"last_i", PortRole::kLast};
  first.period = last.period = 3;
  src.ports = {first, last, {"rst_ni", PortRole::kReset, true}};
  ActivityOptions opt;
  opt.reset_cycles = 2;
  opt.warmup_cycles = 0;
  opt.cycles = 6;
  write_stimulus({{"first_i", true, 1}, {"last_i", true, 1}, {"rst_ni", true, 1}}, src, opt, dir);
  EXPECT_EQ(read_text(dir + "/stim_first_i.hex"), "0\n0\n1\n0\n0\n1\n0\n0\n");
  EXPECT_EQ(read_text(dir + "/stim_last_i.hex"), "0\n0\n0\n0\n1\n0\n0\n1\n");
  EXPECT_EQ(read_text(dir + "/stim_rst_ni.hex"), "0\n0\n1\n1\n1\n1\n1\n1\n");
}

}  // namespace
}  // namespace ltc::synth
