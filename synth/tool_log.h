// What counts as an error in a tool's log: the tools sometimes report errors yet exit 0
// (docs/tools.md#known-pitfalls), so the text decides as much as the exit code.
#pragma once

#include <string>
#include <vector>

namespace ltc::synth {

// Lines of a tool log that report an error ("ERROR", "Error:", "error:", "syntax error", a
// module or cell that was "not found"...). Empty when the log is clean.
std::vector<std::string> error_lines(const std::string& log);

}  // namespace ltc::synth
