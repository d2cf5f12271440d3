#include "synth/yosys_flow.h"

#include "common/file_io.h"
#include "common/process.h"
#include "synth/cell_library.h"
#include "synth/fanout_buffer.h"
#include "synth/tool_log.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace ltc::synth {

namespace {

std::string quote_param(const std::string& v) {
  // Numbers pass as they are; anything else becomes a Verilog string.
  static const std::regex kNumber(R"(-?[0-9]+|[0-9]+'[sS]?[bBoOdDhH][0-9a-fA-F_xXzZ]+)");
  if (std::regex_match(v, kNumber)) return v;
  return "\"" + v + "\"";
}

std::string join_errors(const std::vector<std::string>& lines) {
  std::string s;
  for (size_t i = 0; i < lines.size() && i < 5; ++i) s += (i ? "; " : "") + lines[i];
  return s;
}

}  // namespace

std::string with_parameter_defaults(const DesignSource& src) {
  std::string text = read_text(src.top_source);
  for (const auto& [name, value] : src.params) {
    // `parameter [int] Name = <default>` (up to the next ',', ')' or ';').
    const std::regex decl("(parameter\\s+(?:int\\s+|integer\\s+)?" + name + "\\s*=\\s*)[^,;)\\n]+");
    std::smatch m;
    if (!std::regex_search(text, m, decl)) {
      throw std::runtime_error("parameter " + name + " is not declared in " + src.top_source);
    }
    text = m.prefix().str() + m[1].str() + quote_param(value) + m.suffix().str();
  }
  return text;
}

SynthOptions synth_options(const CellLibrary& lib) {
  SynthOptions so;
  so.liberty = lib.liberty;
  so.driving_cell = lib.driving_cell;
  so.load = lib.abc_load;
  so.buffer_cell = lib.fanout_buffer;
  so.assign_buffer = lib.assign_buffer;
  so.buffer_in = lib.buffer_in;
  so.buffer_out = lib.buffer_out;
  return so;
}

std::string yosys_script(const DesignSource& src, const SynthOptions& opt) {
  std::ostringstream s;
  std::string incs;
  for (const auto& d : src.include_dirs) incs += " -I" + d;
  // The cells as black boxes with their pin directions, so `check` sees who drives what.
  s << "read_liberty -lib " << opt.liberty << "\n";
  for (const auto& f : src.sources) {
    s << "read_verilog -sv" << incs << " " << (f == src.top_source ? "top_params.sv" : f) << "\n";
  }
  if (src.top_source.empty()) {
    for (const auto& [name, value] : src.params) {
      s << "chparam -set " << name << " " << quote_param(value) << " " << src.top << "\n";
    }
  }
  // -noshare: the SAT-based sharing pass runs for many minutes on 100k-cell tiles and finds
  // nothing to share in a datapath without mutually exclusive operators.
  s << "hierarchy -check -top " << src.top << "\n";
  if (!opt.keep_modules.empty()) {
    // The per-unit modules of a large tile are synthesized once and instantiated M*N times.
    s << "setattr -mod -set keep_hierarchy 1";
    for (const auto& m : opt.keep_modules) s << " *" << m;
    s << "\n";
  }
  s << "synth -flatten -noshare -top " << src.top << "\n"
    << "dfflibmap -liberty " << opt.liberty << "\n"
    << "abc -liberty " << opt.liberty
    << (opt.delay_target_ps > 0 ? fmt::format(" -constr abc.constr -D {:.0f}", opt.delay_target_ps)
                                : std::string())
    << "\n"
    << "opt_clean -purge\n";
  if (opt.max_fanout > 0) {
    // The fanout pass (fanout_buffer.h) runs between two yosys runs: yosys_finish_script goes on.
    s << "write_json mapped.json\n";
  } else {
    s << yosys_finish_script(src, opt);
  }
  return s.str();
}

std::string yosys_finish_script(const DesignSource& src, const SynthOptions& opt) {
  std::ostringstream s;
  if (opt.max_fanout > 0) {
    s << "read_liberty -lib " << opt.liberty << "\n"
      << "read_json buffered.json\n"
      << "hierarchy -top " << src.top << "\n";
  }
  s << "setundef -zero\n"
    // Buffers instead of plain net-to-net assigns keep the netlist OpenSTA-clean.
    << "insbuf -buf " << opt.assign_buffer << " " << opt.buffer_in << " " << opt.buffer_out << "\n"
    << "opt_clean -purge\n"
    << "check -assert\n"
    << "tee -o stat.txt stat -liberty " << opt.liberty << " -top " << src.top << "\n"
    << "write_verilog -noattr -noexpr -nohex -nodec netlist.v\n"
    << "write_json netlist.json\n";
  return s.str();
}

void parse_yosys_stat(const std::string& stat_text, SynthResult& out) {
  static const std::regex kArea(
      R"(Chip area for (module|top module) '?\\?([^':]*)'?:\s*([0-9.eE+-]+))");
  static const std::regex kCells(R"(^\s*Number of cells:\s*([0-9]+))");
  static const std::regex kCell(R"(^\s+([A-Za-z_$][A-Za-z0-9_$\\]*)\s+([0-9]+)\s*$)");
  std::istringstream in(stat_text);
  std::string line;
  bool in_cells = false;
  out.cells_by_type.clear();
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, kArea)) {
      out.area_um2 = std::stod(m[3]);
      in_cells = false;
    } else if (std::regex_search(line, m, kCells)) {
      // The last section wins: the top module, or the design hierarchy total when modules are kept.
      out.cells = std::stoi(m[1]);
      out.cells_by_type.clear();
      in_cells = true;
    } else if (in_cells && std::regex_match(line, m, kCell)) {
      out.cells_by_type[m[1]] = std::stoi(m[2]);
    } else if (in_cells && line.find_first_not_of(" \t") != std::string::npos) {
      in_cells = false;
    }
  }
  out.flip_flops = 0;
  for (const auto& [type, n] : out.cells_by_type) {
    if (type.rfind("DFF", 0) == 0 || type == "LATCH") out.flip_flops += n;
  }
}

SynthResult run_yosys(const DesignSource& src, const SynthOptions& options,
                      const std::string& workdir) {
  namespace fs = std::filesystem;
  SynthOptions opt = options;
  opt.liberty = plain_liberty(opt.liberty);
  fs::create_directories(workdir);
  if (!src.top_source.empty()) {
    write_text_atomic(workdir + "/top_params.sv", with_parameter_defaults(src));
  }
  write_text_atomic(workdir + "/synth.ys", yosys_script(src, opt));
  if (opt.delay_target_ps > 0) {
    write_text_atomic(workdir + "/abc.constr", fmt::format("set_driving_cell {}\nset_load {}\n",
                                                           opt.driving_cell, opt.load));
  }
  SynthResult r;
  r.log_path = workdir + "/yosys.log";
  const ProcessResult p = run_process({"yosys", "-q", "-l", "yosys.log.full", "synth.ys"}, workdir,
                                      r.log_path, opt.timeout_s);
  r.seconds = p.seconds;
  if (p.timed_out) {
    throw std::runtime_error(
        fmt::format("yosys timed out after {:.0f} s ({})", opt.timeout_s, workdir));
  }
  std::string full;
  try {
    full = read_text(workdir + "/yosys.log.full");
  } catch (const std::exception&) {
  }
  auto errors = error_lines(p.log);
  if (p.exit_code != 0 || !errors.empty()) {
    if (errors.empty()) errors = error_lines(full);
    throw std::runtime_error(fmt::format(
        "yosys failed (exit {}): {} (log {})", p.exit_code,
        errors.empty() ? std::string("no error text") : join_errors(errors), r.log_path));
  }
  if (opt.max_fanout > 0) {
    FanoutBufferOptions fo;
    fo.max_fanout = opt.max_fanout;
    fo.buffer_cell = opt.buffer_cell;
    fo.in_pin = opt.buffer_in;
    fo.out_pin = opt.buffer_out;
    const auto t = std::chrono::steady_clock::now();
    const FanoutBufferResult b =
        buffer_high_fanout(workdir + "/mapped.json", workdir + "/buffered.json", src.top, fo);
    r.fanout_buffers = b.buffers;
    r.fanout_nets = b.nets;
    r.max_fanout_before = b.max_fanout_in;
    r.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    write_text_atomic(workdir + "/finish.ys", yosys_finish_script(src, opt));
    const ProcessResult q = run_process({"yosys", "-q", "-l", "yosys_finish.log.full", "finish.ys"},
                                        workdir, workdir + "/yosys_finish.log", opt.timeout_s);
    r.seconds += q.seconds;
    if (q.timed_out) {
      throw std::runtime_error(
          fmt::format("yosys timed out after {:.0f} s ({})", opt.timeout_s, workdir));
    }
    const auto qerr = error_lines(q.log);
    if (q.exit_code != 0 || !qerr.empty()) {
      throw std::runtime_error(fmt::format(
          "yosys (after fanout buffering) failed (exit {}): {} (log {}/yosys_finish.log)",
          q.exit_code, qerr.empty() ? std::string("no error text") : join_errors(qerr), workdir));
    }
  }
  parse_yosys_stat(read_text(workdir + "/stat.txt"), r);
  for (const auto& [type, n] : r.cells_by_type) {
    if (!type.empty() && (type[0] == '$' || type[0] == '\\')) {
      throw std::runtime_error(fmt::format("yosys left {} cell(s) of type {} unmapped to {} ({})",
                                           n, type, opt.liberty, workdir));
    }
  }
  if (r.area_um2 <= 0 || r.cells == 0) {
    throw std::runtime_error("yosys reported no area/cells for " + src.top + " (" + workdir + ")");
  }
  r.netlist = workdir + "/netlist.v";
  r.json_netlist = workdir + "/netlist.json";
  return r;
}

double register_bit_area_um2(const CellLibrary& lib, const std::string& workdir, double timeout_s) {
  namespace fs = std::filesystem;
  fs::create_directories(workdir);
  constexpr int kBits = 64;
  const std::string src_path = (fs::absolute(workdir) / "ltc_operand_reg.v").string();
  write_text_atomic(src_path, fmt::format("module ltc_operand_reg (input clk_i, input load_i,\n"
                                          "    input [{0}:0] d_i, output reg [{0}:0] q_o);\n"
                                          "  always @(posedge clk_i) if (load_i) q_o <= d_i;\n"
                                          "endmodule\n",
                                          kBits - 1));
  DesignSource src;
  src.top = "ltc_operand_reg";
  src.sources = {src_path};
  SynthOptions so = synth_options(lib);
  so.timeout_s = timeout_s;
  const SynthResult r = run_yosys(src, so, workdir);
  if (r.flip_flops != kBits) {
    throw std::runtime_error(fmt::format("operand register: {} flip-flops for {} bits ({})",
                                         r.flip_flops, kBits, workdir));
  }
  return r.area_um2 / kBits;
}

}  // namespace ltc::synth
