#include "synth/liberty.h"

#include "synth/cell_library.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

namespace ltc::synth {

// ---- Boolean expressions ----------------------------------------------------------------------

class BoolExprParser {
 public:
  BoolExprParser(const std::string& text, const std::vector<std::string>& vars, BoolExpr& out)
      : s_(text), vars_(vars), out_(out) {}

  void run() {
    out_.root_ = parse_or();
    skip_space();
    if (pos_ != s_.size()) fail("unexpected '" + std::string(1, s_[pos_]) + "'");
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(
        fmt::format("liberty function \"{}\": {} at position {}", s_, what, pos_ + 1));
  }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  static bool ident_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '[' || c == ']' ||
           c == '.';
  }
  int add(BoolExpr::Node n) {
    out_.nodes_.push_back(n);
    return static_cast<int>(out_.nodes_.size()) - 1;
  }
  int parse_or() {
    int a = parse_and();
    for (;;) {
      skip_space();
      if (pos_ < s_.size() && (s_[pos_] == '|' || s_[pos_] == '+')) {
        ++pos_;
        a = add({'|', a, parse_and()});
      } else {
        return a;
      }
    }
  }
  // AND binds by `&`, `*` or juxtaposition (a term starting right after another).
  int parse_and() {
    int a = parse_xor();
    for (;;) {
      skip_space();
      if (pos_ >= s_.size()) return a;
      const char c = s_[pos_];
      if (c == '&' || c == '*') {
        ++pos_;
        a = add({'&', a, parse_xor()});
      } else if (c == '(' || c == '!' || ident_char(c)) {
        a = add({'&', a, parse_xor()});
      } else {
        return a;
      }
    }
  }
  int parse_xor() {
    int a = parse_unary();
    for (;;) {
      skip_space();
      if (pos_ < s_.size() && s_[pos_] == '^') {
        ++pos_;
        a = add({'^', a, parse_unary()});
      } else {
        return a;
      }
    }
  }
  int parse_unary() {
    skip_space();
    if (pos_ >= s_.size()) fail("expression ends early");
    int a;
    if (s_[pos_] == '!') {
      ++pos_;
      a = add({'!', parse_unary()});
    } else if (s_[pos_] == '(') {
      ++pos_;
      a = parse_or();
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != ')') fail("missing ')'");
      ++pos_;
    } else if (ident_char(s_[pos_])) {
      const size_t start = pos_;
      while (pos_ < s_.size() && ident_char(s_[pos_])) ++pos_;
      const std::string id = s_.substr(start, pos_ - start);
      BoolExpr::Node n{'v'};
      if (id == "0" || id == "1") {
        n.op = 'c';
        n.value = id == "1";
      } else {
        const auto it = std::find(vars_.begin(), vars_.end(), id);
        if (it == vars_.end()) {
          pos_ = start;
          fail("unknown pin or variable '" + id + "'");
        }
        n.var = static_cast<int>(it - vars_.begin());
      }
      a = add(n);
    } else {
      fail("unexpected '" + std::string(1, s_[pos_]) + "'");
    }
    // Postfix complement: a'
    for (;;) {
      skip_space();
      if (pos_ < s_.size() && s_[pos_] == '\'') {
        ++pos_;
        a = add({'!', a});
      } else {
        return a;
      }
    }
  }

  const std::string& s_;
  const std::vector<std::string>& vars_;
  BoolExpr& out_;
  size_t pos_ = 0;
};

BoolExpr BoolExpr::parse(const std::string& expr, const std::vector<std::string>& vars) {
  if (vars.size() > 16) throw std::runtime_error("liberty function with more than 16 variables");
  BoolExpr e;
  BoolExprParser(expr, vars, e).run();
  return e;
}

bool BoolExpr::eval_node(int i, uint32_t x) const {
  const Node& n = nodes_[i];
  switch (n.op) {
    case 'v':
      return (x >> n.var) & 1u;
    case 'c':
      return n.value;
    case '!':
      return !eval_node(n.a, x);
    case '&':
      return eval_node(n.a, x) && eval_node(n.b, x);
    case '|':
      return eval_node(n.a, x) || eval_node(n.b, x);
    default:
      return eval_node(n.a, x) != eval_node(n.b, x);
  }
}

bool BoolExpr::eval(uint32_t assignment) const {
  if (root_ < 0) throw std::logic_error("BoolExpr::eval on an empty expression");
  return eval_node(root_, assignment);
}

std::vector<uint8_t> BoolExpr::truth_table(int nvars) const {
  std::vector<uint8_t> t(size_t{1} << nvars);
  for (uint32_t i = 0; i < t.size(); ++i) t[i] = eval(i) ? 1 : 0;
  return t;
}

// ---- liberty files ----------------------------------------------------------------------------

namespace {

struct Group {
  std::string type;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> attrs;  // simple attributes, in order
  // complex attributes: name ( args ) ;
  std::vector<std::pair<std::string, std::vector<std::string>>> complex;
  std::vector<std::unique_ptr<Group>> children;
  int line = 0;
  std::string attr(const std::string& name) const {
    for (const auto& [k, v] : attrs) {
      if (k == name) return v;
    }
    return {};
  }
};

class LibertyReader {
 public:
  LibertyReader(const std::string& text, const std::string& source) : s_(text), source_(source) {}

  std::unique_ptr<Group> read() {
    auto root = std::make_unique<Group>();
    root->type = "<file>";
    while (peek().kind != Tok::kEnd) parse_statement(*root);
    return root;
  }

 private:
  struct Tok {
    enum Kind { kWord, kString, kPunct, kEnd } kind;
    std::string text;
    int line;
  };

  [[noreturn]] void fail(const std::string& what, int line) const {
    throw std::runtime_error(fmt::format("{}:{}: liberty syntax error: {}", source_, line, what));
  }

  Tok lex() {
    for (;;) {
      while (pos_ < s_.size() && (std::isspace(static_cast<unsigned char>(s_[pos_])) ||
                                  (s_[pos_] == '\\' && pos_ + 1 < s_.size() &&
                                   (s_[pos_ + 1] == '\n' || s_[pos_ + 1] == '\r')))) {
        if (s_[pos_] == '\n') ++line_;
        ++pos_;
      }
      if (s_.compare(pos_, 2, "/*") == 0) {
        const size_t end = s_.find("*/", pos_ + 2);
        if (end == std::string::npos) fail("unterminated comment", line_);
        line_ += static_cast<int>(std::count(s_.begin() + pos_, s_.begin() + end, '\n'));
        pos_ = end + 2;
        continue;
      }
      if (s_.compare(pos_, 2, "//") == 0) {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
        continue;
      }
      break;
    }
    if (pos_ >= s_.size()) return {Tok::kEnd, "", line_};
    const char c = s_[pos_];
    if (c == '"') {
      std::string v;
      const int start_line = line_;
      ++pos_;
      while (pos_ < s_.size() && s_[pos_] != '"') {
        if (s_[pos_] == '\\' && pos_ + 1 < s_.size() && (s_[pos_ + 1] == '\n')) {
          pos_ += 2;
          ++line_;
          continue;
        }
        if (s_[pos_] == '\n') ++line_;
        v += s_[pos_++];
      }
      if (pos_ >= s_.size()) fail("unterminated string", start_line);
      ++pos_;
      return {Tok::kString, v, start_line};
    }
    if (std::string("(){}:;,").find(c) != std::string::npos) {
      ++pos_;
      return {Tok::kPunct, std::string(1, c), line_};
    }
    const size_t start = pos_;
    while (pos_ < s_.size() && !std::isspace(static_cast<unsigned char>(s_[pos_])) &&
           std::string("(){}:;,\"").find(s_[pos_]) == std::string::npos) {
      ++pos_;
    }
    return {Tok::kWord, s_.substr(start, pos_ - start), line_};
  }

  const Tok& peek() {
    if (!has_peek_) {
      peeked_ = lex();
      has_peek_ = true;
    }
    return peeked_;
  }
  Tok next() {
    peek();
    has_peek_ = false;
    return peeked_;
  }
  void expect(const std::string& punct) {
    const Tok t = next();
    if (t.kind != Tok::kPunct || t.text != punct) {
      fail("expected '" + punct + "', found '" + t.text + "'", t.line);
    }
  }

  // name : value ;   |   name ( args ) ;   |   name ( args ) { statements }
  void parse_statement(Group& parent) {
    const Tok name = next();
    if (name.kind != Tok::kWord) fail("expected a name, found '" + name.text + "'", name.line);
    const Tok t = next();
    if (t.kind == Tok::kPunct && t.text == ":") {
      std::string value;
      for (;;) {
        const Tok v = next();
        if (v.kind == Tok::kEnd) fail("attribute " + name.text + " has no ';'", name.line);
        if (v.kind == Tok::kPunct && v.text == ";") break;
        // Some libraries end an attribute at the line break without ';'.
        value += (value.empty() ? "" : " ") + v.text;
        if (peek().kind != Tok::kPunct && peek().line != v.line) break;
        if (peek().kind == Tok::kPunct && peek().text == "}") break;
      }
      parent.attrs.emplace_back(name.text, value);
      return;
    }
    if (t.kind != Tok::kPunct || t.text != "(") {
      fail("expected ':' or '(' after " + name.text + ", found '" + t.text + "'", t.line);
    }
    auto g = std::make_unique<Group>();
    g->type = name.text;
    g->line = name.line;
    std::string arg;
    for (;;) {
      const Tok a = next();
      if (a.kind == Tok::kEnd) fail("unterminated '(' of " + name.text, name.line);
      if (a.kind == Tok::kPunct && a.text == ")") break;
      if (a.kind == Tok::kPunct && a.text == ",") {
        g->args.push_back(arg);
        arg.clear();
        continue;
      }
      arg += (arg.empty() ? "" : " ") + a.text;
    }
    if (!arg.empty() || !g->args.empty()) g->args.push_back(arg);
    if (peek().kind == Tok::kPunct && peek().text == "{") {
      next();
      while (!(peek().kind == Tok::kPunct && peek().text == "}")) {
        if (peek().kind == Tok::kEnd) fail("group " + name.text + " is not closed", name.line);
        parse_statement(*g);
      }
      next();
      parent.children.push_back(std::move(g));
    } else {
      if (peek().kind == Tok::kPunct && peek().text == ";") next();
      parent.complex.emplace_back(g->type, g->args);
    }
  }

  const std::string& s_;
  std::string source_;
  size_t pos_ = 0;
  int line_ = 1;
  Tok peeked_{Tok::kEnd, "", 0};
  bool has_peek_ = false;
};

// The numbers of a complex attribute's arguments ("0.1, 0.2", "0.3" -> 0.1 0.2 0.3).
std::vector<double> numbers(const std::vector<std::string>& args, const std::string& source,
                            int line) {
  std::vector<double> v;
  for (const auto& a : args) {
    std::string t = a;
    std::replace(t.begin(), t.end(), ',', ' ');
    std::istringstream in(t);
    std::string w;
    while (in >> w) {
      try {
        size_t used = 0;
        v.push_back(std::stod(w, &used));
        if (used != w.size()) throw std::invalid_argument(w);
      } catch (const std::exception&) {
        throw std::runtime_error(
            fmt::format("{}:{}: liberty table: '{}' is not a number", source, line, w));
      }
    }
  }
  return v;
}

const std::vector<std::string>* complex_attr(const Group& g, const std::string& name) {
  for (const auto& [k, v] : g.complex) {
    if (k == name) return &v;
  }
  return nullptr;
}

struct Units {
  double time_ns = 1, cap_pf = 1, leakage_mw = 1e-6;
  std::map<std::string, std::vector<LibertyTable::Axis>> templates;
  std::string source;
};

LibertyTable::Axis axis_of(const std::string& var) {
  if (var == "total_output_net_capacitance") return LibertyTable::Axis::kLoad;
  if (var == "input_net_transition" || var == "input_transition_time") {
    return LibertyTable::Axis::kSlew;
  }
  return LibertyTable::Axis::kOther;
}

// `value_scale` converts the table's values to ns or pJ (1 for unitless tables).
LibertyTable read_table(const Group& g, const Units& u, double value_scale) {
  LibertyTable t;
  const std::string tmpl = g.args.empty() ? "" : g.args[0];
  const auto it = u.templates.find(tmpl);
  if (it != u.templates.end()) t.axes = it->second;
  if (const auto* a = complex_attr(g, "index_1")) t.index1 = numbers(*a, u.source, g.line);
  if (const auto* a = complex_attr(g, "index_2")) t.index2 = numbers(*a, u.source, g.line);
  if (const auto* a = complex_attr(g, "values")) t.values = numbers(*a, u.source, g.line);
  const size_t want = std::max<size_t>(1, t.index1.size()) * std::max<size_t>(1, t.index2.size());
  if (t.values.size() != want ||
      (tmpl != "scalar" &&
       t.axes.size() < (t.index2.empty() ? (t.index1.empty() ? 0u : 1u) : 2u))) {
    throw std::runtime_error(fmt::format(
        "{}:{}: liberty table {} ({}): {} values for {} x {} "
        "breakpoints, or an unknown template",
        u.source, g.line, g.type, tmpl, t.values.size(), t.index1.size(), t.index2.size()));
  }
  // Axes in the library's units -> ns and pF.
  auto scale = [&](std::vector<double>& idx, size_t axis) {
    if (axis >= t.axes.size()) return;
    const double f = t.axes[axis] == LibertyTable::Axis::kLoad   ? u.cap_pf
                     : t.axes[axis] == LibertyTable::Axis::kSlew ? u.time_ns
                                                                 : 1.0;
    for (auto& x : idx) x *= f;
  };
  scale(t.index1, 0);
  scale(t.index2, 1);
  for (auto& v : t.values) v *= value_scale;
  return t;
}

double to_double(const std::string& v, const Units& u, int line, const std::string& what) {
  try {
    return std::stod(v);
  } catch (const std::exception&) {
    throw std::runtime_error(
        fmt::format("{}:{}: liberty {}: '{}' is not a number", u.source, line, what, v));
  }
}

LibertyPin read_pin_data(const Group& pin, const std::string& name, const Units& u) {
  LibertyPin p;
  p.name = name;
  const std::string dir = pin.attr("direction");
  p.input = dir != "output" && dir != "inout";
  p.function = pin.attr("function");
  p.three_state = pin.attr("three_state");
  p.clock = pin.attr("clock") == "true";
  const std::string c = pin.attr("capacitance");
  const std::string cr = pin.attr("rise_capacitance");
  const std::string cf = pin.attr("fall_capacitance");
  const double cap = c.empty() ? 0 : to_double(c, u, pin.line, "capacitance");
  p.rise_capacitance = (cr.empty() ? cap : to_double(cr, u, pin.line, "capacitance")) * u.cap_pf;
  p.fall_capacitance = (cf.empty() ? cap : to_double(cf, u, pin.line, "capacitance")) * u.cap_pf;
  for (const auto& sub : pin.children) {
    if (sub->type == "internal_power") {
      LibertyInternalPower ip;
      ip.related_pin = sub->attr("related_pin");
      ip.when = sub->attr("when");
      // Energy per transition is voltage_unit (1 V) x capacitive_load_unit: pJ x cap_pf.
      for (const auto& t : sub->children) {
        if (t->type == "rise_power") ip.rise = read_table(*t, u, u.cap_pf);
        if (t->type == "fall_power") ip.fall = read_table(*t, u, u.cap_pf);
      }
      p.internal_power.push_back(std::move(ip));
    } else if (sub->type == "timing") {
      LibertyTimingArc a;
      a.related_pin = sub->attr("related_pin");
      a.sense = sub->attr("timing_sense");
      a.type = sub->attr("timing_type");
      for (const auto& t : sub->children) {
        if (t->type == "rise_transition") a.rise_transition = read_table(*t, u, u.time_ns);
        if (t->type == "fall_transition") a.fall_transition = read_table(*t, u, u.time_ns);
        if (t->type == "cell_rise") a.cell_rise = read_table(*t, u, u.time_ns);
        if (t->type == "cell_fall") a.cell_fall = read_table(*t, u, u.time_ns);
      }
      p.timing.push_back(std::move(a));
    }
  }
  return p;
}

void collect_cells(const Group& g, const Units& u, std::map<std::string, LibertyCell>& cells) {
  for (const auto& child : g.children) {
    if (child->type != "cell") {
      collect_cells(*child, u, cells);
      continue;
    }
    LibertyCell cell;
    cell.name = child->args.empty() ? "" : child->args[0];
    const std::string area = child->attr("area");
    if (!area.empty()) cell.area = std::stod(area);
    const std::string leak = child->attr("cell_leakage_power");
    if (!leak.empty()) cell.leakage_mw = to_double(leak, u, child->line, "leakage") * u.leakage_mw;
    for (const auto& sub : child->children) {
      if (sub->type == "pin") {
        for (const auto& name : sub->args) cell.pins.push_back(read_pin_data(*sub, name, u));
      } else if (sub->type == "ff" || sub->type == "ff_bank") {
        cell.has_ff = true;
        if (sub->args.size() >= 1) cell.ff.var = sub->args[0];
        if (sub->args.size() >= 2) cell.ff.var_n = sub->args[1];
        cell.ff.next_state = sub->attr("next_state");
        cell.ff.clocked_on = sub->attr("clocked_on");
        cell.ff.clear = sub->attr("clear");
        cell.ff.preset = sub->attr("preset");
        const std::string v1 = sub->attr("clear_preset_var1");
        const std::string v2 = sub->attr("clear_preset_var2");
        if (!v1.empty()) cell.ff.clear_preset_var1 = v1[0];
        if (!v2.empty()) cell.ff.clear_preset_var2 = v2[0];
      } else if (sub->type == "latch" || sub->type == "latch_bank" || sub->type == "statetable") {
        cell.has_latch = true;
      }
    }
    cells[cell.name] = std::move(cell);
  }
}

// "1ns" -> 1 (in `base` units per `unit`); throws on an unknown unit.
double unit_scale(const std::string& text, const std::map<std::string, double>& units,
                  const std::string& what, const std::string& source) {
  std::string t;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) t += static_cast<char>(std::tolower(c));
  }
  for (const auto& [suffix, f] : units) {
    if (t.size() > suffix.size() &&
        t.compare(t.size() - suffix.size(), suffix.size(), suffix) == 0) {
      const std::string num = t.substr(0, t.size() - suffix.size());
      try {
        return std::stod(num) * f;
      } catch (const std::exception&) {
        break;
      }
    }
  }
  throw std::runtime_error(fmt::format("{}: liberty {} '{}' is not supported", source, what, text));
}

const Group* library_group(const Group& root) {
  for (const auto& c : root.children) {
    if (c->type == "library") return c.get();
  }
  return &root;
}

}  // namespace

double LibertyTable::lookup(double load_pf, double slew_ns) const {
  if (values.empty()) return 0;
  auto coord = [&](size_t axis) {
    if (axis >= axes.size()) return 0.0;
    return axes[axis] == Axis::kLoad ? load_pf : axes[axis] == Axis::kSlew ? slew_ns : 0.0;
  };
  // Position on one axis: the segment [i, i+1] and the fraction (linear extrapolation outside).
  auto locate = [](const std::vector<double>& idx, double x, size_t& i, double& f) {
    if (idx.size() < 2) {
      i = 0;
      f = 0;
      return;
    }
    i = 0;
    while (i + 2 < idx.size() && x > idx[i + 1]) ++i;
    f = (x - idx[i]) / (idx[i + 1] - idx[i]);
  };
  size_t i = 0, j = 0;
  double fi = 0, fj = 0;
  locate(index1, coord(0), i, fi);
  const size_t n2 = std::max<size_t>(1, index2.size());
  if (index2.size() < 2) {
    const double a = values[i * n2];
    const double b = index1.size() < 2 ? a : values[(i + 1) * n2];
    return a + (b - a) * fi;
  }
  locate(index2, coord(1), j, fj);
  auto v = [&](size_t r, size_t c) { return values[r * n2 + c]; };
  const size_t i1 = index1.size() < 2 ? i : i + 1;
  const double lo = v(i, j) + (v(i, j + 1) - v(i, j)) * fj;
  const double hi = v(i1, j) + (v(i1, j + 1) - v(i1, j)) * fj;
  return lo + (hi - lo) * fi;
}

double LibertyWireLoad::capacitance_pf(int fanout) const {
  if (fanout <= 0) return 0;
  double length = 0;
  if (fanout_length.empty()) {
    length = slope * fanout;
  } else {
    // The largest tabulated fanout <= fanout, plus the slope beyond it.
    const std::pair<int, double>* best = &fanout_length.front();
    for (const auto& fl : fanout_length) {
      if (fl.first == fanout) return fl.second * capacitance_per_length;
      if (fl.first < fanout && fl.first > best->first) best = &fl;
    }
    length = best->first <= fanout ? best->second + slope * (fanout - best->first)
                                   : best->second * fanout / best->first;
  }
  return length * capacitance_per_length;
}

LibertyLibrary parse_liberty(const std::string& text, const std::string& source_name) {
  const auto root = LibertyReader(text, source_name).read();
  const Group& lib = *library_group(*root);
  Units u;
  u.source = source_name;
  const std::string tu = lib.attr("time_unit");
  if (!tu.empty())
    u.time_ns = unit_scale(tu, {{"ps", 1e-3}, {"ns", 1}, {"us", 1e3}}, "time_unit", source_name);
  if (const auto* c = complex_attr(lib, "capacitive_load_unit")) {
    if (c->size() == 2) {
      u.cap_pf = unit_scale((*c)[0] + (*c)[1], {{"ff", 1e-3}, {"pf", 1}, {"nf", 1e3}},
                            "capacitive_load_unit", source_name);
    }
  }
  const std::string lu = lib.attr("leakage_power_unit");
  if (!lu.empty()) {
    u.leakage_mw = unit_scale(lu, {{"pw", 1e-9}, {"nw", 1e-6}, {"uw", 1e-3}, {"mw", 1}, {"w", 1e3}},
                              "leakage_power_unit", source_name);
  }
  const std::string vu = lib.attr("voltage_unit");
  if (!vu.empty() && unit_scale(vu, {{"mv", 1e-3}, {"v", 1}}, "voltage_unit", source_name) != 1.0) {
    throw std::runtime_error(source_name + ": liberty voltage_unit other than 1V is not supported");
  }
  for (const auto& c : lib.children) {
    if (c->type != "lu_table_template" && c->type != "power_lut_template") continue;
    std::vector<LibertyTable::Axis> axes;
    for (const char* v : {"variable_1", "variable_2", "variable_3"}) {
      const std::string var = c->attr(v);
      if (!var.empty()) axes.push_back(axis_of(var));
    }
    if (!c->args.empty()) u.templates[c->args[0]] = axes;
  }
  LibertyLibrary out;
  out.name = lib.args.empty() ? "" : lib.args[0];
  out.cap_unit_pf = u.cap_pf;
  const std::string nv = lib.attr("nom_voltage");
  if (!nv.empty()) out.nom_voltage = to_double(nv, u, lib.line, "nom_voltage");
  out.default_wire_load = lib.attr("default_wire_load");
  for (const auto& c : lib.children) {
    if (c->type != "wire_load" || c->args.empty()) continue;
    LibertyWireLoad w;
    w.name = c->args[0];
    const std::string cap = c->attr("capacitance");
    const std::string slope = c->attr("slope");
    if (!cap.empty()) w.capacitance_per_length = to_double(cap, u, c->line, "wire_load") * u.cap_pf;
    if (!slope.empty()) w.slope = to_double(slope, u, c->line, "wire_load");
    for (const auto& [k, v] : c->complex) {
      if (k != "fanout_length") continue;
      const auto n = numbers(v, source_name, c->line);
      if (n.size() >= 2) w.fanout_length.emplace_back(static_cast<int>(n[0]), n[1]);
    }
    out.wire_loads[w.name] = w;
  }
  if (!out.default_wire_load.empty() && !out.wire_loads.count(out.default_wire_load)) {
    throw std::runtime_error(source_name + ": default_wire_load " + out.default_wire_load +
                             " is not defined");
  }
  collect_cells(*root, u, out.cells);
  if (out.cells.empty()) throw std::runtime_error(source_name + ": liberty file defines no cells");
  return out;
}

std::map<std::string, LibertyCell> parse_liberty_cells(const std::string& text,
                                                       const std::string& source_name) {
  return parse_liberty(text, source_name).cells;
}

LibertyLibrary read_liberty(const std::string& path) {
  return parse_liberty(read_liberty_text(path), path);
}

std::map<std::string, LibertyCell> read_liberty_cells(const std::string& path) {
  return read_liberty(path).cells;
}

}  // namespace ltc::synth
