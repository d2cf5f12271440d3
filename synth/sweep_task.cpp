// One sweep task: a PPA point through run_ppa, or an `ltc sim --json` child process; what the
// local executor runs and what a Slurm array task runs (synth/executor.h).
#include "synth/sweep.h"

#include "common/error.h"
#include "common/process.h"

#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <sstream>

namespace ltc::synth {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

void remove_bulky_files(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const std::string ext = e.path().extension().string();
    if (ext == ".v" || ext == ".vvp" || ext == ".hex" || ext == ".vcd" ||
        name == "yosys.log.full" || name.rfind("outputs", 0) == 0) {
      fs::remove(e.path(), ec);
    }
  }
}

}  // namespace

std::string record_timestamp() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::tm utc{};
  gmtime_r(&t, &utc);  // the sweep's worker threads call this concurrently
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

std::string self_binary() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("ltc") : p.string();
}

json run_sweep_task(
    const json& job,
    const std::function<PpaResult(const hw::TensorCoreConfig&, const PpaOptions&)>& ppa_runner) {
  const std::string kind = job.value("kind", "");
  json rec = {{"key", job.at("key")}, {"sweep", job.value("sweep", "")}};
  const auto ts = std::chrono::steady_clock::now();
  if (kind == "ppa") {
    const hw::TensorCoreConfig config = job.at("config").get<hw::TensorCoreConfig>();
    PpaOptions po;
    po.clock_ns = job.value("clock_ns", 0.0);
    po.activity = job.value("activity", "measured") == "measured" ? ActivityMode::kMeasured
                                                                  : ActivityMode::kAssumed;
    po.sim.cycles = job.value("cycles", 0);
    po.sim.seed = job.value("seed", uint64_t{1});
    po.library = job.value("library", std::string("osu018"));
    po.sim.timing = parse_delay_model(job.value("activity_timing", std::string("zero")),
                                      "sweep task: activity_timing");
    po.tool_timeout_s = job.value("timeout_s", 3600.0);
    po.workdir = job.at("workdir").get<std::string>();
    rec = {{"key", job.at("key")},  {"id", config.id()},       {"config", config},
           {"sweep", rec["sweep"]}, {"clock_ns", po.clock_ns}, {"tools", tool_versions()},
           {"finished", ""}};
    try {
      fs::remove_all(po.workdir);
      const PpaResult r = ppa_runner ? ppa_runner(config, po) : run_ppa(config, po);
      rec["status"] = "ok";
      rec["rtl_hash"] = r.rtl_hash;
      rec["result"] = r;
      if (!job.value("keep_work", false)) remove_bulky_files(po.workdir);
    } catch (const std::exception& e) {
      rec["status"] = "error";
      rec["error"] = e.what();
    }
  } else if (kind == "sim") {
    // A child process: the simulator is not linked into the PPA library, and one simulation's
    // SystemC kernel per process is what `ltc sim` assumes.
    rec["id"] = job.at("id");
    rec["args"] = job.at("args");
    const std::string workdir = job.at("workdir");
    std::vector<std::string> argv = {job.at("ltc").get<std::string>(), "sim"};
    bool threads = false;
    for (const auto& a : job.at("args")) {
      argv.push_back(a.get<std::string>());
      threads = threads || argv.back() == "--threads" || argv.back().rfind("--threads=", 0) == 0;
    }
    if (!threads && job.contains("threads")) {
      argv.push_back("--threads");
      argv.push_back(std::to_string(job.at("threads").get<int>()));
    }
    argv.push_back("--json");
    argv.push_back("--yes");  // the point's limit is the sweep's --timeout-s, not sim's budget
    try {
      fs::create_directories(workdir);
      const ProcessResult pr =
          run_process(argv, workdir, workdir + "/sim.log", job.value("timeout_s", 3600.0));
      json result;
      std::istringstream lines(pr.log);
      for (std::string line; std::getline(lines, line);) {
        if (!line.empty() && line[0] == '{') result = json::parse(line, nullptr, false);
      }
      if (pr.timed_out) {
        throw std::runtime_error(fmt::format("ltc sim timed out after {} s (log {}/sim.log)",
                                             job.value("timeout_s", 3600.0), workdir));
      }
      if (pr.exit_code != 0 || !result.is_object()) {
        std::string last;
        std::istringstream again(pr.log);
        for (std::string line; std::getline(again, line);) {
          if (!line.empty()) last = line;
        }
        throw std::runtime_error(
            fmt::format("ltc sim exited {}: {} (log {}/sim.log)", pr.exit_code, last, workdir));
      }
      rec["status"] = "ok";
      rec["result"] = result;
    } catch (const std::exception& e) {
      rec["status"] = "error";
      rec["error"] = e.what();
    }
  } else {
    throw InputError("sweep task: kind '" + kind + "' (valid: ppa, sim)");
  }
  rec["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - ts).count();
  rec["finished"] = record_timestamp();
  return rec;
}

}  // namespace ltc::synth
