// What the flow synthesizes: a top module, its parameter overrides and its Verilog files, plus the
// roles of its ports (which one is the clock, the reset, the operands) so that the activity
// testbench can drive it. ppa.cpp builds one from a TensorCoreConfig through rtl/rtl_design.h;
// tests build their own around small modules.
#pragma once

#include "model/golden/dtype.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ltc::synth {

enum class PortRole : uint8_t {
  kClock,       // toggles every cycle (posedge active)
  kReset,       // held active for the first cycles, then released
  kEnable,      // held at 1 (valid, enable, load strobes: full-throughput operation)
  kData,        // uniform random bits
  kActivation,  // LLM-like activations in `dtype`, packed elements
  kTable,       // precomputed half tables (LUT design) from LLM-like activations
  kWeight,      // weight codes / bit planes: uniform over their codes
  kZero,        // held at 0
  kFirst,       // 1 on the first beat of every `period` beats
  kLast,        // 1 on the last beat of every `period` beats
};

struct PortStimulus {
  std::string name;
  PortRole role = PortRole::kData;
  bool active_low = false;  // kReset / kEnable polarity
  // kActivation / kTable: element dtype, packed LSB first (element j at bits [j*w +: w]).
  golden::DType dtype = golden::DType::kFp16;
  golden::DType act_dtype = golden::DType::kFp16;  // kTable: activations the tables come from
  int table_k = 4;                                 // kTable: K of the half tables
  int period = 1;  // kFirst / kLast: beats per operation (1 on beat 0 / beat period-1)
};

struct DesignSource {
  std::string top;
  std::vector<std::pair<std::string, std::string>> params;  // Verilog parameter overrides
  std::vector<std::string> sources;                         // absolute paths
  std::vector<std::string> include_dirs;
  // The file defining `top`: when set, the flow synthesizes a copy with the parameter defaults
  // replaced instead of using chparam; the gate-level check still simulates the original.
  std::string top_source;
  std::string clock_port = "clk_i";
  // Ports not listed here get a role from their name (rst*/reset* -> reset, *valid*/*en* ->
  // enable, everything else uniform random data).
  std::vector<PortStimulus> ports;
  // common/hash.h hdl_fingerprint of the sources and the include dirs' headers; the results store
  // keys on it.
  std::string source_hash() const;
};

// The role the testbench gives an input port that DesignSource::ports does not list.
PortStimulus default_stimulus(const std::string& port_name, const std::string& clock_port);

}  // namespace ltc::synth
