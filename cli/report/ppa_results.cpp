#include "cli/report/ppa_results.h"

#include <fmt/core.h>

#include <cmath>

namespace ltc::report {
namespace {

std::string paper_cell(const nlohmann::json& o) {
  if (!o.contains("paper")) return "-";
  const auto& p = o["paper"];
  return p.is_string() ? p.get<std::string>() : fmt::format("{:g}", p.get<double>());
}

std::string number(const nlohmann::json& v, const char* spec) {
  if (!v.is_number()) return "n/a";
  const double d = v.get<double>();
  return std::isfinite(d) ? fmt::format(fmt::runtime(spec), d) : "n/a";
}

// A share as "+755%".
std::string percent(const nlohmann::json& v) {
  return v.is_number() ? number(100 * v.get<double>(), "{:+.0f}%") : "n/a";
}

}  // namespace

std::string ppa_markdown(const nlohmann::json& sweeps) {
  std::string out =
      "PPA of the tensor-core designs against the LUT Tensor Core paper (`ltc sweep SPEC --out DIR "
      "--markdown docs/results/ppa.md`, SPEC all or the sweeps below; synth/README.md says what "
      "the flow does and why its figures differ from the paper's 28 nm ones). Ratios are "
      "clock-free: density as ops per area at equal clock unless it says fmax, power as energy "
      "per operation at equal clock and throughput; a crossover is the largest x up to which the "
      "first design stays below the second. n/a: the sweep's store lacks the points.\n";
  for (const auto& s : sweeps) {
    out += fmt::format(
        "\n## {}\n\n{} ({} design points; {} of its {} rows stored; library {}, activity {}).\n",
        s.value("sweep", "?"), s.value("title", ""), s.value("points", 0), s.value("rows_ok", 0),
        s.value("rows", 0), s.value("library", "?"), s.value("activity_timing", "?"));
    if (s.value("rows_ok", 0) < s.value("rows", 0)) {
      out += "Partial: each figure below is over the points in the store only (`ltc sweep " +
             s.value("sweep", std::string("?")) + " --out DIR` runs the rest).\n";
    }
    const auto& ratios = s.contains("ratios") ? s["ratios"] : nlohmann::json::array();
    if (!ratios.empty()) {
      out += "\n| ratio | ltc | paper |\n|---|---|---|\n";
      for (const auto& r : ratios) {
        out += fmt::format("| {} | {} | {} |\n", r.value("name", "?"),
                           number(r.value("value", nlohmann::json()), "{:.2f}x"), paper_cell(r));
      }
    }
    const auto& crossovers = s.contains("crossovers") ? s["crossovers"] : nlohmann::json::array();
    if (!crossovers.empty()) {
      out += "\n| crossover | up to | paper | second / first at each x |\n|---|---|---|---|\n";
      for (const auto& c : crossovers) {
        const std::string x = c.value("x", "x");
        std::string per_x;
        for (const auto& p : c.value("points", nlohmann::json::array())) {
          per_x += fmt::format("{}{}: {}", per_x.empty() ? "" : ", ",
                               number(p.value(x, nlohmann::json()), "{:g}"),
                               number(p.value("b_over_a", nlohmann::json()), "{:.2f}"));
        }
        const auto& up_to = c.value("a_below_b_up_to", nlohmann::json());
        const std::string up_to_cell = !up_to.is_null() ? number(up_to, "{:g}")
                                       : per_x.empty()  ? std::string("n/a")
                                                        : std::string("never");
        out += fmt::format("| {} | {} | {} | {} |\n", c.value("name", "?"), up_to_cell,
                           paper_cell(c), per_x.empty() ? "n/a" : per_x);
      }
    }
  }
  return out;
}

std::string ledger_markdown(const nlohmann::json& ledger) {
  std::string out =
      "The DP4 comparison (LUT W_INTn A_FP16 against MAC W_FP16 A_FP16, M1N1K4) taken from the "
      "flow's first setup to the paper's one cause at a time, each step keeping the ones before "
      "(`ltc sweep ledger --out DIR -j 2 --markdown docs/results/ppa-ledger.md`; synth/ledger.h, "
      "synth/README.md). Energy per operation at each design's own fmax, density in operations "
      "per cycle per mm^2; the crossover is the widest W up to which the W-bit LUT's energy per "
      "operation stays below the MAC's; glitch energy: timed over zero-delay energy per "
      "operation, less 1.\n\n"
      "| step | what changes | library | activity | acc | MAC / LUT pJ/op (W1) | energy MAC / LUT "
      "| density LUT "
      "/ MAC | LUT energy below MAC up to | TOPS/mm^2 at 1 GHz LUT / MAC | glitch energy MAC / "
      "LUT |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  const nlohmann::json none;
  for (const auto& s : ledger.value("steps", nlohmann::json::array())) {
    const int w = s.value("lut_energy_below_mac_up_to_w", 0);
    const size_t widths = s.value("lut_pj_per_op_by_wbits", nlohmann::json::array()).size();
    const std::string up_to = w <= 0                ? std::string("never")
                              : size_t(w) == widths ? fmt::format("W = {} (all)", w)
                                                    : fmt::format("W = {}", w);
    const bool timed = s.value("activity_timing", "zero") != "zero";
    out += fmt::format(
        "| {} | {} | {}{} | {} | {} | {} / {} | {} | {} | {} | {} / {} | {} |\n",
        s.value("step", "?"), s.value("change", ""), s.value("library", "?"),
        s.value("scale_nm", 0.0) > 0 ? " scaled" : "", s.value("activity_timing", "?"),
        s.value("acc", "?"), number(s.value("mac_pj_per_op", none), "{:.3g}"),
        number(s.value("lut_pj_per_op", none), "{:.3g}"),
        number(s.value("energy_mac_over_lut", none), "{:.2f}x"),
        number(s.value("density_lut_over_mac", none), "{:.2f}x"), up_to,
        number(s.value("lut_tops_mm2_1ghz", none), "{:.3g}"),
        number(s.value("mac_tops_mm2_1ghz", none), "{:.3g}"),
        timed ? percent(s.value("mac_glitch", none)) + " / " + percent(s.value("lut_glitch", none))
              : std::string("-"));
  }
  const auto paper = ledger.value("paper", nlohmann::json::object());
  out += fmt::format("| paper | | TSMC 28 nm, DC | | fp16 | | {}x | {}x | {} | {} / {} | |\n",
                     number(paper.value("energy_mac_over_lut", none), "{:g}"),
                     number(paper.value("density_lut_over_mac", none), "{:g}"),
                     paper.value("lut_energy_below_mac", "-"),
                     number(paper.value("lut_tops_mm2_1ghz", none), "{:g}"),
                     number(paper.value("mac_tops_mm2_1ghz", none), "{:g}"));
  return out;
}

}  // namespace ltc::report
