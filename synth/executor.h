// Where a sweep's tasks run: an executor takes the tasks a sweep still needs and puts one record
// per task into the results store. `LocalExecutor` runs them on this machine, N at a time;
// `SlurmExecutor` submits them as Slurm job arrays whose tasks run `ltc sweep-task` on the
// cluster's nodes and write their records into the shared results folder (synth/README.md,
// "Sweeps on a Slurm cluster").
#pragma once

#include "synth/result_store.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace ltc::synth {

// One unit of work: a design point through the PPA flow or one `ltc sim` run. `job` is
// self-contained JSON (what a Slurm array task reads from its manifest); run_sweep_task in
// synth/sweep.h runs it.
struct SweepTask {
  std::string key;  // results-store key
  std::string id;   // shown in progress lines
  nlohmann::json job;
};

// Runs one task in this process and returns the record to store (status ok or error).
using TaskRunner = std::function<nlohmann::json(const SweepTask&)>;

struct ExecutorRun {
  int ok = 0, failed = 0;  // records stored with status ok / error
  int resubmitted = 0;     // Slurm: tasks submitted again after ending without a record
};

class SweepExecutor {
 public:
  virtual ~SweepExecutor() = default;
  virtual std::string name() const = 0;
  // Runs every task; each record goes into `store` as it arrives. `out_dir` is the results folder
  // (shared with the nodes for Slurm).
  virtual ExecutorRun run(const std::vector<SweepTask>& tasks, const TaskRunner& runner,
                          ResultStore& store, const std::string& out_dir, bool progress) = 0;
};

class LocalExecutor : public SweepExecutor {
 public:
  explicit LocalExecutor(int jobs) : jobs_(jobs) {}
  std::string name() const override { return "local"; }
  ExecutorRun run(const std::vector<SweepTask>& tasks, const TaskRunner& runner, ResultStore& store,
                  const std::string& out_dir, bool progress) override;

 private:
  int jobs_;
};

struct SlurmOptions {
  std::string partition;        // sbatch --partition (empty: the cluster's default)
  std::string time_limit;       // sbatch --time, e.g. "30:00"
  std::string mem;              // sbatch --mem, e.g. "4G"
  int cpus_per_task = 0;        // sbatch --cpus-per-task (0: not passed)
  std::string sbatch_template;  // a site's batch script with a `{command}` line (empty: built in)
  std::vector<std::string> sbatch_args;  // more sbatch options, passed as given
  int max_running = 0;  // array throttle: at most this many tasks at once (0: no limit)
  int max_retries = 2;  // submissions again of a task that ended without a record
  double poll_s = 10;   // seconds between squeue polls
  // A task ended without a record counts as lost (and is submitted again) only after this long:
  // a shared filesystem may show a node's new file to the submitter late (NFS attribute cache).
  double lost_after_s = 30;
  int array_chunk = 1000;          // tasks per array (Slurm's default MaxArraySize is 1001)
  std::string ltc_binary;          // what the tasks run (default: this ltc, /proc/self/exe)
  double unreachable_s = 300;      // give up when squeue/sbatch keep failing this long
  double command_timeout_s = 120;  // limit per sbatch/squeue call
};

// Follows every array with squeue (states kept for MinJobAge after a task ends, so sacct and its
// database are not needed), collects records from <out>/records/, resubmits tasks that ended
// without one, and keeps its submissions in <out>/slurm/state.json so a rerun follows the arrays
// still queued instead of submitting their tasks again.
class SlurmExecutor : public SweepExecutor {
 public:
  explicit SlurmExecutor(SlurmOptions options);
  std::string name() const override { return "slurm"; }
  ExecutorRun run(const std::vector<SweepTask>& tasks, const TaskRunner& runner, ResultStore& store,
                  const std::string& out_dir, bool progress) override;

 private:
  SlurmOptions opt_;
};

// Where a task writes its record: <out>/records/<hash of the key>.json, written atomically.
std::string task_record_path(const std::string& out_dir, const std::string& key);
// Moves the task records in <out>/records/ into the store (then deletes them): what Slurm tasks
// wrote. Returns the keys added.
std::vector<std::string> collect_task_records(const std::string& out_dir, ResultStore& store);

// A Slurm array task: reads task `index` of `manifest` (written by SlurmExecutor), runs it with
// `runner`, writes its record to task_record_path. Returns the record. Throws InputError for a
// manifest or index that does not fit.
nlohmann::json run_manifest_task(const std::string& manifest, int index, const TaskRunner& runner);

}  // namespace ltc::synth
