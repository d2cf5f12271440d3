// A single-node Slurm cluster on localhost for tests: munged, slurmctld and slurmd started from
// Debian's slurm-wlm and munge (scripts/setup) with a generated slurm.conf, munge key and socket
// in a fresh temp folder, on free ports, so it never touches a real installation. Children of
// the test process: each daemon dies with it (PR_SET_PDEATHSIG) even when ctest kills the test,
// and stop() cancels every job, waits (bounded) and ends what is left of it.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace ltc::test_support {

// A child process: argv[0] found on PATH, stdout and stderr to `log`.
class ChildProcess {
 public:
  ChildProcess() = default;
  ChildProcess(const std::vector<std::string>& argv, const std::string& log);
  ChildProcess(ChildProcess&& o) noexcept : pid_(o.pid_) { o.pid_ = -1; }
  ChildProcess& operator=(ChildProcess&& o) noexcept;
  ~ChildProcess();  // kills and reaps a child still running
  pid_t pid() const { return pid_; }
  bool running();
  // Waits up to `timeout_s`; the exit code, or -1 on a signal, -2 on timeout (child left running).
  int wait(double timeout_s);
  void kill(int sig);

 private:
  pid_t pid_ = -1;
  int status_ = 0;
  bool reaped_ = false;
};

// Runs argv to the end (killed after `timeout_s`); stdout + stderr in *output. Exit code, -1 on a
// signal, -2 on timeout.
int run_command(const std::vector<std::string>& argv, std::string* output, double timeout_s = 60);

// Path of `program` on PATH (or in /usr/sbin, /sbin); "" when absent.
std::string find_program(const std::string& program);

class LocalSlurm {
 public:
  // Why this machine cannot run one ("" when it can): missing programs, not root.
  static std::string unavailable_reason();

  LocalSlurm();   // creates the folder and config; starts nothing
  ~LocalSlurm();  // stop(), then removes the folder (unless LTC_KEEP_CLUSTER_DIR is set)
  // Starts the daemons and waits (bounded) until the node is idle; throws with the daemons'
  // logs on failure. Sets SLURM_CONF for this process, so sbatch/squeue (and ltc) use it.
  void start(double timeout_s = 60);
  // Cancels every job, waits up to `timeout_s` for the queue to drain, then ends the daemons
  // and any process still running with this cluster's SLURM_CONF.
  void stop(double timeout_s = 30);

  const std::string& dir() const { return dir_; }
  std::string conf() const { return dir_ + "/slurm.conf"; }
  std::string logs();  // the daemons' logs' last lines, for failure messages
  // squeue's "JOBID_INDEX STATE" lines of every job (all states).
  std::string queue();

 private:
  std::vector<pid_t> processes_of_this_cluster(const std::vector<pid_t>& except);

  std::string dir_;
  std::vector<ChildProcess> daemons_;
  bool started_ = false;
};

}  // namespace ltc::test_support
