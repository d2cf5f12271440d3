// A cycle-based gate-level simulator for the mapped netlists of the flow: reads Yosys's JSON
// netlist (write_json), flattens kept modules into one net list, evaluates every cell from its
// liberty function (liberty.h), clocks the flip-flops on their liberty `clocked_on` edges (with
// asynchronous clear/preset), and counts the toggles of every net.
// Zero-delay (the default): each time step settles in topological order and a net toggles when its
// value at the end of the step differs from its start, as a VCD records it.
// Timed (set_timing): each step is an event-driven simulation in which every cell output changes
// a delay after its inputs (one unit per cell, or the liberty's cell_rise/cell_fall at the
// instance's load), with inertial delay (a pulse shorter than the cell's delay does not pass), and
// every transition counts, the glitches that settle within the step too. The settled values, and
// so the outputs and the zero-delay toggles (kept beside the timed ones), are the same.
//
// Why it exists: iverilog on the OSU cell models needs ~9 s per cycle on an M2N64K4 tile (261k
// cells) and writes a VCD of every net; this evaluates the same netlist in well under a second per
// hundred cycles. The activity test checks it against iverilog toggle for toggle and output for
// output, and the gate-level check compares its outputs with the RTL.
#pragma once

#include "synth/liberty.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ltc::synth {

// Every net's measured switching and the cells that connect them, for the per-net power model
// (power.h). Nodes are electrical nets (a kept module's port net and its parent's net are one).
struct NetActivity {
  static constexpr uint32_t kNoNet = UINT32_MAX;
  struct Cell {
    std::string type;               // liberty cell
    std::vector<uint32_t> in, out;  // nodes, in the liberty's pin order (inputs, outputs)
  };
  int cycles = 0;                       // measured cycles
  std::vector<double> toggles;          // per node, over the measured cycles (timed when timed)
  std::vector<double> settled_toggles;  // per node: end-of-step changes (the zero-delay count)
  std::string timing = "zero-delay";    // how toggles were counted (GateSim::timing_name)
  std::vector<double> high_fraction;    // per node: share of the measured time steps at 1
  std::vector<Cell> cells;              // flip-flops first, then combinational in topological order
  std::vector<uint32_t> input_nodes, clock_nodes, output_nodes;  // top-level port bits
  size_t nodes() const { return toggles.size(); }
};

enum class DelayModel : uint8_t {
  kZero,     // zero delay: settled values only
  kUnit,     // one time unit per cell: every reconvergent path's skew, a bound on glitching
  kLiberty,  // the liberty's propagation delays at each instance's load
};
// "zero", "unit", "liberty"; InputError naming `flag` and the valid names otherwise.
DelayModel parse_delay_model(const std::string& name, const std::string& flag);
const char* delay_model_name(DelayModel m);

class GateSim {
 public:
  // Throws std::runtime_error naming the file and the cell or net on: an unknown cell type, a
  // latch or tri-state cell, a net with two drivers, a used net without a driver, a
  // combinational loop.
  GateSim(const std::string& json_path, const std::string& top,
          const std::map<std::string, LibertyCell>& library);

  int cells() const { return static_cast<int>(comb_.size() + flops_.size()); }
  int flip_flops() const { return static_cast<int>(flops_.size()); }
  bool has_port(const std::string& port) const { return ports_.count(port) != 0; }
  int port_width(const std::string& port) const;

  // Sets an input port (bits LSB first); the change takes effect at the next step().
  void set_input(const std::string& port, const std::vector<uint8_t>& bits);
  // One time step: the logic settles after the inputs set since the last step (flip-flops whose
  // clocked_on rose fire, asynchronous clear/preset apply) until nothing changes.
  void step();
  std::vector<uint8_t> output(const std::string& port) const;  // any port, LSB first

  // Toggle counting: while on, a net whose value at the end of a step differs from its value at
  // the start counts one toggle (as a VCD records it: zero-width glitches within a step do not
  // count).
  void count_toggles(bool on) { counting_ = on; }

  // Timed steps from now on (DelayModel). kLiberty: each output's delay is the mean of the
  // liberty's cell_rise and cell_fall over the arcs into it, at the instance's load (the input
  // pins it drives, `wire_load` by fanout when given, `output_load_pf` on output ports) and the
  // input slew its driver's transition table gives (from 0 ns at ports), in whole femtoseconds
  // (at least 1). Throws std::runtime_error naming a cell without delay tables.
  void set_timing(DelayModel model, const std::map<std::string, LibertyCell>& library,
                  const LibertyWireLoad* wire_load = nullptr, double output_load_pf = 0.01);
  DelayModel timing() const { return timing_; }
  // Per output pin of every cell (comb cells in topological order, then flops): its delay in
  // the timed model's units (fs, or 1 for kUnit). For tests.
  uint32_t output_delay(const std::string& net) const;
  // Toggles of a top-level net by its netlist name ("c1", "s[3]") since counting began: every
  // transition (timed) or end-of-step changes (settled). Throws naming an unknown net.
  uint64_t net_toggles(const std::string& net, bool timed) const;
  // Toggles summed over the bits of `ports` (input_toggles) and over every other net
  // (net_toggles), excluding the nets of `skip_ports` (the clock) and the constants.
  struct ToggleSums {
    uint64_t input_toggles = 0, net_toggles = 0;
    int input_bits = 0, net_bits = 0;
  };
  ToggleSums toggle_sums(const std::vector<std::string>& input_ports,
                         const std::vector<std::string>& skip_ports) const;
  // Per-net toggles and high time since counting began, with the cell connectivity. `cycles` is
  // the number of measured clock cycles the toggles are over.
  NetActivity net_activity(const std::vector<std::string>& input_ports,
                           const std::vector<std::string>& clock_ports, int cycles) const;

 private:
  struct CellType {
    std::string name;
    int n_in = 0, n_out = 0;
    std::vector<std::vector<uint8_t>> out_table;  // per output, over the inputs (comb) or IQ (ff)
    // Flip-flops: tables over the inputs.
    bool ff = false;
    std::vector<uint8_t> clocked_on, next_state, clear, preset;
    uint8_t both_state = 0;  // IQ when clear and preset are both active
  };
  struct Cell {
    int type;
    uint32_t in, out;  // offsets into pins_
    uint8_t state = 0, clk = 0;
  };

  int cell_type(const std::string& name, const std::map<std::string, LibertyCell>& library);
  uint32_t inputs_of(const Cell& c) const;
  void write(uint32_t node, uint8_t v);
  void settle();  // combinational logic, then flip-flop edges and async controls, until stable
  void eval_comb();
  bool update_flops();
  // A flip-flop's state after its inputs' present values (clock edge, clear, preset); records
  // the clock level for the next edge.
  uint8_t flop_next(Cell& f);
  void timed_step();  // the event-driven settling of a timed step (step() counts after it)

  std::vector<CellType> types_;
  std::map<std::string, int> type_index_;
  std::vector<Cell> comb_, flops_;  // comb_ in topological order
  std::vector<uint32_t> pins_;      // node indices of cell pins
  std::vector<uint8_t> value_;
  std::vector<uint32_t> toggles_;
  std::vector<uint32_t> high_steps_;  // per node: counted steps that ended with the node at 1
  uint32_t counted_steps_ = 0;
  std::vector<uint32_t> touched_step_;                  // per node: the step that first changed it
  std::vector<uint8_t> start_value_;                    // per node: its value when that step began
  std::vector<uint32_t> touched_;                       // nodes changed in the current step
  std::vector<std::pair<size_t, uint8_t>> next_state_;  // update_flops scratch (flop, state)
  uint32_t step_ = 1;
  std::map<std::string, std::vector<uint32_t>> ports_;  // node per bit, LSB first
  std::map<std::string, uint32_t> net_names_;           // netlist name -> node (top-level nets)
  bool counting_ = false;
  // Timed mode.
  DelayModel timing_ = DelayModel::kZero;
  std::vector<uint32_t> delay_;                  // per pins_ entry of an output: delay
  std::vector<uint32_t> fanout_start_, fanout_;  // CSR per node: cells reading it (flops ~i)
  std::vector<uint32_t> timed_toggles_;          // per node: every transition
  std::vector<uint32_t> pending_gen_;            // per node: generation of its valid pending event
  std::vector<uint8_t> pending_value_, has_pending_;
  std::vector<uint8_t> comb_marked_, flop_marked_;
  std::vector<uint32_t> comb_list_, flop_list_;
};

}  // namespace ltc::synth
