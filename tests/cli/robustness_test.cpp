// Issue #11's classes, through the `ltc` binary: every bad input is exit 2 naming the flag, file or
// line (a table over every subcommand); nothing the user gave is silently misread; the numbers
// printed are the ones the model means; first use (examples, `ltc list`) works.
#include "model/hw/gpu.h"
#include "model/roofline/machine.h"
#include "tests/cli/cli_run.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

using ltc::test_support::CliRun;
using ltc::test_support::run;

fs::path scratch() {
  const fs::path d = fs::temp_directory_path() / "ltc_robustness";
  fs::create_directories(d);
  return d;
}

std::string write_file(const std::string& name, const std::string& text) {
  const fs::path p = scratch() / name;
  std::ofstream(p) << text;
  return p.string();
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

std::string config(const std::string& name) {
  return std::string(LTC_SOURCE_DIR) + "/configs/" + name;
}

// A GPU file: the built-in a100-lut4x with one edit.
std::string gpu_with(const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
  // The whole configuration (the file names a base and only the fields that differ).
  nlohmann::json g = ltc::hw::load_gpu("a100-lut4x");
  edit(g);
  return write_file(name + ".json", g.dump());
}

// The tiny LLaMA sample config with extra fields.
std::string model_with(const std::string& name, const nlohmann::json& extra) {
  nlohmann::json m =
      read_json(std::string(LTC_SOURCE_DIR) + "/traces/examples/tiny-llama.config.json");
  m.update(extra);
  return write_file(name + ".config.json", m.dump());
}

std::vector<std::string> commands() {
  const CliRun r = run("list commands --json");
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out).at("commands").get<std::vector<std::string>>();
}

// ---- group 4: first use -------------------------------------------------------------------

TEST(FirstUse, EveryHelpHasExamplesAndNoFormattingGlitches) {
  std::vector<std::string> all = commands();
  ASSERT_GT(all.size(), 15u);
  all.push_back("ltc");
  all.push_back("ltc compile");
  all.push_back("ltc bench");
  const std::regex glitch(R"(INT:|FLOAT:|\{false\}|\{true\})");
  for (const auto& c : all) {
    const CliRun r = run(c == "ltc" ? "--help" : c.substr(4) + " --help");
    EXPECT_EQ(r.code, 0) << c;
    EXPECT_NE(r.out.find("Examples:\n  ltc "), std::string::npos) << c << " --help has no example";
    EXPECT_FALSE(std::regex_search(r.out, glitch)) << c << " --help:\n" << r.out;
  }
}

TEST(FirstUse, ListNamesTheBuiltIns) {
  const auto gpus = nlohmann::json::parse(run("list gpus --json").out).at("gpus");
  EXPECT_NE(std::find(gpus.begin(), gpus.end(), "a100-lut4x"), gpus.end());
  const auto models = nlohmann::json::parse(run("list models --json").out).at("models");
  EXPECT_NE(std::find(models.begin(), models.end(), "llama2-7b"), models.end());
  const auto designs = nlohmann::json::parse(run("list designs --json").out).at("designs");
  EXPECT_EQ(designs, nlohmann::json({"lut", "lut-naive", "mac", "add"}));
  // The names are in the help of the flags that take them, not only in error messages.
  EXPECT_NE(run("decode --help").out.find("a100-lut4x"), std::string::npos);
  EXPECT_NE(run("decode --help").out.find("bitnet-b1.58-3b"), std::string::npos);
}

TEST(FirstUse, UnknownCommandSaysSoAndSuggests) {
  const CliRun r = run("nonsense");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("'ltc nonsense' is not a command"), std::string::npos) << r.err;
  const CliRun c = run("compile gemmm --m 1");
  EXPECT_EQ(c.code, 2);
  EXPECT_NE(c.err.find("did you mean 'gemm'"), std::string::npos) << c.err;
}

TEST(FirstUse, DefaultContextIsTheSameEverywhere) {
  for (const char* c : {"decode", "compile model", "sim"}) {
    EXPECT_NE(run(std::string(c) + " --help").out.find("=1024"), std::string::npos) << c;
  }
}

TEST(FirstUse, QuantizeTablesIsOneSpellingWithTheOldOneKept) {
  const std::string base = "numerics --m 1 --n 16 --k 64 --acts fp16 --weights int2 --json ";
  const CliRun now = run(base + "--quantize-tables");
  const CliRun old = run(base + "--quantize-table");
  ASSERT_EQ(now.code, 0) << now.err;
  EXPECT_EQ(now.out, old.out);
  EXPECT_NE(now.out.find("--quantize-tables"), std::string::npos);  // the reproduce command
  EXPECT_EQ(run("numerics --help").out.find("--quantize-table "), std::string::npos);
}

TEST(FirstUse, CalibrationHelpPointsIntoTheRepoAndNamesTheMeasuredGpu) {
  const CliRun h = run("gemm --help");
  EXPECT_NE(h.out.find("configs/calibration/h200-gemm.json"), std::string::npos);
  EXPECT_EQ(h.out.find("shared/"), std::string::npos);
  const CliRun a100 = run("gemm --calibration " + config("calibration/h200-gemm.json"));
  EXPECT_EQ(a100.code, 0) << a100.err;
  EXPECT_NE(a100.err.find("from an NVIDIA H200"), std::string::npos) << a100.err;
  const CliRun h200 = run("gemm --gpu h200 --calibration " + config("calibration/h200-gemm.json"));
  EXPECT_EQ(h200.err.find("from an"), std::string::npos) << h200.err;
}

TEST(FirstUse, VcdIntoAMissingDirectoryIsBadInput) {
  const CliRun r = run("verify --vcd /nonexistent-dir/run.vcd");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--vcd"), std::string::npos) << r.err;
}

// ---- bad input over every subcommand --------------------------------------------------------

struct BadInput {
  std::string args;
  std::string names;  // the flag, file or line the message must name
};

TEST(BadInput, EveryCommandRefusesWithExit2NamingTheFlag) {
  const std::string gemm =
      "compile gemm --m 16 --n 256 --k 256 --out " + (scratch() / "bad.lmt").string() + " ";
  const std::string model =
      "compile model --model llama2-7b --out " + (scratch() / "bad.ltcb").string() + " ";
  const std::vector<BadInput> cases = {
      // group 1: sizes
      {"gemm --m 99999999999 --n 99999999999 --k 99999999999", "--m"},
      {"gemm --m 9223372036854775807 --n 4096 --k 4096", "--m"},
      {"gemm --m 1 --n 4096 --k 9223372036854775807 --gpu a100-lut4x --weights int2", "--k"},
      {"compile gemm --m 9223372036854775807 --n 100000 --k 100000 --out " +
           (scratch() / "huge.ltcb").string(),
       "--m"},
      {gemm + "--max-macs -1 --verify", "--max-macs"},
      {"decode --model llama2-7b --gpu a100 --context 99999999999", "--context"},
      {"prefill --model llama2-7b --gpu a100 --seq 99999999999", "--seq"},
      {"decode --model llama2-7b --gpu a100 --batch 99999999999", "--batch"},
      {model + "--context 99999999999", "--context"},
      {"numerics --m 4096 --n 65536 --k 65536", "--m/--n/--k"},
      {"bench roofline --estimates -5", "--estimates"},
      {"bench rtl --cycles 10", "--cycles"},
      // group 2: misread input
      {"gemm --m 1 --n 16 --k 16 --acts fp32", "--acts"},
      {"gemm --m 1 --n 16 --k 16 --acts int16", "--acts"},
      {"decode --model llama2-7b --gpu a100 --acts int32", "--acts"},
      {gemm + "--acts fp32", "--acts"},
      {"numerics --acts int32", "--acts"},
      {"verify --act fp32", "--act"},
      {"ppa --act int16", "--act"},
      {"gemm --m 1 --n 16 --k 16 --gpu a100 --weights int2 --tables on", "--tables"},
      {"gemm --m 1 --n 16 --k 16 --gpu a100 --weights int2 --quantize-tables", "--quantize-tables"},
      {"decode --model llama2-7b --gpu a100 --weights int2 --quantize-tables", "--quantize-tables"},
      {gemm + "--gpu a100 --weights int4 --acts fp16 --quantize-tables", "--quantize-tables"},
      {model + "--gpu a100 --quantize-tables", "--quantize-tables"},
      {model + "--phase decode --seq 64", "--seq"},
      {gemm + "--weights ternary:g=128", "--weights"},
      {gemm + "--weights int4:g=128 --group 64", "--group"},
      {"gemm --m 1 --n 16 --k 16 --weights ternary:g=128", "--weights"},
      // group 4: the user's flag, not an internal symbol
      {"numerics --lut-k 0", "--lut-k"},
      {"verify --wbits 9", "--wbits"},
      {"verify --k 0", "--k"},
      {"verify --stall 95", "--stall"},
      {"ppa --wbits 0", "--wbits"},
      {"ppa --lib tsmc7", "--lib"},
      {"ppa --activity-timing fast", "--activity-timing"},
      {"ppa --lib nangate45 --netlist-sim iverilog", "--netlist-sim"},
      {"sweep dp4 --out x --lib foo", "--lib"},
      {"sweep dp4 --out x --activity-timing slow", "--activity-timing"},
      {"sweep ledger --out x --lib nangate45", "--lib"},
      {"compile convert " + std::string(LTC_SOURCE_DIR) +
           "/traces/examples/gemm-m3n100k70-int2-int8.lmt /nonexistent-dir/x.lmt",
       "/nonexistent-dir"},
      {gemm + "--stages 1", "--stages"},
      {"report --out x -j 0", "-j"},
      {"sweep dp4 --out x --limit -3", "--limit"},
      {"sweep dp4 --out x --executor cloud", "--executor"},
      {"sweep dp4 --out x --executor slurm --sbatch-template /nonexistent.sh", "--sbatch-template"},
      {"sweep dp4 --out x --executor slurm --max-retries -1", "--max-retries"},
      {"sweep dp4 --out x --partition cpu", "--partition"},
      {"sweep dp4 --out x --executor slurm -j 4", "-j"},
      {"sweep-task /nonexistent/batch-1.json 0", "/nonexistent/batch-1.json"},
      {"list nothing", "what"},
      {"calibrate --gpu h200 --measurements /nonexistent/profile.json",
       "/nonexistent/profile.json"},
      {"calibrate --gpu h900 --measurements " + config("calibration/h200-gemm.json"), "--gpu"},
      {"calibrate --gpu h200 --measurements " + config("gpus/h200.json"), "gpus/h200.json"},
      {"sim --model llama2-7b --gpu a100-lut4x --phase decode --seq 64", "--seq"},
  };
  for (const auto& c : cases) {
    const CliRun r = run(c.args);
    EXPECT_EQ(r.code, 2) << "ltc " << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.names), std::string::npos) << "ltc " << c.args << "\n" << r.err;
    EXPECT_EQ(r.err.find("[json.exception"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << "ltc " << c.args << " printed: " << r.out;
  }
}

TEST(BadInput, GpuJsonMisspelledKeysAreRejectedWithTheClosestName) {
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases = {
      {[](nlohmann::json& g) { g["achievable"]["achievble"] = 0.5; }, "'achievble'"},
      {[](nlohmann::json& g) { g["tensor_power_w_per_sm_"] = 1; },
       "did you mean 'tensor_power_w_per_sm'"},
      {[](nlohmann::json& g) { g["sm"]["max_warp"] = 32; }, "did you mean 'max_warps'"},
      {[](nlohmann::json& g) { g["l2"]["bw_gbs"] = 1; }, "did you mean 'bw_gbps'"},
      {[](nlohmann::json& g) { g["mac_tensor"][0]["top"] = 1; }, "did you mean 'tops'"},
      {[](nlohmann::json& g) { g["lut_tensor"]["tile_per_tensor_core"] = 4; },
       "did you mean 'tiles_per_tensor_core'"},
      {[](nlohmann::json& g) { g["lut_tensor"]["core"]["wbit"] = 2; }, "did you mean 'wbits'"},
  };
  int i = 0;
  for (const auto& [edit, names] : cases) {
    const std::string file = gpu_with("typo" + std::to_string(i++), edit);
    const CliRun r = run("gemm --m 1 --n 16 --k 16 --gpu " + file);
    EXPECT_EQ(r.code, 2) << names;
    EXPECT_NE(r.err.find(names), std::string::npos) << r.err;
  }
  // Every built-in file uses only keys the parser reads.
  for (const auto& name : ltc::hw::builtin_gpu_names()) EXPECT_NO_THROW(ltc::hw::load_gpu(name));
}

TEST(BadInput, GpuJsonRangesAreCheckedAtLoad) {
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases = {
      {[](nlohmann::json& g) { g["lut_tensor"]["core"]["k"] = 3; }, "lut_tensor.core.k"},
      {[](nlohmann::json& g) { g["lut_tensor"]["core"]["wbits"] = 9; }, "lut_tensor.core"},
      {[](nlohmann::json& g) { g["l2"]["capacity_mb"] = -1; }, "l2.capacity_mb"},
      {[](nlohmann::json& g) { g["dram"]["capacity_mb"] = 0; }, "dram.capacity_mb"},
      {[](nlohmann::json& g) { g["shared_memory_kb_per_block"] = 0; },
       "shared_memory_kb_per_block"},
      {[](nlohmann::json& g) { g["sms"] = 4294967296; }, "sms"},
      {[](nlohmann::json& g) { g["tensor_power_w_per_sm"] = -1; }, "tensor_power_w_per_sm"},
      {[](nlohmann::json& g) { g["sms"] = "many"; }, "sms"},
  };
  int i = 0;
  for (const auto& [edit, names] : cases) {
    const std::string file = gpu_with("range" + std::to_string(i++), edit);
    for (const std::string& cmd : std::vector<std::string>{
             "gemm --m 1 --n 16 --k 16 --gpu ", "compile gemm --m 16 --n 256 --k 256 --out " +
                                                    (scratch() / "r.lmt").string() + " --gpu "}) {
      const CliRun r = run(cmd + file);
      EXPECT_EQ(r.code, 2) << names << "\n" << r.err;
      EXPECT_NE(r.err.find(names), std::string::npos) << r.err;
      EXPECT_EQ(r.err.find("[json.exception"), std::string::npos) << r.err;
    }
  }
}

// ---- group 1: sizes ------------------------------------------------------------------------

TEST(Sizes, VerifyRefusesBeforeWritingTheOutput) {
  const fs::path out = scratch() / "too-large.lmt";
  fs::remove(out);
  const CliRun r =
      run("compile gemm --m 256 --n 4096 --k 4096 --out " + out.string() + " --verify");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--max-macs"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST(Sizes, CompileRunRefusesASingleGemmAboveMaxMacsUpFront) {
  const fs::path t = scratch() / "gemm.lmt";
  ASSERT_EQ(run("compile gemm --m 64 --n 512 --k 512 --out " + t.string()).code, 0);
  const CliRun r = run("compile run " + t.string() + " --max-macs 10");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--max-macs"), std::string::npos) << r.err;
  // An edited trace line of a huge GEMM: refused up front, no std::bad_alloc.
  std::ifstream in(t);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text =
      std::regex_replace(ss.str(), std::regex("m=64 n=512 k=512"), "m=3000000 n=100000 k=70000");
  const std::string edited = write_file("edited.lmt", text);
  for (const char* budget : {"10", "1e18"}) {
    const CliRun e = run("compile run " + edited + " --max-macs " + budget);
    EXPECT_EQ(e.code, 2) << e.err;
    EXPECT_EQ(e.err.find("bad_alloc"), std::string::npos) << e.err;
  }
}

// ---- group 2: what the user gave is never silently misread ---------------------------------

TEST(Misread, EveryModelCommandShowsTheLoadersWarnings) {
  const std::string cfg =
      model_with("sliding", {{"sliding_window", 128}, {"rope_scaling", {{"type", "linear"}}}});
  for (const std::string& cmd : std::vector<std::string>{
           "decode --gpu a100 --model ", "prefill --gpu a100 --seq 16 --model ",
           "compile model --out " + (scratch() / "w.ltcb").string() + " --model ",
           "bench compile --context 16 --model "}) {
    const CliRun r = run(cmd + cfg);
    EXPECT_EQ(r.code, 0) << cmd << r.err;
    EXPECT_NE(r.err.find("rope_scaling is ignored"), std::string::npos) << cmd << r.err;
  }
}

TEST(Misread, UnmodelledAttentionIsRefusedEverywhere) {
  // Latent attention without its head widths, and a multimodal wrapper: refused naming the field.
  const std::string mla = model_with(
      "minicpm3", {{"model_type", "minicpm3"}, {"kv_lora_rank", 256}, {"q_lora_rank", 768}});
  const std::string mm = model_with("llava", {{"text_config", {{"hidden_size", 256}}}});
  for (const auto& [cfg, field] :
       {std::pair{mla, "qk_nope_head_dim"}, std::pair{mm, "text_config"}}) {
    for (const std::string& cmd : std::vector<std::string>{
             "decode --gpu a100 --model ", "prefill --gpu a100 --model ",
             "compile model --out " + (scratch() / "m.ltcb").string() + " --model "}) {
      const CliRun r = run(cmd + cfg);
      EXPECT_EQ(r.code, 2) << cmd << cfg;
      EXPECT_NE(r.err.find(field), std::string::npos) << r.err;
    }
  }
  // A whole latent-attention config: the roofline models it, the compiler lowers it.
  const std::string full = model_with("mla", {{"model_type", "deepseek_v2"},
                                              {"kv_lora_rank", 64},
                                              {"qk_nope_head_dim", 32},
                                              {"qk_rope_head_dim", 16},
                                              {"v_head_dim", 32}});
  EXPECT_EQ(run("decode --gpu a100 --model " + full).code, 0);
  const CliRun c =
      run("compile model --out " + (scratch() / "m.ltcb").string() + " --model " + full);
  EXPECT_EQ(c.code, 0) << c.err;
}

TEST(Misread, WeightGroupIsHonouredByCompileGemm) {
  const fs::path t = scratch() / "g128.lmt";
  ASSERT_EQ(
      run("compile gemm --m 2 --n 64 --k 512 --weights int4:g=128 --acts fp16 --out " + t.string())
          .code,
      0);
  std::ifstream in(t);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_NE(ss.str().find("group=128"), std::string::npos);
}

TEST(Misread, LengthsPastMaxPositionEmbeddingsWarn) {
  for (const char* cmd : {"decode --model llama2-7b --gpu a100 --context 8192",
                          "prefill --model llama2-7b --gpu a100 --seq 8192"}) {
    const CliRun r = run(cmd);
    EXPECT_EQ(r.code, 0);
    EXPECT_NE(r.err.find("max_position_embeddings 4096"), std::string::npos) << cmd << r.err;
  }
  EXPECT_EQ(run("decode --model llama2-7b --gpu a100 --context 1024").err, "");
}

// ---- group 3: the numbers ------------------------------------------------------------------

nlohmann::json json_of(const std::string& args) {
  const CliRun r = run(args + " --json");
  EXPECT_EQ(r.code, 0) << args << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(Numbers, TablesAutoPicksTheFasterPathAndSaysWhy) {
  const std::string g =
      "gemm --m 8192 --n 8192 --k 8192 --gpu a100-lut4x --weights int8 --acts int8";
  const auto a = json_of(g);
  const auto on = json_of(g + " --tables on");
  const auto off = json_of(g + " --tables off");
  EXPECT_DOUBLE_EQ(a["ms"].get<double>(),
                   std::min(on["ms"].get<double>(), off["ms"].get<double>()));
  EXPECT_NE(a["path_choice"].get<std::string>().find("mac kept"), std::string::npos);
  const std::string p = "prefill --model llama2-7b --seq 2048 --weights int8 --acts int8 --gpu ";
  const auto lut4x = json_of(p + "a100-lut4x");
  EXPECT_LE(lut4x["latency_ms"].get<double>(),
            json_of(p + "a100")["latency_ms"].get<double>() * 1.01);
  EXPECT_TRUE(lut4x.contains("path_choice"));
}

TEST(Numbers, FewerWeightBitsAreNeverSlowerOnAMacGpu) {
  double previous = 0;
  for (const char* w : {"int8", "int4", "int3", "int2", "int1", "ternary", "binary"}) {
    const auto j = json_of(std::string("gemm --m 8192 --n 8192 --k 8192 --gpu a100 --acts int8 "
                                       "--weights ") +
                           w);
    if (previous > 0) {
      EXPECT_LE(j["ms"].get<double>(), previous * 1.0001) << w;
    }
    if (std::string(w) != "ternary") previous = j["ms"].get<double>();
  }
}

TEST(Numbers, ShareColumnAddsUpOverTheWholeStep) {
  const CliRun r = run("decode --model llama2-7b --gpu a100 --weights int2 --acts int8");
  ASSERT_EQ(r.code, 0);
  const std::regex row(R"(\n  (\S+)\s+[0-9.]+\s+([0-9.]+)%)");
  double total = 0;
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), row);
       it != std::sregex_iterator(); ++it) {
    const double share = std::stod((*it)[2]);
    if ((*it)[1] == "lm_head") {
      EXPECT_GT(share, 1.0) << r.out;
    }
    total += share;
  }
  EXPECT_NEAR(total, 100.0, 0.5) << r.out;
}

TEST(Numbers, BatchListsCarryTheMemoryFitFlag) {
  const CliRun r = run("decode --model llama2-7b --gpu a100 --batch 1,1024 --context 4000");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("fits DRAM"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("yes"), std::string::npos);
  EXPECT_NE(r.out.find("NO"), std::string::npos);
}

TEST(Numbers, TiedEmbeddingsAreCountedOnce) {
  const std::string tied = model_with("tied", {{"tie_word_embeddings", true}});
  const std::string untied = model_with("untied", {{"tie_word_embeddings", false}});
  const double t = json_of("decode --gpu a100 --model " + tied)["memory_gb"].get<double>();
  const double u = json_of("decode --gpu a100 --model " + untied)["memory_gb"].get<double>();
  EXPECT_NEAR(u - t, 1000.0 * 256 * 2 / 1e9, 1e-12);  // one fp16 vocab x hidden matrix
}

TEST(Numbers, UnknownEnergyAndAreaAreNeverZero) {
  const auto h200 = json_of("decode --model llama2-7b --gpu h200");
  EXPECT_TRUE(h200["tensor_energy_j"].is_null());
  EXPECT_TRUE(h200["energy_mj_per_token"].is_null());
  EXPECT_NE(run("decode --model llama2-7b --gpu h200").out.find("tensor unknown"),
            std::string::npos);
  const auto a100 = json_of("decode --model llama2-7b --gpu a100");
  EXPECT_GT(a100["tensor_energy_j"].get<double>(), 0);
  // fp16 weights on a100-lut4x run on its MAC cores: the LUT cores' area is not theirs.
  const auto mac = json_of("decode --model llama2-7b --gpu a100-lut4x --weights fp16");
  EXPECT_EQ(mac["tensor_core"]["area_mm2"].get<double>(), 0);
  const auto lut = json_of(
      "decode --model bitnet-b1.58-3b --gpu a100-lut4x --weights int2 --acts "
      "int8 --precompute fused");
  EXPECT_GT(lut["tensor_core"]["area_mm2"].get<double>(), 0);
}

TEST(Numbers, GpuDescriptionsStateThePeakTheToolComputes) {
  const std::regex claim(R"(([0-9]+) TOP/s as in the paper's Table III)");
  int checked = 0;
  for (const auto& name : ltc::hw::builtin_gpu_names()) {
    const auto g = ltc::hw::load_gpu(name);
    std::smatch m;
    if (!std::regex_search(g.description, m, claim)) continue;
    EXPECT_NEAR(g.lut_tops("int8", 2), std::stod(m[1]), 0.01 * std::stod(m[1])) << name;
    ++checked;
  }
  EXPECT_GE(checked, 4);
}

}  // namespace
