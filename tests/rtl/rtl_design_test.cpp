// The design-point -> Verilog mapping the PPA flow builds from, and Verilator lint of every top.
#include "rtl/rtl_design.h"
#include "model/golden/error.h"
#include "rtl_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace ltc::rtl {
namespace {

using golden::DType;
using hw::TensorCoreDesign;

int64_t param(const RtlDesign& d, const std::string& name) {
  for (const auto& p : d.params) {
    if (p.name == name) return p.value;
  }
  ADD_FAILURE() << d.top << " has no parameter " << name;
  return -1;
}

TEST(RtlDesign, DtypeCodesAreTheGoldenEnumValues) {
  // rtl/ltc_dtype.svh decodes these numbers.
  EXPECT_EQ(dtype_code(DType::kInt8), 0);
  EXPECT_EQ(dtype_code(DType::kInt16), 1);
  EXPECT_EQ(dtype_code(DType::kInt32), 2);
  EXPECT_EQ(dtype_code(DType::kFp16), 3);
  EXPECT_EQ(dtype_code(DType::kBf16), 4);
  EXPECT_EQ(dtype_code(DType::kFp8E4M3), 5);
  EXPECT_EQ(dtype_code(DType::kFp8E5M2), 6);
  EXPECT_EQ(dtype_code(DType::kFp32), 7);
}

TEST(RtlDesign, LutReferenceConfigMapsToLutTile) {
  auto c = test::config(TensorCoreDesign::kLut, 2, 64, 4, DType::kFp16, 2);
  c.pipeline_stages = 2;
  const RtlDesign d = rtl_design(c);
  EXPECT_EQ(d.top, "ltc_lut_tile");
  EXPECT_EQ(param(d, "M"), 2);
  EXPECT_EQ(param(d, "N"), 64);
  EXPECT_EQ(param(d, "K"), 4);
  EXPECT_EQ(param(d, "WBits"), 2);
  EXPECT_EQ(param(d, "TableType"), 3);
  EXPECT_EQ(param(d, "AccType"), 7);
  EXPECT_EQ(param(d, "OutType"), 7);
  EXPECT_EQ(param(d, "PipeStages"), 2);
  EXPECT_EQ(d.sources.back(), rtl_source_dir() + "/ltc_lut_tile.sv");
  for (const auto& f : d.sources) EXPECT_TRUE(std::filesystem::exists(f)) << f;
}

TEST(RtlDesign, EveryDesignHasItsTop) {
  const std::pair<TensorCoreDesign, const char*> tops[] = {
      {TensorCoreDesign::kLut, "ltc_lut_tile"},
      {TensorCoreDesign::kLutNaive, "ltc_lut_naive_tile"},
      {TensorCoreDesign::kAdd, "ltc_add_tile"},
      {TensorCoreDesign::kMac, "ltc_mac_tile"}};
  for (const auto& [design, top] : tops) {
    const RtlDesign d = rtl_design(test::config(design, 2, 64, 4, DType::kInt8, 4));
    EXPECT_EQ(d.top, top);
    EXPECT_EQ(param(d, "AccType"), 2) << top;
    EXPECT_EQ(d.sources.back(), rtl_source_dir() + "/" + top + ".sv");
  }
}

TEST(RtlDesign, RejectsConfigurationsTheRtlCannotBuild) {
  auto naive = test::config(TensorCoreDesign::kLutNaive, 2, 64, 4, DType::kFp16, 2);
  naive.table = DType::kInt8;  // quantized tables are precomputed outside the tile
  EXPECT_THROW(rtl_design(naive), InputError);
  auto mac = test::config(TensorCoreDesign::kMac, 2, 64, 4, DType::kInt8, 1);
  mac.weight = DType::kFp16;  // float weights with integer activations: no such MAC
  EXPECT_THROW(rtl_design(mac), InputError);
  auto dq = test::config(TensorCoreDesign::kMac, 2, 64, 4, DType::kFp16, 9);
  dq.weight = DType::kInt8;  // codes of more than 8 bits
  EXPECT_THROW(rtl_design(dq), InputError);
  dq.wbits = 4;
  dq.weight = DType::kInt16;  // codes are given as int8 + wbits
  EXPECT_THROW(rtl_design(dq), InputError);
  EXPECT_THROW(rtl_design(test::config(TensorCoreDesign::kLut, 2, 64, 9, DType::kFp16, 1)),
               InputError);
}

TEST(RtlDesign, MacWithIntCodesAndFloatActsMapsToTheDequantizeTile) {
  auto c = test::config(TensorCoreDesign::kMac, 2, 64, 4, DType::kFp16, 2);
  c.weight = DType::kInt8;
  ASSERT_TRUE(c.mac_dequant());
  EXPECT_EQ(c.id(), "mac-m2n64k4-fp16-int8-w2-fp32");
  const RtlDesign d = rtl_design(c);
  EXPECT_EQ(d.top, "ltc_mac_dequant_tile");
  EXPECT_EQ(param(d, "WBits"), 2);
  EXPECT_EQ(param(d, "ActType"), 3);
  EXPECT_EQ(param(d, "AccType"), 7);
  EXPECT_EQ(d.sources.back(), rtl_source_dir() + "/ltc_mac_dequant_tile.sv");
  EXPECT_NE(
      std::find(d.sources.begin(), d.sources.end(), rtl_source_dir() + "/ltc_dequant_unit.sv"),
      d.sources.end());
  // The MAC array after dequantization multiplies activation x activation-format weights.
  EXPECT_EQ(c.mac_type().w, DType::kFp16);
  // One harness model (WBits 8) serves every code width; in_w_i carries N*K codes, N FP16
  // scales and N zero points bit by bit: 64*4*8 + 64*16 + 64*8 bits.
  EXPECT_EQ(harness_config(c).wbits, 8);
  EXPECT_EQ(w_element_bits(c), 1);
  EXPECT_EQ(w_element_count(c), 64u * 4 * 8 + 64 * 16 + 64 * 8);
}

TEST(RtlDesign, SourceHashFollowsContents) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string f = (dir / "ltc_rtl_hash_test.sv").string();
  std::ofstream(f) << "module a; endmodule\n";
  const std::string h1 = source_hash({f});
  EXPECT_EQ(h1.size(), 16u);
  EXPECT_EQ(source_hash({f}), h1);
  std::ofstream(f) << "module b; endmodule\n";
  EXPECT_NE(source_hash({f}), h1);
  std::filesystem::remove(f);
}

// verilator --lint-only -Wall must be clean for every top over a spread of parameters.
void expect_lint_clean(const hw::TensorCoreConfig& c) {
  const RtlDesign d = rtl_design(c);
  std::string cmd = "verilator --lint-only -Wall --top-module " + d.top;
  for (const auto& inc : d.include_dirs) cmd += " -I" + inc;
  for (const auto& p : d.params) cmd += " -G" + p.name + "=" + std::to_string(p.value);
  for (const auto& s : d.sources) cmd += " " + s;
  cmd += " 2>&1";
  std::string out;
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buf[512];
  while (fgets(buf, sizeof buf, pipe)) out += buf;
  const int rc = pclose(pipe);
  EXPECT_EQ(rc, 0) << c.id() << "\n" << out;
  EXPECT_EQ(out, "") << c.id();
}

TEST(RtlLint, LutTileIsCleanForEveryFormat) {
  for (DType act : {DType::kFp16, DType::kInt8, DType::kBf16, DType::kFp8E4M3}) {
    auto c = test::config(TensorCoreDesign::kLut, 2, 8, 4, act, 4);
    expect_lint_clean(c);
  }
  auto c = test::config(TensorCoreDesign::kLut, 1, 4, 1, DType::kFp8E5M2, 1);
  c.acc = DType::kFp16;
  c.out = DType::kFp8E4M3;
  c.pipeline_stages = 4;
  expect_lint_clean(c);
}

TEST(RtlLint, BaselineTilesAreClean) {
  for (auto d : {TensorCoreDesign::kLutNaive, TensorCoreDesign::kAdd, TensorCoreDesign::kMac}) {
    for (DType act : {DType::kFp16, DType::kInt8}) {
      auto c = test::config(d, 2, 8, 4, act, 2);
      c.pipeline_stages = act == DType::kInt8 ? 3 : 1;
      expect_lint_clean(c);
    }
  }
}

TEST(RtlLint, MacDequantizeTileIsCleanForEveryCodeWidth) {
  for (int w : {1, 3, 8}) {
    auto c = test::config(TensorCoreDesign::kMac, 2, 8, 4, DType::kFp16, w);
    c.weight = DType::kInt8;
    c.pipeline_stages = w == 3 ? 3 : 1;
    expect_lint_clean(c);
  }
  auto c = test::config(TensorCoreDesign::kMac, 1, 4, 2, DType::kBf16, 4);
  c.weight = DType::kInt8;
  c.pipeline_stages = 2;
  expect_lint_clean(c);
}

}  // namespace
}  // namespace ltc::rtl
