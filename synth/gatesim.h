// A zero-delay, cycle-based gate-level simulator for the mapped netlists of the flow: reads Yosys's
// JSON netlist (write_json), flattens kept modules into one net list, evaluates every cell from its
// liberty function (liberty.h) in topological order, clocks the flip-flops on their liberty
// `clocked_on` edges (with asynchronous clear/preset), and counts the toggles of every net.
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
  int cycles = 0;                     // measured cycles
  std::vector<double> toggles;        // per node, over the measured cycles
  std::vector<double> high_fraction;  // per node: share of the measured time steps at 1
  std::vector<Cell> cells;            // flip-flops first, then combinational in topological order
  std::vector<uint32_t> input_nodes, clock_nodes, output_nodes;  // top-level port bits
  size_t nodes() const { return toggles.size(); }
};

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
  bool counting_ = false;
};

}  // namespace ltc::synth
