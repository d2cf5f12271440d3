#include "cli/report/ppa_section.h"

#include "cli/report/html.h"
#include "synth/sweep.h"

#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ltc::report {
namespace fs = std::filesystem;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string number(const nlohmann::json& v) {
  if (!v.is_number()) return "-";
  return fmt::format("{:.3g}", v.get<double>());
}

}  // namespace

std::string ppa_sweep_html(const std::string& sweep, const PpaSectionOptions& opt,
                           std::vector<std::string>* files, int* failed_points) {
  const synth::SweepSpec spec = synth::SweepSpec::load(synth::SweepSpec::builtin_path(sweep));
  synth::SweepOptions so;
  so.out_dir = opt.out_dir;
  so.jobs = opt.jobs;
  so.progress = opt.progress;
  const synth::SweepSummary sum = synth::run_sweep(spec, so);
  *failed_points += sum.failed;
  files->insert(files->end(), sum.files.begin(), sum.files.end());

  const std::string rel = fs::path(opt.out_dir).filename().string();
  std::string html = para(spec.title) + para(spec.description);
  html += para(fmt::format(
      "{} design points: {} reused from the results store, {} run now ({} ok, {} failed), {:.0f} "
      "s. "
      "Yosys + OpenSTA on the open OSU 0.18 um cells with switching activity measured by "
      "gate-level simulation; absolute figures are 180 nm ones, so compare ratios and rankings "
      "with the paper's 28 nm Design Compiler figures.",
      sum.points, sum.reused, sum.ran, sum.ok, sum.failed, sum.seconds));
  for (const auto& f : sum.files) {
    if (fs::path(f).extension() == ".svg") html += "<figure>" + read_file(f) + "</figure>\n";
  }
  if (!sum.ratios.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& r : sum.ratios) {
      rows.push_back({r.value("name", ""), r.value("metric", ""),
                      number(r.value("value", nlohmann::json())),
                      number(r.value("paper", nlohmann::json())), r.value("note", "")});
    }
    html += table({"ratio", "metric", "ours", "paper", "note"}, rows);
  }
  if (!sum.crossovers.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& c : sum.crossovers) {
      std::string per;
      for (const auto& p : c.value("points", nlohmann::json::array())) {
        per += fmt::format("{}={:.2f} ", number(p.value(c.value("x", "x"), nlohmann::json())),
                           p.value("b_over_a", 0.0));
      }
      rows.push_back({c.value("name", ""), c.value("metric", ""),
                      number(c.value("a_below_b_up_to", nlohmann::json())),
                      c.contains("paper") ? c["paper"].dump() : "-", per});
    }
    html += table({"crossover", "metric", "a below b up to", "paper", "b/a at each x"}, rows);
  }
  html += para(fmt::format("Data: {}/{}.csv, {}/{}-summary.json, results store {}/results.jsonl.",
                           rel, spec.name, rel, spec.name, rel));
  html += reproduce(
      fmt::format("ltc sweep synth/sweeps/{}.json --out {} -j {}", sweep, opt.out_dir, opt.jobs));
  return html;
}

}  // namespace ltc::report
