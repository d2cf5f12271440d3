// Runs an external tool (yosys, sta, iverilog, vvp) as a child process with a timeout, its
// stdout and stderr captured to a log file, and scans that log for error text: the tools
// sometimes report errors yet exit 0 (docs/tools.md#known-pitfalls), so the text decides as much as
// the exit code.
#pragma once

#include <string>
#include <vector>

namespace ltc::synth {

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal or on timeout
  bool timed_out = false;
  double seconds = 0;
  std::string log;  // stdout + stderr, interleaved
};

// Runs argv[0] (found on PATH) in `workdir` with stdout+stderr to `log_path`. Kills the child's
// whole process group after `timeout_s` seconds (0 = no limit). Throws std::runtime_error when
// the program cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& workdir,
                          const std::string& log_path, double timeout_s);

// Lines of a tool log that report an error ("ERROR", "Error:", "error:", "syntax error", a
// module or cell that was "not found"...). Empty when the log is clean.
std::vector<std::string> error_lines(const std::string& log);

// The first line of `argv` output, e.g. "Yosys 0.23 (git sha1 7ce5011c24b)"; "" if it fails.
std::string tool_version(const std::vector<std::string>& argv);

// Reads a whole file; throws std::runtime_error naming the path when it cannot.
std::string read_text(const std::string& path);
// FNV-1a (64 bits) of `data` as 16 hex digits: file names from store keys, file fingerprints.
std::string fnv1a_hex(const std::string& data);
// Writes `text` to `path` atomically (temp file in the same folder, then rename).
void write_text_atomic(const std::string& path, const std::string& text);

// An exclusive lock on `path` (flock; created if absent) while the object lives, so that two ltc
// processes do not rewrite one results store at once. Throws InputError naming `what` and the
// holder (pid and host, written into the file) when another process holds it.
class FileLock {
 public:
  FileLock(const std::string& path, const std::string& what);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace ltc::synth
