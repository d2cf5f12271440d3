// A physical figure as text with an SI prefix that keeps three significant digits ("51.3 uJ",
// "0.347 W" -> "347 mW"), so that no non-zero figure prints as 0 (docs/cli.md#output).
#pragma once

#include <string>

namespace ltc {

// `value` in `unit` ("J", "W", "J/token") with the prefix from n to G that puts it in [1, 1000).
std::string si_text(double value, const std::string& unit);

}  // namespace ltc
