#include "synth/design_source.h"

#include "common/hash.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include <fmt/format.h>

namespace ltc::synth {

std::string DesignSource::source_hash() const {
  return hdl_fingerprint(sources, include_dirs);
}

PortStimulus default_stimulus(const std::string& port_name, const std::string& clock_port) {
  std::string n = port_name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  PortStimulus s{port_name, PortRole::kData, false};
  auto ends_with = [&n](const std::string& suffix) {
    return n.size() >= suffix.size() &&
           n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  const bool low = ends_with("_n") || ends_with("_ni") || ends_with("n_i") || ends_with("b");
  if (port_name == clock_port || n == "clk" || n == "clock" || n == "clk_i") {
    s.role = PortRole::kClock;
  } else if (n.find("rst") != std::string::npos || n.find("reset") != std::string::npos) {
    s.role = PortRole::kReset;
    s.active_low = low;
  } else if (n.find("valid") != std::string::npos || n.find("en_i") != std::string::npos ||
             n == "en" || n.find("enable") != std::string::npos ||
             n.find("load") != std::string::npos) {
    s.role = PortRole::kEnable;
  }
  return s;
}

}  // namespace ltc::synth
