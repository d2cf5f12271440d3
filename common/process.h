// Runs an external program (yosys, sta, verilator, a verilated harness) as a child process with a
// timeout, its stdout and stderr captured to a log file. The child runs in its own process group,
// which is killed on a timeout, when ltc is interrupted and when ltc dies.
#pragma once

#include <string>
#include <vector>

namespace ltc {

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal or on timeout
  bool timed_out = false;
  double seconds = 0;
  std::string log;  // stdout + stderr, interleaved
};

// Runs argv[0] (found on PATH) in `workdir` with stdout+stderr to `log_path` (to ltc's stderr when
// `log_path` is empty; `log` is then empty). Kills the child's whole process group after
// `timeout_s` seconds (0 = no limit). Throws std::runtime_error when the program cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& workdir,
                          const std::string& log_path, double timeout_s);

// The first line of `argv` output, e.g. "Yosys 0.23 (git sha1 7ce5011c24b)"; "" if it fails.
std::string tool_version(const std::vector<std::string>& argv);

// CPU seconds (user + system) this process and its finished children have used: with the wall
// time, how much of two cores a step kept busy, and a figure that load on the machine barely moves.
double cpu_seconds_used();

// `s` quoted for a POSIX shell (a command line written down for the user to rerun).
std::string shell_quote(const std::string& s);

}  // namespace ltc
