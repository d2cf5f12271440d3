// The design-point -> Verilog mapping the PPA flow builds from, and Verilator lint of every top.
#include "rtl/rtl_design.h"
#include "common/error.h"
#include "model/golden/fp.h"
#include "rtl_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
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
  // rtl/ltc_pkg.sv's dtype_e holds these numbers (PackageAgreesWithTheCppSide checks it).
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

struct Lint {
  int rc;
  std::string out;
};

// verilator --lint-only -Wall on `top` of `sources` (includes from rtl/), with parameter overrides.
Lint lint(const std::string& top, const std::vector<std::string>& sources,
          const std::vector<VerilogParam>& params) {
  std::string cmd = "verilator --lint-only -Wall -I" + rtl_source_dir() + " --top-module " + top;
  for (const auto& p : params) cmd += " -G" + p.name + "=" + std::to_string(p.value);
  for (const auto& s : sources) cmd += " " + s;
  cmd += " 2>&1";
  Lint r{-1, ""};
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[512];
  while (fgets(buf, sizeof buf, pipe)) r.out += buf;
  r.rc = pclose(pipe);
  return r;
}

// verilator --lint-only -Wall must be clean for every top over a spread of parameters.
void expect_lint_clean(const hw::TensorCoreConfig& c) {
  const RtlDesign d = rtl_design(c);
  const Lint r = lint(d.top, d.sources, d.params);
  EXPECT_EQ(r.rc, 0) << c.id() << "\n" << r.out;
  EXPECT_EQ(r.out, "") << c.id();
}

// A module that fails elaboration unless ltc_pkg gives every dtype the code `code(t)`, and the
// width, float-ness and float fields of model/golden.
std::string package_check_module(int (*code)(DType)) {
  std::string v = "module ltc_pkg_check;\n";
  int i = 0;
  for (DType t : golden::kAllDTypes) {
    std::string name(golden::dtype_name(t));
    for (auto& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    const bool fp = golden::is_float(t);
    const std::string c = std::to_string(code(t));
    std::string cond = "ltc_pkg::" + name + " != " + c + " || ltc_pkg::width(" + c +
                       ") != " + std::to_string(golden::dtype_bits(t)) + " || ltc_pkg::is_float(" +
                       c + ") != " + (fp ? "1" : "0");
    if (fp) {
      const auto& f = golden::fp_format(t);
      cond += " || ltc_pkg::exp_bits(" + c + ") != " + std::to_string(f.exp_bits) +
              " || ltc_pkg::man_bits(" + c + ") != " + std::to_string(f.man_bits) +
              " || ltc_pkg::has_inf(" + c + ") != " + (f.has_inf ? "1" : "0");
    }
    v += "  if (" + cond + ") begin : g_" + std::to_string(i++) + "\n    $error(\"ltc_pkg and " +
         "the C++ side disagree on " + name + "\");\n  end\n";
  }
  return v + "endmodule\n";
}

int shifted_code(DType t) {
  return (dtype_code(t) + 1) % 8;
}

TEST(RtlPackage, AgreesWithTheCppSide) {
  // rtl_design.cpp's dtype_code and model/golden's formats against rtl/ltc_pkg.sv, as Verilator
  // evaluates the package; a shifted code table must be caught.
  const auto dir = std::filesystem::temp_directory_path();
  const std::string pkg = rtl_source_dir() + "/ltc_pkg.sv";
  const std::string good = (dir / "ltc_pkg_check.sv").string();
  std::ofstream(good) << package_check_module(dtype_code);
  const Lint ok = lint("ltc_pkg_check", {pkg, good}, {});
  EXPECT_EQ(ok.rc, 0) << ok.out;
  EXPECT_EQ(ok.out, "");
  std::ofstream(good) << package_check_module(shifted_code);
  const Lint bad = lint("ltc_pkg_check", {pkg, good}, {});
  EXPECT_NE(bad.rc, 0);
  EXPECT_NE(bad.out.find("ltc_pkg and the C++ side disagree on INT8"), std::string::npos)
      << bad.out;
  std::filesystem::remove(good);
}

// Elaborating `config`'s top with one parameter overridden fails with `message`.
void expect_rejected(const hw::TensorCoreConfig& config, const std::string& name, int64_t value,
                     const std::string& message) {
  RtlDesign d = rtl_design(config);
  bool found = false;
  for (auto& p : d.params) {
    if (p.name == name) {
      p.value = value;
      found = true;
    }
  }
  ASSERT_TRUE(found) << d.top << " has no parameter " << name;
  const Lint r = lint(d.top, d.sources, d.params);
  EXPECT_NE(r.rc, 0) << d.top << " " << name << "=" << value;
  EXPECT_NE(r.out.find(message), std::string::npos) << r.out;
}

TEST(RtlAssertions, OutOfRangeParametersAreRejectedByName) {
  const auto lut = test::config(TensorCoreDesign::kLut, 2, 8, 4, DType::kFp16, 4);
  expect_rejected(lut, "K", 9, "ltc tile: K must be 1..8");
  expect_rejected(lut, "WBits", 0, "ltc tile: WBits must be 1..8");
  expect_rejected(lut, "PipeStages", 0, "ltc tile: PipeStages must be at least 1");
  expect_rejected(lut, "AccType", dtype_code(DType::kBf16), "AccType must be INT32, FP16 or FP32");
  expect_rejected(lut, "TableType", dtype_code(DType::kFp32), "ltc_lut_tile: TableType must be");
  const auto add = test::config(TensorCoreDesign::kAdd, 2, 8, 4, DType::kFp16, 2);
  expect_rejected(add, "ActType", dtype_code(DType::kInt8), "ltc_add_tile: ActType must be");
  const auto mac = test::config(TensorCoreDesign::kMac, 2, 8, 4, DType::kInt8, 1);
  expect_rejected(mac, "OutType", dtype_code(DType::kFp32), "OutType must equal an INT32 AccType");
  expect_rejected(mac, "WeightType", dtype_code(DType::kFp16), "ltc_mac_tile: ActType and");
  auto dq = test::config(TensorCoreDesign::kMac, 2, 8, 4, DType::kFp16, 4);
  dq.weight = DType::kInt8;
  expect_rejected(dq, "WBits", 9, "ltc_mac_dequant_tile: ActType and AccType must be floats");
  const auto naive = test::config(TensorCoreDesign::kLutNaive, 2, 8, 4, DType::kFp16, 2);
  expect_rejected(naive, "TableType", dtype_code(DType::kFp8E4M3),
                  "ltc_lut_naive_tile: TableType must hold ActType");
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

TEST(RtlLint, Fp16AccumulatingTilesAreClean) {
  // The paper's accumulator (issue #49): AccType = OutType = FP16 in the LUT and MAC tiles.
  for (auto d : {TensorCoreDesign::kLut, TensorCoreDesign::kMac}) {
    auto c = test::config(d, 2, 8, 4, DType::kFp16, 2);
    c.acc = c.out = DType::kFp16;
    expect_lint_clean(c);
  }
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
