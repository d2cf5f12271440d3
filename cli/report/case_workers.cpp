#include "cli/report/case_workers.h"

#include "common/error.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace ltc::report {

std::vector<nlohmann::json> run_cases(
    size_t n, int jobs, const std::function<nlohmann::json(size_t)>& f,
    const std::function<void(size_t, const nlohmann::json&)>& done) {
  if (jobs < 1) throw InputError("-j: " + std::to_string(jobs) + " (valid: >= 1 workers)");
  std::vector<nlohmann::json> out(n);
  if (jobs == 1 || n <= 1) {
    for (size_t i = 0; i < n; ++i) {
      out[i] = f(i);
      if (done) done(i, out[i]);
    }
    return out;
  }
  const size_t workers = std::min(size_t(jobs), n);
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path();
  std::vector<std::string> files;
  std::vector<pid_t> pids;
  std::fflush(stdout);
  std::fflush(stderr);
  for (size_t w = 0; w < workers; ++w) {
    files.push_back(
        (dir / ("ltc_cases_" + std::to_string(getpid()) + "_" + std::to_string(w) + ".jsonl"))
            .string());
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("could not start a worker process");
    if (pid == 0) {
      int code = 0;
      {
        std::ofstream o(files.back());
        try {
          for (size_t i = w; i < n; i += workers) {
            o << nlohmann::json{{"case", i}, {"result", f(i)}}.dump() << "\n";
            o.flush();
          }
        } catch (const std::exception& e) {
          o << nlohmann::json{{"error", e.what()}}.dump() << "\n";
          code = 2;
        }
      }
      std::fflush(stdout);
      _exit(code);
    }
    pids.push_back(pid);
  }
  std::string error;
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) && error.empty()) error = "a worker process was killed";
  }
  std::vector<bool> have(n, false);
  for (const auto& file : files) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
      const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded()) continue;
      if (j.contains("error")) {
        if (error.empty()) error = j["error"].get<std::string>();
        continue;
      }
      const size_t i = j["case"].get<size_t>();
      out[i] = j["result"];
      have[i] = true;
    }
    in.close();
    std::error_code ec;
    fs::remove(file, ec);
  }
  if (!error.empty()) throw std::runtime_error(error);
  for (size_t i = 0; i < n; ++i) {
    if (!have[i]) throw std::runtime_error("case " + std::to_string(i) + " gave no result");
    if (done) done(i, out[i]);
  }
  return out;
}

}  // namespace ltc::report
