#include "common/units.h"

#include <cmath>
#include <cstdio>

namespace ltc {

std::string si_text(double value, const std::string& unit) {
  if (value == 0 || !std::isfinite(value)) return (value == 0 ? "0 " : "nan ") + unit;
  static const struct {
    double scale;
    const char* prefix;
  } kPrefixes[] = {{1e9, "G"}, {1e6, "M"}, {1e3, "k"}, {1, ""}, {1e-3, "m"}, {1e-6, "u"}};
  const double a = std::abs(value);
  double scale = 1e-9;
  const char* prefix = "n";
  for (const auto& p : kPrefixes) {
    if (a >= p.scale) {
      scale = p.scale;
      prefix = p.prefix;
      break;
    }
  }
  char text[64];
  std::snprintf(text, sizeof text, "%.3g %s", value / scale, prefix);
  return text + unit;
}

}  // namespace ltc
