// Report sections from the PPA flow (synth/): each built-in sweep run (or resumed) into
// DIR/ppa/<name>, with its plots inline, its ratios beside the paper's and its crossovers.
#pragma once

#include <string>
#include <vector>

namespace ltc::report {

struct PpaSectionOptions {
  std::string out_dir;  // DIR/ppa/<name>
  int jobs = 2;
  bool progress = false;
};

// Returns the section's HTML and appends the files it wrote to `files`. Throws on a bad spec;
// failed design points are listed on the page rather than thrown.
std::string ppa_sweep_html(const std::string& sweep, const PpaSectionOptions& opt,
                           std::vector<std::string>* files, int* failed_points);

}  // namespace ltc::report
