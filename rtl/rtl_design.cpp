#include "rtl/rtl_design.h"

#include "common/error.h"
#include "model/golden/fp.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace ltc::rtl {

using golden::DType;
using hw::TensorCoreDesign;

namespace {

// The package first, then leaf modules; each top lists only what it instantiates.
const std::vector<std::string> kCommonSources = {
    "ltc_pkg.sv",         "ltc_norm_shift.sv", "ltc_fp_unpack.sv", "ltc_fp_round_pack.sv",
    "ltc_fp_convert.sv",  "ltc_fp_add.sv",     "ltc_pipe_reg.sv",  "ltc_tile_ctrl.sv",
    "ltc_plane_scale.sv", "ltc_acc_add.sv",    "ltc_add_unit.sv",  "ltc_out_convert.sv",
    "ltc_accumulator.sv", "ltc_tile_shell.sv"};

std::vector<std::string> sources_for(const hw::TensorCoreConfig& c) {
  std::vector<std::string> files = kCommonSources;
  // The LUT and MAC tops share a core (ltc_lut_core, ltc_mac_core) that names every module of
  // the family, so each family's files come together.
  const std::vector<std::string> lut = {"ltc_lut_unit.sv", "ltc_full_table.sv", "ltc_lut_lane.sv",
                                        "ltc_lut_core.sv"};
  const std::vector<std::string> mac = {"ltc_fp_mul.sv", "ltc_dequant_unit.sv", "ltc_mac_unit.sv",
                                        "ltc_mac_core.sv"};
  switch (c.design) {
    case TensorCoreDesign::kLut:
      files.insert(files.end(), lut.begin(), lut.end());
      files.push_back("ltc_lut_tile.sv");
      break;
    case TensorCoreDesign::kLutNaive:
      files.insert(files.end(), lut.begin(), lut.end());
      files.push_back("ltc_lut_naive_tile.sv");
      break;
    case TensorCoreDesign::kAdd:
      files.push_back("ltc_add_tile.sv");
      break;
    case TensorCoreDesign::kMac:
      files.insert(files.end(), mac.begin(), mac.end());
      files.push_back(c.mac_dequant() ? "ltc_mac_dequant_tile.sv" : "ltc_mac_tile.sv");
      break;
  }
  for (auto& f : files) f = rtl_source_dir() + "/" + f;
  return files;
}

}  // namespace

int dtype_code(DType t) {
  return static_cast<int>(t);
}

std::string rtl_source_dir() {
  return std::string(LTC_SOURCE_DIR) + "/rtl";
}

std::vector<std::string> all_rtl_sources() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(rtl_source_dir())) {
    const auto ext = e.path().extension();
    if (ext == ".sv" || ext == ".svh") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

namespace {

// Every tile top declares M, N, K, its operand parameters, then AccType, OutType and PipeStages
// (rtl/ltc_*_tile.sv, each over ltc_tile_shell.sv): only the operand parameters differ.
std::vector<VerilogParam> tile_params(const hw::TensorCoreConfig& c,
                                      std::initializer_list<VerilogParam> operands) {
  std::vector<VerilogParam> p = {{"M", c.shape.m}, {"N", c.shape.n}, {"K", c.shape.k}};
  p.insert(p.end(), operands);
  p.push_back({"AccType", dtype_code(c.acc)});
  p.push_back({"OutType", dtype_code(c.out)});
  p.push_back({"PipeStages", c.pipeline_stages});
  return p;
}

}  // namespace

RtlDesign rtl_design(const hw::TensorCoreConfig& c) {
  c.validate();
  RtlDesign d;
  d.sources = sources_for(c);
  d.include_dirs = {rtl_source_dir()};
  switch (c.design) {
    case TensorCoreDesign::kLut:
      d.top = "ltc_lut_tile";
      d.params = tile_params(c, {{"WBits", c.wbits}, {"TableType", dtype_code(c.table)}});
      break;
    case TensorCoreDesign::kLutNaive:
      if (!golden::converts_exactly(c.act, c.table) ||
          golden::is_int(c.act) != golden::is_int(c.table)) {
        throw InputError("lut-naive design: table dtype " +
                         std::string(golden::dtype_name(c.table)) +
                         " must hold the activation dtype exactly (the table is built inside the "
                         "tile; quantized int8 tables need the lut design)");
      }
      d.top = "ltc_lut_naive_tile";
      d.params = tile_params(
          c,
          {{"WBits", c.wbits}, {"ActType", dtype_code(c.act)}, {"TableType", dtype_code(c.table)}});
      break;
    case TensorCoreDesign::kAdd:
      d.top = "ltc_add_tile";
      d.params = tile_params(c, {{"WBits", c.wbits}, {"ActType", dtype_code(c.act)}});
      break;
    case TensorCoreDesign::kMac:
      if (c.mac_dequant()) {
        // W_INTn x A_float: wbits-bit codes dequantized in the tile (validate() checked them).
        d.top = "ltc_mac_dequant_tile";
        d.params = tile_params(c, {{"WBits", c.wbits}, {"ActType", dtype_code(c.act)}});
        break;
      }
      if (golden::is_int(c.act) != golden::is_int(c.weight)) {
        throw InputError("mac design: activation " + std::string(golden::dtype_name(c.act)) +
                         " and weight " + std::string(golden::dtype_name(c.weight)) +
                         " must both be integers or both floats (integer codes with float "
                         "activations: weight int8, wbits 1..8 code bits)");
      }
      d.top = "ltc_mac_tile";
      d.params =
          tile_params(c, {{"ActType", dtype_code(c.act)}, {"WeightType", dtype_code(c.weight)}});
      break;
  }
  return d;
}

}  // namespace ltc::rtl
