// `ltc show gpu|model` against hand-computed shapes and bytes and the GPU files as written; the
// shared flags' one spelling and the defaults every command states (docs/cli.md#values,
// docs/cli.md#defaults), walked over every subcommand.
#include "tests/cli/cli_run.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace ltc {
namespace {

using nlohmann::json;
using test_support::CliRun;
using test_support::run;

json json_of(const std::string& args) {
  const CliRun r = run(args);
  EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
  return json::parse(r.out);
}

TEST(ShowModel, MoeLatentAndWindowFieldsAndTheirKvCacheByHand) {
  const json mx = json_of("show model mixtral-8x7b --json");
  EXPECT_EQ(mx["moe"]["experts"], 8);
  EXPECT_EQ(mx["moe"]["experts_per_token"], 2);
  EXPECT_EQ(mx["moe"]["moe_layers"], 32);
  // Every parameter but 6 unrouted experts' 3 x 4096 x 14336 in each of 32 layers.
  EXPECT_EQ(mx["moe"]["active_parameters_per_token"],
            mx["parameters"]["total"].get<int64_t>() - 32LL * 6 * 3 * 4096 * 14336);
  EXPECT_TRUE(mx["mla"].is_null());
  // DeepSeek-V2-Lite caches a 512-wide latent and a 64-wide RoPE key per token and layer.
  const json ds = json_of("show model deepseek-v2-lite --context 1000 --json");
  EXPECT_EQ(ds["kv_cache_bytes_per_token"], 27 * (512 + 64) * 2);
  EXPECT_EQ(ds["kv_cache_bytes_per_sequence"], 27 * (512 + 64) * 2 * 1000);
  EXPECT_EQ(ds["moe"]["dense_layers"], 1);
  EXPECT_EQ(ds["mla"]["kv_lora_rank"], 512);
  // Mistral-7B keeps 4096 tokens of K and V (8 heads x 128) in each of 32 layers.
  const json mi = json_of("show model mistral-7b --context 8192 --json");
  EXPECT_EQ(mi["sliding_window"]["window"], 4096);
  EXPECT_EQ(mi["kv_cache_bytes_per_sequence"], 32LL * 4096 * 2 * 1024 * 2);
}

TEST(ShowModel, Llama27bShapesParametersAndBytesAsComputedByHand) {
  const json j = json_of("show model llama2-7b --context 1024 --json");
  // hidden 4096, 32 layers, 32 heads (no GQA), FFN 11008, vocab 32000, untied head.
  const int64_t h = 4096, layers = 32, ffn = 11008, vocab = 32000;
  const int64_t embedding = vocab * h;                      // 131,072,000
  const int64_t attention = 4 * h * h;                      // q, k, v, o
  const int64_t mlp = 3 * h * ffn;                          // gate, up, down
  const int64_t layer = attention + mlp + 2 * h;            // + two RMSNorm weights
  const int64_t head = h + vocab * h;                       // final norm + LM head
  const int64_t total = embedding + layers * layer + head;  // 6,738,415,616
  const int64_t linear = layers * (attention + mlp);        // the low-bit part
  EXPECT_EQ(total, 6738415616);
  EXPECT_EQ(j["shape"]["head_dim"], 128);
  EXPECT_EQ(j["parameters"]["total"], total);
  EXPECT_EQ(j["parameters"]["per_layer"], layer);
  EXPECT_EQ(j["parameters"]["embedding"], embedding);
  EXPECT_EQ(j["parameters"]["head"], head);
  EXPECT_EQ(j["parameters"]["linear_weights"], linear);
  // Bytes: the linear weights at the precision (per-channel scales not counted), the rest fp16.
  const double other = double(total - linear) * 2;
  EXPECT_DOUBLE_EQ(j["weight_bytes"]["fp16"].get<double>(), double(total) * 2);
  EXPECT_DOUBLE_EQ(j["weight_bytes"]["int4"].get<double>(), double(linear) / 2 + other);
  EXPECT_DOUBLE_EQ(j["weight_bytes"]["int2"].get<double>(), double(linear) / 4 + other);
  EXPECT_DOUBLE_EQ(j["weight_bytes"]["int1"].get<double>(), double(linear) / 8 + other);
  // KV cache: K and V of 32 layers x 4096 channels at 2 bytes, per token.
  EXPECT_EQ(j["kv_cache_bytes_per_token"], layers * 2 * h * 2);
  EXPECT_EQ(j["kv_cache_bytes_per_sequence"], layers * 2 * h * 2 * 1024);
  // head_dim is not in the config: derived, and said so.
  ASSERT_EQ(j["defaulted"].size(), 1u);
  EXPECT_NE(j["defaulted"][0].get<std::string>().find("head_dim"), std::string::npos);
}

TEST(ShowModel, AConfigWithoutOptionalFieldsListsEveryDefaultTaken) {
  const std::string cfg =
      (std::filesystem::temp_directory_path() / "ltc_show_minimal.config.json").string();
  std::ofstream(cfg) << R"({"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 2,
      "num_attention_heads": 4, "intermediate_size": 512, "vocab_size": 1000})";
  const json j = json_of("show model " + cfg + " --context 10 --json");
  std::string all;
  for (const auto& d : j["defaulted"]) all += d.get<std::string>() + ";";
  for (const char* field :
       {"num_key_value_heads", "head_dim", "max_position_embeddings", "tie_word_embeddings"}) {
    EXPECT_NE(all.find(field), std::string::npos) << field << " in " << all;
  }
  // 2 layers x (4 x 256^2 + 3 x 256 x 512 + 2 x 256) + 1000 x 256 (embedding) + 256 + 1000 x 256.
  EXPECT_EQ(j["parameters"]["total"],
            2 * (4 * 65536 + 3 * 256 * 512 + 512) + 256000 + 256 + 256000);
  EXPECT_EQ(j["kv_cache_bytes_per_sequence"], 2 * 2 * 256 * 2 * 10);
  std::filesystem::remove(cfg);
}

std::string source_of(const json& j, const std::string& field) {
  for (const auto& f : j["fields"]) {
    if (f["field"] == field) return f["source"];
  }
  return "absent";
}

TEST(ShowGpu, EveryFieldNamesTheFileOrOverrideThatSetIt) {
  const json j = json_of("show gpu a100-lut4x --gpu-set sm.l2_slices=40 --json");
  ASSERT_EQ(j["files"].size(), 2u);  // a100-lut4x.json, then its base a100.json
  EXPECT_EQ(source_of(j, "tensor_power_w_per_sm"), "a100-lut4x.json");
  EXPECT_EQ(source_of(j, "sms"), "a100.json");
  EXPECT_EQ(source_of(j, "energy.mma_pj_per_op"), "a100.json");
  EXPECT_EQ(source_of(j, "sm.l2_slices"), "--gpu-set");
  for (const auto& f : j["fields"]) {
    if (f["field"] == "sm.l2_slices") {
      EXPECT_EQ(f["value"], 40);
    }
  }
  // The LUT tile's fallback energy per op and plane (no trace, so no precision to take an
  // energy.lut entry for): 0.347 W per SM over 2496 TOP/s / 108 SMs.
  EXPECT_NEAR(j["derived"]["lmma_pj_per_plane_op"].get<double>(), 0.347 / (2496e12 / 108) * 1e12,
              2e-3 * 0.015);
  const CliRun bad = run("show gpu a100 --gpu-set no_such_field=1");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("ltc: error: --gpu-set"), std::string::npos) << bad.err;
}

TEST(List, JsonKeepsTheDescriptions) {
  const json gpus = json_of("list gpus --json");
  EXPECT_NE(gpus["descriptions"]["a100"].get<std::string>().find("A100"), std::string::npos);
  const json models = json_of("list models --json");
  EXPECT_NE(models["descriptions"]["llama2-7b"].get<std::string>().find("32 layers"),
            std::string::npos);
}

// ---- one spelling, one rule for defaults, over every subcommand ------------------------------

std::vector<std::string> subcommands() {
  std::vector<std::string> out;
  std::istringstream in(run("list commands").out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("ltc ", 0) == 0) out.push_back(line.substr(4));
  }
  return out;
}

// The flags a help lists outside its "Older spellings" group, with the default it shows.
std::map<std::string, std::string> visible_flags(const std::string& help) {
  std::map<std::string, std::string> flags;
  const std::regex flag(R"(^\s+(?:-\w,\s*)?(--[a-z0-9-]+)\s+\S*?(?:=(\S+))?\s)");
  std::istringstream in(help);
  bool older = false;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != ' ') older = line.rfind("Older spellings", 0) == 0;
    std::smatch m;
    if (!older && std::regex_search(line, m, flag)) flags[m[1]] = m[2];
  }
  return flags;
}

TEST(SharedFlags, OneSpellingPerConceptAndOneDefaultContext) {
  const std::vector<std::string> commands = subcommands();
  ASSERT_GT(commands.size(), 20u);
  int with_acts = 0;
  for (const std::string& c : commands) {
    const CliRun help = run(c + " --help");
    ASSERT_EQ(help.code, 0) << c;
    const auto flags = visible_flags(help.out);
    // The older spellings stay only under "Older spellings".
    for (const char* old : {"--act", "--wbits", "--quantize-table"}) {
      EXPECT_EQ(flags.count(old), 0u) << "ltc " << c << " shows " << old;
    }
    with_acts += flags.count("--acts") ? 1 : 0;
    // Where a command takes a context or sequence length it defaults to the same 1024, bench
    // workloads apart (each a fixed case of its own).
    for (const char* length : {"--context", "--seq"}) {
      if (c.rfind("bench ", 0) == 0 || !flags.count(length) || flags.at(length).empty()) continue;
      EXPECT_EQ(flags.at(length), "1024") << "ltc " << c << " " << length;
    }
  }
  EXPECT_GE(with_acts, 10);
}

TEST(SharedFlags, EveryCommandThatComputesFromAGpuTakesGpuSetAndOneRuleSetsThePrecision) {
  // Commands whose --gpu feeds what they compute also take --gpu-set; the others say why not.
  const std::map<std::string, std::string> without = {
      {"calibrate", "fits the GPU file's achievable section as written"},
      {"gpu-energy", "writes entries into the GPU file as written"},
      {"bench compile", "a fixed benchmark workload"},
      {"bench kernels", "a fixed benchmark workload"},
      {"bench sim", "a fixed benchmark workload"}};
  int with_gpu = 0;
  for (const std::string& c : subcommands()) {
    const auto flags = visible_flags(run(c + " --help").out);
    if (!flags.count("--gpu")) continue;
    ++with_gpu;
    if (without.count(c)) continue;
    EXPECT_TRUE(flags.count("--gpu-set")) << "ltc " << c << " takes --gpu but not --gpu-set";
    // Operand defaults: a model step's FP16, a tile's W1 x FP16, or (no default shown) a single
    // GEMM's, which follows the GPU.
    const std::string w = flags.count("--weights") ? flags.at("--weights") : "-";
    const std::string a = flags.count("--acts") ? flags.at("--acts") : "-";
    if (c == "ppa") {  // a tile: W_INT1 A_FP16 (--weights says it in words), or --gpu's tile
      EXPECT_NE(run("ppa --help").out.find("(default int1)"), std::string::npos);
      EXPECT_EQ(a, "fp16") << c;
    } else if (c == "gemm" || c == "compile gemm") {
      EXPECT_EQ(w, "") << c;
      EXPECT_EQ(a, "") << c;
      EXPECT_NE(run(c + " --help").out.find("default: the GPU's tensor precision"),
                std::string::npos)
          << c;
    } else if (w != "-") {
      EXPECT_EQ(w, "fp16") << c;
      EXPECT_EQ(a, "fp16") << c;
    }
  }
  EXPECT_GE(with_gpu, 8);
  // The single-GEMM rule, stated in the output: a LUT GPU's tile precision, FP16 on a MAC GPU.
  const json lut = json_of("gemm --m 1 --n 4096 --k 4096 --gpu a100-lut4x --json");
  EXPECT_EQ(lut["weights"], "int2");
  EXPECT_EQ(lut["acts"], "int8");
  EXPECT_EQ(lut["defaults"]["--weights"], "int2");
  EXPECT_NE(lut["precision_default"].get<std::string>().find("a100-lut4x's LUT tile"),
            std::string::npos);
  const json mac = json_of("gemm --m 1 --n 4096 --k 4096 --gpu a100 --acts int8 --json");
  EXPECT_EQ(mac["weights"], "fp16");
  EXPECT_EQ(mac["defaults"].count("--acts"), 0u);
  const std::string out = (std::filesystem::temp_directory_path() / "ltc_show_prec.lmt").string();
  const CliRun c = run("compile gemm --m 16 --n 64 --k 64 --gpu a100 --out " + out);
  ASSERT_EQ(c.code, 0) << c.err;
  const size_t line = c.out.find("defaults: ");
  ASSERT_NE(line, std::string::npos) << c.out;
  const std::string defaults = c.out.substr(line, c.out.find('\n', line) - line);
  EXPECT_NE(defaults.find("--weights fp16"), std::string::npos) << defaults;
  EXPECT_NE(defaults.find("--acts fp16"), std::string::npos) << defaults;
  EXPECT_NE(defaults.find("(gpu a100 has MAC tensor cores only: fp16)"), std::string::npos)
      << defaults;
  EXPECT_EQ(defaults.find("--gpu"), std::string::npos) << defaults;  // given, not a default
  std::filesystem::remove(out);
}

TEST(SharedFlags, TheOlderSpellingsStillWorkAndAreRefusedBesideTheNewOnes) {
  const CliRun both = run("verify --acts fp16 --act int8");
  EXPECT_EQ(both.code, 2);
  EXPECT_NE(both.err.find("--act: the older spelling of --acts"), std::string::npos) << both.err;
  const CliRun twice = run("ppa --weights int2 --wbits 2");
  EXPECT_EQ(twice.code, 2);
  EXPECT_NE(twice.err.find("--wbits: the older spelling of --weights"), std::string::npos);
  EXPECT_EQ(run("verify --weights int9").code, 2);
}

TEST(SharedFlags, ModelCommandsRunTheModelAsPublishedAndSayWhatTheyDefaulted) {
  // decode, compile model and sim --model: FP16 weights and activations unless told, stated in
  // the output ("defaults" in JSON).
  const json d = json_of("decode --model llama2-7b --gpu a100 --json");
  EXPECT_EQ(d["weights"], "fp16");
  EXPECT_EQ(d["acts"], "fp16");
  EXPECT_EQ(d["context"], 1024);
  EXPECT_EQ(d["defaults"]["--context"], "1024");
  EXPECT_EQ(d["defaults"]["--weights"], "fp16");
  EXPECT_EQ(d["time_ms"], d["latency_ms"]);  // one key per quantity, the old one kept
  const json given = json_of("decode --model llama2-7b --gpu a100 --weights int4 --json");
  EXPECT_EQ(given["defaults"].count("--weights"), 0u);
  const json g = json_of("gemm --m 1 --n 4096 --k 4096 --json");
  EXPECT_EQ(g["time_ms"], g["ms"]);
  EXPECT_EQ(g["defaults"]["--gpu"], "a100");
  const CliRun text = run("decode --model llama2-7b --gpu a100");
  const size_t line = text.out.find("\ndefaults: ");
  ASSERT_NE(line, std::string::npos) << text.out;
  EXPECT_NE(text.out.find("--context 1024", line), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("--weights fp16", line), std::string::npos) << text.out;
  // sim --model needs the GPU named: no trace names one.
  const CliRun sim = run("sim --model llama2-7b");
  EXPECT_EQ(sim.code, 2);
  EXPECT_NE(sim.err.find("--gpu"), std::string::npos);
}

TEST(GpuSet, TheRooflineCommandsTakeItNameItAndRefuseAFieldThatChangesNothing) {
  const json base = json_of("decode --model llama2-7b --gpu a100 --json");
  const json fast =
      json_of("decode --model llama2-7b --gpu a100 --gpu-set dram.bw_gbps=3110 --json");
  EXPECT_EQ(fast["gpu_set"], "dram.bw_gbps=3110");
  // A DRAM-bound decode step on twice the bandwidth: faster, by less than 2x (fixed costs).
  EXPECT_LT(fast["time_ms"].get<double>(), 0.75 * base["time_ms"].get<double>());
  EXPECT_GT(fast["time_ms"].get<double>(), 0.5 * base["time_ms"].get<double>());
  const json g = json_of(
      "gemm --m 4096 --n 4096 --k 4096 --gpu a100-lut4x-drm --weights int2 --acts int8 "
      "--tables on --gpu-set lut_tensor.tiles_per_tensor_core=8 --json");
  EXPECT_EQ(g["gpu_set"], "lut_tensor.tiles_per_tensor_core=8");
  // Without the doubled register file the LUT kernels are bound by the shared-memory data path
  // (docs/performance-models.md "One cost per kernel"): more tiles per core change nothing.
  EXPECT_EQ(run("gemm --m 4096 --n 4096 --k 4096 --gpu a100-lut4x --weights int2 --acts int8 "
                "--tables on --gpu-set lut_tensor.tiles_per_tensor_core=8")
                .code,
            2);
  // The compiler writes the same trace whatever the simulator's energy figures: refused there too.
  const std::string out = (std::filesystem::temp_directory_path() / "ltc_show_gpuset.lmt").string();
  const CliRun c =
      run("compile gemm --m 16 --n 64 --k 64 --out " + out + " --gpu-set energy.static_w=50");
  EXPECT_EQ(c.code, 2);
  EXPECT_NE(c.err.find("changes nothing in this trace"), std::string::npos) << c.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  // The simulator's fields change no roofline estimate: refused, not ignored.
  for (const char* c : {"decode --model llama2-7b --gpu a100", "gemm --m 64 --n 64 --k 64"}) {
    const CliRun r = run(std::string(c) + " --gpu-set energy.static_w=50");
    EXPECT_EQ(r.code, 2) << c;
    EXPECT_NE(r.err.find("field 'energy.static_w' changes nothing"), std::string::npos) << r.err;
  }
}

TEST(SimUtilization, UsefulTensorOpsLeaveOutThePaddingToTheInstruction) {
  // An M = 1 FP16 GEMV on the A100 issues mma.m16n8k16: 16 rows computed, 1 useful.
  const std::string trace = (std::filesystem::temp_directory_path() / "ltc_show_gemv.lmt").string();
  ASSERT_EQ(
      run("compile gemm --m 1 --n 256 --k 256 --gpu a100 --weights fp16 --acts fp16 --out " + trace)
          .code,
      0);
  const json j = json_of("sim " + trace + " --json");
  const json& k = j["kernels"][0];
  EXPECT_EQ(k["tensor_ops"], 2 * 16 * 256 * 256);
  EXPECT_DOUBLE_EQ(k["useful_tensor_ops"].get<double>(), 2.0 * 1 * 256 * 256);
  EXPECT_NEAR(k["useful_tensor_utilization"].get<double>(),
              k["tensor_utilization"].get<double>() / 16, 1e-12);
  const CliRun text = run("sim " + trace);
  EXPECT_NE(text.out.find("useful"), std::string::npos);
  std::filesystem::remove(trace);
}

TEST(SimEnergy, APartWithoutAFigureIsUnknownNeverZero) {
  // The H200 file has no MMA energy figure: the tensor part is unknown, the sum says it leaves
  // parts out, and neither prints as 0 J.
  const std::string trace = (std::filesystem::temp_directory_path() / "ltc_show_h200.lmt").string();
  ASSERT_EQ(run("compile gemm --m 16 --n 256 --k 256 --gpu h200 --weights fp16 --acts fp16 --out " +
                trace)
                .code,
            0);
  const CliRun r = run("sim " + trace);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("of the known parts (tensor unknown"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("tensor 0 J"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("energy left out: mma"), std::string::npos) << r.out;
  std::filesystem::remove(trace);
}

}  // namespace
}  // namespace ltc
