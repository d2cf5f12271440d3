// A small SVG chart writer for sweep results: lines (numeric x) or grouped bars (categorical x),
// one series per distinct value of the series columns, optional log y axis.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ltc::synth {

struct PlotSpec {
  std::string title, x, y, y_label;
  std::vector<std::string> series;  // columns whose values name a series
  nlohmann::json filter;            // only rows matching these column values
  bool log_y = false;
  bool bars = false;  // categorical x
};

PlotSpec parse_plot(const nlohmann::json& j);

// Rows are flat JSON objects (sweep_rows); rows lacking x or y are skipped.
std::string svg_plot(const PlotSpec& spec, const std::vector<nlohmann::json>& rows);

// True when `row` has every (column, value) of `filter` (value may be a list of allowed values).
bool row_matches(const nlohmann::json& row, const nlohmann::json& filter);

}  // namespace ltc::synth
