// The two model benchmarks behind `ltc bench kernels` and `ltc bench agreement`: their figures
// checked by hand on one case each, and their results files (docs/results/) in step with the
// tables the commands write.
#include "cli/report/model_agreement.h"
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
// its time less the gaps between kernels; a launch group is one operator.
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
  // The rest is whole kernel boundaries: at least ten kernels a layer for 32 layers.
  const hw::GpuConfig gpu = hw::load_gpu(c.gpu);
  const double gap_ms = double(gpu.step_kernel_gap_cycles()) / (gpu.clock_ghz * 1e6);
  const double gaps = (r.sim_ms - sim) / gap_ms;
  EXPECT_NEAR(gaps, std::round(gaps), 1e-3);
  EXPECT_GE(gaps, 320);
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

// The simulator's results files (ltc bench sim --markdown; cli/report/sim_bench.h): each opens
// as the command's output does (the command that regenerates it) and holds every table header
// the command writes, so a change of the tables' format fails here until the file is rewritten.
TEST(ResultsFiles, SimulatorFilesAreInStepWithTheBench) {
  const std::string dir = std::string(LTC_SOURCE_DIR) + "/docs/results/";
  const std::vector<std::pair<std::string, std::string>> files = {
      {"sim.md", sim_speed_markdown(nlohmann::json::array())},
      {"sim-sample.md", sim_sample_markdown(nlohmann::json::object())},
      {"sim-h200.md", sim_h200_markdown(nlohmann::json::object())},
      {"sim-paper.md", sim_paper_markdown(nlohmann::json::object())},
  };
  for (const auto& [name, empty] : files) {
    const std::string text = read_file(dir + name);
    ASSERT_FALSE(text.empty()) << empty.substr(0, empty.find(')') + 1);
    const std::string opening = empty.substr(0, empty.find('('));
    EXPECT_EQ(text.substr(0, opening.size()), opening) << name;
    std::istringstream lines(empty);
    int headers = 0;
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("| ", 0) != 0) continue;
      ++headers;
      EXPECT_NE(text.find(line + "\n"), std::string::npos) << name << ": " << line;
    }
    EXPECT_GT(headers, 0) << name;
  }
}

}  // namespace
}  // namespace ltc::report
