// Maps a tensor-core design point to its RTL through rtl/rtl_design.h (issue 3's mapping); the
// flow never carries its own Verilog of the tensor cores. Port roles follow rtl/README.md.
#include "common/error.h"
#include "rtl/rtl_design.h"
#include "synth/ppa.h"

#include <filesystem>
#include <string>

namespace ltc::synth {

DesignSource design_source(const hw::TensorCoreConfig& config) {
  const rtl::RtlDesign d = rtl::rtl_design(config);
  DesignSource s;
  s.top = d.top;
  for (const auto& p : d.params) s.params.emplace_back(p.name, std::to_string(p.value));
  s.sources = d.sources;
  s.include_dirs = d.include_dirs;
  for (const auto& f : d.sources) {
    if (std::filesystem::path(f).stem() == d.top) s.top_source = f;
  }
  s.clock_port = "clk_i";

  const bool mac = config.design == hw::TensorCoreDesign::kMac;
  // One LMMA = one beat per weight plane; a MAC chain accumulates 4 K-groups (in_last_i ends it).
  const int beats = mac ? 4 : config.wbits;
  PortStimulus a{"in_a_i", PortRole::kActivation};
  a.dtype = config.act;
  if (config.design == hw::TensorCoreDesign::kLut) {
    a.role = PortRole::kTable;
    a.dtype = config.table;
    a.act_dtype = config.act;
    a.table_k = config.shape.k;
  }
  PortStimulus w{"in_w_i", PortRole::kWeight};
  // The dequantize-then-MAC tile packs codes, FP16 scales and zero points into in_w_i: random
  // bits there, not float operands.
  if (mac && !config.mac_dequant()) {
    w.role = PortRole::kActivation;
    w.dtype = config.weight;
  }
  PortStimulus c{"in_c_i", PortRole::kActivation};
  c.dtype = config.acc;
  PortStimulus first{"in_first_i", PortRole::kFirst};
  first.period = beats;
  PortStimulus last{"in_last_i", PortRole::kLast};
  last.period = beats;
  s.ports = {{"rst_ni", PortRole::kReset, true},
             {"in_valid_i", PortRole::kEnable},
             {"out_ready_i", PortRole::kEnable},
             first,
             last,
             a,
             w,
             c};
  return s;
}

}  // namespace ltc::synth
