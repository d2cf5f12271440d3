// `ltc report`: the design-space-exploration report on built-in defaults, as one HTML page that
// opens with a summary (what was run, and every reproduced paper figure beside ours), then one
// section per study with Vega-Lite plots (the library inlined: the page works offline) and their
// data as CSV beside the page. Every figure carries the `ltc` command that reproduces it.
// Expensive parts (PPA sweeps) keep their results in DIR and are resumed on a rerun; the page is
// written atomically at the end.
#pragma once

#include <string>
#include <vector>

namespace ltc::report {

struct ReportOptions {
  std::string out_dir = "report";
  int jobs = 2;  // parallel PPA points
  // Built-in PPA sweeps run by default (synth/sweeps/): sized so that the whole report, build
  // included, takes under 15 minutes on 2 cores from an empty results store. dse-lut-fp16 (and
  // wbits-crossovers, ~4 min more) are slices of dse and wbits that share their results stores;
  // the full sweeps (dse: 180 points, ~56 min at -j 2) are benchmark runs. "ledger" is the PPA
  // ledger (synth/ledger.h), not a spec.
  std::vector<std::string> sweeps = {"dp4", "dp-k", "dse-lut-fp16", "ledger"};
  bool progress = false;  // progress lines on stderr
  bool quick = false;     // fewer cases per section (tests, a first look); same sections
  std::string command;    // how the report was asked for, printed on the page
};

struct ReportResult {
  std::string index_html;  // path of the page
  std::vector<std::string> files;
  int failed_parts = 0;  // sections that reported an error (the page says which)
};

// Throws InputError on bad options, std::runtime_error when the plotting library is missing
// (scripts/setup installs it).
ReportResult write_report(const ReportOptions& opt);

// Where the plotting library's built files are: $LTC_REPORT_JS_DIR, else the npm install that
// scripts/setup makes in cli/report/web/node_modules.
std::string plotting_library_dir();

}  // namespace ltc::report
