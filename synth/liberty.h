// A liberty cell library: each cell's pins, the Boolean function of its outputs and its flip-flop
// (clocked_on / next_state / clear / preset), enough to simulate a mapped netlist at zero delay
// (gatesim.h); and what the per-net power model needs (power.h): pin capacitances, the output
// transition tables of the timing arcs (for slews), the internal-power tables, cell leakage, the
// supply voltage and any wire_load model; the delay tables (the timed activity, gatesim.h). Timing
// checks stay OpenSTA's business.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ltc::synth {

// A Boolean expression in liberty syntax: `!a`, `a'`, `a & b`, `a * b`, `a b` (AND), `a | b`,
// `a + b`, `a ^ b`, parentheses, constants 0/1. Parsed once; evaluated by variable index.
class BoolExpr {
 public:
  BoolExpr() = default;
  // Throws std::runtime_error naming `expr` and the offending position. Identifiers are looked up
  // in `vars`; an unknown identifier is an error.
  static BoolExpr parse(const std::string& expr, const std::vector<std::string>& vars);
  bool eval(uint32_t assignment) const;  // bit i of `assignment` = value of vars[i]
  bool empty() const { return nodes_.empty(); }
  // The truth table over `nvars` variables (entry i = eval(i)).
  std::vector<uint8_t> truth_table(int nvars) const;

 private:
  struct Node {
    char op;  // 'v' variable, 'c' constant, '!', '&', '|', '^'
    int a = -1, b = -1;
    int var = 0;
    bool value = false;
  };
  bool eval_node(int i, uint32_t assignment) const;
  std::vector<Node> nodes_;
  int root_ = -1;
  friend class BoolExprParser;
};

// A lookup table of up to two axes (liberty lu_table_template / power_lut_template), in the
// library's units. Axes are named by the template's variables; lookup() takes the output load and
// the input transition and interpolates linearly per axis, extrapolating linearly beyond the
// table's edges (as OpenSTA does).
struct LibertyTable {
  enum class Axis : uint8_t { kLoad, kSlew, kOther };
  std::vector<Axis> axes;              // one per index (0, 1 or 2)
  std::vector<double> index1, index2;  // breakpoints
  std::vector<double> values;          // index1.size() x index2.size(), row-major
  bool empty() const { return values.empty(); }
  double lookup(double load_pf, double slew_ns) const;
};

struct LibertyInternalPower {
  std::string related_pin;  // empty: a pin's own (passive) power, per transition of that pin
  std::string when;         // state condition (liberty `when`, over the cell's pins); empty: always
  LibertyTable rise, fall;  // energy per rising / falling transition (of the output, or the pin)
};

struct LibertyTimingArc {
  std::string related_pin;
  std::string sense;  // positive_unate, negative_unate, non_unate (or empty)
  std::string type;   // combinational (empty), rising_edge, setup_rising, ...
  LibertyTable rise_transition, fall_transition;  // output slew over (load, input slew)
  LibertyTable cell_rise, cell_fall;              // propagation delay over (load, input slew)
};

struct LibertyPin {
  std::string name;
  bool input = true;
  std::string function;     // outputs: Boolean function of inputs (and flip-flop variables)
  std::string three_state;  // outputs of tri-state cells
  double rise_capacitance = 0, fall_capacitance = 0;  // pF (capacitance when not split)
  bool clock = false;
  std::vector<LibertyInternalPower> internal_power;
  std::vector<LibertyTimingArc> timing;  // on outputs: the arcs into this pin
};

struct LibertyFlop {
  std::string var, var_n;  // the state variables named in ff (IQ, IQN)
  std::string next_state, clocked_on, clear, preset;
  char clear_preset_var1 = 'L', clear_preset_var2 = 'H';  // values when clear and preset collide
};

struct LibertyCell {
  std::string name;
  double area = 0;
  std::vector<LibertyPin> pins;
  bool has_ff = false;
  LibertyFlop ff;
  bool has_latch = false;
  double leakage_mw = 0;  // cell_leakage_power
};

// A liberty wire_load group: wire capacitance by fanout (fanout_length x capacitance per unit
// length; beyond the table, the slope per extra fanout).
struct LibertyWireLoad {
  std::string name;
  double capacitance_per_length = 0;  // pF per length unit
  double slope = 0;                   // length per fanout beyond the table
  std::vector<std::pair<int, double>> fanout_length;
  double capacitance_pf(int fanout) const;
};

struct LibertyLibrary {
  std::string name;
  std::map<std::string, LibertyCell> cells;
  double nom_voltage = 0;  // V
  double cap_unit_pf = 1;  // the file's capacitive_load_unit (what OpenSTA's set_load takes)
  // Units of the tables, converted on reading: times in ns, capacitances in pF, internal energy
  // in pJ (voltage_unit x capacitive_load_unit), leakage in mW.
  std::map<std::string, LibertyWireLoad> wire_loads;
  std::string default_wire_load;  // empty: none
};

// Reads the cells of a liberty file. Throws std::runtime_error naming the file and line on a
// syntax error.
std::map<std::string, LibertyCell> read_liberty_cells(const std::string& path);
std::map<std::string, LibertyCell> parse_liberty_cells(const std::string& text,
                                                       const std::string& source_name);
// The whole library with the power and transition data. Throws std::runtime_error naming the
// file on a syntax error or on units it does not know.
LibertyLibrary read_liberty(const std::string& path);
LibertyLibrary parse_liberty(const std::string& text, const std::string& source_name);

}  // namespace ltc::synth
