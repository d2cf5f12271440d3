#include "synth/plot.h"

#include "model/golden/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

namespace ltc::synth {

using nlohmann::json;

namespace {

constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string text_of(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return fmt::format("{:g}", v.get<double>());
  return v.dump();
}

std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else if (c == '&')
      o += "&amp;";
    else
      o += c;
  }
  return o;
}

// "Nice" axis ticks over [lo, hi].
std::vector<double> ticks(double lo, double hi, bool log) {
  std::vector<double> t;
  if (log) {
    for (double d = std::pow(10, std::floor(std::log10(lo))); d <= hi * 1.0001; d *= 10) {
      if (d >= lo * 0.9999) t.push_back(d);
    }
    if (t.size() < 2) t = {lo, hi};
    return t;
  }
  const double span = hi - lo > 0 ? hi - lo : 1;
  const double raw = span / 5;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  const double step = raw / mag < 1.5   ? mag
                      : raw / mag < 3.5 ? 2 * mag
                      : raw / mag < 7.5 ? 5 * mag
                                        : 10 * mag;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-6; v += step) t.push_back(v);
  return t;
}

}  // namespace

PlotSpec parse_plot(const json& j) {
  if (!j.is_object() || !j.contains("x") || !j.contains("y")) {
    throw InputError("plot: needs at least 'x' and 'y' (column names)");
  }
  PlotSpec p;
  p.x = j["x"];
  p.y = j["y"];
  p.title = j.value("title", p.y + " vs " + p.x);
  p.y_label = j.value("y_label", p.y);
  if (j.contains("series")) p.series = j["series"].get<std::vector<std::string>>();
  p.filter = j.value("filter", json::object());
  p.log_y = j.value("log_y", false);
  p.bars = j.value("bars", false);
  return p;
}

bool row_matches(const json& row, const json& filter) {
  if (!filter.is_object()) return true;
  for (const auto& [key, want] : filter.items()) {
    if (!row.contains(key)) return false;
    const json& have = row[key];
    if (want.is_array()) {
      if (std::find(want.begin(), want.end(), have) == want.end()) return false;
    } else if (have != want) {
      return false;
    }
  }
  return true;
}

std::string svg_plot(const PlotSpec& spec, const std::vector<json>& rows) {
  // Collect (series, x, y).
  struct Pt {
    json x;
    double y;
  };
  std::map<std::string, std::vector<Pt>> series;
  std::vector<std::string> series_order;
  std::vector<json> categories;
  for (const auto& r : rows) {
    if (!row_matches(r, spec.filter) || !r.contains(spec.x) || !r.contains(spec.y)) continue;
    if (!r[spec.y].is_number()) continue;
    const double y = r[spec.y].get<double>();
    if (spec.log_y && y <= 0) continue;
    std::string name;
    for (const auto& s : spec.series) {
      if (r.contains(s)) name += (name.empty() ? "" : " ") + text_of(r[s]);
    }
    if (name.empty()) name = spec.y;
    if (!series.count(name)) series_order.push_back(name);
    series[name].push_back({r[spec.x], y});
    if (std::find(categories.begin(), categories.end(), r[spec.x]) == categories.end()) {
      categories.push_back(r[spec.x]);
    }
  }
  const bool numeric_x = !spec.bars && std::all_of(categories.begin(), categories.end(),
                                                   [](const json& v) { return v.is_number(); });
  if (numeric_x) {
    std::sort(categories.begin(), categories.end(),
              [](const json& a, const json& b) { return a.get<double>() < b.get<double>(); });
  }

  const double W = 760, H = 440, L = 80, R = 200, T = 40, B = 60;
  const double pw = W - L - R, ph = H - T - B;
  std::ostringstream s;
  s << fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n<text x=\"{}\" y=\"22\" font-size=\"15\" "
      "text-anchor=\"middle\">{}</text>\n",
      W, H, L + pw / 2, escape(spec.title));
  if (series.empty()) {
    s << fmt::format(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">no results yet</text>\n</svg>\n",
        L + pw / 2, T + ph / 2);
    return s.str();
  }
  double ylo = 1e300, yhi = -1e300, xlo = 1e300, xhi = -1e300;
  for (const auto& [name, pts] : series) {
    for (const auto& p : pts) {
      ylo = std::min(ylo, p.y);
      yhi = std::max(yhi, p.y);
      if (numeric_x) {
        xlo = std::min(xlo, p.x.get<double>());
        xhi = std::max(xhi, p.x.get<double>());
      }
    }
  }
  if (!spec.log_y) ylo = std::min(0.0, ylo);
  if (spec.log_y) {
    ylo = std::pow(10, std::floor(std::log10(ylo)));
    yhi = std::pow(10, std::ceil(std::log10(yhi)));
  } else {
    yhi = yhi > ylo ? yhi * 1.05 : ylo + 1;
  }
  auto ymap = [&](double y) {
    const double f = spec.log_y
                         ? (std::log10(y) - std::log10(ylo)) / (std::log10(yhi) - std::log10(ylo))
                         : (y - ylo) / (yhi - ylo);
    return T + ph * (1 - f);
  };
  const size_t ncat = categories.size();
  auto xmap_cat = [&](size_t i) { return L + pw * (i + 0.5) / ncat; };
  auto xmap_num = [&](double x) {
    return xhi > xlo ? L + pw * (x - xlo) / (xhi - xlo) : L + pw / 2;
  };
  auto x_of = [&](const json& x) {
    if (numeric_x) return xmap_num(x.get<double>());
    const size_t i = std::find(categories.begin(), categories.end(), x) - categories.begin();
    return xmap_cat(i);
  };

  // Axes, grid, ticks.
  s << fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n", L, T,
      pw, ph);
  for (double t : ticks(ylo, yhi, spec.log_y)) {
    const double y = ymap(t);
    s << fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n", L,
                     L + pw, y, y);
    s << fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:g}</text>\n", L - 6, y + 4,
                     t);
  }
  for (size_t i = 0; i < ncat; ++i) {
    const double x = x_of(categories[i]);
    s << fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x,
                     T + ph + 18, escape(text_of(categories[i])));
  }
  s << fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", L + pw / 2, H - 15,
                   escape(spec.x));
  s << fmt::format(
      "<text x=\"18\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {})\">{}</text>\n",
      T + ph / 2, T + ph / 2, escape(spec.y_label + (spec.log_y ? " (log)" : "")));

  // Data.
  const size_t nser = series_order.size();
  for (size_t si = 0; si < nser; ++si) {
    const std::string& name = series_order[si];
    auto pts = series[name];
    const char* color = kColors[si % (sizeof kColors / sizeof *kColors)];
    if (numeric_x) {
      std::sort(pts.begin(), pts.end(),
                [](const Pt& a, const Pt& b) { return a.x.get<double>() < b.x.get<double>(); });
      std::string path;
      for (const auto& p : pts) path += fmt::format("{:.1f},{:.1f} ", x_of(p.x), ymap(p.y));
      s << fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n",
                       path, color);
      for (const auto& p : pts) {
        s << fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", x_of(p.x),
                         ymap(p.y), color);
      }
    } else {
      const double slot = pw / ncat * 0.8, bw = slot / nser;
      for (const auto& p : pts) {
        const double x0 = x_of(p.x) - slot / 2 + si * bw;
        const double y0 = ymap(p.y), base = spec.log_y ? T + ph : ymap(std::max(0.0, ylo));
        s << fmt::format(
            "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"/>\n",
            x0, std::min(y0, base), std::max(bw - 1, 1.0), std::abs(base - y0), color);
      }
    }
    const double ly = T + 10 + si * 18;
    s << fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>\n",
                     L + pw + 12, ly, color);
    s << fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", L + pw + 30, ly + 10, escape(name));
  }
  s << "</svg>\n";
  return s.str();
}

}  // namespace ltc::synth
