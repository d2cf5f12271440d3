// Runs the `ltc` binary the way a user does: exit code, stdout and stderr apart.
#pragma once

#include <sys/wait.h>
#include <unistd.h>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ltc::test_support {

struct CliRun {
  int code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

inline CliRun run(const std::string& args) {
  // One stderr file per process and call: ctest runs test processes in parallel.
  static int calls = 0;
  const std::string err_file =
      std::filesystem::temp_directory_path() /
      ("ltc_cli_test_stderr_" + std::to_string(getpid()) + "_" + std::to_string(calls++) + ".txt");
  const std::string cmd = std::string(LTC_BINARY) + " " + args + " 2>" + err_file;
  CliRun r;
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream f(err_file);
  std::stringstream ss;
  ss << f.rdbuf();
  r.err = ss.str();
  f.close();
  std::error_code ec;
  std::filesystem::remove(err_file, ec);
  return r;
}

}  // namespace ltc::test_support
