#include "synth/design_source.h"

#include "synth/process.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include <fmt/format.h>

namespace ltc::synth {

std::string DesignSource::source_hash() const {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const std::string& s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
    h ^= 0xff;
    h *= 1099511628211ull;
  };
  std::vector<std::string> sorted = sources;
  for (const auto& dir : include_dirs) {
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      const auto ext = e.path().extension();
      if (ext == ".svh" || ext == ".vh") sorted.push_back(e.path().string());
    }
  }
  std::sort(sorted.begin(), sorted.end());
  for (const auto& path : sorted) {
    mix(std::filesystem::path(path).filename().string());
    mix(read_text(path));
  }
  return fmt::format("{:016x}", h);
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
