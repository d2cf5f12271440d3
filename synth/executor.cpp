#include "synth/executor.h"

#include "common/error.h"
#include "common/file_io.h"
#include "common/hash.h"
#include "common/process.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

namespace ltc::synth {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// One line for a progress log: the figures of an ok record, or its error.
std::string record_summary(const json& rec) {
  if (rec.value("status", "") != "ok") return "FAILED: " + rec.value("error", std::string("?"));
  const json& r = rec.value("result", json::object());
  if (r.contains("area_um2")) {
    return fmt::format("ok  area {:.0f} um2, {:.3f} ns, {:.3f} mW", r.value("area_um2", 0.0),
                       r.value("delay_ns", 0.0), r.value("power_mw", 0.0));
  }
  if (r.contains("cycles")) {
    return fmt::format("ok  {} cycles, {:.4f} ms", r["cycles"].dump(), r.value("time_ms", 0.0));
  }
  return "ok";
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Array task states in which the task has ended (squeue --states=all lists them for MinJobAge
// seconds after the end); any other state is still queued or running.
bool is_terminal_state(const std::string& s) {
  static const std::set<std::string> kEnded = {
      "COMPLETED",     "FAILED",    "CANCELLED", "TIMEOUT", "NODE_FAIL",   "PREEMPTED",
      "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE",  "REVOKED", "SPECIAL_EXIT"};
  return kEnded.count(s) != 0;
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string d; std::getline(dirs, d, ':');) {
    std::error_code ec;
    if (!d.empty() && fs::exists(fs::path(d) / program, ec)) return true;
  }
  return false;
}

// One array task of a submission, as this submitter follows it.
struct Tracked {
  const SweepTask* task = nullptr;
  std::string job;       // array job id of its latest submission ("" before the first)
  int index = -1;        // its index in that array
  int submissions = 0;   // by this submitter run
  int unseen_polls = 0;  // consecutive polls ended (or gone) without a record
  std::chrono::steady_clock::time_point unseen_since;
  std::string last_state;
  bool done = false;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Task records

std::string task_record_path(const std::string& out_dir, const std::string& key) {
  return out_dir + "/records/" + fnv1a_hex(key) + ".json";
}

std::vector<std::string> collect_task_records(const std::string& out_dir, ResultStore& store) {
  std::vector<std::string> added;
  const fs::path dir = fs::path(out_dir) / "records";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return added;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    // A task still writing has only its temp file; that one is left alone.
    if (name.find(".tmp.") == std::string::npos && e.path().extension() == ".json") {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    json rec;
    try {
      rec = json::parse(read_text(f.string()));
    } catch (const std::exception&) {
      continue;  // never half-written (atomic rename); unreadable: left for a look
    }
    if (!rec.is_object() || !rec.contains("key") || !rec["key"].is_string()) continue;
    store.put(rec);
    added.push_back(rec["key"]);
    fs::remove(f, ec);
  }
  return added;
}

json run_manifest_task(const std::string& manifest, int index, const TaskRunner& runner) {
  json m;
  try {
    m = json::parse(read_text(manifest));
  } catch (const std::exception& e) {
    throw InputError("sweep task manifest " + manifest + ": " + e.what());
  }
  if (!m.is_object() || m.value("format", "") != "ltc-sweep-batch/1" || !m.contains("tasks") ||
      !m["tasks"].is_array() || !m.contains("out_dir")) {
    throw InputError("sweep task manifest " + manifest +
                     ": not an ltc-sweep-batch/1 file (written by ltc sweep --executor slurm)");
  }
  const json& tasks = m["tasks"];
  if (index < 0 || index >= static_cast<int>(tasks.size())) {
    throw InputError(fmt::format("sweep task index {}: {} has tasks 0..{}", index, manifest,
                                 static_cast<int>(tasks.size()) - 1));
  }
  const json& t = tasks[index];
  const SweepTask task{t.at("key"), t.value("id", ""), t.at("job")};
  const json rec = runner(task);
  write_text_atomic(task_record_path(m["out_dir"], task.key), rec.dump() + "\n");
  return rec;
}

// ---------------------------------------------------------------------------------------------
// Local

ExecutorRun LocalExecutor::run(const std::vector<SweepTask>& tasks, const TaskRunner& runner,
                               ResultStore& store, const std::string&, bool progress) {
  if (jobs_ < 1) throw InputError("-j: at least one job");
  std::atomic<size_t> next{0};
  std::atomic<int> ok{0}, failed{0};
  std::mutex log_mu;
  auto worker = [&] {
    for (;;) {
      const size_t i = next++;
      if (i >= tasks.size()) return;
      const SweepTask& t = tasks[i];
      const json rec = runner(t);
      (rec.value("status", "") == "ok" ? ok : failed)++;
      store.put(rec);
      if (progress) {
        std::lock_guard<std::mutex> lock(log_mu);
        fmt::print(stderr, "[{}/{}] {} {:.1f} s: {}\n", ok + failed, tasks.size(), t.id,
                   rec.value("seconds", 0.0), record_summary(rec));
      }
    }
  };
  std::vector<std::thread> threads;
  const int n = std::min<int>(jobs_, std::max<size_t>(tasks.size(), 1));
  for (int t = 0; t < n; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  return {ok, failed, 0};
}

// ---------------------------------------------------------------------------------------------
// Slurm

SlurmExecutor::SlurmExecutor(SlurmOptions options) : opt_(std::move(options)) {
  if (opt_.max_retries < 0) throw InputError("--max-retries: must be >= 0");
  if (opt_.poll_s <= 0) throw InputError("--poll-s: must be > 0");
  if (opt_.lost_after_s < 0) throw InputError("--lost-after-s: must be >= 0");
  if (opt_.cpus_per_task < 0) throw InputError("--cpus-per-task: must be >= 1");
  if (opt_.max_running < 0) throw InputError("--max-running: must be >= 0 (0: no limit)");
  if (opt_.array_chunk < 1) throw InputError("array chunk: must be >= 1");
  if (!opt_.sbatch_template.empty()) {
    std::string text;
    try {
      text = read_text(opt_.sbatch_template);
    } catch (const std::exception&) {
      throw InputError("--sbatch-template " + opt_.sbatch_template + ": cannot be read");
    }
    if (text.rfind("#!", 0) != 0 || text.find("{command}") == std::string::npos) {
      throw InputError("--sbatch-template " + opt_.sbatch_template +
                       ": a batch script starting with #! and holding a line {command} (where "
                       "the task's ltc command goes)");
    }
  }
}

namespace {

class SlurmSession {
 public:
  SlurmSession(const SlurmOptions& opt, const std::string& out_dir, bool progress)
      : opt_(opt), progress_(progress) {
    out_ = fs::absolute(out_dir).lexically_normal().string();
    dir_ = out_ + "/slurm";
    fs::create_directories(dir_ + "/logs");
    fs::create_directories(out_ + "/records");
    ltc_ = opt.ltc_binary;
    state_path_ = dir_ + "/state.json";
    try {
      state_ = json::parse(read_text(state_path_));
    } catch (const std::exception&) {
      state_ = json::object();
    }
    if (!state_.contains("submissions") || !state_["submissions"].is_array()) {
      state_["submissions"] = json::array();
    }
    // The job name ties the arrays to this results folder (squeue --name); kept in the state so
    // the folder reached by another path still finds its arrays.
    if (!state_.contains("job_name") || !state_["job_name"].is_string()) {
      state_["job_name"] = "ltc-sweep-" + fnv1a_hex(out_).substr(0, 8);
    }
    job_name_ = state_["job_name"];
  }
  SlurmSession(const SlurmSession&) = delete;
  SlurmSession& operator=(const SlurmSession&) = delete;

  const json& submissions() const { return state_["submissions"]; }

  // `squeue` for this folder's arrays: "job_index" -> state. Empty optional when squeue failed.
  std::optional<std::map<std::string, std::string>> queue(std::string* error) {
    const ProcessResult r = run_process({"squeue", "--noheader", "--array", "--states=all",
                                         "--name=" + job_name_, "--format=%F|%K|%T"},
                                        dir_, dir_ + "/squeue.log", opt_.command_timeout_s);
    if (r.exit_code != 0) {
      *error = fmt::format("squeue exited {}: {}", r.exit_code, last_line(r.log));
      return std::nullopt;
    }
    std::map<std::string, std::string> q;
    static const std::regex kLine(R"(^\s*([0-9]+)\|([0-9]+)\|([A-Z_]+)\s*$)");
    std::istringstream in(r.log);
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (std::regex_match(line, m, kLine)) q[m[1].str() + "_" + m[2].str()] = m[3];
    }
    return q;
  }

  // Submits `batch` as one array; returns its job id. Throws with sbatch's message on failure.
  std::string submit(const std::vector<Tracked*>& batch) {
    const int n = static_cast<int>(submissions().size()) + 1;
    const std::string manifest = fmt::format("{}/batch-{}.json", dir_, n);
    const std::string script = fmt::format("{}/batch-{}.sh", dir_, n);
    json tasks = json::array();
    for (const Tracked* t : batch) {
      tasks.push_back({{"key", t->task->key}, {"id", t->task->id}, {"job", t->task->job}});
    }
    write_text_atomic(
        manifest,
        json{{"format", "ltc-sweep-batch/1"}, {"out_dir", out_}, {"tasks", tasks}}.dump(1) + "\n");
    const std::string command = fmt::format("exec {} sweep-task {} \"$SLURM_ARRAY_TASK_ID\"",
                                            shell_quote(ltc_), shell_quote(manifest));
    std::string text = opt_.sbatch_template.empty() ? std::string("#!/bin/bash\n{command}\n")
                                                    : read_text(opt_.sbatch_template);
    for (size_t p; (p = text.find("{command}")) != std::string::npos;) {
      text.replace(p, 9, command);
    }
    write_text_atomic(script, text);
    fs::permissions(script, fs::perms::owner_exec, fs::perm_options::add);

    std::string array = fmt::format("0-{}", batch.size() - 1);
    if (opt_.max_running > 0) array += fmt::format("%{}", opt_.max_running);
    std::vector<std::string> argv = {"sbatch", "--parsable", "--array=" + array,
                                     "--job-name=" + job_name_,
                                     "--output=" + dir_ + "/logs/%A_%a.log"};
    if (!opt_.partition.empty()) argv.push_back("--partition=" + opt_.partition);
    if (!opt_.time_limit.empty()) argv.push_back("--time=" + opt_.time_limit);
    if (!opt_.mem.empty()) argv.push_back("--mem=" + opt_.mem);
    if (opt_.cpus_per_task > 0)
      argv.push_back(fmt::format("--cpus-per-task={}", opt_.cpus_per_task));
    for (const auto& a : opt_.sbatch_args) argv.push_back(a);
    argv.push_back(script);
    const ProcessResult r = run_process(argv, dir_, dir_ + "/sbatch.log", opt_.command_timeout_s);
    static const std::regex kJobId(R"(^([0-9]+)(;.*)?$)");
    std::string job;
    std::istringstream in(r.log);
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (std::regex_match(line, m, kJobId)) job = m[1];
    }
    if (r.exit_code != 0 || job.empty()) {
      std::string command;
      for (const auto& a : argv) command += (command.empty() ? "" : " ") + a;
      throw std::runtime_error(fmt::format("sbatch failed (exit {}): {} (command: {})", r.exit_code,
                                           last_line(r.log), command));
    }
    json sub = {{"job", job}, {"manifest", manifest}, {"keys", json::array()}};
    for (size_t i = 0; i < batch.size(); ++i) {
      batch[i]->job = job;
      batch[i]->index = static_cast<int>(i);
      batch[i]->unseen_polls = 0;
      batch[i]->last_state = "SUBMITTED";
      ++batch[i]->submissions;
      sub["keys"].push_back(batch[i]->task->key);
    }
    state_["submissions"].push_back(sub);
    write_text_atomic(state_path_, state_.dump(1) + "\n");
    if (progress_) {
      fmt::print(stderr,
                 "slurm: submitted {} task(s) as array job {} ({}); cancel with: scancel {}\n",
                 batch.size(), job, job_name_, job);
    }
    return job;
  }

  std::string log_of(const Tracked& t) const {
    return fmt::format("{}/logs/{}_{}.log", dir_, t.job, t.index);
  }

 private:
  static std::string last_line(const std::string& log) {
    std::string last;
    std::istringstream in(log);
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) last = line;
    }
    return last.empty() ? std::string("(no output)") : last;
  }

  const SlurmOptions& opt_;
  bool progress_;
  std::string out_, dir_, job_name_, ltc_, state_path_;
  json state_;
};

}  // namespace

ExecutorRun SlurmExecutor::run(const std::vector<SweepTask>& tasks, const TaskRunner&,
                               ResultStore& store, const std::string& out_dir, bool progress) {
  SlurmOptions opt = opt_;
  if (opt.ltc_binary.empty()) {
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    opt.ltc_binary = ec ? std::string("ltc") : self.string();
  }
  for (const char* program : {"sbatch", "squeue"}) {
    if (!on_path(program)) {
      throw InputError(fmt::format(
          "--executor slurm: {} is not on PATH (run on a node with Slurm's client commands, "
          "e.g. Debian's slurm-client, and SLURM_CONF or /etc/slurm/slurm.conf set up)",
          program));
    }
  }
  SlurmSession session(opt, out_dir, progress);
  ExecutorRun run;

  std::vector<Tracked> tracked(tasks.size());
  std::map<std::string, Tracked*> by_key;
  for (size_t i = 0; i < tasks.size(); ++i) {
    tracked[i].task = &tasks[i];
    by_key[tasks[i].key] = &tracked[i];
  }
  // Resume: each task's latest submission by an earlier run of this command.
  for (const auto& sub : session.submissions()) {
    const auto& keys = sub.value("keys", json::array());
    for (size_t i = 0; i < keys.size(); ++i) {
      const auto it = by_key.find(keys[i].get<std::string>());
      if (it == by_key.end()) continue;
      it->second->job = sub.value("job", "");
      it->second->index = static_cast<int>(i);
    }
  }

  auto last_ok = std::chrono::steady_clock::now();
  auto poll_queue = [&]() -> std::map<std::string, std::string> {
    for (;;) {
      std::string error;
      if (auto q = session.queue(&error)) {
        last_ok = std::chrono::steady_clock::now();
        return *q;
      }
      if (seconds_since(last_ok) > opt.unreachable_s) {
        throw std::runtime_error(fmt::format(
            "slurm: {} for {:.0f} s; the arrays keep running: rerun the same ltc sweep command to "
            "follow them (it submits nothing that is queued or done)",
            error, opt.unreachable_s));
      }
      if (progress) fmt::print(stderr, "slurm: {} (retrying)\n", error);
      std::this_thread::sleep_for(std::chrono::duration<double>(opt.poll_s));
    }
  };

  // A record arrived (from a task of any submission): store it.
  auto take_records = [&] {
    for (const auto& key : collect_task_records(out_dir, store)) {
      const auto it = by_key.find(key);
      if (it == by_key.end() || it->second->done) continue;
      Tracked& t = *it->second;
      t.done = true;
      const json* rec = store.get(key);
      (rec && rec->value("status", "") == "ok" ? run.ok : run.failed)++;
      if (progress && rec) {
        fmt::print(stderr, "[{}/{}] {} {:.1f} s: {}\n", run.ok + run.failed, tasks.size(),
                   t.task->id, rec->value("seconds", 0.0), record_summary(*rec));
      }
    }
  };

  // Tasks queued or running from an earlier run are followed; the rest are submitted.
  {
    const auto q = poll_queue();
    take_records();
    std::vector<Tracked*> fresh;
    for (auto& t : tracked) {
      if (t.done) continue;
      const auto it = q.find(t.job + "_" + std::to_string(t.index));
      if (!t.job.empty() && it != q.end() && !is_terminal_state(it->second)) {
        t.last_state = it->second;
        if (progress) {
          fmt::print(stderr, "slurm: {} still {} as {}_{}: following it\n", t.task->id, it->second,
                     t.job, t.index);
        }
        continue;
      }
      t.job.clear();
      fresh.push_back(&t);
    }
    for (size_t i = 0; i < fresh.size(); i += opt.array_chunk) {
      const size_t end = std::min(fresh.size(), i + opt.array_chunk);
      session.submit(std::vector<Tracked*>(fresh.begin() + i, fresh.begin() + end));
    }
  }

  std::string last_line;
  for (;;) {
    const bool all_done =
        std::all_of(tracked.begin(), tracked.end(), [](const Tracked& t) { return t.done; });
    if (all_done) break;
    std::this_thread::sleep_for(std::chrono::duration<double>(opt.poll_s));
    // squeue first, then records: a task that has left the queue wrote its record before.
    const auto q = poll_queue();
    take_records();
    std::vector<Tracked*> again;
    int pending = 0, running = 0;
    for (auto& t : tracked) {
      if (t.done) continue;
      const auto it = q.find(t.job + "_" + std::to_string(t.index));
      const std::string state = it == q.end() ? std::string("GONE") : it->second;
      if (!is_terminal_state(state) && state != "GONE") {
        t.unseen_polls = 0;
        t.last_state = state;
        (state == "PENDING" ? pending : running)++;
        continue;
      }
      // Ended without a record: lost after two polls and lost_after_s, so that a record still
      // on its way through a shared filesystem is not taken for a lost task.
      if (state != "GONE") t.last_state = state;
      if (t.unseen_polls++ == 0) t.unseen_since = std::chrono::steady_clock::now();
      if (t.unseen_polls < 2 || seconds_since(t.unseen_since) < opt.lost_after_s) continue;
      const std::string why = fmt::format("array task {}_{} ended {} without a record (log {})",
                                          t.job, t.index, t.last_state, session.log_of(t));
      if (t.submissions < 1 + opt.max_retries) {
        if (progress) fmt::print(stderr, "slurm: {}: {}; submitting it again\n", t.task->id, why);
        ++run.resubmitted;
        again.push_back(&t);
      } else {
        json rec = {{"key", t.task->key},
                    {"id", t.task->id},
                    {"sweep", t.task->job.value("sweep", "")},
                    {"status", "error"},
                    {"error", fmt::format("slurm: {} ({} submission(s))", why, t.submissions)}};
        store.put(rec);
        t.done = true;
        ++run.failed;
        if (progress) fmt::print(stderr, "slurm: {}: {}; giving up\n", t.task->id, why);
      }
    }
    for (size_t i = 0; i < again.size(); i += opt.array_chunk) {
      const size_t end = std::min(again.size(), i + opt.array_chunk);
      session.submit(std::vector<Tracked*>(again.begin() + i, again.begin() + end));
    }
    if (progress) {
      const std::string line =
          fmt::format("slurm: {}/{} done ({} failed), {} running, {} pending", run.ok + run.failed,
                      tasks.size(), run.failed, running, pending);
      if (line != last_line) fmt::print(stderr, "{}\n", line);
      last_line = line;
    }
  }
  return run;
}

}  // namespace ltc::synth
