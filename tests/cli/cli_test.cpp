// The `ltc` command-line contract (docs/cli.md): exit codes, --json output, errors that name the
// flag.
#include "cli/report/numerics.h"
#include "common/error.h"
#include "common/file_io.h"
#include "sim/sampler/sampling.h"
#include "tests/cli/cli_run.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using ltc::test_support::CliRun;
using ltc::test_support::run;

TEST(Cli, HelpAndVersionExitZero) {
  EXPECT_EQ(run("--help").code, 0);
  const CliRun v = run("--version");
  EXPECT_EQ(v.code, 0);
  EXPECT_NE(v.out.find("ltc "), std::string::npos);
}

TEST(Cli, UnknownSubcommandOrFlagIsBadInput) {
  EXPECT_EQ(run("no-such-command").code, 2);
  EXPECT_EQ(run("numerics --no-such-flag").code, 2);
}

TEST(Cli, BadValueNamesTheFlagAndValidValues) {
  const CliRun r = run("numerics --acts fp17");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--acts"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("fp8e4m3"), std::string::npos) << r.err;
  const CliRun w = run("numerics --weights int9");
  EXPECT_EQ(w.code, 2);
  EXPECT_NE(w.err.find("--weights"), std::string::npos) << w.err;
}

TEST(Cli, JsonIsOneObjectOnStdout) {
  const CliRun r = run("numerics --m 1 --n 16 --k 64 --acts int8 --weights int4 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);  // throws if anything else is on stdout
  EXPECT_EQ(j.at("outputs").get<int>(), 16);
  // Integer activations: every output matches the grouped integer reference.
  EXPECT_EQ(j.at("grouped_integer_exact_outputs").get<int>(), 16);
  EXPECT_EQ(j.at("max_rel_err").get<double>() < 1e-12, true);
}

// `ltc calibrate` on the GEMM-only file (nothing to fit: no steps, no profile GEMMs) reports
// the GPU file's section against every GEMM, as one JSON object.
TEST(Cli, CalibrateJsonReportsEveryCase) {
  const std::string file = std::string(LTC_SOURCE_DIR) + "/configs/calibration/h200-gemm.json";
  const CliRun r = run("calibrate --gpu h200 --measurements " + file + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("gemms").size(), 42u);
  EXPECT_EQ(j.at("steps").size(), 0u);
  EXPECT_EQ(j.at("by_dtype").at(0).at("group"), "fp16");
  EXPECT_NE(j.at("command").get<std::string>().find("ltc calibrate --gpu h200"), std::string::npos);
}

// `ltc sim --sample --sample-slice-streaming` runs a GEMV (a streaming kernel: its blocks read
// weight columns of their own) on a slice of the GPU and says so in the JSON; by default it runs
// whole; a bad N names the flag; the slice flags need --sample.
TEST(Cli, SampledSimulationOnASliceOfTheGpu) {
  const auto trace = std::filesystem::temp_directory_path() / "ltc_cli_slice_gemv.ltcb";
  ASSERT_EQ(run("compile gemm --m 1 --n 4096 --k 4096 --weights fp16 --acts fp16 --path mac "
                "--gpu a100 --out " +
                trace.string())
                .code,
            0);
  const CliRun r =
      run("sim " + trace.string() + " --sample --sample-slice 4 --sample-slice-streaming --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("kernels").size(), 1u);
  EXPECT_EQ(j.at("kernels").at(0).at("sample").at("method"), "stream-slice");
  EXPECT_EQ(j.at("kernels").at(0).at("sample").at("slice"), 4);
  const CliRun off = run("sim " + trace.string() + " --sample --json");
  ASSERT_EQ(off.code, 0) << off.err;
  EXPECT_EQ(nlohmann::json::parse(off.out).at("kernels").at(0).at("sample").at("method"), "full");
  const CliRun bad = run("sim " + trace.string() + " --sample --sample-slice 0");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--sample-slice"), std::string::npos) << bad.err;
  for (const char* flag : {"--sample-slice 4", "--sample-slice-streaming"}) {
    const CliRun alone = run("sim " + trace.string() + " " + flag);  // needs --sample
    EXPECT_EQ(alone.code, 2) << flag;
    EXPECT_NE(alone.err.find("--sample"), std::string::npos) << alone.err;
  }
  std::filesystem::remove(trace);
}

// `ltc sim --json` of the GEMM `ltc compile gemm ARGS` lowers (through a temporary trace file).
nlohmann::json full_sim(const std::string& args) {
  const std::string trace =
      (std::filesystem::temp_directory_path() / "ltc_cli_full_sim.lmt").string();
  const CliRun c = run("compile gemm " + args + " --out " + trace);
  EXPECT_EQ(c.code, 0) << c.err;
  const CliRun f = run("sim " + trace + " --json");
  std::filesystem::remove(trace);
  EXPECT_EQ(f.code, 0) << f.err;
  return f.code == 0 ? nlohmann::json::parse(f.out) : nlohmann::json::object();
}

// The sampler's bench flags belong to `--only sample`: elsewhere they are refused before any
// simulation runs, naming the flags.
TEST(Cli, BenchSimSampleFlagsNeedOnlySample) {
  for (const char* flag : {"--large", "--per-kernel", "--slice-streaming"}) {
    const CliRun r = run(std::string("bench sim --only gemm ") + flag);
    EXPECT_EQ(r.code, 2) << flag;
    EXPECT_NE(r.err.find("--only sample"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(flag), std::string::npos) << r.err;
  }
}

// Every run-specific flag of ltc bench sim given to another run is refused, naming the runs it
// goes with (the h200 and paper runs' flags too, which were once ignored elsewhere).
TEST(Cli, BenchSimFlagsGoWithTheirRunsOnly) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"bench sim --only sample --max-m 5", "--only h200"},
      {"bench sim --only gemm --gpu a100", "--only h200"},
      {"bench sim --only sample --kind int8", "--only h200"},
      {"bench sim --only sample --calibration x.json", "--only h200"},
      {"bench sim --only h200 --full", "--only paper"},
      {"bench sim --only paper --case x", "--only sample, --only h200"},
      {"bench sim --only gemm --slice 4", "--only sample"},
      {"bench sim --only sample --threads 2", "--threads goes with"},
      {"bench sim --only h200 --threads", "--threads goes with"},
      {"bench sim --only moe --baseline ltc", "--baseline goes with"},
      {"bench sim --only gemm --baseline ltc", "--baseline goes with --threads"},
      {"bench sim --threads 0", "--threads: '0'"},
      {"bench sim --only sample --repeat 3", "--repeat goes with"},
      {"bench sim --only gemm --repeat 3", "--repeat goes with --threads"},
      {"bench sim --only gemm --threads 1 --repeat 0", "--repeat"},
      {"bench sim --only gemm --threads 1 --baseline /nonexistent/ltc",
       "--baseline: '/nonexistent/ltc' is not an executable file"},
      {"bench sim --only gemm --threads 1 --baseline " LTC_SOURCE_DIR "/README.md",
       "is not an executable file"},
  };
  for (const auto& [args, want] : cases) {
    const CliRun r = run(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_NE(r.err.find(want), std::string::npos) << args << ": " << r.err;
  }
  // The speed table may not overwrite the serial simulator's binary.
  const std::string bin =
      (std::filesystem::temp_directory_path() / ("ltc-baseline-" + std::to_string(::getpid())))
          .string();
  { std::ofstream(bin) << "#!/bin/sh\nexit 1\n"; }
  std::filesystem::permissions(bin, std::filesystem::perms::owner_all);
  const CliRun r =
      run("bench sim --only gemm --threads 1 --baseline " + bin + " --markdown " + bin);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--markdown: '" + bin + "' is the input file"), std::string::npos) << r.err;
  EXPECT_EQ(ltc::read_text(bin), "#!/bin/sh\nexit 1\n");
  std::filesystem::remove(bin);
}

// The sampled bench's "work": the full run's warp instructions over those the sampled run
// simulated. The full count is checked against a full `ltc sim` of the same GEMM (summed over its
// kernels and opcodes); the FP16 512x4096x4096 GEMM runs on a slice, so less is simulated.
TEST(Cli, BenchSimSampleWorkIsTheFullRunsInstructionsOverTheSimulated) {
  const CliRun r = run("bench sim --only sample --case \"FP16 512x4096x4096 (MAC)\" --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto row = nlohmann::json::parse(r.out).at("cases").at(0);
  const double full = row.at("full_warp_instructions").get<double>();
  const double simulated = row.at("simulated_warp_instructions").get<double>();
  EXPECT_GT(simulated, 0);
  EXPECT_LT(simulated, full / 2);
  EXPECT_DOUBLE_EQ(row.at("work_ratio").get<double>(), full / simulated);
  const auto kernels =
      full_sim("--m 512 --n 4096 --k 4096 --gpu a100 --weights fp16 --acts fp16 --path mac")
          .at("kernels");
  double issued = 0;
  for (const auto& k : kernels) {
    for (const auto& [op, n] : k.at("instructions").items()) issued += n.get<double>();
  }
  EXPECT_EQ(full, issued);
}

// `--case-file`: a user's own cases. The bench's full run of a GEMM case is the full `ltc sim` of
// the trace `ltc compile gemm` gives for the same shape (cycle for cycle).
TEST(Cli, BenchSimSampleCaseFileRunsAUsersCases) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string cases = (dir / "ltc_cli_cases.json").string();
  std::ofstream(cases) << R"({"description": "one GEMM", "cases": [
      {"name": "small FP16", "gpu": "a100", "m": 64, "n": 2048, "k": 1024,
       "weights": "fp16", "acts": "fp16", "path": "mac", "note": "a test"}]})";
  const CliRun r = run("bench sim --only sample --case-file " + cases + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto rows = nlohmann::json::parse(r.out).at("cases");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("case"), "small FP16");
  EXPECT_EQ(rows[0].at("full_cycles"),
            full_sim("--m 64 --n 2048 --k 1024 --gpu a100 --weights fp16 --acts fp16 --path mac")
                .at("cycles"));
  std::filesystem::remove(cases);
}

// --case-file twice runs both files' cases; --confidence-out writes the per-method table that
// the sampler reads, each row the tally of the per-kernel errors the --json run printed (checked
// here from those rows: mean rounded to 1e-4, largest rounded up to 1e-3) and read back by the
// sampler's loader; --markdown writes the results-file tables of the same run.
TEST(Cli, BenchSimSampleWritesItsConfidenceTableAndResultsFile) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string a = (dir / "ltc_cli_cases_a.json").string();
  const std::string b = (dir / "ltc_cli_cases_b.json").string();
  const std::string conf = (dir / "ltc_cli_confidence.json").string();
  const std::string md = (dir / "ltc_cli_sample.md").string();
  std::ofstream(a) << R"({"description": "a", "cases": [
      {"name": "LUT GEMV", "gpu": "a100-lut4x", "m": 1, "n": 4096, "k": 4096,
       "weights": "int2", "acts": "int8", "path": "lut"}]})";
  std::ofstream(b) << R"({"description": "b", "cases": [
      {"name": "small FP16", "gpu": "a100", "m": 64, "n": 2048, "k": 1024,
       "weights": "fp16", "acts": "fp16", "path": "mac"}]})";
  const CliRun r = run("bench sim --only sample --case-file " + a + " --case-file " + b +
                       " --confidence-out " + conf + " --markdown " + md + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  ASSERT_EQ(out.at("cases").size(), 2u);
  std::map<std::string, std::vector<double>> errors;  // by row, from the per-kernel rows
  for (const auto& c : out.at("cases")) {
    for (const auto& k : c.at("kernels")) {
      if (k.at("row") == "exact") continue;
      errors[k.at("row").get<std::string>()].push_back(std::abs(k.at("error").get<double>()));
    }
  }
  const auto table = nlohmann::json::parse(ltc::read_text(conf));
  ASSERT_GT(errors.size(), 0u) << r.out;
  ASSERT_EQ(table.at("methods").size(), errors.size());
  for (const auto& m : table.at("methods")) {
    const std::string row =
        ltc::sim::confidence_row(m.at("method").get<std::string>(), m.value("gemm", false));
    ASSERT_TRUE(errors.count(row)) << row;
    const std::vector<double>& e = errors.at(row);
    double sum = 0, largest = 0;
    for (double x : e) sum += x, largest = std::max(largest, x);
    EXPECT_EQ(m.at("kernels").get<size_t>(), e.size()) << row;
    EXPECT_NEAR(m.at("mean").get<double>(), sum / double(e.size()), 0.5e-4) << row;
    EXPECT_GE(m.at("max").get<double>(), largest) << row;
    EXPECT_LT(m.at("max").get<double>(), largest + 1e-3) << row;
  }
  // The sampler's loader reads the table back, row for row.
  const std::vector<ltc::sim::ConfidenceRow> back = ltc::sim::read_confidence(conf);
  ASSERT_EQ(back.size(), table.at("methods").size());
  for (size_t i = 0; i < back.size(); ++i) {
    const auto& m = table.at("methods")[i];
    EXPECT_EQ(back[i].method, m.at("method").get<std::string>());
    EXPECT_EQ(back[i].gemm, m.value("gemm", false));
    EXPECT_EQ(back[i].kernels, m.at("kernels").get<int64_t>());
    EXPECT_EQ(back[i].mean, m.at("mean").get<double>());
    EXPECT_EQ(back[i].max, m.at("max").get<double>());
  }
  const std::string text = ltc::read_text(md);
  EXPECT_EQ(text.rfind("Sampled against full simulation", 0), 0u) << text;
  EXPECT_NE(text.find("| LUT GEMV | a100-lut4x |"), std::string::npos) << text;
  EXPECT_NE(text.find("| small FP16 | a100 |"), std::string::npos) << text;
  // Outside --only sample both are refused, naming the mode they go with.
  const CliRun wrong = run("bench sim --only gemm --confidence-out " + conf);
  EXPECT_EQ(wrong.code, 2);
  EXPECT_NE(wrong.err.find("--only sample"), std::string::npos) << wrong.err;
  EXPECT_EQ(run("bench sim --only rtl --markdown " + md).code, 2);
  // Nor may either overwrite an input.
  const CliRun clobber = run("bench sim --only sample --case-file " + a + " --markdown " + a);
  EXPECT_EQ(clobber.code, 2);
  EXPECT_NE(clobber.err.find("--markdown"), std::string::npos) << clobber.err;
  for (const auto& f : {a, b, conf, md}) std::filesystem::remove(f);
}

// A bad case file stops the bench before any simulation, naming the file, the case and the
// field; the shipped sets load.
TEST(Cli, BenchSimSampleCaseFileErrorsNameTheCaseAndField) {
  const std::string cases =
      (std::filesystem::temp_directory_path() / "ltc_cli_bad_cases.json").string();
  const std::string gemm = R"("gpu": "a100", "weights": "fp16", "acts": "fp16")";
  const std::pair<std::string, std::vector<std::string>> bad[] = {
      {R"({"cases": [{"name": "a", "m": 0, "n": 8, "k": 8, )" + gemm + "}]}",
       {"case 0 (\"a\")", "'m'", "1..2147483648"}},
      {R"({"cases": [{"name": "a", "m": 8, "n": 8, "k": 8, "phse": "x", )" + gemm + "}]}",
       {"case 0", "unknown field 'phse'"}},
      {R"({"cases": [{"name": "a", "m": 8, "n": 8, "k": 8, )" + gemm + "}, " +
           R"({"name": "a", "m": 8, "n": 8, "k": 8, )" + gemm + "}]}",
       {"case 1", "name \"a\" is taken"}},
      {R"({"cases": [{"name": "s", "model": "llama2-7b", "phase": "decod", "length": 8, )" + gemm +
           "}]}",
       {"case 0 (\"s\")", "'phase'", "prefill"}},
      {R"({"cases": [{"name": "s", "model": "llama2-7b", "m": 8, "n": 8, "k": 8, )" + gemm + "}]}",
       {"either a GEMM"}},
      {R"({"cases": [{"name": "g", "m": 8, "n": 8, "k": 8, "gpu": "a10", "weights": "fp16",
           "acts": "fp16"}]})",
       {"case 0 (\"g\")", "a100-lut4x"}},
      {R"({"cases": []})", {"'cases' is empty"}},
      {"[1", {"not valid JSON", "line 1, column 3"}},
      {"[1]", {"not a JSON object"}},
  };
  for (const auto& [text, want] : bad) {
    std::ofstream(cases) << text;
    const CliRun r = run("bench sim --only sample --case-file " + cases);
    EXPECT_EQ(r.code, 2) << text;
    EXPECT_NE(r.err.find(cases), std::string::npos) << r.err;
    for (const std::string& w : want) EXPECT_NE(r.err.find(w), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("sampled vs full"), std::string::npos) << "ran before refusing";
  }
  std::filesystem::remove(cases);
  // The shipped sets load (a --case that matches nothing stops after loading them).
  for (const char* set : {"bench", "large", "held-out", "held-out-2", "held-out-3"}) {
    const CliRun r = run(std::string("bench sim --only sample --case-file ") + LTC_SOURCE_DIR +
                         "/configs/sampling/" + set + ".json --case no-such-case");
    EXPECT_EQ(r.code, 2) << set;
    EXPECT_NE(r.err.find("no case of"), std::string::npos) << set << ": " << r.err;
  }
}

TEST(Numerics, TableQuantizationErrorIsWithinItsStepSize) {
  // An INT8 table entry is off by at most half a step, max|T|/254, so relative to sum|a*w| the
  // error cannot exceed about 1/254 per output (hand bound); FP16 tables are 2^-11-accurate.
  ltc::report::NumericsOptions o;
  o.m = 1;
  o.n = 32;
  o.k = 256;
  o.quantize_table = true;
  const auto q = ltc::report::run_numerics(o);
  EXPECT_LT(q.max_rel, 1.0 / 254);
  o.quantize_table = false;
  const auto f = ltc::report::run_numerics(o);
  EXPECT_LT(f.max_rel, 4 * 4 * 0x1p-11);  // K-1 table adds + accumulation, generous
  EXPECT_LT(f.rms_rel, q.rms_rel);
}

TEST(Report, OpensWithTheSummaryAndGivesEveryPlotItsDataAndCommands) {
  const auto dir = std::filesystem::temp_directory_path() / "ltc_report_test";
  std::filesystem::remove_all(dir);
  // Every section but the PPA sweeps, on fewer cases (the browser test, label report, renders it).
  const CliRun r = run("report --out " + dir.string() + " --no-ppa --quick");
  ASSERT_TRUE(std::filesystem::exists(dir / "index.html")) << r.err;
  auto read = [](const std::filesystem::path& p) {
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  const std::string html = read(dir / "index.html");
  EXPECT_EQ(html.find("This part failed"), std::string::npos) << r.err;
  // The summary comes before the first section.
  EXPECT_LT(html.find("id=\"paper-vs-ltc\""), html.find("<section>"));
  // Every plot has its spec beside it and its data as CSV in the folder.
  size_t plots = 0;
  for (size_t pos = html.find("<div class=\"plot\" id=\"plot-"); pos != std::string::npos;
       pos = html.find("<div class=\"plot\" id=\"plot-", pos + 1)) {
    ++plots;
    const size_t start = pos + std::string("<div class=\"plot\" id=\"plot-").size();
    const std::string name = html.substr(start, html.find('"', start) - start);
    EXPECT_NE(html.find("id=\"plot-" + name + "-spec\""), std::string::npos) << name;
    EXPECT_TRUE(std::filesystem::exists(dir / (name + ".csv"))) << name;
  }
  EXPECT_GE(plots, 10u);
  // Each numerics run carries the command that reproduces it: 2 activation types x 2 weight
  // formats x table quantization off/on in --quick.
  const std::string csv = read(dir / "numerics.csv");
  size_t commands = 0;
  for (size_t pos = csv.find("ltc numerics --m"); pos != std::string::npos;
       pos = csv.find("ltc numerics --m", pos + 1)) {
    ++commands;
  }
  EXPECT_EQ(commands, 8u);
  // Nothing from the network: no script or stylesheet with a source.
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(r.code, 0) << r.err;
  std::filesystem::remove_all(dir);
}

}  // namespace
