// The two model benchmarks behind `ltc bench kernels` and `ltc bench agreement`: their figures
// checked by hand on one case each, and their results files (docs/results/) in step with the
// tables the commands write.
#include "cli/report/model_agreement.h"
#include "cli/report/ppa_results.h"
#include "cli/report/sim_bench.h"
#include "cli/report/skinny_kernels.h"
#include "common/error.h"
#include "model/hw/gpu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace ltc::report {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The GEMV of LLaMA2-7B's o_proj, W_INT2 A_FP16 on a100-lut4x: its bytes by hand, its rate.
TEST(SkinnyKernels, BytesAndRateOfOneGemv) {
  const SkinnyResult r = run_skinny_case({"llama2-7b", "o_proj", "a100-lut4x", 1, 4096, 4096, 2});
  const double weights = 4096.0 * 4096 * 2 / 8, scales = 4096.0 * 4;
  const double tables = 1.0 * (4096 / 4) * 8 * 2, out = 4096.0 * 2;  // fp16 half tables
  EXPECT_DOUBLE_EQ(r.bytes, weights + scales + tables + out);
  EXPECT_EQ(r.path, "lut");
  EXPECT_GT(r.k_slices, 1) << "a GEMV's kernel slices K";
  const double bw = hw::load_gpu("a100-lut4x").dram_sim_gbps();
  EXPECT_NEAR(r.fraction, r.bytes / (r.time_us * 1e3) / bw, 1e-12);
  EXPECT_LT(r.fraction, 1.0) << "no kernel moves its bytes faster than DRAM streams";
  // What the simulated DRAM read is the weights, scales and tables once (outputs are written).
  EXPECT_NEAR(r.dram_read_bytes / (weights + scales + tables), 1.0, 0.05);
}

// The cases are the step graph's launches: QKV and gate+up one GEMM each.
TEST(SkinnyKernels, CasesAreTheDecoderLaunchGroups) {
  SkinnyOptions o;
  o.models = {"llama2-70b"};
  o.gpus = {"a100"};
  o.rows = {1};
  o.widths = {16};
  const auto cases = skinny_cases(o);
  ASSERT_EQ(cases.size(), 4u);
  const int64_t n[] = {8192 + 2 * 1024, 8192, 2 * 28672, 8192}, k[] = {8192, 8192, 8192, 28672};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(cases[i].n, n[i]) << cases[i].layer;
    EXPECT_EQ(cases[i].k, k[i]) << cases[i].layer;
  }
  o.widths = {12};
  EXPECT_THROW(skinny_cases(o), InputError);
}

// One step on both models: the roofline's operators add up to its latency, the simulator's to
// its time (each kernel booked with the boundary after it, as the roofline costs one per launch);
// a launch group is one operator.
TEST(ModelAgreement, OperatorsAddUpToTheStep) {
  AgreementCase c{"llama2-7b", "a100-lut4x", "int2", "int8", llm::Phase::kDecode, 1, 1024};
  const AgreementResult r = run_agreement(c, false);
  double sim = 0, roof = 0;
  bool qkv = false, k_proj = false;
  for (const auto& g : r.ops) {
    sim += g.sim_ms;
    roof += g.roofline_ms;
    qkv = qkv || g.op == "q_proj";
    k_proj = k_proj || g.op == "k_proj";
  }
  EXPECT_NEAR(roof, r.roofline_ms, 1e-9 * r.roofline_ms);
  EXPECT_NEAR(sim, r.sim_ms, 1e-9 * r.sim_ms);
  // Every operator but the last (the LM head) carries a boundary per kernel: at least one.
  const hw::GpuConfig gpu = hw::load_gpu(c.gpu);
  const double gap_ms = double(gpu.step_kernel_gap_cycles()) / (gpu.clock_ghz * 1e6);
  for (size_t i = 0; i + 1 < r.ops.size(); ++i) {
    if (r.ops[i].sim_ms > 0) {
      EXPECT_GT(r.ops[i].sim_ms, gap_ms) << r.ops[i].op;
    }
  }
  EXPECT_TRUE(qkv);
  EXPECT_FALSE(k_proj);
  EXPECT_NEAR(r.diff(), r.sim_ms / r.roofline_ms - 1, 1e-12);
}

// The results files are what the commands write: same header and columns.
TEST(ResultsFiles, AreInStepWithTheBenchTables) {
  const std::string dir = std::string(LTC_SOURCE_DIR) + "/docs/results/";
  const std::string kernels = read_file(dir + "kernels.md");
  const std::string kernels_head = skinny_markdown({});
  ASSERT_FALSE(kernels.empty()) << "ltc bench kernels --markdown docs/results/kernels.md";
  EXPECT_EQ(kernels.substr(0, kernels_head.find("| GPU | cases")),
            kernels_head.substr(0, kernels_head.find("| GPU | cases")));
  EXPECT_NE(kernels.find(kernels_head.substr(kernels_head.find("\n| GPU | model"))),
            std::string::npos);
  const std::string agreement = read_file(dir + "agreement.md");
  const std::string agreement_head = agreement_markdown({});
  ASSERT_FALSE(agreement.empty()) << "ltc bench agreement --markdown docs/results/agreement.md";
  const std::string columns = "| step | simulator ms | roofline ms | sim / roofline |";
  EXPECT_NE(agreement_head.find(columns), std::string::npos);
  EXPECT_NE(agreement.find(columns), std::string::npos);
  EXPECT_EQ(agreement.substr(0, 60), agreement_head.substr(0, 60));
}

// A results file opens as its command's output does (`head`: that output on a small input, whose
// opening names the command that regenerates the file) and holds every table header the command
// writes, so a change of the tables' format fails here until the file is rewritten.
void expect_in_step(const std::string& name, const std::string& head) {
  const std::string text = read_file(std::string(LTC_SOURCE_DIR) + "/docs/results/" + name);
  ASSERT_FALSE(text.empty()) << head.substr(0, head.find(')') + 1);
  const std::string opening = head.substr(0, head.find('('));
  EXPECT_EQ(text.substr(0, opening.size()), opening) << name;
  std::istringstream lines(head);
  int headers = 0;
  std::string last;
  for (std::string line; std::getline(lines, line); last = line) {
    if (line.rfind("|---", 0) != 0) continue;  // `last` is a table's header
    ++headers;
    EXPECT_NE(text.find(last + "\n" + line + "\n"), std::string::npos) << name << ": " << last;
  }
  EXPECT_GT(headers, 0) << name;
}

// The simulator's results files (ltc bench sim --markdown; cli/report/sim_bench.h).
TEST(ResultsFiles, SimulatorFilesAreInStepWithTheBench) {
  expect_in_step("sim.md", sim_speed_markdown(nlohmann::json::array()));
  expect_in_step("sim-sample.md", sim_sample_markdown(nlohmann::json::object()));
  expect_in_step("sim-h200.md", sim_h200_markdown(nlohmann::json::object()));
  for (const char* kind : {"int8", "fp8"}) {
    expect_in_step(std::string("sim-h200-") + kind + ".md",
                   sim_h200_markdown(nlohmann::json{{"kind", kind}}));
  }
  expect_in_step("sim-threads.md", sim_threads_markdown(nlohmann::json::array()));
  expect_in_step("sim-paper.md", sim_paper_markdown(nlohmann::json::object()));
  expect_in_step("sim-moe.md", sim_moe_markdown(nlohmann::json::object()));
  // ltc bench agreement --model llama2-7b --energy docs/results/energy.md (docs/energy.md).
  expect_in_step("energy.md", energy_markdown({}));
}

// With --repeat, a count's row gives the median of its runs and their range (hand-made runs).
TEST(ResultsFiles, TheSpeedTableGivesTheMedianAndTheRangeOfRepeatedRuns) {
  const nlohmann::json w = nlohmann::json::array({{{"workload", "w"},
                                                   {"cycles", 10},
                                                   {"warp_instructions", 20},
                                                   {"host_threads", 16},
                                                   {"runs",
                                                    {{{"threads", 1},
                                                      {"wall_s", 12.0},
                                                      {"runs_wall_s", {12.0, 13.5, 11.0}},
                                                      {"host_load", 0.5},
                                                      {"speedup", 1.0}},
                                                     {{"threads", 16},
                                                      {"wall_s", 1.5},
                                                      {"runs_wall_s", {1.5}},
                                                      {"host_load", 1.0},
                                                      {"speedup", 8.0}}}}}});
  const std::string md = sim_threads_markdown(w);
  EXPECT_NE(md.find("| w | 10 | 20 | 16 | 0.5 | 1 | 12.00 (11.00-13.50, 3 runs) | 1.00x | - |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| w | 10 | 20 | 16 | 1.0 | 16 | 1.50 | 8.00x | - |"), std::string::npos) << md;
}

// One sweep as `ltc sweep --json` prints it: a ratio, a crossover at two x, a ratio without data.
nlohmann::json one_sweep() {
  return nlohmann::json::array(
      {{{"sweep", "dp4"},
        {"title", "DP4"},
        {"library", "osu018"},
        {"activity_timing", "zero"},
        {"points", 6},
        {"rows", 7},
        {"rows_ok", 5},
        {"ratios",
         {{{"name", "density LUT / MAC"}, {"value", 5.404}, {"paper", 18.1}},
          {{"name", "no data"}, {"value", nullptr}, {"paper", "4-6"}}}},
        {"crossovers",
         {{{"name", "LUT below MAC up to W"},
           {"x", "wbits"},
           {"a_below_b_up_to", 1},
           {"paper", "all W"},
           {"points",
            {{{"wbits", 1}, {"b_over_a", 6.634}}, {{"wbits", 2}, {"b_over_a", 0.5}}}}}}}}});
}

// The PPA results file (ltc sweep --markdown; cli/report/ppa_results.h): its cells by hand, and
// docs/results/ppa.md in step with it.
TEST(ResultsFiles, PpaFileIsInStepWithTheSweeps) {
  const std::string md = ppa_markdown(one_sweep());
  EXPECT_NE(
      md.find("\n## dp4\n\nDP4 (6 design points; 5 of its 7 rows stored; library osu018, activity "
              "zero).\n"),
      std::string::npos)
      << md;
  EXPECT_NE(md.find("Partial: each figure below is over the points in the store only (`ltc sweep "
                    "dp4 --out DIR` runs the rest).\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| density LUT / MAC | 5.40x | 18.1 |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| no data | n/a | 4-6 |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| LUT below MAC up to W | 1 | all W | 1: 6.63, 2: 0.50 |\n"),
            std::string::npos)
      << md;
  expect_in_step("ppa.md", md);
}

// The ledger's results file (ltc sweep ledger --markdown): a zero-delay and a timed step by hand.
TEST(ResultsFiles, LedgerFileIsInStepWithTheLedger) {
  const nlohmann::json step = {{"step", "first setup"},
                               {"change", "none"},
                               {"library", "osu018"},
                               {"activity_timing", "zero"},
                               {"acc", "fp32"},
                               {"scale_nm", 0},
                               {"mac_pj_per_op", 71.04},
                               {"lut_pj_per_op", 10.7},
                               {"lut_pj_per_op_by_wbits", {10.7, 20, 30, 40, 80, 90, 100, 110}},
                               {"energy_mac_over_lut", 6.6393},
                               {"density_lut_over_mac", 5.4},
                               {"lut_energy_below_mac_up_to_w", 4},
                               {"lut_tops_mm2_1ghz", 0.1234},
                               {"mac_tops_mm2_1ghz", 0.02291}};
  nlohmann::json timed = step;
  timed["step"] = "glitches";
  timed["activity_timing"] = "liberty";
  timed["lut_energy_below_mac_up_to_w"] = 8;
  timed["mac_glitch"] = 7.554;
  timed["lut_glitch"] = 2.64;
  const std::string md = ledger_markdown({{"steps", {step, timed}},
                                          {"paper",
                                           {{"energy_mac_over_lut", 15.45},
                                            {"density_lut_over_mac", 18.1},
                                            {"lut_tops_mm2_1ghz", 61.55},
                                            {"mac_tops_mm2_1ghz", 3.39},
                                            {"lut_energy_below_mac", "all W"}}}});
  EXPECT_NE(
      md.find("| first setup | none | osu018 | zero | fp32 | 71 / 10.7 | 6.64x | 5.40x | W = 4 | "
              "0.123 / 0.0229 | - |\n"),
      std::string::npos)
      << md;
  EXPECT_NE(
      md.find("| glitches | none | osu018 | liberty | fp32 | 71 / 10.7 | 6.64x | 5.40x | W = 8 "
              "(all) | 0.123 / 0.0229 | +755% / +264% |\n"),
      std::string::npos)
      << md;
  EXPECT_NE(
      md.find("| paper | | TSMC 28 nm, DC | | fp16 | | 15.45x | 18.1x | all W | 61.55 / 3.39 | "
              "|\n"),
      std::string::npos)
      << md;
  expect_in_step("ppa-ledger.md", md);
}

}  // namespace
}  // namespace ltc::report
