#include "synth/activity.h"

#include "common/error.h"
#include "common/file_io.h"
#include "common/process.h"
#include "model/golden/lmma.h"
#include "synth/gatesim.h"
#include "synth/power.h"
#include "synth/tool_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

namespace ltc::synth {

namespace {

using golden::DType;

std::string ident(const std::string& port) {
  std::string s;
  for (char c : port) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return s;
}

// Bits (LSB first) as hex digits, MSB first, ceil(width/4) digits.
std::string to_hex(const std::vector<uint8_t>& bits) {
  const size_t digits = (bits.size() + 3) / 4;
  std::string s(digits, '0');
  for (size_t d = 0; d < digits; ++d) {
    int v = 0;
    for (int b = 0; b < 4; ++b) {
      const size_t i = d * 4 + b;
      if (i < bits.size() && bits[i]) v |= 1 << b;
    }
    s[digits - 1 - d] = "0123456789abcdef"[v];
  }
  return s;
}

void put(std::vector<uint8_t>& bits, size_t at, uint32_t value, int width) {
  for (int b = 0; b < width; ++b) bits[at + b] = (value >> b) & 1u;
}

// An LLM-like activation: mostly Gaussian, with rare large outliers (the outlier channels of
// LLM activations), encoded in `t` (integers on a scale where |x| ~ 1 maps to ~12).
uint32_t llm_activation(DType t, std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uni(0.0, 1.0);
  double x = normal(rng);
  if (uni(rng) < 0.01) x *= 20.0;
  if (golden::is_int(t)) x = std::round(x * 12.0);
  return golden::encode(t, x);
}

std::vector<std::string> filter_errors(const std::string& log) {
  auto lines = error_lines(log);
  return lines;
}

void check_tool(const ProcessResult& p, const std::string& what, const std::string& log_path) {
  if (p.timed_out) throw std::runtime_error(what + " timed out (" + log_path + ")");
  const auto errors = filter_errors(p.log);
  if (p.exit_code != 0 || !errors.empty()) {
    std::string msg;
    for (size_t i = 0; i < errors.size() && i < 5; ++i) msg += (i ? "; " : "") + errors[i];
    throw std::runtime_error(fmt::format("{} failed (exit {}): {} (log {})", what, p.exit_code,
                                         msg.empty() ? std::string("no error text") : msg,
                                         log_path));
  }
}

PortStimulus stimulus_for(const DesignSource& src, const std::string& port) {
  for (const auto& p : src.ports) {
    if (p.name == port) return p;
  }
  return default_stimulus(port, src.clock_port);
}

int total_cycles(const ActivityOptions& opt) {
  return opt.reset_cycles + opt.warmup_cycles + opt.cycles;
}

// The testbench: applies stim_<port>.hex cycle by cycle, clocks, and writes the outputs after
// every measured rising edge; `dut` is the instantiation text.
std::string testbench(const std::vector<PortDecl>& ports, const DesignSource& src,
                      const ActivityOptions& opt, const std::string& dut, bool dump_vcd,
                      const std::vector<std::string>& dump_scopes = {}) {
  const int total = total_cycles(opt);
  const int measured_from = opt.reset_cycles + opt.warmup_cycles;
  std::ostringstream s;
  s << "`timescale 1ns/1ps\nmodule ltc_activity_tb;\n  reg clk = 1'b0;\n  integer i, f;\n";
  for (const auto& p : ports) {
    if (p.name == src.clock_port) continue;
    const std::string id = ident(p.name);
    if (p.input) {
      s << fmt::format("  reg [{}:0] in_{};\n  reg [{}:0] mem_{} [0:{}];\n", p.width - 1, id,
                       p.width - 1, id, total - 1);
    } else {
      s << fmt::format("  wire [{}:0] out_{};\n", p.width - 1, id);
    }
  }
  s << dut;
  s << "  initial begin\n";
  for (const auto& p : ports) {
    if (p.input && p.name != src.clock_port) {
      s << fmt::format("    $readmemh(\"stim_{0}.hex\", mem_{0});\n", ident(p.name));
    }
  }
  s << "    f = $fopen(\"outputs.txt\", \"w\");\n";
  if (dump_vcd) {
    s << "    $dumpfile(\"activity.vcd\");\n    $dumpvars(1, dut);\n";
    for (const auto& scope : dump_scopes) s << "    $dumpvars(1, dut." << scope << ");\n";
    s << "    $dumpoff;\n";
  }
  s << fmt::format("    for (i = 0; i < {}; i = i + 1) begin\n", total);
  if (dump_vcd) s << fmt::format("      if (i == {}) $dumpon;\n", measured_from);
  for (const auto& p : ports) {
    if (p.input && p.name != src.clock_port) {
      s << fmt::format("      in_{0} = mem_{0}[i];\n", ident(p.name));
    }
  }
  s << "      #5 clk = 1'b1;\n";
  std::string fmt_str, args;
  for (const auto& p : ports) {
    if (p.input) continue;
    fmt_str += (fmt_str.empty() ? "" : " ") + std::string("%h");
    args += ", out_" + ident(p.name);
  }
  if (!fmt_str.empty()) {
    s << fmt::format("      #1 if (i >= {}) $fwrite(f, \"{}\\n\"{});\n", measured_from, fmt_str,
                     args);
    s << "      #4 clk = 1'b0;\n";
  } else {
    s << "      #5 clk = 1'b0;\n";
  }
  s << "    end\n    $fclose(f);\n    $finish;\n  end\nendmodule\n";
  return s.str();
}

std::string instance(const std::vector<PortDecl>& ports, const DesignSource& src,
                     bool with_params) {
  std::ostringstream s;
  s << "  " << src.top;
  if (with_params && !src.params.empty()) {
    s << " #(";
    for (size_t i = 0; i < src.params.size(); ++i) {
      const auto& [name, value] = src.params[i];
      static const std::regex kNumber(R"(-?[0-9]+|[0-9]+'[sS]?[bBoOdDhH][0-9a-fA-F_xXzZ]+)");
      const std::string v = std::regex_match(value, kNumber) ? value : "\"" + value + "\"";
      s << (i ? ", " : "") << "." << name << "(" << v << ")";
    }
    s << ")";
  }
  s << " dut (";
  for (size_t i = 0; i < ports.size(); ++i) {
    const auto& p = ports[i];
    const std::string sig =
        p.name == src.clock_port ? "clk" : (p.input ? "in_" : "out_") + ident(p.name);
    s << (i ? ", " : "") << "." << p.name << "(" << sig << ")";
  }
  s << ");\n";
  return s.str();
}

}  // namespace

std::vector<PortDecl> parse_netlist_ports(const std::string& text, const std::string& top) {
  const auto start = text.find("module " + top + "(");
  if (start == std::string::npos) throw std::runtime_error("netlist has no module " + top);
  const auto end = text.find("endmodule", start);
  std::istringstream in(text.substr(start, end - start));
  static const std::regex kDecl(
      R"(^\s*(input|output)\s+(\[(-?\d+):(-?\d+)\]\s+)?\\?([^\s;]+)\s*;)");
  std::vector<PortDecl> ports;
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, kDecl)) {
      PortDecl p;
      p.input = m[1] == "input";
      p.name = m[5];
      p.width = m[2].matched ? std::abs(std::stoi(m[3]) - std::stoi(m[4])) + 1 : 1;
      ports.push_back(p);
    }
  }
  if (ports.empty()) throw std::runtime_error("netlist module " + top + " declares no ports");
  return ports;
}

std::vector<std::string> netlist_module_instances(const std::string& text, const std::string& top) {
  // Module bodies by name (escaped names keep their backslash, as instantiations write them).
  std::map<std::string, std::string> bodies;
  static const std::regex kModule(R"(^module\s+(\\\S+|\w+)\s*\()");
  std::istringstream in(text);
  std::string line, current, body;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, kModule)) {
      current = m[1];
      body.clear();
    } else if (line.rfind("endmodule", 0) == 0) {
      bodies[current] = body;
      current.clear();
    } else if (!current.empty()) {
      body += line + "\n";
    }
  }
  auto strip = [](const std::string& n) { return n[0] == '\\' ? n.substr(1) : n; };
  std::map<std::string, std::string> by_plain;  // name without backslash -> key in bodies
  for (const auto& [name, b] : bodies) by_plain[strip(name)] = name;
  static const std::regex kInst(R"(^\s*(\\\S+|\w+)\s+(\\\S+|\w+)\s*\(\s*$)");
  std::vector<std::string> paths;
  std::function<void(const std::string&, const std::string&)> walk =
      [&](const std::string& module, const std::string& prefix) {
        std::istringstream b(bodies[module]);
        std::string l;
        std::smatch mm;
        while (std::getline(b, l)) {
          if (!std::regex_search(l, mm, kInst)) continue;
          const auto it = by_plain.find(strip(mm[1]));
          if (it == by_plain.end()) continue;  // a library cell
          const std::string inst = mm[2];
          const std::string path = prefix + (inst[0] == '\\' ? inst + " " : inst);
          paths.push_back(path);
          walk(it->second, path + ".");
        }
      };
  const auto top_it = by_plain.find(top);
  if (top_it == by_plain.end()) throw std::runtime_error("netlist has no module " + top);
  walk(top_it->second, "");
  return paths;
}

void write_stimulus(const std::vector<PortDecl>& ports, const DesignSource& src,
                    const ActivityOptions& opt, const std::string& workdir) {
  std::mt19937_64 rng(opt.seed);
  std::bernoulli_distribution coin(0.5);
  const int total = total_cycles(opt);
  for (const auto& p : ports) {
    if (!p.input || p.name == src.clock_port) continue;
    const PortStimulus st = stimulus_for(src, p.name);
    std::ostringstream out;
    for (int cycle = 0; cycle < total; ++cycle) {
      std::vector<uint8_t> bits(p.width, 0);
      switch (st.role) {
        case PortRole::kClock:
        case PortRole::kZero:
          break;
        case PortRole::kReset: {
          const bool active = cycle < opt.reset_cycles;
          std::fill(bits.begin(), bits.end(), active != st.active_low ? 1 : 0);
          break;
        }
        case PortRole::kFirst:
        case PortRole::kLast: {
          const int beat = cycle - opt.reset_cycles;
          const int phase = st.role == PortRole::kFirst ? 0 : std::max(st.period, 1) - 1;
          const bool on = beat >= 0 && beat % std::max(st.period, 1) == phase;
          std::fill(bits.begin(), bits.end(), on ? 1 : 0);
          break;
        }
        case PortRole::kEnable:
          std::fill(bits.begin(), bits.end(), st.active_low ? 0 : 1);
          break;
        case PortRole::kActivation: {
          const int eb = golden::dtype_bits(st.dtype);
          if (p.width % eb != 0) {
            for (auto& b : bits) b = coin(rng);
            break;
          }
          for (int j = 0; j < p.width / eb; ++j)
            put(bits, j * eb, llm_activation(st.dtype, rng), eb);
          break;
        }
        case PortRole::kTable: {
          const int eb = golden::dtype_bits(st.dtype);
          const int entries = 1 << (st.table_k - 1);
          if (p.width % (eb * entries) != 0) {
            for (auto& b : bits) b = coin(rng);
            break;
          }
          for (int t = 0; t < p.width / (eb * entries); ++t) {
            std::vector<uint32_t> acts(st.table_k);
            for (auto& a : acts) a = llm_activation(st.act_dtype, rng);
            const auto half =
                golden::precompute_half_table(acts.data(), st.act_dtype, st.table_k, st.dtype);
            for (int e = 0; e < entries; ++e) put(bits, (t * entries + e) * eb, half[e], eb);
          }
          break;
        }
        case PortRole::kData:
        case PortRole::kWeight:
          for (auto& b : bits) b = coin(rng);
          break;
      }
      out << to_hex(bits) << "\n";
    }
    write_text_atomic(workdir + "/stim_" + ident(p.name) + ".hex", out.str());
  }
}

ActivityResult count_vcd_toggles(std::istream& vcd, const std::vector<std::string>& input_names,
                                 const std::string& clock, int cycles) {
  struct Var {
    int width = 1;
    bool input = false;
    bool skip = false;
    std::vector<int8_t> last;  // -1 unknown
    uint64_t toggles = 0;
  };
  std::unordered_map<std::string, Var> vars;
  std::string tok;
  // Header: $var <type> <width> <id> <name> [range] $end
  std::vector<std::string> scopes;  // testbench, dut, kept submodules of the dut...
  while (vcd >> tok) {
    if (tok == "$enddefinitions") {
      vcd >> tok;
      break;
    }
    if (tok == "$scope") {
      std::string kind, name;
      vcd >> kind >> name;
      scopes.push_back(name);
    } else if (tok == "$upscope") {
      if (!scopes.empty()) scopes.pop_back();
    } else if (tok == "$var") {
      std::string type, width, id, name;
      vcd >> type >> width >> id >> name;
      while (vcd >> tok && tok != "$end") {
      }
      if (scopes.size() < 2) continue;  // the testbench's own signals
      if (vars.count(id)) continue;     // an alias of a net already counted
      Var v;
      v.width = std::stoi(width);
      // Kept submodules see the clock through their own clock ports: skip it everywhere.
      v.skip = name == clock;
      v.input = scopes.size() == 2 &&
                std::find(input_names.begin(), input_names.end(), name) != input_names.end();
      v.last.assign(v.width, -1);
      vars.emplace(id, std::move(v));
    }
  }
  auto apply = [&](Var& v, const std::string& value) {
    // Value bits MSB first, left-extended with 0 (or with x/z when the first char is x/z).
    const int n = static_cast<int>(value.size());
    const char ext =
        (n > 0 && (value[0] == 'x' || value[0] == 'z' || value[0] == 'X' || value[0] == 'Z')) ? 'x'
                                                                                              : '0';
    for (int b = 0; b < v.width; ++b) {
      const char c = b < n ? value[n - 1 - b] : ext;
      const int8_t bit = c == '0' ? 0 : c == '1' ? 1 : -1;
      if (bit >= 0 && v.last[b] >= 0 && bit != v.last[b]) ++v.toggles;
      v.last[b] = bit;
    }
  };
  std::string line;
  bool dumping = true;
  while (vcd >> tok) {
    if (tok.empty()) continue;
    const char c = tok[0];
    if (c == '#') continue;
    if (c == '$') {
      if (tok == "$dumpoff") dumping = false;
      if (tok == "$dumpon") dumping = true;
      continue;  // $dumpvars/$dumpon/$end: values inside are read as usual
    }
    std::string value, id;
    if (c == 'b' || c == 'B' || c == 'r' || c == 'R') {
      value = tok.substr(1);
      vcd >> id;
      if (c == 'r' || c == 'R') continue;
    } else {
      value = std::string(1, c);
      id = tok.substr(1);
    }
    auto it = vars.find(id);
    if (it == vars.end() || it->second.skip) continue;
    if (!dumping) {
      std::fill(it->second.last.begin(), it->second.last.end(), -1);
      continue;
    }
    apply(it->second, value);
  }
  ActivityResult r;
  r.cycles = cycles;
  uint64_t in_toggles = 0, net_toggles = 0;
  for (const auto& [id, v] : vars) {
    if (v.skip) continue;
    if (v.input) {
      r.input_bits += v.width;
      in_toggles += v.toggles;
    } else {
      r.net_bits += v.width;
      net_toggles += v.toggles;
    }
  }
  if (cycles > 0) {
    if (r.input_bits) r.input_activity = double(in_toggles) / r.input_bits / cycles;
    if (r.net_bits) r.net_activity = double(net_toggles) / r.net_bits / cycles;
  }
  return r;
}

namespace {

// The liberty's cell functions, read once per file and shared by the sweep's worker threads.
std::shared_ptr<const std::map<std::string, LibertyCell>> liberty_cells(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const std::map<std::string, LibertyCell>>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[path];
  if (!slot)
    slot = std::make_shared<const std::map<std::string, LibertyCell>>(read_liberty_cells(path));
  return slot;
}

// One stim_<port>.hex file: `cycles` lines of hex digits (MSB first) -> bits LSB first.
std::vector<std::vector<uint8_t>> read_stimulus(const std::string& path, int width, int cycles) {
  std::istringstream in(read_text(path));
  std::vector<std::vector<uint8_t>> rows;
  std::string line;
  while (static_cast<int>(rows.size()) < cycles && std::getline(in, line)) {
    std::vector<uint8_t> bits(width, 0);
    const int digits = static_cast<int>(line.size());
    for (int d = 0; d < digits; ++d) {
      const char c = line[digits - 1 - d];
      const int v =
          std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(c) - 'a' + 10;
      if (v < 0 || v > 15) throw std::runtime_error(path + ": not a hex digit '" + c + "'");
      for (int b = 0; b < 4 && d * 4 + b < width; ++b) bits[d * 4 + b] = (v >> b) & 1;
    }
    rows.push_back(std::move(bits));
  }
  if (static_cast<int>(rows.size()) != cycles) {
    throw std::runtime_error(fmt::format("{}: {} rows, expected {}", path, rows.size(), cycles));
  }
  return rows;
}

// The testbench's schedule on gatesim: per cycle, apply the inputs, raise the clock, record the
// outputs (measured cycles), lower the clock. Toggles count from the first measured cycle.
ActivityResult gatesim_activity(const DesignSource& src, const std::vector<PortDecl>& ports,
                                const std::string& json_netlist, const ActivityOptions& opt,
                                const std::string& workdir) {
  const auto t0 = std::chrono::steady_clock::now();
  GateSim sim(json_netlist, src.top, *liberty_cells(opt.liberty));
  if (opt.timing != DelayModel::kZero) {
    const auto lib = power_library(opt.liberty);
    const LibertyWireLoad* wire =
        lib->default_wire_load.empty() ? nullptr : &lib->wire_loads.at(lib->default_wire_load);
    sim.set_timing(opt.timing, lib->cells, wire, opt.output_load_pf);
  }
  const int total = total_cycles(opt);
  const int measured_from = opt.reset_cycles + opt.warmup_cycles;
  std::vector<std::pair<std::string, std::vector<std::vector<uint8_t>>>> stim;
  std::vector<std::string> inputs;
  for (const auto& p : ports) {
    if (!p.input) continue;
    inputs.push_back(p.name);
    if (p.name == src.clock_port) continue;
    stim.emplace_back(p.name,
                      read_stimulus(workdir + "/stim_" + ident(p.name) + ".hex", p.width, total));
  }
  const bool has_clock = sim.has_port(src.clock_port);
  std::ostringstream outputs;
  for (int cycle = 0; cycle < total; ++cycle) {
    if (cycle == measured_from) sim.count_toggles(true);
    for (const auto& [name, rows] : stim) sim.set_input(name, rows[cycle]);
    sim.step();
    if (has_clock) {
      sim.set_input(src.clock_port, {1});
      sim.step();
    }
    if (cycle >= measured_from) {
      bool first = true;
      for (const auto& p : ports) {
        if (p.input) continue;
        outputs << (first ? "" : " ") << to_hex(sim.output(p.name));
        first = false;
      }
      outputs << "\n";
    }
    if (has_clock) {
      sim.set_input(src.clock_port, {0});
      sim.step();
    }
  }
  write_text_atomic(workdir + "/outputs_gate.txt", outputs.str());
  const auto sums = sim.toggle_sums(inputs, {src.clock_port});
  ActivityResult r;
  r.cycles = opt.cycles;
  r.input_bits = sums.input_bits;
  r.net_bits = sums.net_bits;
  if (opt.cycles > 0) {
    if (r.input_bits) r.input_activity = double(sums.input_toggles) / r.input_bits / opt.cycles;
    if (r.net_bits) r.net_activity = double(sums.net_toggles) / r.net_bits / opt.cycles;
  }
  r.outputs_path = workdir + "/outputs_gate.txt";
  r.simulator = opt.timing == DelayModel::kZero
                    ? std::string("ltc gatesim")
                    : fmt::format("ltc gatesim, {} delay", delay_model_name(opt.timing));
  std::vector<std::string> data_inputs;
  for (const auto& i : inputs) {
    if (i != src.clock_port) data_inputs.push_back(i);
  }
  r.nets = std::make_shared<const NetActivity>(
      sim.net_activity(data_inputs, {src.clock_port}, opt.cycles));
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

ActivityResult iverilog_activity(const DesignSource& src, const std::vector<PortDecl>& ports,
                                 const std::string& sim_netlist, const ActivityOptions& opt,
                                 const std::string& workdir) {
  const std::string netlist_text = read_text(sim_netlist);
  write_text_atomic(workdir + "/activity_tb.v",
                    testbench(ports, src, opt, instance(ports, src, false), true,
                              netlist_module_instances(netlist_text, src.top)));
  const std::string clog = workdir + "/iverilog_gate.log";
  auto p = run_process(
      {"iverilog", "-g2012", "-o", "gate.vvp", "activity_tb.v", sim_netlist, opt.cell_models},
      workdir, clog, opt.timeout_s);
  check_tool(p, "iverilog (netlist)", clog);
  const std::string slog = workdir + "/vvp_gate.log";
  const auto q = run_process({"vvp", "-n", "gate.vvp"}, workdir, slog, opt.timeout_s);
  check_tool(q, "vvp (netlist)", slog);
  std::vector<std::string> inputs;
  for (const auto& port : ports) {
    if (port.input) inputs.push_back(port.name);
  }
  std::ifstream vcd(workdir + "/activity.vcd");
  if (!vcd) throw std::runtime_error("vvp wrote no activity.vcd in " + workdir);
  ActivityResult r = count_vcd_toggles(vcd, inputs, src.clock_port, opt.cycles);
  vcd.close();
  std::filesystem::remove(workdir + "/activity.vcd");  // large; the counts are what matters
  std::filesystem::remove(workdir + "/gate.vvp");
  std::filesystem::rename(workdir + "/outputs.txt", workdir + "/outputs_gate.txt");
  r.outputs_path = workdir + "/outputs_gate.txt";
  r.simulator = "iverilog";
  r.seconds = p.seconds + q.seconds;
  return r;
}

}  // namespace

ActivityResult measure_activity(const DesignSource& src, const SynthResult& netlist,
                                const ActivityOptions& opt, const std::string& workdir) {
  const auto ports = parse_netlist_ports(read_text(netlist.netlist), src.top);
  write_stimulus(ports, src, opt, workdir);
  if (opt.netlist_simulator == "ltc") {
    return gatesim_activity(src, ports, netlist.json_netlist, opt, workdir);
  }
  if (opt.netlist_simulator == "iverilog") {
    if (opt.timing != DelayModel::kZero) {
      throw InputError("timed activity (--activity-timing " +
                       std::string(delay_model_name(opt.timing)) +
                       ") needs the ltc netlist simulator (--netlist-sim ltc)");
    }
    return iverilog_activity(src, ports, netlist.netlist, opt, workdir);
  }
  throw std::invalid_argument("netlist simulator '" + opt.netlist_simulator +
                              "' (valid: ltc, iverilog)");
}

std::string simulate_rtl_outputs(const DesignSource& src, const std::vector<PortDecl>& ports,
                                 const ActivityOptions& opt, const std::string& workdir) {
  write_text_atomic(workdir + "/rtl_tb.v",
                    testbench(ports, src, opt, instance(ports, src, true), false));
  if (opt.rtl_simulator == "verilator") {
    std::vector<std::string> argv = {"verilator", "--binary",   "--timing",     "-Wno-fatal",
                                     "-Wno-lint", "-Wno-style", "--top-module", "ltc_activity_tb",
                                     "-Mdir",     "rtl_obj",    "-o",           "rtl_sim"};
    for (const auto& d : src.include_dirs) argv.push_back("-I" + d);
    argv.push_back("rtl_tb.v");
    for (const auto& f : src.sources) argv.push_back(f);
    const std::string clog = workdir + "/verilator_rtl.log";
    const auto p = run_process(argv, workdir, clog, opt.timeout_s);
    // Verilator prints lint %Warning lines we asked it to tolerate; only errors count.
    if (p.timed_out || p.exit_code != 0 || p.log.find("%Error") != std::string::npos) {
      check_tool(p, "verilator (rtl)", clog);
      throw std::runtime_error("verilator (rtl) failed (log " + clog + ")");
    }
    const std::string slog = workdir + "/rtl_sim.log";
    check_tool(run_process({workdir + "/rtl_obj/rtl_sim"}, workdir, slog, opt.timeout_s),
               "verilated rtl", slog);
  } else if (opt.rtl_simulator == "iverilog") {
    std::vector<std::string> argv = {"iverilog", "-g2012", "-o", "rtl.vvp"};
    for (const auto& d : src.include_dirs) argv.push_back("-I" + d);
    argv.push_back("rtl_tb.v");
    for (const auto& f : src.sources) argv.push_back(f);
    const std::string clog = workdir + "/iverilog_rtl.log";
    check_tool(run_process(argv, workdir, clog, opt.timeout_s), "iverilog (rtl)", clog);
    const std::string slog = workdir + "/vvp_rtl.log";
    check_tool(run_process({"vvp", "-n", "rtl.vvp"}, workdir, slog, opt.timeout_s), "vvp (rtl)",
               slog);
  } else {
    throw std::invalid_argument("rtl simulator '" + opt.rtl_simulator +
                                "' (valid: verilator, iverilog)");
  }
  std::filesystem::rename(workdir + "/outputs.txt", workdir + "/outputs_rtl.txt");
  return workdir + "/outputs_rtl.txt";
}

int compare_outputs(const std::string& a_path, const std::string& b_path,
                    std::vector<std::string>* first_diffs, int max_report) {
  std::istringstream a(read_text(a_path)), b(read_text(b_path));
  std::string la, lb;
  int diffs = 0, line = 0;
  for (;;) {
    const bool ga = static_cast<bool>(std::getline(a, la));
    const bool gb = static_cast<bool>(std::getline(b, lb));
    if (!ga && !gb) break;
    if (ga != gb)
      throw std::runtime_error("output traces differ in length: " + a_path + ", " + b_path);
    ++line;
    if (la != lb) {
      ++diffs;
      if (first_diffs && static_cast<int>(first_diffs->size()) < max_report) {
        first_diffs->push_back(fmt::format("cycle {}: {} vs {}", line, la, lb));
      }
    }
  }
  return diffs;
}

}  // namespace ltc::synth
