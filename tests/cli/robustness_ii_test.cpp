// Issue #43's classes, through the `ltc` binary: bounded reads of regular files only, long work
// estimated and refused past its budget, outputs that never overwrite an input nor leave their
// folder, no flag or GPU field silently ignored (a table over every subcommand's flags), the
// checks on traces and calibration data, and one wording per rule (every subcommand's bad input
// is exit 2 with the `ltc: error:` prefix).
#include "tests/cli/cli_run.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

using ltc::test_support::CliRun;
using ltc::test_support::run;

using ltc::test_support::expect_bad_input;

fs::path scratch() {
  return ltc::test_support::scratch_dir("robustness_ii");
}

std::string write_file(const std::string& name, const std::string& text) {
  return ltc::test_support::write_file(scratch(), name, text);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string source(const std::string& rel) {
  return std::string(LTC_SOURCE_DIR) + "/" + rel;
}

const std::string kLutTrace = source("traces/examples/gemm-m3n100k70-int2-int8.lmt");
const std::string kMacTrace = source("traces/examples/gemm-m37n200k300-int4-fp16-mac-s3.lmt");

std::vector<std::string> commands() {
  const CliRun r = run("list commands --json");
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out).at("commands").get<std::vector<std::string>>();
}

// ---- 1. bounded reads and work -------------------------------------------------------------

TEST(Reads, EveryFileInputTakesRegularFilesOnlyAndNeverBlocks) {
  const std::string fifo = (scratch() / "fifo").string();
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string dir = scratch().string();
  // Every flag or argument that names an input file, with the file in place of FILE.
  const std::vector<std::string> readers = {
      "sim FILE",
      "compile run FILE",
      "compile convert FILE " + (scratch() / "c.lmt").string(),
      "decode --gpu a100 --model FILE",
      "gemm --m 1 --n 16 --k 16 --gpu FILE",
      "calibrate --gpu h200 --measurements FILE",
      "gemm --m 1 --n 16 --k 16 --gpu h200 --calibration FILE",
      "sweep FILE --out " + (scratch() / "sw").string() + " --report-only",
      "bench sim --only sample --case-file FILE",
  };
  for (const std::string& reader : readers) {
    for (const auto& [path, kind] :
         std::vector<std::pair<std::string, std::string>>{{"/dev/zero", "is a character device"},
                                                          {fifo, "is a FIFO (named pipe)"},
                                                          {dir, "is a directory"}}) {
      const std::string args = std::regex_replace(reader, std::regex("FILE"), path);
      const auto start = std::chrono::steady_clock::now();
      const CliRun s = run(args);
      EXPECT_EQ(s.code, 2) << "ltc " << args << "\n" << s.err;
      EXPECT_NE(s.err.find(kind), std::string::npos) << "ltc " << args << "\n" << s.err;
      EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                30.0)
          << args;
    }
  }
}

std::string loop_edited_trace() {
  // The example trace with its first lmma loop edited from 4 to 4,000,000,000 trips.
  std::string text = read_file(kLutTrace);
  const size_t at = text.find("      loop 4\n");
  EXPECT_NE(at, std::string::npos);
  text.replace(at, 13, "      loop 4000000000\n");
  return write_file("loop.lmt", text);
}

TEST(Work, LongSimulationsAreEstimatedAndRefusedPastTheBudget) {
  const std::string t = loop_edited_trace();
  const auto start = std::chrono::steady_clock::now();
  expect_bad_input("sim " + t, "--budget-s: this simulation is 3.2e+10 warp instructions");
  EXPECT_NE(run("sim " + t).err.find("--yes to run it anyway"), std::string::npos);
  // The interpreter counts what the program executes, not what its gemm record says.
  expect_bad_input("compile run " + t, "--max-macs: kernel 'gemm.lmma'");
  // The RTL back end's estimate counts the tile's beats: one per core tile and weight plane.
  const std::string g = (scratch() / "g.ltcb").string();
  ASSERT_EQ(run("compile gemm --m 256 --n 4096 --k 4096 --gpu a100-lut4x --out " + g).code, 0);
  // 1048576 m4n256k4 LMMAs of 2 x 4 M2N64K4 tiles and 2 planes: 1.68e7 beats.
  expect_bad_input("sim " + g + " --tc rtl --budget-s 10", "1.68e+07 beats of the RTL tile");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 30.0);
}

TEST(Work, ProgressGoesToAPipeWhenAsked) {
  const CliRun quiet = run("sim " + kLutTrace);
  ASSERT_EQ(quiet.code, 0) << quiet.err;
  EXPECT_TRUE(quiet.err.empty()) << quiet.err;  // stderr is a file here: no progress unasked
  const CliRun asked = run("sim " + kLutTrace + " --progress");
  ASSERT_EQ(asked.code, 0) << asked.err;
  // 273 warp instructions at 7e6 per second.
  EXPECT_NE(asked.err.find("ltc: this simulation is 273 warp instructions, about 3.9e-05 s"),
            std::string::npos)
      << asked.err;
}

// ---- 2. outputs ----------------------------------------------------------------------------

TEST(Outputs, NoCommandOverwritesItsInput) {
  const std::string cfg =
      write_file("cfg.json", read_file(source("traces/examples/tiny-llama.config.json")));
  const std::string before = read_file(cfg);
  expect_bad_input("compile model --model " + cfg + " --out " + cfg, "is the input file");
  EXPECT_EQ(read_file(cfg), before);
  const std::string gpu = write_file("gpu.json", read_file(source("configs/gpus/a100-lut4x.json")));
  expect_bad_input("compile gemm --m 1 --n 64 --k 64 --gpu " + gpu + " --out " + gpu,
                   "is the input file");
  const std::string t = write_file("t.lmt", read_file(kLutTrace));
  expect_bad_input("compile convert " + t + " " + t, "OUT: '" + t + "' is the input file");
  expect_bad_input("compile convert " + t + " " + (scratch() / "." / "t.lmt").string(),
                   "is the input file");
  const std::string m =
      write_file("m.json", read_file(source("configs/calibration/h200-gemm.json")));
  expect_bad_input("calibrate --gpu h200 --measurements " + m + " --out " + m, "--out");
  expect_bad_input("calibrate --gpu h200 --measurements " + m + " --markdown " + m, "--markdown");
  expect_bad_input("calibrate --gpu h200 --measurements " + m + " --shape-folds -1",
                   "--shape-folds: -1 is not valid");
  expect_bad_input("calibrate --gpu h200 --measurements " + m + " --hold-out " + t,
                   "--hold-out: '" + t + "' is not one of the --measurements files");
  EXPECT_EQ(read_file(t), read_file(kLutTrace));
}

TEST(Outputs, ASweepNameCannotLeaveItsOutputFolder) {
  const fs::path out = scratch() / "sweeps" / "a";
  fs::create_directories(out);
  const std::string spec = write_file("evil.json", R"({"name": "../../evil", "grid": []})");
  expect_bad_input("sweep " + spec + " --out " + out.string() + " --report-only",
                   "field 'name': '../../evil' is not a plain file name");
  EXPECT_FALSE(fs::exists(scratch() / "evil.csv"));
  EXPECT_FALSE(fs::exists(scratch() / "evil-summary.json"));
}

TEST(Outputs, ASweepsMarkdownIsNotItsSpec) {
  const std::string text = read_file(source("synth/sweeps/dp4.json"));
  const std::string spec = write_file("md-spec.json", text);
  expect_bad_input("sweep " + spec + " --out " + (scratch() / "md").string() +
                       " --report-only --markdown " + spec,
                   "--markdown");
  EXPECT_EQ(read_file(spec), text);
}

// ---- 3. flags and fields that apply --------------------------------------------------------

// Flags that apply only in some cases: a command line where the flag does not apply, refused
// naming it.
struct NotApplying {
  std::string command, flag, args;
};

std::vector<NotApplying> not_applying() {
  const std::string sweep = "sweep dp4 --out " + (scratch() / "s").string() + " ";
  const std::string out = (scratch() / "x.lmt").string();
  std::vector<NotApplying> cases = {
      {"ltc sim", "--phase", "sim " + kLutTrace + " --phase prefill"},
      {"ltc sim", "--batch", "sim " + kLutTrace + " --batch 8"},
      {"ltc sim", "--context", "sim " + kLutTrace + " --context 64"},
      {"ltc sim", "--seq", "sim " + kLutTrace + " --seq 64"},
      {"ltc sim", "--weights", "sim " + kLutTrace + " --weights int4"},
      {"ltc sim", "--acts", "sim " + kLutTrace + " --acts fp16"},
      {"ltc sim", "--seed", "sim " + kLutTrace + " --seed 3"},
      {"ltc sim", "--per-kernel", "sim " + kLutTrace + " --json --per-kernel"},
      {"ltc sim", "--tc", "sim " + kMacTrace + " --tc rtl"},
      {"ltc sim", "--threads", "sim " + kLutTrace + " --tc rtl --threads 2"},
      {"ltc sim", "--host-profile", "sim " + kLutTrace + " --sample --host-profile"},
      {"ltc sim", "--sample-trips", "sim " + kLutTrace + " --sample-trips 2 3"},
      {"ltc sim", "--sample-waves", "sim " + kLutTrace + " --sample-waves 8"},
      {"ltc sim", "--sample-slice", "sim " + kLutTrace + " --sample-slice 2"},
      {"ltc sim", "--sample-slice-streaming", "sim " + kLutTrace + " --sample-slice-streaming"},
      {"ltc compile gemm", "--seed", "compile gemm --m 1 --n 64 --k 64 --out " + out + " --seed 3"},
      {"ltc compile gemm", "--max-macs",
       "compile gemm --m 1 --n 64 --k 64 --out " + out + " --max-macs 9"},
      {"ltc compile gemm", "--group",
       "compile gemm --m 4 --n 128 --k 256 --weights fp16 --acts fp16 --gpu a100 --group 64 "
       "--out " +
           out},
      {"ltc compile model", "--group",
       "compile model --model llama2-7b --weights fp16 --acts fp16 --group 64 --out " + out},
      {"ltc decode", "--precompute",
       "decode --model llama2-7b --gpu a100 --weights fp16 --acts fp16 --precompute fused"},
      {"ltc prefill", "--precompute",
       "prefill --model llama2-7b --gpu a100-lut4x --weights fp16 --acts fp16 --precompute "
       "separate"},
      {"ltc decode", "--expert-load", "decode --model llama2-7b --gpu a100 --expert-load zipf:1"},
      {"ltc prefill", "--expert-load", "prefill --model llama2-7b --gpu a100 --expert-load zipf:1"},
      {"ltc compile model", "--expert-load",
       "compile model --model llama2-7b --expert-load zipf:1 --out " + out},
      {"ltc sim", "--expert-load", "sim " + kLutTrace + " --expert-load zipf:1"},
      {"ltc ppa", "--weight", "ppa --design add --weight fp16"},
      {"ltc ppa", "--wbits", "ppa --design mac --act int8 --wbits 2"},
      {"ltc ppa", "--weights", "ppa --design mac --acts int8 --weights int2"},
      {"ltc ppa", "--cycles", "ppa --activity assumed --cycles 100"},
      {"ltc ppa", "--netlist-sim", "ppa --activity assumed --netlist-sim iverilog"},
      {"ltc ppa", "--seed", "ppa --activity assumed --seed 2"},
      {"ltc ppa", "--gate-check", "ppa --activity assumed --gate-check"},
      {"ltc ppa", "--activity-timing", "ppa --activity assumed --activity-timing unit"},
      {"ltc ppa", "--gpu-set", "ppa --gpu-set lut_tensor.core.k=8"},
      {"ltc ppa", "--design", "ppa --gpu a100-lut4x --design mac"},
      {"ltc ppa", "--m", "ppa --gpu a100-lut4x --m 4"},
      {"ltc ppa", "--n", "ppa --gpu a100-lut4x --n 32"},
      {"ltc ppa", "--k", "ppa --gpu a100-lut4x --k 8"},
      {"ltc ppa", "--acc", "ppa --gpu a100-lut4x --acc fp32"},
      {"ltc ppa", "--pipeline-stages", "ppa --gpu a100-lut4x --pipeline-stages 2"},
      {"ltc verify", "--weight", "verify --design lut --weight fp16"},
      {"ltc verify", "--wbits", "verify --design mac --act int8 --wbits 3"},
      {"ltc verify", "--weights", "verify --design mac --acts int8 --weights int3"},
      {"ltc verify", "--table", "verify --design mac --table fp16"},
      {"ltc calibrate", "--shape-folds",
       "calibrate --gpu h200 --measurements " + source("configs/calibration/h200-gemm.json") +
           " --no-loso --shape-folds 4"},
      {"ltc sweep", "--jobs", sweep + "--executor slurm -j 4"},
      {"ltc sweep", "--retry-failed", sweep + "--report-only --retry-failed"},
      {"ltc sweep", "--keep-work", sweep + "--report-only --keep-work"},
      {"ltc sweep", "--limit", sweep + "--report-only --limit 3"},
      {"ltc sweep", "--timeout-s", sweep + "--report-only --timeout-s 9"},
  };
  for (const char* slurm :
       {"--partition cpu", "--time-limit 30:00", "--mem 4G", "--cpus-per-task 2",
        "--sbatch-template t.sh", "--sbatch-arg=--qos=x", "--max-running 2", "--max-retries 1",
        "--poll-s 5", "--lost-after-s 9", "--ltc-bin ltc"}) {
    const std::string s = slurm;
    cases.push_back({"ltc sweep", s.substr(0, s.find_first_of(" =")), sweep + s});
  }
  return cases;
}

// Every other flag of every subcommand applies to whatever the command is given (each changes
// what it computes or prints, or is checked against the others where it does not).
const std::map<std::string, std::string> kAlwaysApplies = {
    {"ltc gemm",
     "--m --n --k --gpu --gpu-set --weights --acts --tables --quantize-tables --calibration "
     "--json"},
    {"ltc verify",
     "--design --m --n --k --acts --act --acc --out --pipeline --vectors --seed --stall --vcd "
     "--cache "
     "--json"},
    {"ltc decode",
     "--model --gpu --gpu-set --batch --context --weights --acts --precompute "
     "--quantize-tables --kernels --json"},
    {"ltc prefill",
     "--model --gpu --gpu-set --batch --seq --weights --acts --quantize-tables --kernels --json"},
    {"ltc calibrate",
     "--gpu --measurements --out --no-lomo --no-loso --markdown --hold-out --json"},
    {"ltc compile gemm",
     "--gpu-set --m --n --k --weights --acts --gpu --path --stages "
     "--quantize-tables --out --verify --json"},
    {"ltc compile model",
     "--gpu-set --model --phase --batch --context --seq --weights --acts --gpu --group "
     "--no-fuse --quantize-tables --out --json"},
    {"ltc compile run", "--seed --max-macs --json"},
    {"ltc compile convert", ""},
    {"ltc sim",
     "--gpu --gpu-set --functional --kernel --quantum --sample --block-limit --model "
     "--json --budget-s --yes --progress"},
    {"ltc ppa",
     "--gpu --acts --act --clock-ns --activity --workdir --timeout-s --scale-to-nm --scale-vdd "
     "--lib --json"},
    {"ltc gpu-energy", "--gpu --ppa --scale-to-nm --scale-vdd --out --json"},
    {"ltc sweep",
     "--out --progress --report-only --json --markdown --executor --lib --activity-timing"},
    {"ltc sweep-task", ""},
    {"ltc report", "--out --jobs --sweeps --no-ppa --quick"},
    {"ltc bench rtl",
     "--cycles --design --m --n --k --wbits --weights --no-systemc --cache --json"},
    {"ltc bench compile", "--model --batch --context --weights --acts --gpu --json"},
    {"ltc bench roofline", "--estimates --json"},
    {"ltc bench kernels", "--model --gpu --m --wbits --weights --markdown --json --jobs"},
    {"ltc bench agreement", "--model --full --markdown --energy --json --jobs"},
    {"ltc bench sim",
     "--only --full --calibration --kind --gpu --max-m --full-cache --case --trips "
     "--slice --slice-streaming --large --case-file --confidence-out --markdown --per-kernel "
     "--threads --baseline --repeat --json"},
    {"ltc bench ppa",
     "--design --m --n --k --wbits --weights --act --acts --sweep --out --jobs --vs-unit --lib "
     "--activity-timing "
     "--json"},
    {"ltc numerics", "--m --n --k --acts --weights --lut-k --quantize-tables --seed --json"},
    {"ltc list", "--json"},
    {"ltc show gpu", "--gpu-set --json"},
    {"ltc show model", "--context --json"},
};

std::set<std::string> help_flags(const std::string& command) {
  const CliRun r = run(command.substr(4) + " --help");
  EXPECT_EQ(r.code, 0) << command;
  std::set<std::string> flags;
  const std::regex flag(R"(^\s+(?:-\w,\s*)?(--[a-z0-9-]+))");
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, flag) && m[1] != "--help") flags.insert(m[1]);
  }
  return flags;
}

TEST(Flags, EverySubcommandsFlagAppliesOrIsRefusedWhereItDoesNot) {
  const auto cases = not_applying();
  int classified = 0;
  for (const std::string& command : commands()) {
    ASSERT_TRUE(kAlwaysApplies.count(command)) << command << " is not in the table";
    std::set<std::string> known;
    std::istringstream always(kAlwaysApplies.at(command));
    for (std::string f; always >> f;) known.insert(f);
    for (const auto& c : cases) {
      if (c.command == command) known.insert(c.flag);
    }
    for (const std::string& f : help_flags(command)) {
      EXPECT_TRUE(known.count(f)) << command << " " << f
                                  << ": new flag; say in this table where it applies";
      ++classified;
    }
  }
  EXPECT_GT(classified, 150);
  for (const auto& c : cases) expect_bad_input(c.args, c.flag);
}

TEST(Flags, GpuFieldsTheSimulatorDoesNotReadAreRefused) {
  for (const auto& [field, names] : std::vector<std::pair<std::string, std::string>>{
           {"lut_tensor.core.wbits=8", "field 'lut_tensor.core.wbits' applies only"},
           {"lut_tensor.core.act=fp16", "field 'lut_tensor.core.act' applies only with --model"},
           {"achievable.dram_bw_fraction=0.5", "field 'achievable.dram_bw_fraction'"},
           {"tensor_area_mm2_per_sm=1", "the simulator does not read it"}}) {
    expect_bad_input("sim " + kLutTrace + " --gpu-set " + field, names);
  }
  // A trace without lmma reads no LUT core at all.
  expect_bad_input("sim " + kMacTrace + " --gpu-set lut_tensor.tiles_per_tensor_core=8",
                   "to a trace or model step with lmma instructions");
  // Fields the simulator reads still change its result, core fields included.
  const CliRun base = run("sim " + kLutTrace + " --json");
  for (const char* field : {"lut_tensor.core.pipeline_stages=8", "sm.lmma_latency_cycles=60"}) {
    const CliRun changed = run("sim " + kLutTrace + " --json --gpu-set " + field);
    ASSERT_EQ(changed.code, 0) << changed.err;
    EXPECT_GT(nlohmann::json::parse(changed.out).at("cycles"),
              nlohmann::json::parse(base.out).at("cycles"))
        << field;
  }
}

// ---- 4. inputs the checks let through ------------------------------------------------------

TEST(Inputs, OutOfBoundsTraceAddressesAreRefusedByEveryReader) {
  std::string text = read_file(kLutTrace);
  const std::string from = "ldg t=2 bytes=256 addr=bx*256+wx*256";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "ldg t=2 bytes=256 addr=bx*256+wx*256-512");
  const std::string t = write_file("neg.lmt", text);
  for (const char* c : {"sim ", "compile run "}) {
    expect_bad_input(c + t, "reaches bytes [-512, ");
  }
}

TEST(Inputs, ADamagedBinaryTraceIsRefused) {
  const std::string good = (scratch() / "good.ltcb").string();
  ASSERT_EQ(run("compile convert " + kLutTrace + " " + good).code, 0);
  std::string bin = read_file(good);
  bin[bin.size() / 2] = char(bin[bin.size() / 2] ^ 4);
  const std::string bad = write_file("bad.ltcb", bin);
  expect_bad_input("sim " + bad, "checksum mismatch: the file is damaged");
  expect_bad_input("compile run " + bad, "checksum mismatch");
}

TEST(Inputs, CalibrationWithNothingToFitOrUnexplainableDataIsRefused) {
  expect_bad_input(
      "calibrate --gpu h200 --measurements " + write_file("empty.json", R"({"gemm": []})"),
      "hold no measurement (no step, no GEMM): nothing to fit");
  nlohmann::json j = nlohmann::json::parse(read_file(source("configs/calibration/h200-gemm.json")));
  j["gemm"][0]["ms"] = j["gemm"][0]["ms"].get<double>() * 1e6;
  expect_bad_input("calibrate --gpu h200 --measurements " + write_file("absurd.json", j.dump()),
                   "the fit cannot explain the data: fp16 GEMM 'llama2-13b-qkv'");
  // A GEMM-only file fits nothing: it is checked, but it makes no GPU file.
  expect_bad_input("calibrate --gpu h200 --measurements " +
                       source("configs/calibration/h200-gemm.json") + " --out " +
                       (scratch() / "h.json").string(),
                   "--out: these measurements fit no parameter");
  EXPECT_FALSE(fs::exists(scratch() / "h.json"));
}

TEST(Inputs, PpaTileRangesAreTheOnesThatWork) {
  EXPECT_NE(run("ppa --help").out.find("M * N at most 4096"), std::string::npos);
  expect_bad_input("ppa --m 4096 --n 4096 --k 8 --wbits 8", "--m/--n: a tile of 4096 x 4096");
  expect_bad_input("bench ppa --m 64 --n 128", "M * N at most 4096");
  expect_bad_input("verify --m 128 --n 64", "M * N at most 4096");
}

// ---- 5. one wording per rule; every subcommand's bad input ---------------------------------

TEST(Wording, EverySubcommandRefusesBadInputWithThePrefix) {
  const std::string out = (scratch() / "w.lmt").string();
  const std::map<std::string, std::pair<std::string, std::string>> bad = {
      {"ltc gemm", {"gemm --m 0 --n 16 --k 16", "--m"}},
      {"ltc verify", {"verify --vectors 0", "--vectors"}},
      {"ltc decode", {"decode --model llama2-7b --gpu a100 --batch -1", "--batch"}},
      {"ltc prefill", {"prefill --model llama2-7b --gpu a100 --seq abc", "--seq"}},
      {"ltc calibrate", {"calibrate --gpu h200", "--measurements"}},
      {"ltc compile gemm",
       {"compile gemm --m 1 --n 1 --k 1 --out " + out + " --stages 1", "--stages"}},
      {"ltc compile model", {"compile model --model nope --out " + out, "--model"}},
      {"ltc compile run", {"compile run /nonexistent.lmt", "/nonexistent.lmt"}},
      {"ltc compile convert", {"compile convert " + kLutTrace, "out"}},
      {"ltc sim", {"sim " + kLutTrace + " --quantum 0", "--quantum"}},
      {"ltc ppa", {"ppa --clock-ns 0", "--clock-ns"}},
      {"ltc gpu-energy", {"gpu-energy --gpu a100-lut4x --ppa /nonexistent.jsonl", "/nonexistent"}},
      {"ltc sweep", {"sweep dp4 --out x --limit -3", "--limit"}},
      {"ltc sweep-task", {"sweep-task /nonexistent/batch-1.json 0", "/nonexistent/batch-1.json"}},
      {"ltc report", {"report --out x -j 0", "-j"}},
      {"ltc bench rtl", {"bench rtl --cycles 10", "--cycles"}},
      {"ltc bench compile", {"bench compile --batch 0", "--batch"}},
      {"ltc bench roofline", {"bench roofline --estimates -5", "--estimates"}},
      {"ltc bench kernels", {"bench kernels --wbits 12", "--wbits"}},
      {"ltc bench agreement", {"bench agreement --model nope", "--model"}},
      {"ltc bench sim", {"bench sim --only nothing", "--only"}},
      {"ltc bench ppa", {"bench ppa --design nope", "--design"}},
      {"ltc numerics", {"numerics --lut-k 0", "--lut-k"}},
      {"ltc list", {"list nothing", "what"}},
      {"ltc show gpu", {"show gpu a100 --gpu-set sms=0", "sms"}},
      {"ltc show model", {"show model llama2-7b --context 0", "--context"}},
  };
  for (const std::string& c : commands()) {
    ASSERT_TRUE(bad.count(c)) << c << " has no bad-input case";
    expect_bad_input(bad.at(c).first, bad.at(c).second);
  }
  // Argument-parser errors are worded like the others.
  expect_bad_input("gemm --m abc --n 1 --k 1", "--m");
  expect_bad_input("sim " + kLutTrace + " --no-such-flag", "--no-such-flag");
  // A zero period is out of range like a negative one.
  expect_bad_input("ppa --clock-ns -1", "'-1' is out of range (valid: 0.001 .. 1000000)");
  expect_bad_input("ppa --clock-ns 0", "'0' is out of range (valid: 0.001 .. 1000000)");
}

TEST(Wording, LoopCountsAndVersionsSayOneThing) {
  std::string text = read_file(kLutTrace);
  for (const char* count : {"0", "-3"}) {
    std::string t = text;
    t.replace(t.find("loop 2"), 6, std::string("loop ") + count);
    expect_bad_input("sim " + write_file("l.lmt", t),
                     std::string("loop count must be >= 1 (got ") + count + ")");
  }
  expect_bad_input("sim " + write_file("empty.lmt", ""),
                   "expected 'ltc-trace V' on the first line, V one of 2 .. 5");
}

}  // namespace
