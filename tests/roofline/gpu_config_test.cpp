// The GPU configuration type: built-in files load, docs/published-figures.md#gpu-datasheet-figures
// figures are what they say, derived LUT rates follow from the tile shape, bad files are rejected
// naming the file and field.
#include "common/error.h"
#include "model/hw/gpu.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>

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

TEST(GpuConfig, BadFilesAreRejectedNamingFileAndField) {
  nlohmann::json j = load_gpu("a100");
  j["sms"] = "many";
  const std::string bad_type = write_temp("bad_type.json", j.dump());
  try {
    load_gpu(bad_type);
    FAIL() << "accepted a string SM count";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(bad_type), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'sms'"), std::string::npos) << e.what();
  }
  j = load_gpu("a100");
  j["achievable"]["dram_bw_fraction"] = 1.5;
  EXPECT_THROW(load_gpu(write_temp("bad_frac.json", j.dump())), InputError);
  j = load_gpu("a100");
  j.erase("mac_tensor");
  EXPECT_THROW(load_gpu(write_temp("no_mac.json", j.dump())), InputError);
  EXPECT_THROW(load_gpu(write_temp("not_json.json", "{ sms: 3")), InputError);
  try {
    load_gpu("a99");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a100-lut4x"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_gpu("/nonexistent/gpu.json"), InputError);
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
}

}  // namespace
}  // namespace ltc::hw
