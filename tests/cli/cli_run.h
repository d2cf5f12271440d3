// Runs the `ltc` binary the way a user does: exit code, stdout and stderr apart.
#pragma once

#include <gtest/gtest.h>
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

// A folder of this test process's own: <tmp>/ltc_<tag>_<pid> (ctest runs processes in parallel).
inline std::filesystem::path scratch_dir(const std::string& tag) {
  const std::filesystem::path d =
      std::filesystem::temp_directory_path() / ("ltc_" + tag + "_" + std::to_string(getpid()));
  std::filesystem::create_directories(d);
  return d;
}

// Writes `text` to dir/name; returns the path.
inline std::string write_file(const std::filesystem::path& dir, const std::string& name,
                              const std::string& text) {
  const std::filesystem::path p = dir / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

// `ltc args` is bad input: exit 2, stderr starting "ltc: error: " and naming `names`, nothing
// on stdout.
inline void expect_bad_input(const std::string& args, const std::string& names) {
  const CliRun r = run(args);
  EXPECT_EQ(r.code, 2) << "ltc " << args << "\n" << r.err;
  EXPECT_EQ(r.err.rfind("ltc: error: ", 0), 0u) << "ltc " << args << "\n" << r.err;
  EXPECT_NE(r.err.find(names), std::string::npos) << "ltc " << args << "\n" << r.err;
  EXPECT_TRUE(r.out.empty()) << "ltc " << args << " printed: " << r.out;
}

}  // namespace ltc::test_support
