#include "synth/tool_log.h"

#include <regex>
#include <sstream>

namespace ltc::synth {

std::vector<std::string> error_lines(const std::string& log) {
  static const std::regex kError(
      R"((^|\s)(ERROR|Error|error)\b\s*[:!]|syntax error|^\s*ERROR\b|I give up|)"
      R"(not found|unknown (module|cell)|Segmentation fault|Aborted|Assertion .* failed)",
      std::regex::optimize);
  std::vector<std::string> out;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (std::regex_search(line, kError)) out.push_back(line);
  }
  return out;
}

}  // namespace ltc::synth
