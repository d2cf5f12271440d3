// The flow on real tensor-core RTL (rtl/rtl_design.h), at the smallest configurations so each
// synthesis takes seconds: the netlist matches the RTL (Verilator) cycle by cycle, and the derived
// figures count operations the way the paper does.
#include "common/error.h"
#include "synth/ppa.h"
#include "synth_test_util.h"

#include "tests/test_seed.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace ltc::synth {
namespace {

using test::scratch_dir;

hw::TensorCoreConfig tiny(hw::TensorCoreDesign d, int n, int wbits) {
  return hw::TensorCoreConfig::make(d, golden::LmmaShape{1, n, 2}, golden::DType::kInt8, wbits);
}

TEST(TensorCorePpa, TinyLutTileNetlistMatchesRtl) {
  PpaOptions opt;
  opt.workdir = scratch_dir("");
  opt.sim.cycles = 60;
  opt.sim.seed = uint32_t(ltc::test_support::test_seed(5));
  opt.gate_check = true;
  const PpaResult r = run_ppa(tiny(hw::TensorCoreDesign::kLut, 1, 2), opt);
  ASSERT_TRUE(r.gate_check_mismatches.has_value());
  EXPECT_EQ(*r.gate_check_mismatches, 0)
      << ltc::test_support::seed_note(opt.sim.seed) << ", " << r.workdir;
  // 2*M*N*K per plane-cycle, over 2 planes.
  EXPECT_DOUBLE_EQ(r.ops_per_cycle, 2.0 * 1 * 1 * 2 / 2);
  EXPECT_GT(r.net_activity, 0.01);
  EXPECT_GT(r.flip_flops, 32);  // at least the int32 accumulator
}

TEST(TensorCorePpa, WiderTileIsLargerWithMoreOpsPerCycle) {
  PpaOptions opt;
  opt.workdir = scratch_dir("n1");
  opt.activity = ActivityMode::kAssumed;
  const PpaResult one = run_ppa(tiny(hw::TensorCoreDesign::kLut, 1, 1), opt);
  opt.workdir = scratch_dir("n2");
  const PpaResult two = run_ppa(tiny(hw::TensorCoreDesign::kLut, 2, 1), opt);
  EXPECT_DOUBLE_EQ(two.ops_per_cycle, 2 * one.ops_per_cycle);
  // A second unit and accumulator; the tables and control are shared.
  EXPECT_GT(two.area_um2, 1.3 * one.area_um2);
  EXPECT_LT(two.area_um2, 2.0 * one.area_um2);
}

TEST(TensorCorePpa, KeptUnitModulesStillMatchRtlAndCountTheirNets) {
  PpaOptions opt;
  opt.sim.cycles = 40;
  opt.gate_check = true;
  opt.workdir = scratch_dir("flat");
  opt.hierarchical_from_units = 0;
  const auto config = tiny(hw::TensorCoreDesign::kLut, 2, 1);
  const PpaResult flat = run_ppa(config, opt);
  opt.workdir = scratch_dir("kept");
  opt.hierarchical_from_units = 2;  // M*N = 2: keep the unit modules
  const PpaResult kept = run_ppa(config, opt);
  EXPECT_EQ(flat.synth_mode.rfind("flat;", 0), 0u) << flat.synth_mode;
  EXPECT_NE(kept.synth_mode.find("ltc_accumulator"), std::string::npos);
  ASSERT_TRUE(kept.gate_check_mismatches.has_value());
  EXPECT_EQ(*kept.gate_check_mismatches, 0) << kept.workdir;
  // Without optimization across the unit boundary the netlist is no smaller; the kept units'
  // own nets are counted (flattening removes some nets, so the count cannot shrink much).
  EXPECT_GE(kept.area_um2, 0.98 * flat.area_um2);
  EXPECT_GT(kept.activity_nets, flat.activity_nets / 2);
}

// ltc's gate-level simulator against iverilog on the OSU cell models, same netlist, same
// stimulus: identical outputs every cycle and identical toggle counts, flat and with kept unit
// modules (where iverilog sees a child's port net and the parent's net as two VCD variables only
// when they are distinct nets; they are one node in gatesim).
class GatesimVsIverilog : public ::testing::TestWithParam<int> {};

TEST_P(GatesimVsIverilog, SameOutputsAndToggles) {
  const int hier_from = GetParam();
  const auto config = hw::TensorCoreConfig::make(
      hw::TensorCoreDesign::kLut, golden::LmmaShape{1, 2, 4}, golden::DType::kFp16, 2);
  const auto dir = scratch_dir(std::to_string(hier_from));
  const DesignSource src = design_source(config);
  SynthOptions so;
  if (hier_from > 0) so.keep_modules = kUnitModules;
  const SynthResult syn = run_yosys(src, so, dir);
  ActivityOptions opt;
  opt.cycles = 60;
  opt.seed = uint32_t(ltc::test_support::test_seed(21));
  opt.netlist_simulator = "iverilog";
  const ActivityResult iv = measure_activity(src, syn, opt, dir);
  std::filesystem::rename(iv.outputs_path, dir + "/outputs_iverilog.txt");
  opt.netlist_simulator = "ltc";
  const ActivityResult gs = measure_activity(src, syn, opt, dir);
  EXPECT_EQ(gs.simulator, "ltc gatesim");
  std::vector<std::string> diffs;
  EXPECT_EQ(compare_outputs(gs.outputs_path, dir + "/outputs_iverilog.txt", &diffs), 0)
      << ltc::test_support::seed_note(opt.seed) << " " << (diffs.empty() ? "" : diffs[0]);
  EXPECT_EQ(gs.input_bits, iv.input_bits);
  EXPECT_DOUBLE_EQ(gs.input_activity, iv.input_activity);
  if (hier_from == 0) {
    EXPECT_EQ(gs.net_bits, iv.net_bits);
    EXPECT_DOUBLE_EQ(gs.net_activity, iv.net_activity) << ltc::test_support::seed_note(opt.seed);
  } else {
    // Port nets of kept modules appear once per scope in the VCD: counts differ by those
    // duplicates only.
    EXPECT_LE(gs.net_bits, iv.net_bits);
    EXPECT_NEAR(gs.net_activity, iv.net_activity, 0.1 * iv.net_activity)
        << ltc::test_support::seed_note(opt.seed);
  }
  EXPECT_GT(gs.net_activity, 0.01);
}

INSTANTIATE_TEST_SUITE_P(FlatAndKept, GatesimVsIverilog, ::testing::Values(0, 2));

TEST(NodeScaling, ClassicalFactorsByHand) {
  PpaResult r;
  r.area_um2 = 1e6;
  r.delay_ns = r.clock_ns = 10;
  r.internal_mw = r.switching_mw = 1;
  r.leakage_mw = 0.5;
  r.ops_per_cycle = 100;
  NodeScaling ns;  // 180 nm 1.8 V
  ns.to_nm = 90;
  ns.to_vdd = 0.9;
  const ScaledFigures f = scale_to_node(r, ns);
  // lambda 1/2: area / 4, delay / 2; energy/cycle 2 mW x 10 ns = 20 pJ x 1/2 x 1/4 = 2.5 pJ at
  // 5 ns = 0.5 mW; 100 ops / 5 ns = 0.02 TOPS on 0.25 mm^2, 0.02 TOPS / 0.5 mW.
  EXPECT_DOUBLE_EQ(f.area_um2, 250000);
  EXPECT_DOUBLE_EQ(f.delay_ns, 5);
  EXPECT_DOUBLE_EQ(f.power_mw, 0.5);
  EXPECT_DOUBLE_EQ(f.tops, 0.02);
  EXPECT_DOUBLE_EQ(f.tops_per_mm2, 0.08);
  EXPECT_DOUBLE_EQ(f.tops_per_w, 40);
  EXPECT_NE(f.model.find("Stillmaker"), std::string::npos);
  ns.to_vdd = 0;
  EXPECT_THROW(scale_to_node(r, ns), InputError);
}

}  // namespace
}  // namespace ltc::synth
