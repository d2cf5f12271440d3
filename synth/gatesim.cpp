#include "synth/gatesim.h"

#include "common/error.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <functional>
#include <numeric>
#include <queue>
#include <stdexcept>
#include <unordered_map>

namespace ltc::synth {

namespace {

using nlohmann::json;

constexpr uint32_t kConst0 = 0, kConst1 = 1;

// Union-find over the nets of the flattened design (a child's port net and the parent's net it
// connects to are one electrical node).
struct Nodes {
  std::vector<uint32_t> parent{kConst0, kConst1};
  uint32_t make() {
    parent.push_back(static_cast<uint32_t>(parent.size()));
    return parent.back();
  }
  uint32_t find(uint32_t x) {
    while (parent[x] != x) {
      parent[x] = parent[parent[x]];
      x = parent[x];
    }
    return x;
  }
  void unite(uint32_t a, uint32_t b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    if (a > b) std::swap(a, b);
    parent[b] = a;  // constants (0, 1) stay roots
  }
};

struct PendingCell {
  std::string type;
  std::string path;  // hierarchical instance name, for messages
  std::vector<std::pair<std::string, std::vector<uint32_t>>> pins;  // pin -> provisional nodes
};

}  // namespace

int GateSim::port_width(const std::string& port) const {
  const auto it = ports_.find(port);
  if (it == ports_.end()) throw std::runtime_error("gate-level netlist has no port " + port);
  return static_cast<int>(it->second.size());
}

int GateSim::cell_type(const std::string& name, const std::map<std::string, LibertyCell>& lib) {
  const auto found = type_index_.find(name);
  if (found != type_index_.end()) return found->second;
  const auto it = lib.find(name);
  if (it == lib.end()) throw std::runtime_error("cell type " + name + " is not in the liberty");
  const LibertyCell& lc = it->second;
  if (lc.has_latch) throw std::runtime_error("gatesim: latch cell " + name + " is not supported");
  CellType t;
  t.name = name;
  std::vector<std::string> in_names, out_names;
  std::vector<const LibertyPin*> outs;
  for (const auto& p : lc.pins) {
    if (p.input) {
      in_names.push_back(p.name);
    } else {
      if (!p.three_state.empty()) {
        throw std::runtime_error("gatesim: tri-state cell " + name + " is not supported");
      }
      if (p.function.empty()) {
        throw std::runtime_error("gatesim: output " + p.name + " of " + name + " has no function");
      }
      outs.push_back(&p);
    }
  }
  if (in_names.size() > 12) throw std::runtime_error("gatesim: cell " + name + " has >12 inputs");
  t.n_in = static_cast<int>(in_names.size());
  t.n_out = static_cast<int>(outs.size());
  t.ff = lc.has_ff;
  if (t.ff) {
    const int n = t.n_in;
    t.clocked_on = BoolExpr::parse(lc.ff.clocked_on, in_names).truth_table(n);
    t.next_state = BoolExpr::parse(lc.ff.next_state, in_names).truth_table(n);
    if (!lc.ff.clear.empty()) t.clear = BoolExpr::parse(lc.ff.clear, in_names).truth_table(n);
    if (!lc.ff.preset.empty()) t.preset = BoolExpr::parse(lc.ff.preset, in_names).truth_table(n);
    t.both_state = lc.ff.clear_preset_var1 == 'H' ? 1 : 0;
    // Outputs are functions of the state variables only (checked: no path through the flop).
    std::vector<std::string> vars = {lc.ff.var, lc.ff.var_n.empty() ? "<none>" : lc.ff.var_n};
    for (const auto* p : outs) {
      const BoolExpr e = BoolExpr::parse(p->function, vars);
      // IQN = !IQ: entries 0b10 (IQ=0) and 0b01 (IQ=1).
      t.out_table.push_back({static_cast<uint8_t>(e.eval(0b10)), static_cast<uint8_t>(e.eval(1))});
    }
  } else {
    for (const auto* p : outs) {
      t.out_table.push_back(BoolExpr::parse(p->function, in_names).truth_table(t.n_in));
    }
  }
  types_.push_back(std::move(t));
  const int index = static_cast<int>(types_.size()) - 1;
  type_index_[name] = index;
  return index;
}

GateSim::GateSim(const std::string& json_path, const std::string& top,
                 const std::map<std::string, LibertyCell>& lib) {
  std::ifstream in(json_path);
  if (!in) throw std::runtime_error("cannot read netlist " + json_path);
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error(json_path + ": not a Yosys JSON netlist: " + e.what());
  }
  const json& modules = doc.at("modules");
  if (!modules.contains(top)) throw std::runtime_error(json_path + ": no module " + top);

  Nodes nodes;
  std::vector<PendingCell> leaves;
  auto bit_node = [&](const json& bit, std::unordered_map<int64_t, uint32_t>& local) -> uint32_t {
    if (bit.is_string()) {
      const std::string s = bit.get<std::string>();
      return s == "1" ? kConst1 : kConst0;  // "0", "x", "z": 0 (setundef -zero leaves none)
    }
    const int64_t id = bit.get<int64_t>();
    const auto it = local.find(id);
    if (it != local.end()) return it->second;
    const uint32_t n = nodes.make();
    local.emplace(id, n);
    return n;
  };
  std::function<void(const json&, std::unordered_map<int64_t, uint32_t>&, const std::string&, int)>
      instantiate = [&](const json& mod, std::unordered_map<int64_t, uint32_t>& local,
                        const std::string& path, int depth) {
        if (depth > 64) throw std::runtime_error(json_path + ": hierarchy deeper than 64");
        if (!mod.contains("cells")) return;
        for (const auto& [cname, cell] : mod.at("cells").items()) {
          const std::string type = cell.at("type").get<std::string>();
          const std::string cpath = path.empty() ? cname : path + "." + cname;
          const auto& conns = cell.at("connections");
          if (!lib.count(type) && modules.contains(type) && modules.at(type).contains("cells")) {
            const json& child = modules.at(type);
            std::unordered_map<int64_t, uint32_t> child_local;
            for (const auto& [pname, port] : child.at("ports").items()) {
              if (!conns.contains(pname)) continue;
              const auto& outer = conns.at(pname);
              const auto& inner = port.at("bits");
              for (size_t i = 0; i < inner.size() && i < outer.size(); ++i) {
                const uint32_t o = bit_node(outer[i], local);
                if (inner[i].is_string()) {
                  continue;  // a constant driven inside the child: its own driver check applies
                }
                const int64_t id = inner[i].get<int64_t>();
                const auto it = child_local.find(id);
                if (it == child_local.end()) {
                  child_local.emplace(id, o);
                } else {
                  nodes.unite(it->second, o);
                }
              }
            }
            instantiate(child, child_local, cpath, depth + 1);
            continue;
          }
          PendingCell pc;
          pc.type = type;
          pc.path = cpath;
          for (const auto& [pin, bits] : conns.items()) {
            std::vector<uint32_t> ns;
            for (const auto& b : bits) ns.push_back(bit_node(b, local));
            pc.pins.emplace_back(pin, std::move(ns));
          }
          leaves.push_back(std::move(pc));
        }
      };

  const json& topmod = modules.at(top);
  std::unordered_map<int64_t, uint32_t> top_local;
  std::map<std::string, std::vector<uint32_t>> port_prov;
  std::map<std::string, bool> port_is_input;
  for (const auto& [pname, port] : topmod.at("ports").items()) {
    std::vector<uint32_t> ns;
    for (const auto& b : port.at("bits")) ns.push_back(bit_node(b, top_local));
    port_prov[pname] = ns;
    port_is_input[pname] = port.at("direction").get<std::string>() == "input";
  }
  instantiate(topmod, top_local, "", 0);
  std::map<std::string, uint32_t> named;  // provisional nodes of the top module's net names
  if (topmod.contains("netnames")) {
    for (const auto& [nname, net] : topmod.at("netnames").items()) {
      const auto& bits = net.at("bits");
      for (size_t i = 0; i < bits.size(); ++i) {
        if (!bits[i].is_number()) continue;
        const std::string key = bits.size() == 1 ? nname : fmt::format("{}[{}]", nname, i);
        named[key] = bit_node(bits[i], top_local);
      }
    }
  }

  // Dense node numbering over the union-find roots (0 and 1 stay the constants).
  std::vector<uint32_t> dense(nodes.parent.size(), UINT32_MAX);
  dense[kConst0] = kConst0;
  dense[kConst1] = kConst1;
  uint32_t count = 2;
  auto node_of = [&](uint32_t provisional) {
    const uint32_t r = nodes.find(provisional);
    if (dense[r] == UINT32_MAX) dense[r] = count++;
    return dense[r];
  };
  for (const auto& [pname, ns] : port_prov) {
    auto& v = ports_[pname];
    for (uint32_t n : ns) v.push_back(node_of(n));
  }
  for (const auto& [nname, n] : named) net_names_[nname] = node_of(n);

  // Cells: pins in the liberty's pin order.
  constexpr int kNotComb = -1;
  std::vector<int> driver;  // per node: the comb cell driving it, or kNotComb (port, flop, none)
  std::vector<Cell> comb, flops;
  std::vector<std::string> comb_path;
  for (const auto& pc : leaves) {
    const int ti = cell_type(pc.type, lib);
    const LibertyCell& lc = lib.at(pc.type);
    Cell c{ti, static_cast<uint32_t>(pins_.size()), 0};
    std::vector<uint32_t> outs;
    for (const auto& p : lc.pins) {
      const auto it = std::find_if(pc.pins.begin(), pc.pins.end(),
                                   [&](const auto& x) { return x.first == p.name; });
      if (it == pc.pins.end() || it->second.size() != 1) {
        if (p.input) {
          throw std::runtime_error(fmt::format("{}: cell {} ({}) has input {} unconnected",
                                               json_path, pc.path, pc.type, p.name));
        }
        outs.push_back(UINT32_MAX);  // an unused output
        continue;
      }
      if (p.input) {
        pins_.push_back(node_of(it->second[0]));
      } else {
        outs.push_back(node_of(it->second[0]));
      }
    }
    c.out = static_cast<uint32_t>(pins_.size());
    for (uint32_t o : outs) pins_.push_back(o);
    if (types_[ti].ff) {
      flops.push_back(c);
    } else {
      comb.push_back(c);
      comb_path.push_back(pc.path);
    }
  }
  value_.assign(count, 0);
  value_[kConst1] = 1;
  toggles_.assign(count, 0);

  // Drivers: each net exactly one (an input port, a flop output or a comb output).
  driver.assign(count, kNotComb);
  std::vector<uint8_t> driven(count, 0);
  auto drive = [&](uint32_t n, const std::string& who) {
    if (n == UINT32_MAX) return;
    if (n <= kConst1) {
      throw std::runtime_error(fmt::format("{}: {} drives a constant net", json_path, who));
    }
    if (driven[n]) {
      throw std::runtime_error(fmt::format("{}: net driven twice ({})", json_path, who));
    }
    driven[n] = 1;
  };
  for (const auto& [pname, ns] : ports_) {
    if (!port_is_input[pname]) continue;
    for (uint32_t n : ns) drive(n, "input port " + pname);
  }
  for (size_t i = 0; i < flops.size(); ++i) {
    const CellType& t = types_[flops[i].type];
    for (int o = 0; o < t.n_out; ++o) drive(pins_[flops[i].out + o], "flip-flop " + t.name);
  }
  for (size_t i = 0; i < comb.size(); ++i) {
    const CellType& t = types_[comb[i].type];
    for (int o = 0; o < t.n_out; ++o) {
      const uint32_t n = pins_[comb[i].out + o];
      drive(n, "cell " + comb_path[i]);
      if (n != UINT32_MAX) driver[n] = static_cast<int>(i);
    }
  }
  auto check_driven = [&](uint32_t n, const std::string& who) {
    if (n > kConst1 && !driven[n]) {
      throw std::runtime_error(fmt::format("{}: {} reads a net nothing drives", json_path, who));
    }
  };
  for (size_t i = 0; i < comb.size(); ++i) {
    for (int k = 0; k < types_[comb[i].type].n_in; ++k)
      check_driven(pins_[comb[i].in + k], "cell " + comb_path[i]);
  }
  for (const auto& f : flops) {
    for (int k = 0; k < types_[f.type].n_in; ++k)
      check_driven(pins_[f.in + k], "a flip-flop " + types_[f.type].name);
  }
  for (const auto& [pname, ns] : ports_) {
    for (uint32_t n : ns) check_driven(n, "output port " + pname);
  }

  // Topological order of the combinational cells (Kahn); what is left is a loop.
  std::vector<int> indeg(comb.size(), 0);
  std::vector<std::vector<int>> fanout(count);
  for (size_t i = 0; i < comb.size(); ++i) {
    for (int k = 0; k < types_[comb[i].type].n_in; ++k) {
      const uint32_t n = pins_[comb[i].in + k];
      if (driver[n] >= 0) {
        ++indeg[i];
        fanout[n].push_back(static_cast<int>(i));
      }
    }
  }
  std::vector<int> order, ready;
  for (size_t i = 0; i < comb.size(); ++i) {
    if (indeg[i] == 0) ready.push_back(static_cast<int>(i));
  }
  while (!ready.empty()) {
    const int i = ready.back();
    ready.pop_back();
    order.push_back(i);
    for (int o = 0; o < types_[comb[i].type].n_out; ++o) {
      const uint32_t n = pins_[comb[i].out + o];
      if (n == UINT32_MAX) continue;
      for (int j : fanout[n]) {
        if (--indeg[j] == 0) ready.push_back(j);
      }
    }
  }
  if (order.size() != comb.size()) {
    for (size_t i = 0; i < comb.size(); ++i) {
      if (indeg[i] > 0) {
        throw std::runtime_error(fmt::format("{}: combinational loop through cell {} ({})",
                                             json_path, comb_path[i], types_[comb[i].type].name));
      }
    }
  }
  comb_.reserve(comb.size());
  for (int i : order) comb_.push_back(comb[i]);
  flops_ = std::move(flops);
  // Unused outputs write to a scratch node past the end.
  const uint32_t scratch = static_cast<uint32_t>(value_.size());
  value_.push_back(0);
  toggles_.push_back(0);
  high_steps_.assign(value_.size(), 0);
  touched_step_.assign(value_.size(), 0);
  start_value_.assign(value_.size(), 0);
  for (auto& p : pins_) {
    if (p == UINT32_MAX) p = scratch;
  }
  for (auto& f : flops_) {
    f.clk = types_[f.type].clocked_on[inputs_of(f)];
    const CellType& t = types_[f.type];
    for (int o = 0; o < t.n_out; ++o) value_[pins_[f.out + o]] = t.out_table[o][f.state];
  }
  step();
}

uint32_t GateSim::inputs_of(const Cell& c) const {
  const int n = types_[c.type].n_in;
  uint32_t idx = 0;
  for (int k = 0; k < n; ++k) idx |= static_cast<uint32_t>(value_[pins_[c.in + k]]) << k;
  return idx;
}

void GateSim::write(uint32_t node, uint8_t v) {
  if (value_[node] != v) {
    if (touched_step_[node] != step_) {
      touched_step_[node] = step_;
      start_value_[node] = value_[node];
      touched_.push_back(node);
    }
    value_[node] = v;
  }
}

void GateSim::step() {
  if (timing_ != DelayModel::kZero) {
    timed_step();
  } else {
    settle();
  }
  // The settled toggles (end of step against its start) and the high time, in both modes.
  if (counting_) {
    for (uint32_t n : touched_) {
      if (value_[n] != start_value_[n]) ++toggles_[n];
    }
    for (size_t n = 0; n < value_.size(); ++n) high_steps_[n] += value_[n];
    ++counted_steps_;
  }
  touched_.clear();
  ++step_;
}

void GateSim::eval_comb() {
  for (const Cell& c : comb_) {
    const CellType& t = types_[c.type];
    const uint32_t idx = inputs_of(c);
    for (int o = 0; o < t.n_out; ++o) write(pins_[c.out + o], t.out_table[o][idx]);
  }
}

uint8_t GateSim::flop_next(Cell& f) {
  const CellType& t = types_[f.type];
  const uint32_t idx = inputs_of(f);
  const uint8_t clk = t.clocked_on[idx];
  uint8_t s = f.state;
  if (clk && !f.clk) s = t.next_state[idx];
  f.clk = clk;
  const bool clr = !t.clear.empty() && t.clear[idx];
  const bool pre = !t.preset.empty() && t.preset[idx];
  if (clr && pre) {
    s = t.both_state;
  } else if (clr) {
    s = 0;
  } else if (pre) {
    s = 1;
  }
  return s;
}

bool GateSim::update_flops() {
  // Sample every flop first (all see the pre-edge values), then update.
  auto& next = next_state_;
  next.clear();
  for (size_t i = 0; i < flops_.size(); ++i) {
    const uint8_t s = flop_next(flops_[i]);
    if (s != flops_[i].state) next.emplace_back(i, s);
  }
  for (const auto& [i, s] : next) {
    Cell& f = flops_[i];
    f.state = s;
    const CellType& t = types_[f.type];
    for (int o = 0; o < t.n_out; ++o) write(pins_[f.out + o], t.out_table[o][s]);
  }
  return !next.empty();
}

void GateSim::settle() {
  // Flop outputs start consistent with their state.
  for (int round = 0; round < 16; ++round) {
    eval_comb();
    if (!update_flops()) return;
  }
  throw std::runtime_error("gatesim: the netlist does not settle (flip-flops keep firing)");
}

void GateSim::set_input(const std::string& port, const std::vector<uint8_t>& bits) {
  const auto it = ports_.find(port);
  if (it == ports_.end()) throw std::runtime_error("gate-level netlist has no port " + port);
  if (bits.size() != it->second.size()) {
    throw std::runtime_error(
        fmt::format("port {} is {} bits wide, got {}", port, it->second.size(), bits.size()));
  }
  for (size_t i = 0; i < bits.size(); ++i) write(it->second[i], bits[i] ? 1 : 0);
}

std::vector<uint8_t> GateSim::output(const std::string& port) const {
  const auto it = ports_.find(port);
  if (it == ports_.end()) throw std::runtime_error("gate-level netlist has no port " + port);
  std::vector<uint8_t> bits;
  for (uint32_t n : it->second) bits.push_back(value_[n]);
  return bits;
}

GateSim::ToggleSums GateSim::toggle_sums(const std::vector<std::string>& input_ports,
                                         const std::vector<std::string>& skip_ports) const {
  std::vector<uint8_t> kind(value_.size() - 1, 0);  // 0 net, 1 input, 2 skipped (scratch excl.)
  kind[kConst0] = kind[kConst1] = 2;
  for (const auto& p : skip_ports) {
    const auto it = ports_.find(p);
    if (it == ports_.end()) continue;
    for (uint32_t n : it->second) kind[n] = 2;
  }
  for (const auto& p : input_ports) {
    const auto it = ports_.find(p);
    if (it == ports_.end()) continue;
    for (uint32_t n : it->second) {
      if (kind[n] == 0) kind[n] = 1;
    }
  }
  const auto& counted = timing_ == DelayModel::kZero ? toggles_ : timed_toggles_;
  ToggleSums s;
  for (size_t n = 0; n < kind.size(); ++n) {
    if (kind[n] == 1) {
      ++s.input_bits;
      s.input_toggles += counted[n];
    } else if (kind[n] == 0) {
      ++s.net_bits;
      s.net_toggles += counted[n];
    }
  }
  return s;
}

NetActivity GateSim::net_activity(const std::vector<std::string>& input_ports,
                                  const std::vector<std::string>& clock_ports, int cycles) const {
  NetActivity a;
  a.cycles = cycles;
  const size_t n = value_.size() - 1;  // the scratch node of unused outputs is not a net
  const auto& counted = timing_ == DelayModel::kZero ? toggles_ : timed_toggles_;
  a.toggles.assign(counted.begin(), counted.begin() + n);
  a.settled_toggles.assign(toggles_.begin(), toggles_.begin() + n);
  a.timing = timing_ == DelayModel::kZero ? "zero-delay"
                                          : std::string(delay_model_name(timing_)) + " delay";
  a.high_fraction.resize(n);
  for (size_t i = 0; i < n; ++i) {
    a.high_fraction[i] = counted_steps_ ? double(high_steps_[i]) / counted_steps_ : value_[i];
  }
  const uint32_t scratch = static_cast<uint32_t>(n);
  auto add = [&](const Cell& c) {
    const CellType& t = types_[c.type];
    NetActivity::Cell out;
    out.type = t.name;
    for (int k = 0; k < t.n_in; ++k) out.in.push_back(pins_[c.in + k]);
    for (int o = 0; o < t.n_out; ++o) {
      const uint32_t node = pins_[c.out + o];
      out.out.push_back(node == scratch ? NetActivity::kNoNet : node);
    }
    a.cells.push_back(std::move(out));
  };
  for (const Cell& c : flops_) add(c);
  for (const Cell& c : comb_) add(c);
  std::vector<uint8_t> is_input(n, 0), is_clock(n, 0);
  for (const auto& p : clock_ports) {
    const auto it = ports_.find(p);
    if (it == ports_.end()) continue;
    for (uint32_t node : it->second) {
      if (node > kConst1 && !is_clock[node]) a.clock_nodes.push_back(node);
      is_clock[node] = 1;
    }
  }
  for (const auto& p : input_ports) {
    const auto it = ports_.find(p);
    if (it == ports_.end()) continue;
    for (uint32_t node : it->second) {
      if (node > kConst1 && !is_clock[node] && !is_input[node]) a.input_nodes.push_back(node);
      is_input[node] = 1;
    }
  }
  for (const auto& [name, nodes] : ports_) {
    if (std::find(input_ports.begin(), input_ports.end(), name) != input_ports.end()) continue;
    if (std::find(clock_ports.begin(), clock_ports.end(), name) != clock_ports.end()) continue;
    for (uint32_t node : nodes) a.output_nodes.push_back(node);
  }
  return a;
}

DelayModel parse_delay_model(const std::string& name, const std::string& flag) {
  if (name == "zero") return DelayModel::kZero;
  if (name == "unit") return DelayModel::kUnit;
  if (name == "liberty") return DelayModel::kLiberty;
  throw InputError(flag + ": '" + name + "' is not a delay model (valid: zero, unit, liberty)");
}

const char* delay_model_name(DelayModel m) {
  switch (m) {
    case DelayModel::kZero:
      return "zero";
    case DelayModel::kUnit:
      return "unit";
    case DelayModel::kLiberty:
      return "liberty";
  }
  return "?";
}

namespace {

bool delay_arc(const LibertyTimingArc& t) {
  return t.type.empty() || t.type == "combinational" || t.type == "rising_edge" ||
         t.type == "falling_edge" || t.type == "clear" || t.type == "preset";
}

}  // namespace

void GateSim::set_timing(DelayModel model, const std::map<std::string, LibertyCell>& library,
                         const LibertyWireLoad* wire_load, double output_load_pf) {
  timing_ = model;
  const size_t n = value_.size();
  delay_.assign(pins_.size(), 0);
  timed_toggles_.assign(n, 0);
  pending_gen_.assign(n, 0);
  pending_value_.assign(n, 0);
  has_pending_.assign(n, 0);
  comb_marked_.assign(comb_.size(), 0);
  flop_marked_.assign(flops_.size(), 0);
  // Fanout lists: comb cell i as i, flop i as ~i.
  std::vector<std::vector<uint32_t>> readers(n);
  for (size_t i = 0; i < comb_.size(); ++i) {
    for (int k = 0; k < types_[comb_[i].type].n_in; ++k) {
      readers[pins_[comb_[i].in + k]].push_back(static_cast<uint32_t>(i));
    }
  }
  for (size_t i = 0; i < flops_.size(); ++i) {
    for (int k = 0; k < types_[flops_[i].type].n_in; ++k) {
      readers[pins_[flops_[i].in + k]].push_back(~static_cast<uint32_t>(i));
    }
  }
  fanout_start_.assign(n + 1, 0);
  fanout_.clear();
  for (size_t v = 0; v < n; ++v) {
    fanout_start_[v] = static_cast<uint32_t>(fanout_.size());
    fanout_.insert(fanout_.end(), readers[v].begin(), readers[v].end());
  }
  fanout_start_[n] = static_cast<uint32_t>(fanout_.size());
  if (model == DelayModel::kUnit) {
    for (const Cell* list : {comb_.data(), flops_.data()}) {
      const size_t count = list == comb_.data() ? comb_.size() : flops_.size();
      for (size_t i = 0; i < count; ++i) {
        for (int o = 0; o < types_[list[i].type].n_out; ++o) delay_[list[i].out + o] = 1;
      }
    }
    return;
  }
  if (model != DelayModel::kLiberty) return;
  // Loads (pF): input-pin capacitances (mean of rise and fall), wire load by fanout, ports.
  std::vector<double> load(n, 0);
  std::vector<int> fanout_count(n, 0);
  auto add_pins = [&](const Cell& c) {
    const CellType& t = types_[c.type];
    const LibertyCell& lc = library.at(t.name);
    int k = 0;
    for (const auto& p : lc.pins) {
      if (!p.input) continue;
      const uint32_t node = pins_[c.in + k++];
      load[node] += (p.rise_capacitance + p.fall_capacitance) / 2;
      ++fanout_count[node];
    }
  };
  for (const Cell& c : comb_) add_pins(c);
  for (const Cell& c : flops_) add_pins(c);
  std::vector<uint8_t> is_port_out(n, 0);
  for (const auto& [name, nodes] : ports_) {
    for (uint32_t node : nodes) is_port_out[node] = 1;  // (input ports have no cell to delay)
  }
  for (size_t v = 2; v < n; ++v) {
    if (wire_load) load[v] += wire_load->capacitance_pf(fanout_count[v]);
    if (is_port_out[v]) load[v] += output_load_pf;
  }
  // Delays and output slews in topological order (flops first: their clock is ideal).
  std::vector<double> slew(n, 0);
  auto time_cell = [&](const Cell& c) {
    const CellType& t = types_[c.type];
    const LibertyCell& lc = library.at(t.name);
    std::vector<std::string> in_names;
    std::vector<uint32_t> in_nodes;
    int k = 0;
    for (const auto& p : lc.pins) {
      if (!p.input) continue;
      in_names.push_back(p.name);
      in_nodes.push_back(pins_[c.in + k++]);
    }
    int o = 0;
    for (const auto& p : lc.pins) {
      if (p.input) continue;
      const uint32_t node = pins_[c.out + o];
      double sum = 0, tr = 0;
      int arcs = 0;
      for (const auto& arc : p.timing) {
        if (!delay_arc(arc) || arc.cell_rise.empty() || arc.cell_fall.empty()) continue;
        const auto it = std::find(in_names.begin(), in_names.end(), arc.related_pin);
        const double in_slew = it == in_names.end() ? 0 : slew[in_nodes[it - in_names.begin()]];
        const double l = node < n ? load[node] : 0;
        sum += (arc.cell_rise.lookup(l, in_slew) + arc.cell_fall.lookup(l, in_slew)) / 2;
        if (!arc.rise_transition.empty() && !arc.fall_transition.empty()) {
          tr = std::max(tr, (arc.rise_transition.lookup(l, in_slew) +
                             arc.fall_transition.lookup(l, in_slew)) /
                                2);
        }
        ++arcs;
      }
      if (arcs == 0) {
        throw std::runtime_error("gatesim: cell " + t.name + " output " + p.name +
                                 " has no cell_rise/cell_fall tables (timed activity)");
      }
      delay_[c.out + o] =
          std::max<uint32_t>(1, static_cast<uint32_t>(std::lround(sum / arcs * 1e6)));
      if (node < n) slew[node] = tr;
      ++o;
    }
  };
  for (const Cell& c : flops_) time_cell(c);
  for (const Cell& c : comb_) time_cell(c);
}

uint32_t GateSim::output_delay(const std::string& net) const {
  const auto it = net_names_.find(net);
  if (it == net_names_.end()) throw std::runtime_error("gate-level netlist has no net " + net);
  for (const std::vector<Cell>* list : {&comb_, &flops_}) {
    for (const Cell& c : *list) {
      for (int o = 0; o < types_[c.type].n_out; ++o) {
        if (pins_[c.out + o] == it->second) return delay_.empty() ? 0 : delay_[c.out + o];
      }
    }
  }
  throw std::runtime_error("net " + net + " is not driven by a cell");
}

uint64_t GateSim::net_toggles(const std::string& net, bool timed) const {
  const auto it = net_names_.find(net);
  if (it == net_names_.end()) throw std::runtime_error("gate-level netlist has no net " + net);
  if (timed && timing_ == DelayModel::kZero) return toggles_[it->second];
  return timed ? timed_toggles_[it->second] : toggles_[it->second];
}

void GateSim::timed_step() {
  struct Event {
    uint64_t time;
    uint32_t node, gen;
    uint8_t value;
    bool operator>(const Event& e) const { return time > e.time; }
  };
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> queue;
  auto mark_readers = [&](uint32_t node) {
    for (uint32_t k = fanout_start_[node]; k < fanout_start_[node + 1]; ++k) {
      const uint32_t r = fanout_[k];
      if (r & 0x80000000u) {
        const uint32_t f = ~r;
        if (!flop_marked_[f]) {
          flop_marked_[f] = 1;
          flop_list_.push_back(f);
        }
      } else if (!comb_marked_[r]) {
        comb_marked_[r] = 1;
        comb_list_.push_back(r);
      }
    }
  };
  // Inertial delay: an output has at most one pending change; a new evaluation that agrees with
  // the present value cancels it (the pulse was shorter than the delay).
  auto drive = [&](uint32_t node, uint8_t v, uint64_t at) {
    if (has_pending_[node]) {
      if (pending_value_[node] == v) return;
      has_pending_[node] = 0;
      ++pending_gen_[node];
    }
    if (v == value_[node]) return;
    has_pending_[node] = 1;
    pending_value_[node] = v;
    queue.push({at, node, ++pending_gen_[node], v});
  };
  // The inputs set since the last step changed at time 0.
  for (uint32_t node : touched_) {
    if (value_[node] != start_value_[node]) {
      if (counting_) ++timed_toggles_[node];
      mark_readers(node);
    }
  }
  uint64_t now = 0;
  for (;;) {
    for (uint32_t i : comb_list_) {
      comb_marked_[i] = 0;
      const Cell& c = comb_[i];
      const CellType& t = types_[c.type];
      const uint32_t idx = inputs_of(c);
      for (int o = 0; o < t.n_out; ++o) {
        drive(pins_[c.out + o], t.out_table[o][idx], now + delay_[c.out + o]);
      }
    }
    comb_list_.clear();
    for (uint32_t i : flop_list_) {
      flop_marked_[i] = 0;
      Cell& f = flops_[i];
      const CellType& t = types_[f.type];
      const uint8_t s = flop_next(f);
      if (s == f.state) continue;
      f.state = s;
      for (int o = 0; o < t.n_out; ++o) {
        drive(pins_[f.out + o], t.out_table[o][s], now + delay_[f.out + o]);
      }
    }
    flop_list_.clear();
    if (queue.empty()) break;
    now = queue.top().time;
    while (!queue.empty() && queue.top().time == now) {
      const Event e = queue.top();
      queue.pop();
      if (!has_pending_[e.node] || e.gen != pending_gen_[e.node]) continue;  // cancelled
      has_pending_[e.node] = 0;
      if (value_[e.node] == e.value) continue;
      write(e.node, e.value);
      if (counting_) ++timed_toggles_[e.node];
      mark_readers(e.node);
    }
  }
}

}  // namespace ltc::synth
