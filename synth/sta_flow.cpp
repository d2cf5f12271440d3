#include "synth/sta_flow.h"

#include "common/file_io.h"
#include "common/process.h"
#include "synth/cell_library.h"
#include "synth/tool_log.h"

#include <fmt/format.h>

#include <regex>
#include <sstream>
#include <stdexcept>

namespace ltc::synth {

std::string sta_script(const std::string& netlist, const std::string& top,
                       const std::string& clock_port, const StaOptions& opt) {
  std::ostringstream s;
  s << "read_liberty " << plain_liberty(opt.liberty) << "\n"
    << "read_verilog " << netlist << "\n"
    << "link_design " << top << "\n"
    << fmt::format("create_clock -name clk -period {} [get_ports {{{}}}]\n", opt.clock_ns,
                   clock_port)
    << fmt::format(
           "set_input_delay 0 -clock clk [delete_from_list [all_inputs] [get_ports {{{}}}]]\n",
           clock_port)
    << "set_output_delay 0 -clock clk [all_outputs]\n"
    << fmt::format("set_load {} [all_outputs]\n", opt.output_load_pf / opt.cap_unit_pf)
    << "puts \"LTC_TIMING_BEGIN\"\n"
    << "report_checks -path_delay max -digits 4\n"
    << "puts \"LTC_TIMING_END\"\n"
    << fmt::format("set_power_activity -global -activity {}\n", opt.global_activity)
    << fmt::format("set_power_activity -input -activity {}\n", opt.input_activity)
    << "puts \"LTC_POWER_BEGIN\"\n"
    << "report_power -digits 6\n"
    << "puts \"LTC_POWER_END\"\n";
  return s.str();
}

StaResult parse_sta_report(const std::string& text, double clock_ns) {
  StaResult r;
  r.clock_ns = clock_ns;
  static const std::regex kSlack(R"(^\s*(-?[0-9.]+(?:e[-+]?[0-9]+)?)\s+slack \((MET|VIOLATED)\))");
  static const std::regex kStart(R"(^Startpoint:\s*(\S+))");
  static const std::regex kEnd(R"(^Endpoint:\s*(\S+))");
  static const std::regex kTotal(
      R"(^Total\s+([-0-9.e+]+)\s+([-0-9.e+]+)\s+([-0-9.e+]+)\s+([-0-9.e+]+))");
  std::istringstream in(text);
  std::string line;
  bool have_slack = false, have_power = false;
  std::string from, to;
  std::smatch m;
  // One path per path group (clk, async_default...): the worst slack over all of them counts.
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, kSlack)) {
      const double slack = std::stod(m[1]);
      if (!have_slack || slack < r.slack_ns) {
        r.slack_ns = slack;
        r.critical_from = from;
        r.critical_to = to;
      }
      have_slack = true;
    } else if (std::regex_search(line, m, kStart)) {
      from = m[1];
    } else if (std::regex_search(line, m, kEnd)) {
      to = m[1];
    } else if (std::regex_search(line, m, kTotal)) {
      // report_power prints watts.
      r.internal_mw = std::stod(m[1]) * 1e3;
      r.switching_mw = std::stod(m[2]) * 1e3;
      r.leakage_mw = std::stod(m[3]) * 1e3;
      r.total_mw = std::stod(m[4]) * 1e3;
      have_power = true;
    }
  }
  if (!have_slack)
    throw std::runtime_error("sta: no timing path reported (is the clock port right?)");
  if (!have_power) throw std::runtime_error("sta: no power report");
  r.delay_ns = clock_ns - r.slack_ns;
  return r;
}

StaResult run_sta(const std::string& netlist, const std::string& top, const std::string& clock_port,
                  const StaOptions& opt, const std::string& workdir) {
  write_text_atomic(workdir + "/sta.tcl", sta_script(netlist, top, clock_port, opt));
  const std::string log = workdir + "/sta.log";
  const ProcessResult p =
      run_process({"sta", "-no_init", "-exit", "sta.tcl"}, workdir, log, opt.timeout_s);
  if (p.timed_out) throw std::runtime_error(fmt::format("sta timed out ({})", workdir));
  // OpenSTA reports many errors on stdout and still exits 0: the text decides.
  const auto errors = error_lines(p.log);
  if (p.exit_code != 0 || !errors.empty()) {
    std::string msg;
    for (size_t i = 0; i < errors.size() && i < 5; ++i) msg += (i ? "; " : "") + errors[i];
    throw std::runtime_error(fmt::format("sta failed (exit {}): {} (log {})", p.exit_code,
                                         msg.empty() ? std::string("no error text") : msg, log));
  }
  StaResult r = parse_sta_report(p.log, opt.clock_ns);
  r.seconds = p.seconds;
  r.log_path = log;
  return r;
}

}  // namespace ltc::synth
