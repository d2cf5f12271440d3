// `ltc sweep --executor slurm` on a real single-node Slurm (tests/cluster/local_slurm.h): the
// records equal the local executor's, a rerun submits nothing, a task killed mid-run is submitted
// again, and a killed submitter's rerun follows the array it left queued. One cluster for the
// whole binary (one CTest test); every daemon is stopped at the end, also on failure.
#include "tests/cluster/local_slurm.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

namespace ltc::test_support {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Three small design points (seconds each through Yosys, gatesim and OpenSTA).
constexpr const char* kSpec = R"({
  "name": "cluster", "activity": "measured", "cycles": 40,
  "grid": [
    {"design": ["lut", "add"], "m": 1, "n": 1, "k": 2, "act": "int8", "wbits": 1},
    {"design": "mac", "m": 1, "n": 1, "k": 2, "act": "int8"}
  ]
})";
constexpr int kPoints = 3;
constexpr double kSweepTimeoutS = 300;

// --executor slurm, polling often; the test's files are on a local disk, so a task that ended
// without a record is lost at once.
std::vector<std::string> slurm_flags(std::vector<std::string> more = {}) {
  std::vector<std::string> f = {"--executor", "slurm", "--poll-s", "0.5", "--lost-after-s", "1"};
  f.insert(f.end(), more.begin(), more.end());
  return f;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

// The last line of `out` that is a JSON object (ltc --json prints one; progress goes around it).
json last_json(const std::string& out) {
  json j;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] == '{') j = json::parse(line, nullptr, false);
  }
  return j;
}

// Records by key, without what differs between any two runs: when and how long.
std::map<std::string, json> comparable_records(const std::string& out_dir) {
  std::map<std::string, json> m;
  std::istringstream in(read_file(out_dir + "/results.jsonl"));
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    json r = json::parse(line);
    r.erase("seconds");
    r.erase("finished");
    if (r.contains("result")) {
      r["result"].erase("seconds");  // PPA: per stage
      r["result"].erase("wall_s");   // sim
    }
    m[r.at("key").get<std::string>()] = r;
  }
  return m;
}

json slurm_state(const std::string& out_dir) {
  const std::string text = read_file(out_dir + "/slurm/state.json");
  return text.empty() ? json::object() : json::parse(text, nullptr, false);
}

class SlurmSweep : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    skip_ = LocalSlurm::unavailable_reason();
    if (!skip_.empty()) return;
    cluster_ = std::make_unique<LocalSlurm>();
    try {
      cluster_->start(60);
    } catch (const std::exception& e) {
      start_error_ = e.what();
      return;
    }
    work_ = cluster_->dir() + "/sweeps";
    fs::create_directories(work_);
    write_file(spec(), kSpec);
  }
  static void TearDownTestSuite() { cluster_.reset(); }  // stops every daemon and job

  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << "cluster test skipped: " << skip_;
    ASSERT_TRUE(start_error_.empty()) << start_error_;
  }
  void TearDown() override {
    if (HasFailure() && cluster_) {
      std::cerr << "squeue:\n" << cluster_->queue() << cluster_->logs();
    }
  }

  static std::string spec() { return work_ + "/spec.json"; }

  static std::vector<std::string> sweep_argv(const std::string& out,
                                             const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {LTC_BINARY, "sweep",  spec(),      "--out",
                                     out,        "--json", "--progress"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }

  // `ltc sweep` to its end; its --json object (null on a crash), the output on failure.
  static json sweep(const std::string& out, const std::vector<std::string>& extra,
                    std::string* output) {
    const int code = run_command(sweep_argv(out, extra), output, kSweepTimeoutS);
    json j = last_json(*output);
    j["exit_code"] = code;
    return j;
  }

  // The local executor's records on the same points: what every Slurm run must equal.
  static const std::map<std::string, json>& local_records() {
    static std::map<std::string, json> records;
    if (records.empty()) {
      std::string out;
      const json j = sweep(work_ + "/local", {"--executor", "local", "-j", "2"}, &out);
      EXPECT_EQ(j.value("exit_code", -1), 0) << out;
      EXPECT_EQ(j.value("ok", 0), kPoints) << out;
      records = comparable_records(work_ + "/local");
    }
    return records;
  }

  static inline std::string skip_, start_error_, work_;
  static inline std::unique_ptr<LocalSlurm> cluster_;
};

TEST_F(SlurmSweep, RecordsEqualTheLocalExecutors) {
  const auto& local = local_records();
  ASSERT_EQ(local.size(), static_cast<size_t>(kPoints));
  const auto t0 = std::chrono::steady_clock::now();
  std::string out;
  const json j = sweep(work_ + "/equal", slurm_flags(), &out);
  ASSERT_EQ(j.value("exit_code", -1), 0) << out;
  EXPECT_EQ(j.value("executor", ""), "slurm");
  EXPECT_EQ(j.value("ok", 0), kPoints) << out;
  EXPECT_EQ(j.value("failed", -1), 0) << out;
  std::cerr << "slurm sweep of " << kPoints << " points: "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()
            << " s\n";
  const auto slurm = comparable_records(work_ + "/equal");
  EXPECT_EQ(slurm.size(), local.size());
  for (const auto& [key, rec] : local) {
    ASSERT_TRUE(slurm.count(key)) << "no Slurm record for " << key;
    EXPECT_EQ(slurm.at(key), rec) << key;
    EXPECT_EQ(rec.value("status", ""), "ok") << rec.dump();
  }
  // Every record was moved into the store; one array for the three points.
  EXPECT_TRUE(fs::is_empty(work_ + "/equal/records"));
  EXPECT_EQ(slurm_state(work_ + "/equal")["submissions"].size(), 1u);
}

TEST_F(SlurmSweep, RerunSubmitsNothing) {
  std::string out;
  ASSERT_EQ(sweep(work_ + "/rerun", slurm_flags(), &out).value("exit_code", -1), 0) << out;
  const json j = sweep(work_ + "/rerun", slurm_flags(), &out);
  ASSERT_EQ(j.value("exit_code", -1), 0) << out;
  EXPECT_EQ(j.value("reused", 0), kPoints) << out;
  EXPECT_EQ(j.value("ran", -1), 0) << out;
  EXPECT_EQ(slurm_state(work_ + "/rerun")["submissions"].size(), 1u);
}

TEST_F(SlurmSweep, TaskKilledMidRunIsSubmittedAgain) {
  const std::string out_dir = work_ + "/killed-task";
  fs::create_directories(out_dir);
  // A site template that also hands the test the pid of task 0's first run (the ltc process:
  // {command} execs it).
  const std::string gate = out_dir + "/kill-gate", pid_file = out_dir + "/victim.pid";
  write_file(out_dir + "/template.sh",
             "#!/bin/bash\n"
             "if [ \"$SLURM_ARRAY_TASK_ID\" = 0 ] && mkdir " +
                 gate +
                 " 2>/dev/null; then\n"
                 "  echo $$ > " +
                 pid_file + ".tmp && mv " + pid_file + ".tmp " + pid_file +
                 "\n"
                 "fi\n"
                 "{command}\n");
  ChildProcess submitter(
      sweep_argv(out_dir, slurm_flags({"--sbatch-template", out_dir + "/template.sh"})),
      out_dir + "/submitter.log");
  const auto t0 = std::chrono::steady_clock::now();
  while (!fs::exists(pid_file)) {
    ASSERT_TRUE(submitter.running()) << read_file(out_dir + "/submitter.log");
    ASSERT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 120)
        << "task 0 did not start within 120 s";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const pid_t victim = std::stoi(read_file(pid_file));
  const json first = slurm_state(out_dir)["submissions"][0];
  const std::string killed_key = first["keys"][0];
  ASSERT_EQ(::kill(victim, SIGKILL), 0) << "task 0 (pid " << victim << ") ended before the kill";

  const int code = submitter.wait(kSweepTimeoutS);
  const std::string log = read_file(out_dir + "/submitter.log");
  ASSERT_EQ(code, 0) << log;
  const json j = last_json(log);
  EXPECT_EQ(j.value("ok", 0), kPoints) << log;
  EXPECT_EQ(j.value("resubmitted", 0), 1) << log;
  const json subs = slurm_state(out_dir)["submissions"];
  ASSERT_EQ(subs.size(), 2u) << subs.dump();
  EXPECT_EQ(subs[1]["keys"], json::array({killed_key}));
  EXPECT_NE(log.find("without a record"), std::string::npos) << log;
  EXPECT_EQ(comparable_records(out_dir), local_records());
}

TEST_F(SlurmSweep, RerunAfterKilledSubmitterFollowsTheQueuedArray) {
  const std::string out_dir = work_ + "/killed-submitter";
  fs::create_directories(out_dir);
  // Tasks wait for the test's go (at most 120 s), so the array is surely still queued.
  const std::string go = out_dir + "/go";
  write_file(out_dir + "/template.sh",
             "#!/bin/bash\n"
             "while [ ! -e " +
                 go +
                 " ] && [ $SECONDS -lt 120 ]; do sleep 0.2; done\n"
                 "{command}\n");
  const std::vector<std::string> extra =
      slurm_flags({"--sbatch-template", out_dir + "/template.sh"});
  {
    ChildProcess submitter(sweep_argv(out_dir, extra), out_dir + "/first.log");
    const auto t0 = std::chrono::steady_clock::now();
    while (slurm_state(out_dir).value("submissions", json::array()).empty()) {
      ASSERT_TRUE(submitter.running()) << read_file(out_dir + "/first.log");
      ASSERT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 60)
          << "no array submitted within 60 s";
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    // A second submitter on the same folder would submit the same tasks again: refused.
    std::string second;
    EXPECT_EQ(run_command(sweep_argv(out_dir, extra), &second, 60), 2) << second;
    EXPECT_NE(second.find("another ltc process"), std::string::npos) << second;
    submitter.kill(SIGKILL);
    submitter.wait(10);
  }
  const std::string job = slurm_state(out_dir)["submissions"][0]["job"];
  EXPECT_NE(cluster_->queue().find(job + "_"), std::string::npos) << cluster_->queue();
  write_file(go, "");

  std::string out;
  const json j = sweep(out_dir, extra, &out);
  ASSERT_EQ(j.value("exit_code", -1), 0) << out;
  EXPECT_EQ(j.value("ok", 0), kPoints) << out;
  EXPECT_EQ(j.value("resubmitted", -1), 0) << out;
  EXPECT_NE(out.find("following it"), std::string::npos) << out;
  EXPECT_EQ(slurm_state(out_dir)["submissions"].size(), 1u) << "the rerun submitted again";
  EXPECT_EQ(comparable_records(out_dir), local_records());
}

// A sweep spec whose points are `ltc sim` runs: two example traces, computed bit for bit
// (a tenth of a second each). Its --json object, the output in *out.
json sim_batch(const std::string& work, const std::string& dir,
               const std::vector<std::string>& extra, std::string* out) {
  const std::string examples = std::string(LTC_SOURCE_DIR) + "/traces/examples/";
  const json spec = {
      {"name", "simbatch"},
      {"tool", "sim"},
      {"grid",
       json::array({{{"file", json::array({examples + "gemm-m3n100k70-int2-int8.lmt",
                                           examples + "gemm-m64n512k256-int1-int8-s4.lmt"})},
                     {"functional", true}}})}};
  const std::string spec_path = work + "/sim.json";
  write_file(spec_path, spec.dump());
  std::vector<std::string> argv = {LTC_BINARY, "sweep", spec_path, "--out", dir, "--json"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const int code = run_command(argv, out, kSweepTimeoutS);
  json j = last_json(*out);
  j["exit_code"] = code;
  return j;
}

TEST_F(SlurmSweep, SimBatchRecordsEqualTheLocalExecutors) {
  std::string out;
  auto run_batch = [&](const std::string& dir, const std::vector<std::string>& extra) {
    return sim_batch(work_, dir, extra, &out);
  };
  const json local = run_batch(work_ + "/sim-local", {"--executor", "local", "-j", "2"});
  ASSERT_EQ(local.value("exit_code", -1), 0) << out;
  ASSERT_EQ(local.value("ok", 0), 2) << out;
  const json slurm = run_batch(work_ + "/sim-slurm", slurm_flags());
  ASSERT_EQ(slurm.value("exit_code", -1), 0) << out;
  EXPECT_EQ(slurm.value("ok", 0), 2) << out;
  const auto a = comparable_records(work_ + "/sim-local");
  EXPECT_EQ(a.size(), 2u);
  EXPECT_EQ(comparable_records(work_ + "/sim-slurm"), a);
  for (const auto& [key, rec] : a) {
    EXPECT_EQ(rec["result"]["functional"]["mismatches"], 0) << rec.dump();
    EXPECT_GT(rec["result"]["cycles"].get<int64_t>(), 0) << rec.dump();
  }
}

TEST_F(SlurmSweep, TaskThatKeepsDyingIsStoredAsAnErrorAfterMaxRetries) {
  const std::string out_dir = work_ + "/dying";
  fs::create_directories(out_dir);
  // Task 0 of every array dies before running ltc: the lost point is always task 0.
  write_file(out_dir + "/template.sh",
             "#!/bin/bash\n[ \"$SLURM_ARRAY_TASK_ID\" = 0 ] && kill -9 $$\n{command}\n");
  std::string out;
  const json j = sim_batch(work_, out_dir,
                           slurm_flags({"--max-retries", "1", "--progress", "--sbatch-template",
                                        out_dir + "/template.sh"}),
                           &out);
  EXPECT_EQ(j.value("exit_code", -1), 1) << out;  // a failed point
  EXPECT_EQ(j.value("ok", 0), 1) << out;
  EXPECT_EQ(j.value("failed", 0), 1) << out;
  EXPECT_EQ(j.value("resubmitted", 0), 1) << out;
  EXPECT_NE(out.find("giving up"), std::string::npos) << out;
  const auto records = comparable_records(out_dir);
  ASSERT_EQ(records.size(), 2u);
  int errors = 0;
  for (const auto& [key, rec] : records) {
    if (rec["status"] != "error") continue;
    ++errors;
    const std::string e = rec["error"];
    EXPECT_NE(e.find("without a record"), std::string::npos) << e;
    EXPECT_NE(e.find("2 submission(s)"), std::string::npos) << e;
  }
  EXPECT_EQ(errors, 1);
  // Like a local failure: kept by a rerun, redone with --retry-failed.
  EXPECT_EQ(sim_batch(work_, out_dir, slurm_flags(), &out).value("ran", -1), 0) << out;
  const json retry = sim_batch(work_, out_dir, slurm_flags({"--retry-failed"}), &out);
  EXPECT_EQ(retry.value("exit_code", -1), 0) << out;
  EXPECT_EQ(retry.value("ok", 0), 1) << out;
}

}  // namespace
}  // namespace ltc::test_support
