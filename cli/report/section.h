// What one section of the DSE report is and what it may do: write files beside the page, add
// Vega-Lite plots (their data also written as CSV beside the page), and put rows into the
// summary's "paper vs ltc" table. Each section lives in its own cli/report/section_*.cpp and is
// listed once in report.cpp; a new study is a new file and one line there.
#pragma once

#include "cli/report/report.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace ltc::report {

// One row of the summary's "paper vs ltc" table.
struct Comparison {
  enum class Verdict { kMatch, kDiffers };
  std::string figure;                      // "Table III: LUT-4X decode speedup"
  std::string paper, ours;                 // as printed, with units
  double paper_value = 0, ours_value = 0;  // for the ratio; both 0: no ratio
  Verdict verdict = Verdict::kMatch;
  std::string reason;   // one line: why it matches or differs
  std::string section;  // anchor of the section that shows it (the report fills it in)
};

// A point of a measured-vs-estimated plot (calibration and validation sets).
struct MeasuredCase {
  std::string set;  // legend: which set the case belongs to
  std::string name;
  double measured_ms = 0, estimated_ms = 0;
  std::string params;   // shown on hover: "M=1 N=12288 K=4096"
  std::string command;  // the `ltc` command that estimates it
};

class SectionContext {
 public:
  SectionContext(const ReportOptions& options, std::filesystem::path dir)
      : options_(options), dir_(std::move(dir)) {}

  const ReportOptions& options() const { return options_; }
  const std::filesystem::path& dir() const { return dir_; }
  // True for the small report (--quick): fewer cases, same sections.
  bool quick() const { return options_.quick; }
  void progress(const std::string& line) const;

  // Writes `name` beside the page (atomically) and records it; returns `name`.
  std::string write(const std::string& name, const std::string& text);
  // The Vega-Lite plot `spec` (its data inline, so the page works offline) as HTML, its data
  // written beside the page as `name`.csv with a link under the plot. `values` are flat objects;
  // a "reproduce" column is shown on hover when present.
  std::string plot(const std::string& name, nlohmann::json spec, const nlohmann::json& values);
  // `cases` as a log-log measured-vs-estimated scatter with the +-10% band, and their table
  // folded under it; also `name`.csv. Returns the HTML.
  std::string measured_vs_estimated(const std::string& name, const std::string& title,
                                    const std::vector<MeasuredCase>& cases);

  void compare(Comparison c) { comparisons_.push_back(std::move(c)); }

  std::vector<std::string>& files() { return files_; }
  std::vector<Comparison>& comparisons() { return comparisons_; }
  int failed_parts = 0;  // sections add what failed inside them (e.g. PPA points)

 private:
  const ReportOptions& options_;
  std::filesystem::path dir_;
  std::vector<std::string> files_;
  std::vector<Comparison> comparisons_;
};

struct SectionDef {
  std::string id, title;
  std::function<std::string(SectionContext&)> build;  // the section's HTML
};

// Flat JSON objects as CSV (columns in order of first appearance).
std::string values_csv(const nlohmann::json& values);

// Number formatting shared by the sections.
std::string fixed(double v, int digits);
std::string percent(double fraction, int digits = 1);  // 0.052 -> "+5.2%"

// Vega-Lite building blocks.
nlohmann::json vl_tooltip(const std::vector<std::string>& fields);  // nominal fields on hover

// A --sweeps entry: a built-in sweep name (synth/sweeps/<name>.json) or a spec file path.
std::string sweep_spec_path(const std::string& sweep);

// The sections, one file each (cli/report/section_*.cpp).
SectionDef numerics_section();
SectionDef gemm_calibration_section();
SectionDef step_validation_section();
SectionDef end_to_end_section();
SectionDef operator_breakdown_section();
SectionDef table1_section();
SectionDef table3_section();
SectionDef fig16_section();
SectionDef bitllm_section();
SectionDef moe_section();
SectionDef ppa_sweep_section(const std::string& sweep);
// The PPA ledger (synth/ledger.h); `--sweeps ledger` names it.
SectionDef ppa_ledger_section();
SectionDef simulator_section();
SectionDef kernel_experiment_section();

}  // namespace ltc::report
