#include "synth/power.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace ltc::synth {

namespace {

// What the power model needs of one cell type, resolved once.
struct CellPower {
  const LibertyCell* cell = nullptr;
  std::vector<const LibertyPin*> in, out;
  std::vector<std::vector<uint8_t>> table;  // per output: truth table over the inputs (comb)
  // Per output: the internal-power arcs (related input index, tables, unateness).
  struct Arc {
    int from = -1;
    const LibertyInternalPower* power = nullptr;
    char sense = 'n';        // 'p' positive, 'n' non-unate, 'm' negative (minus)
    bool depends = true;     // the output's function depends on the input (false: a flip-flop's)
    double duty_2019 = 0.5;  // OpenSTA 2019's weight of the arc (opensta_2019_duty)
    int when = -1;           // index into `when` (a state-dependent group), or -1
  };
  std::vector<std::vector<Arc>> arcs;
  // Per input: its own (passive) internal-power groups, and their `when` indices (-1: none).
  std::vector<std::vector<std::pair<const LibertyInternalPower*, int>>> passive;
  // State conditions (liberty `when`) as truth tables over the base variables: the inputs, then
  // for a flip-flop its state IQ (the outputs follow from them: out_of_base).
  std::vector<std::vector<uint8_t>> when;
  int base_vars = 0;
  std::vector<std::vector<uint8_t>> out_of_base;  // per output: its value per base assignment
  int state_output = -1;  // flip-flop: the output whose net's duty is P(IQ) (or its inverse)
  bool state_inverted = false;
  // Per output: the transition arcs (related input index, arc).
  std::vector<std::vector<std::pair<int, const LibertyTimingArc*>>> slews;
};

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

// Strips enclosing parentheses and leading negations (which do not change a duty below).
std::string strip_outer(std::string e) {
  for (;;) {
    e = trim(e);
    if (!e.empty() && e[0] == '!') {
      e = e.substr(1);
      continue;
    }
    if (e.size() >= 2 && e.front() == '(' && e.back() == ')') {
      int depth = 0;
      bool encloses = true;
      for (size_t i = 0; i < e.size(); ++i) {
        depth += e[i] == '(' ? 1 : e[i] == ')' ? -1 : 0;
        if (depth == 0 && i + 1 < e.size()) encloses = false;
      }
      if (encloses) {
        e = e.substr(1, e.size() - 2);
        continue;
      }
    }
    return e;
  }
}

// OpenSTA 2019 (measured with its power debug output on every osu018 cell, tests/synth/
// power_test.cpp): an internal-power arc whose related pin is a whole operand of the function's
// top operator gets the probability that the other operand lets it through (AND: the other is 1;
// OR, XOR: the other is 0) at duty 0.5; a buffer's or inverter's arc 1; every other arc 0.5; the
// arcs are summed, not normalized.
double opensta_2019_duty(const std::string& function, const std::string& pin,
                         const std::vector<std::string>& vars) {
  const std::string e = strip_outer(function);
  if (e == pin) return 1.0;  // a buffer or inverter: its one arc
  int depth = 0;
  size_t op_at = std::string::npos;
  char op = 0;
  // The lowest-precedence operator at depth 0, rightmost: OR, then XOR, then AND (incl. a space).
  auto rank = [](char c) { return c == '+' || c == '|' ? 3 : c == '^' ? 2 : 1; };
  for (size_t i = 0; i < e.size(); ++i) {
    const char c = e[i];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth != 0) continue;
    char here = 0;
    if (c == '+' || c == '|' || c == '^' || c == '&' || c == '*') {
      here = c;
    } else if (c == ' ' && i > 0 && i + 1 < e.size()) {
      // Juxtaposition is AND between two operands (not around another operator).
      const size_t prev = e.find_last_not_of(' ', i);
      const size_t next = e.find_first_not_of(' ', i);
      if (prev != std::string::npos && next != std::string::npos &&
          std::string("+|^&*!").find(e[prev]) == std::string::npos &&
          std::string("+|^&*)").find(e[next]) == std::string::npos) {
        here = '&';
      }
    }
    if (here && (!op || rank(here) >= rank(op))) {
      op = here;
      op_at = i;
    }
  }
  if (!op) return 0.5;
  const std::string left = trim(e.substr(0, op_at));
  const std::string right = trim(e.substr(op_at + 1));
  std::string other;
  if (strip_outer(left) == pin && left.find('!') == std::string::npos) other = right;
  if (strip_outer(right) == pin && right.find('!') == std::string::npos) other = left;
  if (other.empty()) return 0.5;
  const auto tt = BoolExpr::parse(other, vars).truth_table(static_cast<int>(vars.size()));
  double ones = 0;
  for (uint8_t v : tt) ones += v;
  const double p_one = ones / tt.size();
  return op == '&' || op == '*' ? p_one : 1 - p_one;
}

char sense_of(const std::string& s) {
  if (s == "positive_unate") return 'p';
  if (s == "negative_unate") return 'm';
  return 'n';
}

bool propagates_slew(const std::string& type) {
  return type.empty() || type == "combinational" || type == "rising_edge" ||
         type == "falling_edge" || type == "clear" || type == "preset";
}

// The base variables of a cell's `when` conditions (its inputs, and a flip-flop's state IQ), each
// output's value over them, and every state-dependent group's condition as a truth table.
void resolve_when(const LibertyCell& lc, const std::vector<std::string>& in_names, CellPower& cp) {
  bool any = false;
  for (const auto& p : lc.pins) {
    for (const auto& ip : p.internal_power) any = any || !ip.when.empty();
  }
  if (!any) return;
  const int n_in = static_cast<int>(in_names.size());
  cp.base_vars = n_in + (lc.has_ff ? 1 : 0);
  if (cp.base_vars > 12) throw std::runtime_error("power: cell " + lc.name + " has >12 inputs");
  const size_t states = size_t{1} << cp.base_vars;
  std::vector<std::string> out_names;
  for (size_t o = 0; o < cp.out.size(); ++o) {
    const LibertyPin* pin = cp.out[o];
    out_names.push_back(pin->name);
    std::vector<uint8_t> v(states, 0);
    if (lc.has_ff) {
      const std::vector<std::string> vars = {lc.ff.var,
                                             lc.ff.var_n.empty() ? "<none>" : lc.ff.var_n};
      const BoolExpr e = BoolExpr::parse(pin->function, vars);
      const bool at1 = e.eval(0b01), at0 = e.eval(0b10);  // IQN = !IQ
      if (cp.state_output < 0 && at1 != at0) {
        cp.state_output = static_cast<int>(o);
        cp.state_inverted = at0;
      }
      for (size_t x = 0; x < states; ++x) v[x] = ((x >> n_in) & 1) ? at1 : at0;
    } else if (!pin->function.empty()) {
      const auto tt = BoolExpr::parse(pin->function, in_names).truth_table(n_in);
      for (size_t x = 0; x < states; ++x) v[x] = tt[x];
    }
    cp.out_of_base.push_back(std::move(v));
  }
  std::vector<std::string> vars = in_names;
  vars.insert(vars.end(), out_names.begin(), out_names.end());
  auto table_of = [&](const std::string& cond) {
    const BoolExpr e = BoolExpr::parse(cond, vars);
    std::vector<uint8_t> t(states, 0);
    for (size_t x = 0; x < states; ++x) {
      uint32_t full = static_cast<uint32_t>(x & ((size_t{1} << n_in) - 1));
      for (size_t o = 0; o < cp.out_of_base.size(); ++o) {
        full |= uint32_t{cp.out_of_base[o][x]} << (n_in + o);
      }
      t[x] = e.eval(full);
    }
    cp.when.push_back(std::move(t));
    return static_cast<int>(cp.when.size()) - 1;
  };
  for (size_t o = 0; o < cp.out.size(); ++o) {
    size_t j = 0;
    for (const auto& ip : cp.out[o]->internal_power) {
      if (j >= cp.arcs[o].size()) break;
      if (cp.arcs[o][j].power != &ip) continue;  // an arc skipped by resolve (unknown pin)
      if (!ip.when.empty()) cp.arcs[o][j].when = table_of(ip.when);
      ++j;
    }
  }
  for (size_t k = 0; k < cp.in.size(); ++k) {
    for (auto& [ip, w] : cp.passive[k]) {
      if (!ip->when.empty()) w = table_of(ip->when);
    }
  }
}

CellPower resolve(const LibertyCell& lc) {
  CellPower cp;
  cp.cell = &lc;
  std::vector<std::string> in_names;
  for (const auto& p : lc.pins) {
    if (p.input) {
      cp.in.push_back(&p);
      in_names.push_back(p.name);
    } else {
      cp.out.push_back(&p);
    }
  }
  auto index_of = [&](const std::string& name) {
    const auto it = std::find(in_names.begin(), in_names.end(), name);
    return it == in_names.end() ? -1 : static_cast<int>(it - in_names.begin());
  };
  for (const LibertyPin* in : cp.in) {
    cp.passive.emplace_back();
    for (const auto& ip : in->internal_power) {
      if (ip.related_pin.empty()) cp.passive.back().emplace_back(&ip, -1);
    }
  }
  for (const LibertyPin* o : cp.out) {
    std::vector<uint8_t> tt;
    if (!lc.has_ff && !o->function.empty() && in_names.size() <= 12) {
      tt = BoolExpr::parse(o->function, in_names).truth_table(static_cast<int>(in_names.size()));
    }
    std::vector<CellPower::Arc> arcs;
    for (const auto& ip : o->internal_power) {
      CellPower::Arc a;
      a.from = index_of(ip.related_pin);
      if (a.from < 0) continue;
      a.power = &ip;
      for (const auto& t : o->timing) {
        if (t.related_pin == ip.related_pin && propagates_slew(t.type)) {
          a.sense = sense_of(t.sense);
          break;
        }
      }
      if (!lc.has_ff && !o->function.empty()) {
        a.duty_2019 = opensta_2019_duty(o->function, ip.related_pin, in_names);
      }
      a.depends = false;
      if (!tt.empty()) {
        for (size_t x = 0; x < tt.size() && !a.depends; ++x) {
          if (tt[x] != tt[x ^ (size_t{1} << a.from)]) a.depends = true;
        }
      }
      arcs.push_back(a);
    }
    std::vector<std::pair<int, const LibertyTimingArc*>> sl;
    for (const auto& t : o->timing) {
      const int from = index_of(t.related_pin);
      if (from >= 0 && propagates_slew(t.type)) sl.emplace_back(from, &t);
    }
    cp.table.push_back(std::move(tt));
    cp.arcs.push_back(std::move(arcs));
    cp.slews.push_back(std::move(sl));
  }
  resolve_when(lc, in_names, cp);
  return cp;
}

// P(f(x | x_i = 1) != f(x | x_i = 0)) with the inputs independent at duties p.
double difference_probability(const std::vector<uint8_t>& tt, int i, const std::vector<double>& p) {
  const size_t n = p.size();
  double sum = 0;
  for (size_t x = 0; x < tt.size(); ++x) {
    if (x & (size_t{1} << i)) continue;
    if (tt[x] == tt[x | (size_t{1} << i)]) continue;
    double w = 1;
    for (size_t k = 0; k < n; ++k) {
      if (static_cast<int>(k) == i) continue;
      w *= (x >> k) & 1 ? p[k] : 1 - p[k];
    }
    sum += w;
  }
  return sum;
}

}  // namespace

std::optional<WireLoadEstimate> liberty_wire_load(const LibertyLibrary& lib) {
  if (lib.default_wire_load.empty()) return std::nullopt;
  WireLoadEstimate w;
  w.model = lib.wire_loads.at(lib.default_wire_load);
  w.description = "the liberty's default wire_load " + lib.default_wire_load;
  return w;
}

WireLoadEstimate lef_wire_load(const std::string& lef_path, const std::string& layer,
                               double mean_cell_area_um2) {
  std::ifstream in(lef_path);
  if (!in) throw std::runtime_error("cannot read LEF " + lef_path);
  if (!(mean_cell_area_um2 > 0)) throw std::invalid_argument("lef_wire_load: no cell area");
  std::string line;
  bool inside = false, found = false;
  double width = -1, cpersq = -1, edge = -1;
  while (std::getline(in, line)) {
    std::istringstream w(line);
    std::string a, b, c;
    w >> a >> b >> c;
    if (a == "LAYER" && b == layer) {
      inside = found = true;
    } else if (inside && a == "END") {
      inside = false;
    } else if (inside && a == "WIDTH") {
      width = std::stod(b);
    } else if (inside && a == "CAPACITANCE" && b == "CPERSQDIST") {
      cpersq = std::stod(c);
    } else if (inside && a == "EDGECAPACITANCE") {
      edge = std::stod(b);
    }
  }
  if (!found || width < 0 || cpersq < 0 || edge < 0) {
    throw std::runtime_error(
        fmt::format("{}: layer {} with WIDTH, CAPACITANCE CPERSQDIST and EDGECAPACITANCE not found",
                    lef_path, layer));
  }
  WireLoadEstimate e;
  e.model.name = "lef-" + layer;
  e.model.capacitance_per_length = width * cpersq + 2 * edge;  // pF per um
  e.model.slope = std::sqrt(mean_cell_area_um2);               // um per fanout
  e.description = fmt::format(
      "wire load by fanout: {:.2f} um (one cell pitch, sqrt of the mean cell area) per fanout at "
      "{:.4g} fF/um ({} of {}: WIDTH x CPERSQDIST + 2 x EDGECAPACITANCE)",
      e.model.slope, e.model.capacitance_per_length * 1e3, layer, lef_path);
  return e;
}

std::shared_ptr<const LibertyLibrary> power_library(const std::string& liberty_path) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const LibertyLibrary>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[liberty_path];
  if (!slot) slot = std::make_shared<const LibertyLibrary>(read_liberty(liberty_path));
  return slot;
}

NetPowerResult net_power(const NetActivity& act, const LibertyLibrary& lib,
                         const PowerOptions& opt) {
  const double vdd = opt.vdd > 0 ? opt.vdd : lib.nom_voltage;
  if (!(vdd > 0)) throw std::runtime_error("power: no supply voltage (liberty nom_voltage)");
  if (!(opt.clock_ns > 0)) throw std::invalid_argument("power: clock period must be > 0");
  if (act.cycles <= 0 && !opt.uniform_activity) {
    throw std::invalid_argument("power: no measured cycles");
  }
  const size_t n = act.nodes();
  std::vector<uint8_t> is_clock(n, 0), is_input(n, 0), driven(n, 0);
  for (uint32_t c : act.clock_nodes) is_clock[c] = 1;
  for (uint32_t i : act.input_nodes) is_input[i] = 1;

  // Activity (toggles per cycle) and duty per net.
  std::vector<double> a(n), duty(n);
  for (size_t i = 0; i < n; ++i) {
    if (opt.uniform_activity) {
      a[i] = is_clock[i] ? 2.0 : *opt.uniform_activity;
      duty[i] = 0.5;
    } else {
      a[i] = act.toggles[i] / act.cycles;
      duty[i] = act.high_fraction[i];
    }
  }

  std::map<std::string, CellPower> types;
  std::vector<const CellPower*> cp(act.cells.size());
  for (size_t c = 0; c < act.cells.size(); ++c) {
    const auto& cell = act.cells[c];
    auto it = types.find(cell.type);
    if (it == types.end()) {
      const auto lc = lib.cells.find(cell.type);
      if (lc == lib.cells.end()) {
        throw std::runtime_error("power: cell " + cell.type + " is not in the liberty " + lib.name);
      }
      it = types.emplace(cell.type, resolve(lc->second)).first;
    }
    cp[c] = &it->second;
    if (cell.in.size() != it->second.in.size() || cell.out.size() != it->second.out.size()) {
      throw std::runtime_error("power: cell " + cell.type + " pins do not match the liberty");
    }
  }

  // Loads: the input pins each net drives, output ports, wire.
  std::vector<double> cap_rise(n, 0), cap_fall(n, 0), load(n, 0);
  std::vector<int> fanout(n, 0);
  for (size_t c = 0; c < act.cells.size(); ++c) {
    const auto& cell = act.cells[c];
    for (size_t k = 0; k < cell.in.size(); ++k) {
      const uint32_t node = cell.in[k];
      cap_rise[node] += cp[c]->in[k]->rise_capacitance;
      cap_fall[node] += cp[c]->in[k]->fall_capacitance;
      ++fanout[node];
    }
    for (uint32_t o : cell.out) {
      if (o != NetActivity::kNoNet) driven[o] = 1;
    }
  }
  for (uint32_t o : act.output_nodes) {
    cap_rise[o] += opt.output_load_pf;
    cap_fall[o] += opt.output_load_pf;
    ++fanout[o];
  }
  NetPowerResult r;
  for (size_t i = 2; i < n; ++i) {
    const double pins = std::max(cap_rise[i], cap_fall[i]);
    const double wire = opt.wire_load ? opt.wire_load->model.capacitance_pf(fanout[i]) : 0.0;
    load[i] = pins + wire;
    if (driven[i] || is_input[i] || is_clock[i]) {
      r.pin_cap_pf += pins;
      r.wire_cap_pf += wire;
      ++r.nets;
    }
  }

  // Slews (ns), rise and fall, in the cells' order (flip-flops, then combinational topological).
  std::vector<double> slew_r(n, 0), slew_f(n, 0);
  for (size_t c = 0; c < act.cells.size(); ++c) {
    const auto& cell = act.cells[c];
    for (size_t o = 0; o < cell.out.size(); ++o) {
      const uint32_t m = cell.out[o];
      if (m == NetActivity::kNoNet) continue;
      double sr = 0, sf = 0;
      for (const auto& [from, arc] : cp[c]->slews[o]) {
        const uint32_t src = cell.in[from];
        const char s = sense_of(arc->sense);
        const double in_for_rise = s == 'p'   ? slew_r[src]
                                   : s == 'm' ? slew_f[src]
                                              : std::max(slew_r[src], slew_f[src]);
        const double in_for_fall = s == 'p'   ? slew_f[src]
                                   : s == 'm' ? slew_r[src]
                                              : std::max(slew_r[src], slew_f[src]);
        sr = std::max(sr, arc->rise_transition.lookup(load[m], in_for_rise));
        sf = std::max(sf, arc->fall_transition.lookup(load[m], in_for_fall));
      }
      slew_r[m] = sr;
      slew_f[m] = sf;
    }
  }

  // Internal power (pJ per cycle) and leakage.
  double internal_pj = 0;
  std::vector<double> p, when_p, state_p;
  for (size_t c = 0; c < act.cells.size(); ++c) {
    const auto& cell = act.cells[c];
    const CellPower& t = *cp[c];
    r.leakage_mw += t.cell->leakage_mw;
    p.resize(cell.in.size());
    for (size_t k = 0; k < cell.in.size(); ++k) p[k] = duty[cell.in[k]];
    // State-dependent groups: the probability of each `when` from the duties (inputs independent;
    // a flip-flop's state from its output's duty), normalized over the groups of one pin below.
    when_p.assign(t.when.size(), 0);
    if (!t.when.empty()) {
      std::vector<double> pb(p.begin(), p.end());
      if (t.base_vars > static_cast<int>(p.size())) {
        double q = 0.5;
        if (t.state_output >= 0 && cell.out[t.state_output] != NetActivity::kNoNet) {
          q = duty[cell.out[t.state_output]];
          if (t.state_inverted) q = 1 - q;
        }
        pb.push_back(q);
      }
      const size_t states = size_t{1} << t.base_vars;
      state_p.assign(states, 1);
      for (size_t x = 0; x < states; ++x) {
        for (int v = 0; v < t.base_vars; ++v) state_p[x] *= (x >> v) & 1 ? pb[v] : 1 - pb[v];
      }
      for (size_t g = 0; g < t.when.size(); ++g) {
        for (size_t x = 0; x < states; ++x) {
          if (t.when[g][x]) when_p[g] += state_p[x];
        }
      }
    }
    for (size_t o = 0; o < cell.out.size(); ++o) {
      const uint32_t m = cell.out[o];
      if (m == NetActivity::kNoNet || a[m] == 0 || t.arcs[o].empty()) continue;
      std::vector<double> w(t.arcs[o].size());
      double wsum = 0;
      for (size_t j = 0; j < w.size(); ++j) {
        const auto& arc = t.arcs[o][j];
        const uint32_t src = cell.in[arc.from];
        if (opt.opensta_2019) {
          w[j] = arc.depends ? arc.duty_2019 : is_clock[src] ? 1.0 : 0.5;
        } else if (arc.depends) {
          w[j] = a[src] * difference_probability(t.table[o], arc.from, p);
        } else if (opt.uniform_activity) {
          w[j] = is_clock[src] ? 1.0 : 0.5;  // OpenSTA's duty for arcs outside the function
        } else {
          w[j] = a[src];  // a flip-flop's output switches on its clock (or clear/preset)
        }
        wsum += w[j];
      }
      if (!t.when.empty()) {
        // A pin's state-dependent arcs share its weight by their conditions' probabilities.
        for (size_t j = 0; j < w.size(); ++j) {
          const auto& arc = t.arcs[o][j];
          if (arc.when < 0) continue;
          double total = 0;
          int same = 0;
          for (const auto& other : t.arcs[o]) {
            if (other.from == arc.from && other.when >= 0) {
              total += when_p[other.when];
              ++same;
            }
          }
          const double share = total > 0 ? when_p[arc.when] / total : 1.0 / same;
          wsum += w[j] * (share - 1);
          w[j] *= share;
        }
      }
      double energy = 0;  // pJ per output toggle
      for (size_t j = 0; j < w.size(); ++j) {
        const auto& arc = t.arcs[o][j];
        const uint32_t src = cell.in[arc.from];
        const double weight = opt.opensta_2019 ? w[j] : wsum > 0 ? w[j] / wsum : 1.0 / w.size();
        const double s_for_rise = arc.sense == 'm' ? slew_f[src] : slew_r[src];
        const double s_for_fall = arc.sense == 'm' ? slew_r[src] : slew_f[src];
        const double er = arc.power->rise.lookup(load[m], s_for_rise);
        const double ef = arc.power->fall.lookup(load[m], s_for_fall);
        energy += weight * (opt.opensta_2019 ? er + ef : (er + ef) / 2);
      }
      internal_pj += energy * a[m];
    }
    for (size_t k = 0; k < cell.in.size(); ++k) {
      const uint32_t node = cell.in[k];
      double conditional = 0;  // the summed probability of the pin's state-dependent groups
      for (const auto& [ip, w] : t.passive[k]) {
        if (w >= 0) conditional += when_p[w];
      }
      for (const auto& [ip, w] : t.passive[k]) {
        const double er = ip->rise.lookup(0, slew_r[node]);
        const double ef = ip->fall.lookup(0, slew_f[node]);
        double per_toggle =
            opt.opensta_2019 ? (er + ef) * (is_clock[node] ? 1.0 : 0.5) : (er + ef) / 2;
        if (w >= 0) {
          int groups = 0;
          for (const auto& other : t.passive[k]) groups += other.second >= 0;
          per_toggle *= conditional > 0 ? when_p[w] / conditional : 1.0 / groups;
        }
        internal_pj += per_toggle * a[node];
      }
    }
  }
  r.cells = static_cast<int>(act.cells.size());
  r.internal_mw = internal_pj / opt.clock_ns;  // pJ per cycle / ns = mW

  // Switching: C V^2 / 2 per transition.
  double sw_pj = 0, in_pj = 0;
  for (size_t i = 2; i < n; ++i) {
    const double e = 0.5 * load[i] * vdd * vdd * a[i];
    if (driven[i]) {
      sw_pj += e;
    } else if (is_input[i] || is_clock[i]) {
      in_pj += e;
    }
  }
  r.switching_mw = sw_pj / opt.clock_ns;
  r.input_switching_mw = in_pj / opt.clock_ns;
  r.total_mw = r.internal_mw + r.switching_mw + r.input_switching_mw + r.leakage_mw;
  r.model = fmt::format(
      "per-net: {} at {} V, {} ns clock; loads = input-pin capacitances + {}; slews propagated "
      "from the liberty's transition tables (ideal inputs and clock){}",
      opt.uniform_activity
          ? fmt::format("uniform activity {}", *opt.uniform_activity)
          : fmt::format("measured toggles of {} nets over {} cycles", r.nets, act.cycles),
      vdd, opt.clock_ns, opt.wire_load ? opt.wire_load->description : std::string("no wire load"),
      opt.opensta_2019 ? "; OpenSTA 2019 internal-power conventions" : "");
  return r;
}

}  // namespace ltc::synth
