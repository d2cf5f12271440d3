// Synthesis with Yosys to a liberty cell library: the script, the run and the parsed report
// (area in um^2 and cells by type). Two netlists are written from the same mapped design: one
// with vector ports for gate-level simulation, one with split bit ports that OpenSTA 2019 reads
// without its `assign {a,b} = ...` syntax error (SPEC §8).
#pragma once

#include "synth/design_source.h"

#include <map>
#include <string>
#include <vector>

namespace ltc::synth {

inline constexpr const char* kDefaultLiberty = "/usr/share/qflow/tech/osu018/osu018_stdcells.lib";
inline constexpr const char* kDefaultCellModels = "/usr/share/qflow/tech/osu018/osu018_stdcells.v";
inline constexpr const char* kDefaultLef = "/usr/share/qflow/tech/osu018/osu018_stdcells.lef";

struct SynthOptions {
  std::string liberty = kDefaultLiberty;
  double timeout_s = 3600;
  // Modules (base names, e.g. "ltc_accumulator") kept as hierarchy instead of flattened: each is
  // synthesized once per parameter set. Faster on large tiles; no optimization across their
  // boundaries. Empty: the whole design is flattened.
  std::vector<std::string> keep_modules;
};

struct SynthResult {
  double area_um2 = 0;
  int cells = 0;
  std::map<std::string, int> cells_by_type;
  int flip_flops = 0;        // DFF* and LATCH cells
  std::string sim_netlist;   // workdir/netlist_sim.v (vector ports)
  std::string json_netlist;  // workdir/netlist.json (the same design, for gatesim.h)
  std::string sta_netlist;   // workdir/netlist.v (bit ports, for OpenSTA)
  double seconds = 0;
  std::string log_path;
};

std::string yosys_script(const DesignSource& src, const SynthOptions& opt);

// The text of src.top_source with the defaults of src.params replaced by their values: how the
// flow sets parameters when top_source is given (Yosys 0.23's chparam asserts on tiles that it
// re-elaborates, "Reprocessing module ... has become available").
std::string with_parameter_defaults(const DesignSource& src);

// Runs yosys in `workdir`; throws std::runtime_error with the offending log lines when yosys
// fails, prints error text, or leaves cells unmapped to the library.
SynthResult run_yosys(const DesignSource& src, const SynthOptions& opt, const std::string& workdir);

// Area per bit of an operand register (a flip-flop with load enable, as Yosys maps
// `if (en) q <= d`) in `liberty`: a 64-bit register synthesized in `workdir`, area / 64.
double register_bit_area_um2(const std::string& liberty, const std::string& workdir,
                             double timeout_s = 600);

// Parses the `stat -liberty` report; exposed for tests.
void parse_yosys_stat(const std::string& stat_text, SynthResult& out);

}  // namespace ltc::synth
