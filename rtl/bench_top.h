// The wrapper the speed flavours of the harness verilate: the tile driven from registers.
#pragma once

#include "model/hw/tensor_core.h"
#include "rtl/rtl_design.h"

#include <string>

namespace ltc::rtl {

// SystemVerilog of module ltc_bench_top: every input of the tile `d` (the RTL of `c`) registered
// once, as a surrounding design would drive it, so the verilated datapath is evaluated once per
// clock edge instead of on every evaluation call (a verilated model re-runs all logic fed
// directly by top-level inputs each time it is evaluated).
std::string registered_input_top(const hw::TensorCoreConfig& c, const RtlDesign& d);

}  // namespace ltc::rtl
