// Static timing and power with OpenSTA 2019 (`sta`): the Tcl script, the run and the parsed
// reports. OpenSTA 2.0.17 honours only the global and the all-inputs switching activity: its
// per-pin and per-port settings are silently ignored (checked: they leave report_power unchanged),
// so measured toggle rates reach it as two averages, one over input ports and one over all other
// nets (ActivityMode says which kind a result used).
#pragma once

#include <string>

namespace ltc::synth {

struct StaOptions {
  std::string liberty = "/usr/share/qflow/tech/osu018/osu018_stdcells.lib";
  double clock_ns = 10;          // period the reports are taken at
  double output_load_pf = 0.01;  // on every output port
  double cap_unit_pf = 1;        // the liberty's capacitance unit, which set_load takes
  // Toggles per clock cycle (0..1 means 0..1 transition per cycle; a clock has 2).
  double global_activity = 0.1;
  double input_activity = 0.1;
  double timeout_s = 1800;
};

struct StaResult {
  double clock_ns = 0;  // the period of the reports
  double slack_ns = 0;  // worst setup slack at clock_ns
  double delay_ns = 0;  // critical path incl. setup: clock_ns - slack_ns
  std::string critical_from, critical_to;
  // Power at clock_ns, in mW.
  double internal_mw = 0, switching_mw = 0, leakage_mw = 0, total_mw = 0;
  double seconds = 0;
  std::string log_path;
  // Dynamic power scales with frequency in OpenSTA's model (activity per cycle x f), leakage not:
  // the total at another period, exactly as OpenSTA would report it.
  double total_mw_at(double period_ns) const {
    return (internal_mw + switching_mw) * clock_ns / period_ns + leakage_mw;
  }
};

std::string sta_script(const std::string& netlist, const std::string& top,
                       const std::string& clock_port, const StaOptions& opt);

// Throws std::runtime_error with the offending lines on any error text or missing report.
StaResult run_sta(const std::string& netlist, const std::string& top, const std::string& clock_port,
                  const StaOptions& opt, const std::string& workdir);

// Parses the report_checks / report_power text; exposed for tests.
StaResult parse_sta_report(const std::string& text, double clock_ns);

}  // namespace ltc::synth
