// `ltc report`: the design-space-exploration report on built-in defaults, as one HTML page with
// CSV tables and SVG plots beside it. Every figure carries the `ltc` command that reproduces it
// and what it is compared with. Expensive parts (PPA sweeps) keep their results in DIR and are
// resumed on a rerun; the page is written atomically at the end.
#pragma once

#include <string>
#include <vector>

namespace ltc::report {

struct ReportOptions {
  std::string out_dir = "report";
  int jobs = 2;  // parallel PPA points
  // Built-in PPA sweeps run by default: dp4, dp-k and wbits (DP-sized points, ~15 min together on
  // 2 cores); dse (180 tile-sized points, ~56 min at -j 2) is opt-in with --sweeps.
  std::vector<std::string> sweeps = {"dp4", "dp-k", "wbits"};
  bool progress = false;  // progress lines on stderr
};

struct ReportResult {
  std::string index_html;  // path of the page
  std::vector<std::string> files;
  int failed_parts = 0;  // sections that reported an error (the page says which)
};

ReportResult write_report(const ReportOptions& opt);

}  // namespace ltc::report
