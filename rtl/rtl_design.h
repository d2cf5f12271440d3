// Maps a tensor-core design point to the Verilog that implements it: the top module, the parameter
// overrides and the source files. The PPA flow (synth/) and the Verilator runner (rtl_runner.h)
// both build from exactly this mapping, so one design point means the same netlist everywhere.
#pragma once

#include "model/hw/tensor_core.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ltc::rtl {

struct VerilogParam {
  std::string name;  // CamelCase, as declared in the top module
  int64_t value;
};

struct RtlDesign {
  std::string top;  // "ltc_lut_tile", "ltc_lut_naive_tile", "ltc_mac_tile", "ltc_add_tile"
  std::vector<VerilogParam> params;  // every parameter of the top, in declaration order
  std::vector<std::string> sources;  // absolute paths of the .sv files: ltc_pkg.sv, leaves, top
  std::vector<std::string>
      include_dirs;  // for `include "ltc_tile_ports.svh"` (read_verilog -I, -I)
};

// The Verilog encoding of a dtype (the *Type parameters of every top): the value of
// ltc::golden::DType, i.e. 0 int8, 1 int16, 2 int32, 3 fp16, 4 bf16, 5 fp8e4m3, 6 fp8e5m2, 7 fp32,
// the same as ltc_pkg::dtype_e in rtl/ltc_pkg.sv (tests/rtl checks the two agree).
int dtype_code(golden::DType t);

// Validates the configuration (InputError naming the field) and maps it to its RTL.
RtlDesign rtl_design(const hw::TensorCoreConfig& config);

// Directory holding the .sv files (<repo>/rtl).
std::string rtl_source_dir();
// Every .sv and .svh file of the RTL (for lint and hashing).
std::vector<std::string> all_rtl_sources();

}  // namespace ltc::rtl
