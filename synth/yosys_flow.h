// Synthesis with Yosys to a liberty cell library: the script, the run and the parsed report
// (area in um^2 and cells by type). Two netlists are written from the same mapped design: one
// with vector ports for gate-level simulation, one with split bit ports that OpenSTA 2019 reads
// without its `assign {a,b} = ...` syntax error (docs/tools.md#known-pitfalls).
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
  // Timing-driven mapping: `abc -D <delay_target_ps> -constr` (driving cell and load below), whose
  // script maps for delay and then buffers high-fanout nets and sizes gates (ABC's buffer;
  // upsize; dnsize). 0: the area-oriented default script, no buffering.
  double delay_target_ps = 0;
  std::string driving_cell = "BUFX2";
  double load = 0.01;  // in the liberty's capacitance unit (osu018: pF)
  // Nets (top-level, after mapping) with more sinks than this get a tree of buffer_cell:
  // the fanout that ABC does not see across kept module boundaries. 0: none.
  int max_fanout = 0;
  std::string buffer_cell = "BUFX4";
  // The buffer that replaces plain net-to-net assigns (insbuf), and the buffers' pins.
  std::string assign_buffer = "BUFX2";
  std::string buffer_in = "A", buffer_out = "Y";
};

// The options of `lib` (cell_library.h): its liberty, driving cell, load and buffers.
struct CellLibrary;
SynthOptions synth_options(const CellLibrary& lib);

struct SynthResult {
  double area_um2 = 0;
  int cells = 0;
  std::map<std::string, int> cells_by_type;
  int flip_flops = 0;        // DFF* and LATCH cells
  std::string netlist;       // workdir/netlist.v (vector ports; OpenSTA, iverilog)
  std::string json_netlist;  // workdir/netlist.json (the same design, for gatesim.h)
  double seconds = 0;
  std::string log_path;
  int fanout_buffers = 0, fanout_nets = 0, max_fanout_before = 0;  // fanout_buffer.h
};

std::string yosys_script(const DesignSource& src, const SynthOptions& opt);
// After mapping (and the fanout pass when opt.max_fanout > 0): constants, checks, stat, netlists.
std::string yosys_finish_script(const DesignSource& src, const SynthOptions& opt);

// The text of src.top_source with the defaults of src.params replaced by their values: how the
// flow sets parameters when top_source is given (Yosys 0.23's chparam asserts on tiles that it
// re-elaborates, "Reprocessing module ... has become available").
std::string with_parameter_defaults(const DesignSource& src);

// Runs yosys in `workdir`; throws std::runtime_error with the offending log lines when yosys
// fails, prints error text, or leaves cells unmapped to the library.
SynthResult run_yosys(const DesignSource& src, const SynthOptions& opt, const std::string& workdir);

// Area per bit of an operand register (a flip-flop with load enable, as Yosys maps
// `if (en) q <= d`) in `lib`: a 64-bit register synthesized in `workdir`, area / 64.
double register_bit_area_um2(const CellLibrary& lib, const std::string& workdir,
                             double timeout_s = 600);

// Parses the `stat -liberty` report; exposed for tests.
void parse_yosys_stat(const std::string& stat_text, SynthResult& out);

}  // namespace ltc::synth
