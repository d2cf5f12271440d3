#include "cli/report/section.h"

#include "cli/report/html.h"
#include "common/file_io.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>

namespace ltc::report {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string csv_cell(const json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  }
  if (v.is_number_float()) return fmt::format("{}", v.get<double>());
  return v.dump();
}

// Tooltip fields whose values are all numbers show as numbers: integers with thousands
// separators, others to four significant digits (d3-format, what Vega-Lite's "format" takes).
// The CSV beside the plot keeps every digit.
void format_tooltips(json& node, const json& values) {
  if (node.is_array()) {
    for (auto& e : node) format_tooltips(e, values);
    return;
  }
  if (!node.is_object()) return;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it.key() != "tooltip" || !it.value().is_array()) {
      format_tooltips(it.value(), values);
      continue;
    }
    for (auto& field : it.value()) {
      if (!field.is_object() || !field.contains("field")) continue;
      const std::string name = field["field"].get<std::string>();
      bool numeric = false, integral = true;
      for (const auto& row : values) {
        if (!row.is_object() || !row.contains(name) || row[name].is_null()) continue;
        const json& v = row[name];
        if (!v.is_number()) {
          numeric = false;
          break;
        }
        numeric = true;
        const double d = v.get<double>();
        integral = integral && std::floor(d) == d && std::abs(d) < 1e15;
      }
      if (!numeric) continue;
      field["type"] = "quantitative";
      field["format"] = integral ? ",d" : ",.4~r";
    }
  }
}

}  // namespace

void SectionContext::progress(const std::string& line) const {
  if (options_.progress) fmt::print(stderr, "[report] {}\n", line);
}

std::string SectionContext::write(const std::string& name, const std::string& text) {
  fs::create_directories((dir_ / name).parent_path());
  write_text_atomic((dir_ / name).string(), text);
  files_.push_back((dir_ / name).string());
  return name;
}

std::string SectionContext::plot(const std::string& name, json spec, const json& values) {
  const std::string csv = write(name + ".csv", values_csv(values));
  if (!spec.contains("data")) spec["data"] = {{"values", values}};
  format_tooltips(spec, values);
  if (!spec.contains("width") && (spec.contains("mark") || spec.contains("layer"))) {
    spec["width"] = 680;
  }
  std::string text = spec.dump();
  // Inside <script>, "</" would end the element: JSON allows "<\/" for it.
  for (size_t p = text.find("</"); p != std::string::npos; p = text.find("</", p + 3)) {
    text.replace(p, 2, "<\\/");
  }
  return "<div class=\"plot\" id=\"plot-" + name + "\"></div>\n<script type=\"application/json\" " +
         "id=\"plot-" + name + "-spec\">" + text +
         "</script>\n<p class=\"plotdata\">plot data: " + link(csv, csv) + "</p>\n";
}

std::string SectionContext::measured_vs_estimated(const std::string& name, const std::string& title,
                                                  const std::vector<MeasuredCase>& cases) {
  json values = json::array();
  double lo = 1e300, hi = 0;
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : cases) {
    const double err = (c.estimated_ms - c.measured_ms) / c.measured_ms;
    values.push_back({{"set", c.set},
                      {"case", c.name},
                      {"params", c.params},
                      {"measured_ms", c.measured_ms},
                      {"estimated_ms", c.estimated_ms},
                      {"error", percent(err)},
                      {"reproduce", c.command}});
    lo = std::min({lo, c.measured_ms, c.estimated_ms});
    hi = std::max({hi, c.measured_ms, c.estimated_ms});
    rows.push_back({c.set, c.name, c.params, fixed(c.measured_ms, 4), fixed(c.estimated_ms, 4),
                    percent(err), c.command});
  }
  if (cases.empty()) return para("No cases.");
  lo = std::pow(10, std::floor(std::log10(lo)));
  hi = std::pow(10, std::ceil(std::log10(hi)));
  const json axis_scale = {{"type", "log"}, {"domain", {lo, hi}}};
  const json band = {{"values",
                      {{{"x", lo}, {"lo", 0.9 * lo}, {"hi", 1.1 * lo}},
                       {{"x", hi}, {"lo", 0.9 * hi}, {"hi", 1.1 * hi}}}}};
  json spec = {{"title", title},
               {"height", 420},
               {"width", 520},
               {"layer",
                {{{"data", band},
                  {"mark", {{"type", "area"}, {"opacity", 0.18}, {"color", "#4a8"}}},
                  {"encoding",
                   {{"x", {{"field", "x"}, {"type", "quantitative"}, {"scale", axis_scale}}},
                    {"y", {{"field", "lo"}, {"type", "quantitative"}, {"scale", axis_scale}}},
                    {"y2", {{"field", "hi"}}}}}},
                 {{"data", band},
                  {"mark", {{"type", "line"}, {"color", "#4a8"}, {"strokeDash", {4, 3}}}},
                  {"encoding",
                   {{"x", {{"field", "x"}, {"type", "quantitative"}, {"scale", axis_scale}}},
                    {"y", {{"field", "x"}, {"type", "quantitative"}, {"scale", axis_scale}}}}}},
                 {{"mark", {{"type", "point"}, {"filled", true}, {"size", 60}}},
                  {"encoding",
                   {{"x",
                     {{"field", "measured_ms"},
                      {"type", "quantitative"},
                      {"scale", axis_scale},
                      {"title", "measured (ms)"}}},
                    {"y",
                     {{"field", "estimated_ms"},
                      {"type", "quantitative"},
                      {"scale", axis_scale},
                      {"title", "estimated (ms)"}}},
                    {"color", {{"field", "set"}, {"type", "nominal"}, {"title", "set"}}},
                    {"tooltip", vl_tooltip({"set", "case", "params", "measured_ms", "estimated_ms",
                                            "error", "reproduce"})}}}}}}};
  std::string html = plot(name, spec, values);
  html += para("Shaded: within +-10% of the measurement; dashed: estimate = measurement.");
  html += details(
      fmt::format("{} cases as a table", cases.size()),
      table({"set", "case", "parameters", "measured (ms)", "estimated (ms)", "error", "reproduce"},
            rows));
  return html;
}

std::string values_csv(const json& values) {
  std::vector<std::string> cols;
  for (const auto& row : values) {
    for (auto it = row.begin(); it != row.end(); ++it) {
      if (std::find(cols.begin(), cols.end(), it.key()) == cols.end()) cols.push_back(it.key());
    }
  }
  std::string s;
  for (size_t i = 0; i < cols.size(); ++i) s += (i ? "," : "") + cols[i];
  s += "\n";
  for (const auto& row : values) {
    for (size_t i = 0; i < cols.size(); ++i) {
      s += (i ? "," : "") + (row.contains(cols[i]) ? csv_cell(row[cols[i]]) : std::string());
    }
    s += "\n";
  }
  return s;
}

std::string fixed(double v, int digits) {
  return fmt::format("{:.{}f}", v, digits);
}

std::string percent(double fraction, int digits) {
  return fmt::format("{:+.{}f}%", 100 * fraction, digits);
}

json vl_tooltip(const std::vector<std::string>& fields) {
  json t = json::array();
  for (const auto& f : fields) t.push_back({{"field", f}, {"type", "nominal"}});
  return t;
}

}  // namespace ltc::report
