// The PPA ledger (synth/ledger.h) on a stand-in flow whose energies and areas are set by hand:
// its steps, their points, the ratios, the W crossover, the glitch shares and the node step's
// scaling, checked against hand calculations; no tool runs.
#include "synth/ledger.h"

#include "synth_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

namespace ltc::synth {
namespace {

using test::scratch_dir;

// MAC: 1000 um^2, 10 ns, 8 mW (internal 5 + switching 3), 8 ops/cycle: 10 pJ/op.
// LUT: 200 um^2, 5 ns, 8 / W ops/cycle, 3 mW on osu018 (1.875 W pJ/op), 1 mW on nangate45
// (0.625 W pJ/op), 0.5 mW with FP16 accumulation (0.3125 W pJ/op); timed activity doubles the
// zero-delay power (a +100% glitch share).
PpaResult fake(const hw::TensorCoreConfig& c, const PpaOptions& o) {
  PpaResult r;
  r.id = c.id();
  r.library = o.library;
  r.activity_timing = delay_model_name(o.sim.timing);
  const bool mac = c.design == hw::TensorCoreDesign::kMac;
  r.area_um2 = mac ? 1000 : 200;
  r.clock_ns = r.delay_ns = mac ? 10 : 5;
  r.ops_per_cycle = c.ops_per_cycle();
  r.power_mw = mac ? 8 : o.library == "osu018" ? 3 : c.acc == golden::DType::kFp16 ? 0.5 : 1;
  r.internal_mw = 0.625 * r.power_mw;
  r.switching_mw = 0.375 * r.power_mw;
  r.power_zero_delay_mw = o.sim.timing == DelayModel::kZero ? r.power_mw : r.power_mw / 2;
  r.tops = r.ops_per_cycle / r.clock_ns / 1000;
  r.tops_per_mm2 = r.tops / (r.area_um2 * 1e-6);
  r.tops_per_w = r.tops / (r.power_mw * 1e-3);
  return r;
}

TEST(Ledger, StepsMoveOneCauseAtATime) {
  const auto steps = ledger_steps(LedgerOptions{});
  ASSERT_EQ(steps.size(), 5u);
  EXPECT_EQ(steps[0].library, "osu018");
  EXPECT_EQ(steps[1].library, "nangate45");
  EXPECT_EQ(steps[1].timing, DelayModel::kZero);
  EXPECT_EQ(steps[2].timing, DelayModel::kLiberty);
  EXPECT_EQ(steps[2].acc, "fp32");
  EXPECT_EQ(steps[3].acc, "fp16");
  EXPECT_EQ(steps[4].scale_nm, 28);
  const SweepSpec spec = ledger_spec(steps[3], {1, 2, 3, 4, 5, 6, 7, 8});
  ASSERT_EQ(spec.points.size(), 9u);  // the MAC and the LUT at W = 1..8
  EXPECT_EQ(spec.library, "nangate45");
  EXPECT_EQ(spec.timing, DelayModel::kLiberty);
  for (const auto& p : spec.points) EXPECT_EQ(p.config.acc, golden::DType::kFp16) << p.id;
}

TEST(Ledger, RatiosCrossoverAndScalingByHand) {
  LedgerOptions o;
  o.out_dir = scratch_dir("");
  o.jobs = 2;
  o.runner = fake;
  o.rtl_hash = [](const hw::TensorCoreConfig&) { return std::string("0123456789abcdef"); };
  const LedgerResult r = run_ledger(o);
  EXPECT_EQ(r.failed, 0);
  // Bisection: osu018 runs the MAC and W = 1, 8, then 4 (below), 6 (not), 5 (below); the other
  // steps the MAC, W1 and W8 (below: every W).
  EXPECT_EQ(r.points, 6 + 3 + 3 + 3);
  EXPECT_EQ(r.ran, r.points);
  ASSERT_EQ(r.steps.size(), 5u);
  const auto& s0 = r.steps[0];
  EXPECT_NEAR(s0.mac_pj, 10, 1e-9);
  EXPECT_NEAR(s0.lut_pj, 1.875, 1e-9);
  EXPECT_NEAR(s0.energy_ratio, 10 / 1.875, 1e-9);
  // Density: LUT 8 / 200e-6 = 40000, MAC 8 / 1000e-6 = 8000 ops/cycle/mm^2.
  EXPECT_NEAR(s0.density_ratio, 5, 1e-9);
  EXPECT_NEAR(s0.lut_tops_mm2_1ghz, 40, 1e-9);
  EXPECT_EQ(s0.crossover_w, 5);                // 1.875 x 5 = 9.375 < 10 < 11.25
  EXPECT_TRUE(std::isnan(s0.lut_pj_by_w[1]));  // W2 not run
  EXPECT_NEAR(s0.lut_pj_by_w[5], 11.25, 1e-9);
  EXPECT_NEAR(r.steps[1].energy_ratio, 16, 1e-9);
  EXPECT_EQ(r.steps[1].crossover_w, 8);  // 0.625 x 8 = 5 < 10: all W
  EXPECT_NEAR(r.steps[1].mac_glitch, 0, 1e-12);
  EXPECT_NEAR(r.steps[2].mac_glitch, 1, 1e-9);  // timed: twice the zero-delay energy
  EXPECT_NEAR(r.steps[2].lut_glitch, 1, 1e-9);
  EXPECT_NEAR(r.steps[3].energy_ratio, 32, 1e-9);
  // Node: 45 nm 1.1 V -> 28 nm 0.9 V scales every dynamic energy by (28 / 45) (0.9 / 1.1)^2 and
  // every area by (28 / 45)^2: the ratios stay, the absolute figures move.
  const auto& s4 = r.steps[4];
  const double lambda = 28.0 / 45, e = lambda * (0.9 / 1.1) * (0.9 / 1.1);
  EXPECT_NEAR(s4.mac_pj, 10 * e, 1e-9);
  EXPECT_NEAR(s4.lut_pj, 0.3125 * e, 1e-9);
  EXPECT_NEAR(s4.energy_ratio, 32, 1e-9);
  EXPECT_NEAR(s4.density_ratio, 5, 1e-9);
  EXPECT_NEAR(s4.lut_tops_mm2_1ghz, 40 / (lambda * lambda), 1e-6);
  EXPECT_TRUE(std::filesystem::exists(o.out_dir + "/ledger.csv"));
  // A rerun reuses every point; with every W it runs only the ones the bisection skipped, and
  // finds the same crossover.
  const LedgerResult again = run_ledger(o);
  EXPECT_EQ(again.ran, 0);
  EXPECT_NEAR(again.steps[3].energy_ratio, 32, 1e-9);
  o.all_wbits = true;
  const LedgerResult all = run_ledger(o);
  EXPECT_EQ(all.points, 4 * 9);
  EXPECT_EQ(all.ran, 4 * 9 - 15);
  EXPECT_EQ(all.steps[0].crossover_w, 5);
  EXPECT_EQ(all.steps[3].crossover_w, 8);
}

}  // namespace
}  // namespace ltc::synth
