// The GPU configuration type: built-in files load, docs/published-figures.md#gpu-datasheet-figures
// figures are what they say, derived LUT rates follow from the tile shape, bad files are rejected
// naming the file and field.
#include "common/config_dir.h"
#include "common/error.h"
#include "model/hw/gpu.h"
#include "model/hw/gpu_file.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

namespace ltc::hw {
namespace {

TEST(GpuConfig, EveryBuiltinLoadsAndRoundTripsThroughJson) {
  const auto names = builtin_gpu_names();
  for (const char* want : {"a100", "a100-80g", "rtx3090", "h100", "h200", "a100-lut4x",
                           "a100-lut8x", "a100-lut4x-drm", "a100-lut8x-drm"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  }
  for (const auto& n : names) {
    const GpuConfig g = load_gpu(n);
    EXPECT_EQ(g.name, n);
    nlohmann::json j = g;
    const GpuConfig back = parse_gpu_json(j.dump(), "roundtrip");
    EXPECT_EQ(nlohmann::json(back), j) << n;
  }
}

// ltc calibrate writes a GPU file's `achievable` through hw::achievable_json: the H200 file, which
// it wrote last, is that writer's text of what the file loads as (field for field, in order).
TEST(GpuConfig, FittedAchievableSectionIsWhatTheWriterWrites) {
  const std::string path = config_dir("gpus") + "/h200.json";
  const auto file = nlohmann::ordered_json::parse(std::ifstream(path));
  EXPECT_EQ(achievable_json(load_gpu("h200").achievable).dump(1), file.at("achievable").dump(1));
  // Numbers rounded, empty strings left out, gemm_paths before source.
  AchievableRates a;
  a.dram_bw_fraction = 0.123456;
  a.source = "s";
  a.gemm_paths.push_back({});
  a.gemm_paths.back().act = a.gemm_paths.back().weight = "int8";
  const auto j = achievable_json(a);
  EXPECT_DOUBLE_EQ(j.at("dram_bw_fraction").get<double>(), 0.1235);
  EXPECT_FALSE(j.at("gemm_paths").at(0).contains("kernel"));
  EXPECT_EQ(std::prev(j.end()).key(), "source");
  EXPECT_EQ(std::prev(std::prev(j.end())).key(), "gemm_paths");
}

// h200-sm80 is the H200 running sm80 kernels (cuBLASLt's INT8 GEMMs): its dense rates are the
// datasheet's scaled by mma.sync's measured peak over wgmma's (h200-microbench.json), and the
// power cap's clock drop by the same share.
TEST(GpuConfig, H200Sm80RatesAreMmaSyncsMeasuredShareOfWgmma) {
  const auto mb = nlohmann::json::parse(
      std::ifstream(config_dir("calibration") + "/h200-microbench.json"))["results"];
  const auto& mma = mb["tensor_core_mma"];
  const auto& wg = mb["wgmma"];
  const double f16 =
      mma["f16_m16n8k16_f32acc_mma_peak_ops_per_cycle_per_sm"].get<double>() /
      (2.0 * 64 * 256 * 16 / wg["f16_m64n256k16_1wg_cycles_per_wgmma_per_sm"].get<double>());
  const double s8 =
      mma["s8_m16n8k32_s32acc_mma_peak_ops_per_cycle_per_sm"].get<double>() /
      (2.0 * 64 * 256 * 32 / wg["s8_m64n256k32_1wg_cycles_per_wgmma_per_sm"].get<double>());
  const GpuConfig h200 = load_gpu("h200"), sm80 = load_gpu("h200-sm80");
  EXPECT_NEAR(sm80.mac_tops("fp16", "fp16"), h200.mac_tops("fp16", "fp16") * f16, 0.1);
  EXPECT_NEAR(sm80.mac_tops("bf16", "bf16"), h200.mac_tops("bf16", "bf16") * f16, 0.1);
  EXPECT_NEAR(sm80.mac_tops("int8", "int8"), h200.mac_tops("int8", "int8") * s8, 0.1);
  EXPECT_NEAR(h200.clock_ghz - sm80.sm.tensor_load_clock_ghz,
              (h200.clock_ghz - h200.sm.tensor_load_clock_ghz) * s8, 1e-3);
  EXPECT_EQ(sm80.sm.mma_warpgroup, 1);
  EXPECT_FALSE(sm80.sm.tma);
  EXPECT_EQ(sm80.sm.cluster_size, 1);
}

// Which built-in GPU a profiler's device name is (calibrate and `ltc gemm --calibration` warn
// when the measurements are of another).
TEST(GpuConfig, DeviceNamesMapToTheirBuiltinGpu) {
  EXPECT_EQ(builtin_gpu_of_device("NVIDIA H100 80GB HBM3"), "h100");
  EXPECT_EQ(builtin_gpu_of_device("NVIDIA H200"), "h200");
  EXPECT_EQ(builtin_gpu_of_device("NVIDIA GeForce RTX 3090"), "rtx3090");
  EXPECT_EQ(builtin_gpu_of_device("NVIDIA A100-SXM4-40GB"), "a100");
  EXPECT_EQ(builtin_gpu_of_device("Tesla V100-SXM2-16GB"), "");
  EXPECT_TRUE(device_is_gpu("NVIDIA H200", "h200-sm80"));
  EXPECT_TRUE(device_is_gpu("NVIDIA H100 80GB HBM3", "h100"));
  EXPECT_FALSE(device_is_gpu("NVIDIA H100 80GB HBM3", "h200"));
  EXPECT_FALSE(device_is_gpu("NVIDIA H200", "a100-lut4x"));
  EXPECT_TRUE(device_is_gpu("", "a100"));
}

TEST(GpuConfig, DatasheetFiguresMatchSpecSection6) {
  const GpuConfig a100 = load_gpu("a100"), h200 = load_gpu("h200"), rtx = load_gpu("rtx3090");
  EXPECT_EQ(a100.sms, 108);
  EXPECT_DOUBLE_EQ(a100.mac_tops("fp16", "fp16"), 312);
  EXPECT_DOUBLE_EQ(a100.mac_tops("int8", "int8"), 624);
  EXPECT_DOUBLE_EQ(a100.dram.bw_gbps, 1555);
  EXPECT_DOUBLE_EQ(load_gpu("a100-80g").dram.bw_gbps, 2039);
  EXPECT_EQ(h200.sms, 132);
  EXPECT_DOUBLE_EQ(h200.mac_tops("fp16", "fp16"), 989);
  EXPECT_DOUBLE_EQ(h200.mac_tops("int8", "int8"), 1979);
  EXPECT_DOUBLE_EQ(h200.dram.bw_gbps, 4800);
  EXPECT_DOUBLE_EQ(load_gpu("h100").dram.bw_gbps, 3350);
  EXPECT_DOUBLE_EQ(rtx.l2.capacity_mb, 6);
  EXPECT_EQ(a100.mac_tops("fp8e4m3", "fp8e4m3"), 0);  // Ampere has no FP8 tensor cores
  EXPECT_FALSE(a100.has_lut_tensor());
}

// The CUDA cores' cycles for FP32 and INT32 thread instructions (GpuConfig::cuda_core_cycles), by
// hand from the whitepapers' lanes per SM (docs/published-figures.md): the A100 64 FP32 + 64
// INT32, the H200 128 + 64, both issuing 4 x 32 thread instructions a cycle.
TEST(GpuConfig, CudaCoreCyclesTakeEachLaneKindAndTheIssueRate) {
  const hw::GpuConfig a100 = hw::load_gpu("a100");
  EXPECT_EQ(a100.fp32_lanes_per_sm(), 64);
  EXPECT_EQ(a100.int32_lanes_per_sm(), 64);
  EXPECT_DOUBLE_EQ(a100.cuda_core_cycles(6400, 0), 100);     // the FP32 lanes alone
  EXPECT_DOUBLE_EQ(a100.cuda_core_cycles(0, 6400), 100);     // the INT32 lanes alone
  EXPECT_DOUBLE_EQ(a100.cuda_core_cycles(6400, 6400), 100);  // together: 12800 at 128 a cycle
  EXPECT_DOUBLE_EQ(a100.cuda_core_cycles(1280, 6400), 100);  // the INT32 lanes bind
  const hw::GpuConfig h200 = hw::load_gpu("h200");
  EXPECT_EQ(h200.fp32_lanes_per_sm(), 128);
  EXPECT_EQ(h200.int32_lanes_per_sm(), 64);
  EXPECT_DOUBLE_EQ(h200.cuda_core_cycles(12800, 0), 100);
  EXPECT_DOUBLE_EQ(h200.cuda_core_cycles(6400, 6400), 100);   // 6400 / 64 INT32 lanes
  EXPECT_DOUBLE_EQ(h200.cuda_core_cycles(12800, 6400), 150);  // issue: 19200 / 128
  const hw::GpuConfig rtx = hw::load_gpu("rtx3090");
  EXPECT_EQ(rtx.fp32_lanes_per_sm(), 128);
  EXPECT_EQ(rtx.int32_lanes_per_sm(), 64);
  // A GPU file without INT32 lanes apart runs integer work on its FP32 lanes.
  hw::GpuConfig shared = a100;
  shared.cuda_int32_tops = 0;
  EXPECT_EQ(shared.int32_lanes_per_sm(), 0);
  EXPECT_DOUBLE_EQ(shared.cuda_core_cycles(6400, 6400), 200);
}

TEST(GpuConfig, LutVariantsDeliverFourAndEightTimesTheFp16TensorCoreAtW2) {
  // Paper: A100-LUT-4X / 8X give 1248 / 2496 TOP/s at W_INT2 A_INT8 from M2N64K4 tiles. The
  // A100's 312 TFLOP/s is itself 512 ops/cycle x 432 tensor cores x 1.41 GHz = 311.9.
  const GpuConfig a100 = load_gpu("a100");
  const double a100_fp16_exact = 512.0 * a100.tensor_cores() * a100.clock_ghz * 1e9 / 1e12;
  for (auto [name, x] : {std::pair{"a100-lut4x", 4}, std::pair{"a100-lut8x", 8}}) {
    const GpuConfig g = load_gpu(name);
    ASSERT_TRUE(g.has_lut_tensor());
    EXPECT_EQ(g.lut_tensor->core.shape, (golden::LmmaShape{2, 64, 4}));
    EXPECT_NEAR(g.lut_tops("int8", 2), x * a100_fp16_exact, 1e-6);
    EXPECT_NEAR(g.lut_tops("int8", 2) / 312.0, x, 0.01);
    EXPECT_NEAR(g.lut_tops("int8", 1), 2 * g.lut_tops("int8", 2), 1e-9);  // one plane per cycle
    EXPECT_NEAR(g.lut_tops("int8", 4), g.lut_tops("int8", 2) / 2, 1e-9);
  }
  EXPECT_EQ(load_gpu("a100-lut4x-drm").register_file_kb_per_sm,
            2 * load_gpu("a100-lut4x").register_file_kb_per_sm);
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

// What `f` throws as InputError ("" when it throws nothing).
std::string input_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(GpuConfig, BadFilesAreRejectedNamingFileAndField) {
  nlohmann::json j = load_gpu("a100");
  j["sms"] = "many";
  const std::string bad_type = write_temp("bad_type.json", j.dump());
  const std::string type_error = input_error_of([&] { load_gpu(bad_type); });
  EXPECT_NE(type_error.find(bad_type), std::string::npos) << type_error;
  EXPECT_NE(type_error.find("'sms'"), std::string::npos) << type_error;
  j = load_gpu("a100");
  j["achievable"]["dram_bw_fraction"] = 1.5;
  EXPECT_THROW(load_gpu(write_temp("bad_frac.json", j.dump())), InputError);
  j = load_gpu("a100");
  j.erase("mac_tensor");
  EXPECT_THROW(load_gpu(write_temp("no_mac.json", j.dump())), InputError);
  EXPECT_THROW(load_gpu(write_temp("not_json.json", "{ sms: 3")), InputError);
  for (const std::string field : {"norm_row_ns_per_element", "layer_norm_row_ns_per_element"}) {
    j = load_gpu("h200");
    j["achievable"][field] = -1;
    const std::string bad_row = write_temp("bad_" + field + ".json", j.dump());
    const std::string row_error = input_error_of([&] { load_gpu(bad_row); });
    EXPECT_NE(row_error.find(bad_row), std::string::npos) << row_error;
    EXPECT_NE(row_error.find("'achievable." + field + "' must be in [0, 1000]"), std::string::npos)
        << row_error;
  }
  // A GEMM path's kernel tile width, waves flag and group switch out of range name the path and
  // the range.
  for (auto [field, value] : {std::pair<const char*, int>{"tile_n", 300},
                              {"data_parallel", 2},
                              {"group_switch_us", -1}}) {
    j = load_gpu("h200");
    j["achievable"]["gemm_paths"][0][field] = value;
    const std::string file = write_temp(std::string("bad_") + field + ".json", j.dump());
    const std::string e = input_error_of([&] { load_gpu(file); });
    EXPECT_NE(e.find(file), std::string::npos) << e;
    EXPECT_NE(e.find("tile_n in 0..256, data_parallel 0 or 1, group_switch_us in 0..1000"),
              std::string::npos)
        << e;
  }
  // A number past double's range is nlohmann's out_of_range, not a parse_error: still the file's
  // InputError (found by the config_json fuzzer).
  const std::string overflow = write_temp("overflow.json", R"({"name": "x", "sms": 1e999})");
  const std::string overflow_error = input_error_of([&] { load_gpu(overflow); });
  EXPECT_NE(overflow_error.find(overflow), std::string::npos) << overflow_error;
  EXPECT_NE(overflow_error.find("1e999"), std::string::npos) << overflow_error;
  const std::string unknown = input_error_of([] { load_gpu("a99"); });
  EXPECT_NE(unknown.find("a100-lut4x"), std::string::npos) << unknown;
  EXPECT_THROW(load_gpu("/nonexistent/gpu.json"), InputError);
}

// A GEMM path's tile choice (the library's heuristic as a decision list of tiles): read, written
// back by the calibrate writer, and a bad entry named by its index and field.
TEST(GpuConfig, TileChoiceIsReadWrittenAndCheckedNamingTheField) {
  nlohmann::json j = load_gpu("h200");
  j["achievable"]["gemm_paths"][0]["tile_choice"] = nlohmann::json::parse(
      R"([{"tile_m": 128, "tile_n": 256, "min_mn": 8000000, "min_k": 0},
          {"tile_m": 128, "tile_n": 128, "min_mn": 800000, "min_k": 8000,
           "tensor_fraction": 0.45},
          {"tile_m": 64, "tile_n": 64}])");
  const GpuConfig g = load_gpu(write_temp("tile_choice.json", j.dump()));
  const auto& rules = g.achievable.gemm_paths[0].tile_choice;
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[1].tile_m, 128);
  EXPECT_EQ(rules[1].tile_n, 128);
  EXPECT_EQ(rules[1].min_mn, 800000);
  EXPECT_EQ(rules[1].min_k, 8000);
  EXPECT_EQ(rules[1].tensor_fraction, 0.45);
  EXPECT_EQ(rules[2].min_mn, 0);
  EXPECT_EQ(rules[2].tensor_fraction, 0);
  const auto written = achievable_json(g.achievable, 4);
  EXPECT_EQ(written.at("gemm_paths").at(0).at("tile_choice").size(), 3u);
  EXPECT_EQ(written.at("gemm_paths").at(0).at("tile_choice").at(1).at("min_k"), 8000);
  // Paths without one write none.
  EXPECT_FALSE(written.at("gemm_paths").at(1).contains("tile_choice"));
  const std::vector<std::tuple<const char*, nlohmann::json, const char*>> bad = {
      {"tile_m", 0, "tile_choice[1].tile_m' must be in 1..256"},
      {"tile_n", 512, "tile_choice[1].tile_n' must be in 1..256"},
      {"min_mn", -1, "tile_choice[1].min_mn' must be >= 0"},
      {"tensor_fraction", 1.5, "tile_choice[1].tensor_fraction' must be in [0, 1]"},
      {"min_k", "deep", "tile_choice[1]: field 'min_k'"},
      {"rows", 128, "tile_choice[1]: unknown field 'rows'"}};
  for (const auto& [field, value, message] : bad) {
    nlohmann::json b = j;
    b["achievable"]["gemm_paths"][0]["tile_choice"][1][field] = value;
    const std::string file = write_temp(std::string("bad_choice_") + field + ".json", b.dump());
    const std::string e = input_error_of([&] { load_gpu(file); });
    EXPECT_NE(e.find(file), std::string::npos) << e;
    EXPECT_NE(e.find(message), std::string::npos) << e;
  }
  nlohmann::json missing = j;
  missing["achievable"]["gemm_paths"][0]["tile_choice"][2].erase("tile_n");
  const std::string file = write_temp("choice_no_tile_n.json", missing.dump());
  const std::string e = input_error_of([&] { load_gpu(file); });
  EXPECT_NE(e.find("tile_choice[2]: field 'tile_n' is missing"), std::string::npos) << e;
}

// The decision list picks the first tile whose thresholds the problem meets, else its last.
TEST(GpuConfig, ChosenTileIsTheFirstThatApplies) {
  const std::vector<TileRule> rules = {
      {128, 256, 8e6, 0}, {128, 128, 8e5, 8000}, {128, 64, 8e5, 0}, {64, 64, 0, 0}};
  auto tile = [&](int64_t m, int64_t n, int64_t k) {
    const TileRule& t = chosen_tile(rules, m, n, k);
    return std::to_string(t.tile_m) + "x" + std::to_string(t.tile_n);
  };
  EXPECT_EQ(tile(128, 4096, 4096), "64x64");      // 524,288 outputs: under 800,000
  EXPECT_EQ(tile(200, 4096, 4096), "128x64");     // 819,200, K under 8000
  EXPECT_EQ(tile(200, 4096, 11008), "128x128");   // 819,200 and K 11008
  EXPECT_EQ(tile(1024, 4096, 11008), "128x128");  // 4.2 M: under 8 M
  EXPECT_EQ(tile(2048, 4096, 4096), "128x256");   // 8.4 M
  EXPECT_EQ(tile(2048, 4096, 14336), "128x256");  // the first that applies, not the deepest
  const std::vector<TileRule> none_apply = {{128, 256, 8e6, 0}, {64, 64, 1e9, 1e9}};
  EXPECT_EQ(chosen_tile(none_apply, 16, 16, 16).tile_m, 64);  // the last one
}

// ltc sim --gpu-set: fields of the JSON form replaced, checked like a file.
TEST(GpuConfig, OverridesReplaceFieldsAndNameTheBadOnes) {
  const GpuConfig base = load_gpu("a100-lut4x");
  const GpuConfig g =
      with_overrides(base, "lut_tensor.tiles_per_tensor_core=8,register_file_kb_per_sm=512");
  EXPECT_EQ(g.name, base.name);
  EXPECT_EQ(g.lut_tensor->tiles_per_tensor_core, 8);
  EXPECT_EQ(g.register_file_kb_per_sm, 512);
  EXPECT_EQ(g.sms, base.sms);
  // Twice the tiles, twice the LUT peak.
  EXPECT_DOUBLE_EQ(g.lut_tops("int8", 2), 2 * base.lut_tops("int8", 2));
  EXPECT_NE(g.description.find("--gpu-set"), std::string::npos);
  EXPECT_THROW(with_overrides(base, "nope=1"), InputError);
  EXPECT_THROW(with_overrides(base, "lut_tensor=1"), InputError);  // a section
  EXPECT_THROW(with_overrides(base, "sms=abc"), InputError);       // a number wanted
  EXPECT_THROW(with_overrides(base, "sms"), InputError);           // no value
  EXPECT_THROW(with_overrides(base, "sms=-4"), InputError);        // the file's range check
  const std::string overflow =                                     // past double's range
      input_error_of([&] { with_overrides(base, "clock_ghz=1e999"); });
  EXPECT_NE(overflow.find("--gpu-set: 'clock_ghz=1e999'"), std::string::npos) << overflow;
}

// A built-in that names a `base` is its base with the listed fields replaced, nothing else: the
// -drm variants double the register file and lift the per-thread limit, a100-80g has the larger
// HBM, the LUT variants add LUT tensor cores. Compared field by field on the loaded JSON form.
TEST(GpuConfig, DerivedBuiltinsAreTheirBaseWithTheFieldsTheyName) {
  auto patched = [](const std::string& base, const nlohmann::json& patch) {
    nlohmann::json j = load_gpu(base);
    j.merge_patch(patch);
    return j;
  };
  for (const auto& [name, base] :
       std::vector<std::pair<std::string, std::string>>{{"a100-drm", "a100"},
                                                        {"a100-lut4x-drm", "a100-lut4x"},
                                                        {"a100-lut8x-drm", "a100-lut8x"}}) {
    const nlohmann::json got = load_gpu(name);
    EXPECT_EQ(got, patched(base, {{"name", name},
                                  {"description", got["description"]},
                                  {"register_file_kb_per_sm", 512},
                                  {"max_registers_per_thread", 1023}}))
        << name;
  }
  const nlohmann::json a80 = load_gpu("a100-80g");
  EXPECT_EQ(a80, patched("a100", {{"name", "a100-80g"},
                                  {"description", a80["description"]},
                                  {"dram", {{"bw_gbps", 2039}, {"capacity_mb", 81920}}},
                                  {"sm", {{"dram_gbps", 1909}}}}));
  const nlohmann::json l8 = load_gpu("a100-lut8x");
  EXPECT_EQ(l8, patched("a100-lut4x", {{"name", "a100-lut8x"},
                                       {"description", l8["description"]},
                                       {"lut_tensor", {{"tiles_per_tensor_core", 8}}},
                                       {"tensor_area_mm2_per_sm", 0.373},
                                       {"tensor_power_w_per_sm", 0.694}}));
}

TEST(GpuConfig, BaseIsResolvedRelativeToTheFileAndAMissingBaseOrACycleIsNamed) {
  const std::string dir = ::testing::TempDir() + "ltc-gpu-base-test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/mine.json")
      << R"({"base": "a100", "name": "mine", "register_file_kb_per_sm": 384})";
  std::ofstream(dir + "/child.json") << R"({"base": "mine.json", "name": "child", "sms": 54})";
  const GpuConfig child = load_gpu(dir + "/child.json");
  EXPECT_EQ(child.name, "child");
  EXPECT_EQ(child.sms, 54);
  EXPECT_EQ(child.register_file_kb_per_sm, 384);
  EXPECT_EQ(child.clock_ghz, load_gpu("a100").clock_ghz);

  auto message = [](const std::string& path) {
    try {
      load_gpu(path);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::ofstream(dir + "/typo.json") << R"({"base": "a10", "name": "typo"})";
  const std::string typo = message(dir + "/typo.json");
  EXPECT_NE(typo.find("typo.json: base 'a10' is not a built-in GPU"), std::string::npos) << typo;
  std::ofstream(dir + "/gone.json") << R"({"base": "nothere.json", "name": "gone"})";
  EXPECT_NE(message(dir + "/gone.json").find("base 'nothere.json': no such file"),
            std::string::npos);
  std::ofstream(dir + "/a.json") << R"({"base": "b.json", "name": "a"})";
  std::ofstream(dir + "/b.json") << R"({"base": "a.json", "name": "b"})";
  const std::string cycle = message(dir + "/a.json");
  EXPECT_NE(cycle.find("makes a cycle (a.json -> b.json -> a.json)"), std::string::npos) << cycle;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ltc::hw
