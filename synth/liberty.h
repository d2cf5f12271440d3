// The logic of a liberty cell library: each cell's pins, the Boolean function of its outputs, and
// its flip-flop (clocked_on / next_state / clear / preset). Enough to simulate a mapped netlist at
// zero delay (gatesim.h); timing and power tables are OpenSTA's business and are skipped.
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

struct LibertyPin {
  std::string name;
  bool input = true;
  std::string function;     // outputs: Boolean function of inputs (and flip-flop variables)
  std::string three_state;  // outputs of tri-state cells
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
};

// Reads the cells of a liberty file. Throws std::runtime_error naming the file and line on a
// syntax error.
std::map<std::string, LibertyCell> read_liberty_cells(const std::string& path);
std::map<std::string, LibertyCell> parse_liberty_cells(const std::string& text,
                                                       const std::string& source_name);

}  // namespace ltc::synth
