// The Yosys + OpenSTA flow on a tiny registered adder: areas against the liberty's own cell
// areas, flip-flop counts by hand, error detection on a netlist OpenSTA chokes on, power scaling.
#include "common/file_io.h"
#include "common/process.h"
#include "synth/ppa.h"
#include "synth/sta_flow.h"
#include "synth/tool_log.h"
#include "synth/yosys_flow.h"
#include "synth_test_util.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace ltc::synth {
namespace {

// Removes this process's scratch folders after the tests (kept when a test failed).
class ScratchCleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    if (::testing::UnitTest::GetInstance()->Passed()) {
      std::filesystem::remove_all(std::filesystem::temp_directory_path() /
                                  ("ltc_synth_test_" + std::to_string(::getpid())));
    }
  }
};
const auto* const kCleanup = ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

using test::reg_adder;
using test::scratch_dir;

// Cell areas read straight from the liberty, independently of yosys's stat.
std::map<std::string, double> liberty_areas() {
  return test::liberty_text_areas(read_text(kDefaultLiberty));
}

TEST(YosysFlow, AreaIsTheSumOfLibertyCellAreas) {
  const SynthResult r = run_yosys(reg_adder(8), SynthOptions{}, scratch_dir(""));
  const auto areas = liberty_areas();
  double sum = 0;
  int cells = 0;
  for (const auto& [type, n] : r.cells_by_type) {
    ASSERT_TRUE(areas.count(type)) << type << " is not a liberty cell";
    sum += areas.at(type) * n;
    cells += n;
  }
  EXPECT_NEAR(r.area_um2, sum, 1e-6 * sum);
  EXPECT_EQ(r.cells, cells);
}

TEST(YosysFlow, FlipFlopsMatchTheRegistersByHand) {
  // a_q, b_q (Width each) and sum_o (Width + 1): 3 * 8 + 1 = 25 for Width 8, 13 for Width 4.
  EXPECT_EQ(run_yosys(reg_adder(8), SynthOptions{}, scratch_dir("w8")).flip_flops, 25);
  EXPECT_EQ(run_yosys(reg_adder(4), SynthOptions{}, scratch_dir("w4")).flip_flops, 13);
}

TEST(YosysFlow, WiderAdderIsLargerAndSlower) {
  const auto dir = scratch_dir("");
  const SynthResult a = run_yosys(reg_adder(4), SynthOptions{}, dir + "/w4");
  const SynthResult b = run_yosys(reg_adder(16), SynthOptions{}, dir + "/w16");
  EXPECT_GT(b.area_um2, 2 * a.area_um2);
  StaOptions sta;
  const StaResult ta = run_sta(a.netlist, "reg_adder", "clk_i", sta, dir + "/w4");
  const StaResult tb = run_sta(b.netlist, "reg_adder", "clk_i", sta, dir + "/w16");
  EXPECT_GT(tb.delay_ns, ta.delay_ns);
}

TEST(YosysFlow, ParametersSetThroughTheTopSourceDefaults) {
  DesignSource s = reg_adder(5);
  s.top_source = s.sources[0];
  const std::string text = with_parameter_defaults(s);
  EXPECT_NE(text.find("parameter int Width = 5"), std::string::npos);
  EXPECT_EQ(text.find("Width = 8"), std::string::npos);
  // Same netlist as through chparam: 3 * 5 + 1 flip-flops.
  EXPECT_EQ(run_yosys(s, SynthOptions{}, scratch_dir("")).flip_flops, 16);
  s.params = {{"Depth", "3"}};
  EXPECT_THROW(with_parameter_defaults(s), std::runtime_error);
}

TEST(YosysFlow, SyntaxErrorInRtlFails) {
  const auto dir = scratch_dir("");
  const std::string bad = dir + "/broken.v";
  std::ofstream(bad) << "module broken(input clk_i, output y); assign y = ; endmodule\n";
  DesignSource s;
  s.top = "broken";
  s.sources = {bad};
  EXPECT_THROW(run_yosys(s, SynthOptions{}, dir), std::runtime_error);
}

TEST(StaFlow, ErrorTextFailsEvenWhenStaExitsZero) {
  const auto dir = scratch_dir("");
  // The premise: sta really exits 0 on this netlist (if it ever stops doing so, the test still
  // holds through the exit code).
  std::ofstream(dir + "/t.tcl") << "read_liberty " << kDefaultLiberty << "\nread_verilog "
                                << LTC_SYNTH_TEST_DATA << "/bad_assign.v\n";
  const ProcessResult p = run_process({"sta", "-no_init", "-exit", "t.tcl"}, dir, dir + "/l", 60);
  EXPECT_FALSE(error_lines(p.log).empty()) << p.log;
  StaOptions opt;
  EXPECT_THROW(
      run_sta(std::string(LTC_SYNTH_TEST_DATA) + "/bad_assign.v", "bad_assign", "clk_i", opt, dir),
      std::runtime_error);
}

TEST(StaFlow, SplitPortNetlistReadsCleanly) {
  const auto dir = scratch_dir("");
  const SynthResult r = run_yosys(reg_adder(8), SynthOptions{}, dir);
  StaOptions opt;
  opt.clock_ns = 20;
  const StaResult t = run_sta(r.netlist, "reg_adder", "clk_i", opt, dir);
  EXPECT_GT(t.delay_ns, 0.3);  // at least a flip-flop clock-to-Q and a setup time
  EXPECT_LT(t.delay_ns, 20);
  EXPECT_NEAR(t.slack_ns, 20 - t.delay_ns, 1e-9);
  EXPECT_GT(t.internal_mw, 0);
  EXPECT_GT(t.leakage_mw, 0);
  EXPECT_NEAR(t.total_mw, t.internal_mw + t.switching_mw + t.leakage_mw, 1e-6 * t.total_mw + 1e-9);
}

TEST(StaFlow, PowerRescalingMatchesARunAtTheOtherClock) {
  const auto dir = scratch_dir("");
  const SynthResult r = run_yosys(reg_adder(8), SynthOptions{}, dir);
  StaOptions a;
  a.clock_ns = 10;
  StaOptions b = a;
  b.clock_ns = 4;
  const StaResult ta = run_sta(r.netlist, "reg_adder", "clk_i", a, dir);
  const StaResult tb = run_sta(r.netlist, "reg_adder", "clk_i", b, dir);
  EXPECT_NEAR(ta.total_mw_at(4), tb.total_mw, 1e-4 * tb.total_mw);
  EXPECT_NEAR(ta.delay_ns, tb.delay_ns, 1e-3);
}

TEST(StaFlow, MoreActivityMoreDynamicPower) {
  const auto dir = scratch_dir("");
  const SynthResult r = run_yosys(reg_adder(8), SynthOptions{}, dir);
  StaOptions lo, hi;
  lo.global_activity = 0.05;
  hi.global_activity = 0.4;
  const StaResult a = run_sta(r.netlist, "reg_adder", "clk_i", lo, dir);
  const StaResult b = run_sta(r.netlist, "reg_adder", "clk_i", hi, dir);
  EXPECT_GT(b.switching_mw, 4 * a.switching_mw);
  EXPECT_DOUBLE_EQ(a.leakage_mw, b.leakage_mw);
}

TEST(StaReport, ParsesSlackAndPowerTotals) {
  const std::string text =
      "Startpoint: _1_ (rising edge-triggered flip-flop clocked by clk)\n"
      "Endpoint: _2_ (rising edge-triggered flip-flop clocked by clk)\n"
      "             8.5817   slack (MET)\n"
      "Total                6.343746e-04 2.827155e-05 7.060906e-09 6.626532e-04 100.0%\n";
  const StaResult r = parse_sta_report(text, 10);
  EXPECT_DOUBLE_EQ(r.slack_ns, 8.5817);
  EXPECT_NEAR(r.delay_ns, 1.4183, 1e-12);
  EXPECT_EQ(r.critical_from, "_1_");
  EXPECT_NEAR(r.internal_mw, 0.6343746, 1e-12);
  EXPECT_NEAR(r.leakage_mw, 7.060906e-6, 1e-15);
  EXPECT_THROW(parse_sta_report("no report here\n", 10), std::runtime_error);
}

TEST(ErrorLines, FindsErrorsAndIgnoresCleanText) {
  EXPECT_TRUE(error_lines("Chip area for module '\\top': 12.0\nwns 0.00\n").empty());
  EXPECT_EQ(error_lines("ok\nERROR: Module `foo' not found\n").size(), 1u);
  EXPECT_EQ(error_lines("Error: x.v, line 3 syntax error, unexpected '{'\n").size(), 1u);
  EXPECT_EQ(error_lines("t.v:3: error: Unknown module type: FOO\n").size(), 1u);
}

TEST(Process, TimeoutKillsTheTool) {
  const auto dir = scratch_dir("");
  const ProcessResult p = run_process({"sleep", "30"}, dir, dir + "/log", 0.3);
  EXPECT_TRUE(p.timed_out);
  EXPECT_LT(p.seconds, 10);
  EXPECT_THROW(run_process({"ltc-no-such-tool"}, dir, dir + "/log", 1), std::runtime_error);
}

TEST(Ppa, DerivedFiguresFollowFromAreaDelayAndPower) {
  PpaOptions opt;
  opt.workdir = scratch_dir("");
  opt.sim.cycles = 64;
  const double ops = 16;  // any count: the figures must scale with it
  const PpaResult r = run_ppa(reg_adder(8), ops, opt);
  EXPECT_DOUBLE_EQ(r.clock_ns, r.delay_ns);  // no clock given: the design's own maximum
  EXPECT_NEAR(r.fmax_mhz, 1000 / r.delay_ns, 1e-9);
  const double tops = ops * (1e9 / r.clock_ns) / 1e12;
  EXPECT_NEAR(r.tops, tops, 1e-12);
  EXPECT_NEAR(r.tops_per_mm2, tops / (r.area_um2 / 1e6), 1e-9 * r.tops_per_mm2);
  EXPECT_NEAR(r.tops_per_w, tops / (r.power_mw / 1e3), 1e-9 * r.tops_per_w);
  EXPECT_NEAR(r.power_mw, r.internal_mw + r.switching_mw + r.leakage_mw, 1e-9 * r.power_mw);
  EXPECT_EQ(r.rtl_hash.size(), 16u);
}

TEST(Ppa, RelativeWorkdirWorks) {
  // `ltc report --out report` hands the flow a relative directory; every tool runs inside it.
  const std::string dir = scratch_dir("");
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  PpaOptions opt;
  opt.workdir = "relative/work";
  opt.sim.cycles = 16;
  PpaResult r;
  EXPECT_NO_THROW(r = run_ppa(reg_adder(4), 8, opt));
  std::filesystem::current_path(cwd);
  EXPECT_GT(r.area_um2, 0);
  EXPECT_GT(r.power_mw, 0);
}

TEST(Ppa, UserClockSetsThePowerClock) {
  PpaOptions opt;
  opt.workdir = scratch_dir("");
  opt.activity = ActivityMode::kAssumed;
  opt.clock_ns = 25;
  const PpaResult slow = run_ppa(reg_adder(4), 8, opt);
  opt.clock_ns = 5;
  const PpaResult fast = run_ppa(reg_adder(4), 8, opt);
  EXPECT_DOUBLE_EQ(slow.clock_ns, 25);
  EXPECT_NEAR(fast.tops, 5 * slow.tops, 1e-12);
  EXPECT_GT(fast.power_mw, 4 * slow.power_mw);  // dynamic power dominates leakage by far
}

}  // namespace
}  // namespace ltc::synth
