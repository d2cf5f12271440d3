#include "tests/cluster/local_slurm.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace ltc::test_support {

namespace fs = std::filesystem;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string tail(const std::string& text, size_t lines) {
  size_t pos = text.size();
  for (size_t n = 0; n <= lines && pos > 0; ++n) {
    const size_t p = text.rfind('\n', pos - 1);
    if (p == std::string::npos) return text;
    pos = p;
  }
  return text.substr(pos + 1);
}

// A TCP port nobody listens on now (the kernel's pick for port 0).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("local slurm: no free TCP port on 127.0.0.1");
  }
  const int port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

std::string short_hostname() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  std::string h = buf;
  return h.substr(0, h.find('.'));
}

// Processes started for a cluster (slurmstepd, a task's ltc and its tools, submitters) but not
// in `except` nor this process: found by the cluster's SLURM_CONF in their environment, which
// only processes descending from this test carry.
std::vector<pid_t> processes_of_cluster(const std::string& conf, const std::vector<pid_t>& except) {
  const std::string mark = "SLURM_CONF=" + conf + '\0';
  std::vector<pid_t> pids;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    if (pid == ::getpid() || std::find(except.begin(), except.end(), pid) != except.end()) {
      continue;
    }
    // /proc/PID/stat: "pid (comm) state ppid ...": zombies are gone already; a daemon's own
    // helpers (slurmctld's slurmscriptd) go with it.
    const std::string stat = read_file(e.path().string() + "/stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos || stat.size() < close + 4) continue;
    std::istringstream fields(stat.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    fields >> state >> ppid;
    if (state == 'Z' || std::find(except.begin(), except.end(), ppid) != except.end()) continue;
    if (read_file(e.path().string() + "/environ").find(mark) != std::string::npos) {
      pids.push_back(pid);
    }
  }
  return pids;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& log) {
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed: " + std::string(std::strerror(errno)));
  if (pid_ == 0) {
    // Dies with the test process, however it ends.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
    }
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, 0);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    std::fprintf(stderr, "cannot run %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
}

ChildProcess& ChildProcess::operator=(ChildProcess&& o) noexcept {
  if (this != &o) {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    pid_ = o.pid_;
    status_ = o.status_;
    reaped_ = o.reaped_;
    o.pid_ = -1;
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

bool ChildProcess::running() {
  if (pid_ <= 0 || reaped_) return false;
  if (::waitpid(pid_, &status_, WNOHANG) == pid_) reaped_ = true;
  return !reaped_;
}

int ChildProcess::wait(double timeout_s) {
  const auto t0 = std::chrono::steady_clock::now();
  while (running()) {
    if (seconds_since(t0) > timeout_s) return -2;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (pid_ <= 0) return -1;
  return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
}

void ChildProcess::kill(int sig) {
  if (running()) ::kill(pid_, sig);
}

int run_command(const std::vector<std::string>& argv, std::string* output, double timeout_s) {
  static int calls = 0;
  const std::string log =
      (fs::temp_directory_path() /
       ("ltc_cluster_cmd_" + std::to_string(::getpid()) + "_" + std::to_string(calls++) + ".log"))
          .string();
  int code;
  {
    ChildProcess c(argv, log);
    code = c.wait(timeout_s);
    if (code == -2) c.kill(SIGKILL);
  }
  if (output) *output = read_file(log);
  std::error_code ec;
  fs::remove(log, ec);
  return code;
}

std::string find_program(const std::string& program) {
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  path += ":/usr/sbin:/sbin";
  std::istringstream dirs(path);
  for (std::string d; std::getline(dirs, d, ':');) {
    if (d.empty()) continue;
    const fs::path p = fs::path(d) / program;
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return "";
}

// ---------------------------------------------------------------------------------------------

std::string LocalSlurm::unavailable_reason() {
  std::string missing;
  for (const char* p : {"munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel"}) {
    if (find_program(p).empty()) missing += std::string(missing.empty() ? "" : ", ") + p;
  }
  if (!missing.empty()) {
    return "not installed: " + missing + " (scripts/setup installs Debian's slurm-wlm and munge)";
  }
  if (::geteuid() != 0) {
    return "needs root: slurmd starts job steps as the submitting user (CI runs as root)";
  }
  return "";
}

LocalSlurm::LocalSlurm() {
  std::string tmpl = (fs::temp_directory_path() / "ltc-slurm-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("local slurm: mkdtemp failed");
  dir_ = tmpl;
  ::chmod(dir_.c_str(), 0755);  // munged wants its socket's folder searchable
  for (const char* d : {"state", "spool", "munge"}) fs::create_directories(dir_ + "/" + d);
  ::chmod((dir_ + "/munge").c_str(), 0755);

  // A fresh munge key: 1 KiB of randomness, readable by its owner only.
  {
    std::random_device rd;
    std::string key(1024, '\0');
    for (auto& c : key) c = static_cast<char>(rd() & 0xff);
    const std::string path = dir_ + "/munge/munge.key";
    std::ofstream(path, std::ios::binary) << key;
    ::chmod(path.c_str(), 0400);
  }
  const std::string host = short_hostname();
  const int ctld_port = free_port();
  int slurmd_port = free_port();
  while (slurmd_port == ctld_port) slurmd_port = free_port();
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  std::ofstream out(conf());
  out << "# Generated by tests/cluster/local_slurm.cpp: a single-node cluster for one test run.\n"
      << "ClusterName=ltctest\n"
      << "SlurmctldHost=" << host << "(127.0.0.1)\n"  // no name lookup needed
      << "SlurmctldPort=" << ctld_port << "\n"
      << "SlurmdPort=" << slurmd_port << "\n"
      << "AuthType=auth/munge\nCredType=cred/munge\n"
      << "AuthInfo=socket=" << dir_ << "/munge/munge.socket\n"
      << "SlurmUser=root\nSlurmdUser=root\n"
      << "StateSaveLocation=" << dir_ << "/state\n"
      << "SlurmdSpoolDir=" << dir_ << "/spool\n"
      << "SlurmctldPidFile=" << dir_ << "/slurmctld.pid\n"
      << "SlurmdPidFile=" << dir_ << "/slurmd.pid\n"
      << "SlurmctldLogFile=" << dir_ << "/slurmctld.log\n"
      << "SlurmdLogFile=" << dir_
      << "/slurmd.log\n"
      // No cgroups in containers; no accounting database (the executor needs only squeue).
      << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
      << "JobAcctGatherType=jobacct_gather/none\n"
      << "AccountingStorageType=accounting_storage/none\n"
      << "MpiDefault=none\nReturnToService=2\n"
      << "SchedulerType=sched/builtin\n"
      << "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n"
      // Ended array tasks stay visible to squeue --states=all this long.
      << "MinJobAge=600\n"
      << "SlurmctldTimeout=30\nSlurmdTimeout=30\n"
      << "NodeName=" << host << " NodeAddr=127.0.0.1 CPUs=" << cpus << " State=UNKNOWN\n"
      << "PartitionName=ltctest Nodes=" << host << " Default=YES MaxTime=60 State=UP\n";
}

LocalSlurm::~LocalSlurm() {
  try {
    stop();
  } catch (...) {
  }
  // A failing test has printed the daemons' logs already (tests/cluster/slurm_test.cpp);
  // LTC_KEEP_CLUSTER_DIR=1 keeps the folder for a closer look.
  if (!std::getenv("LTC_KEEP_CLUSTER_DIR")) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

std::string LocalSlurm::logs() {
  std::string out;
  for (const char* f :
       {"munged.out", "slurmctld.log", "slurmctld.out", "slurmd.log", "slurmd.out"}) {
    const std::string text = read_file(dir_ + "/" + f);
    if (!text.empty()) out += std::string("--- ") + f + " (last lines)\n" + tail(text, 12) + "\n";
  }
  return out;
}

std::string LocalSlurm::queue() {
  std::string out;
  run_command({"squeue", "--noheader", "--array", "--states=all", "--format=%i %T"}, &out, 30);
  return out;
}

void LocalSlurm::start(double timeout_s) {
  ::setenv("SLURM_CONF", conf().c_str(), 1);
  const std::string m = dir_ + "/munge";
  daemons_.emplace_back(
      std::vector<std::string>{find_program("munged"), "--foreground", "--force",
                               "--socket=" + m + "/munge.socket", "--key-file=" + m + "/munge.key",
                               "--pid-file=" + m + "/munged.pid", "--log-file=" + m + "/munged.log",
                               "--seed-file=" + m + "/munged.seed"},
      dir_ + "/munged.out");
  started_ = true;
  const auto t0 = std::chrono::steady_clock::now();
  while (!fs::exists(m + "/munge.socket")) {
    if (!daemons_.back().running() || seconds_since(t0) > 10) {
      throw std::runtime_error("local slurm: munged did not start\n" + logs());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  daemons_.emplace_back(
      std::vector<std::string>{find_program("slurmctld"), "-D", "-i", "-f", conf()},
      dir_ + "/slurmctld.out");
  daemons_.emplace_back(std::vector<std::string>{find_program("slurmd"), "-D", "-f", conf()},
                        dir_ + "/slurmd.out");
  for (;;) {
    std::string out;
    run_command({"sinfo", "--noheader", "--format=%t"}, &out, 10);
    if (out.rfind("idle", 0) == 0) return;
    for (auto& d : daemons_) {
      if (!d.running()) throw std::runtime_error("local slurm: a daemon exited\n" + logs());
    }
    if (seconds_since(t0) > timeout_s) {
      throw std::runtime_error("local slurm: node not idle after " +
                               std::to_string(static_cast<int>(timeout_s)) + " s (sinfo: " + out +
                               ")\n" + logs());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

std::vector<pid_t> LocalSlurm::processes_of_this_cluster(const std::vector<pid_t>& except) {
  return processes_of_cluster(conf(), except);
}

void LocalSlurm::stop(double timeout_s) {
  if (!started_) return;
  started_ = false;
  if (daemons_.size() == 3 && daemons_[1].running()) {
    run_command({"scancel", "--user=root"}, nullptr, 15);
    const auto t0 = std::chrono::steady_clock::now();
    for (;;) {
      std::string out;
      run_command({"squeue", "--noheader", "--format=%i"}, &out, 10);
      if (out.find_first_not_of(" \n") == std::string::npos || seconds_since(t0) > timeout_s) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  }
  // Job steps (slurmstepd and what it ran) finish their clean-up before slurmd goes.
  std::vector<pid_t> daemon_pids;
  for (auto& d : daemons_) daemon_pids.push_back(d.pid());
  const auto t1 = std::chrono::steady_clock::now();
  while (!processes_of_this_cluster(daemon_pids).empty() && seconds_since(t1) < 10) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // slurmd first, then the controller, then munged.
  for (auto it = daemons_.rbegin(); it != daemons_.rend(); ++it) {
    it->kill(SIGTERM);
    if (it->wait(10) == -2) {
      it->kill(SIGKILL);
      it->wait(5);
    }
  }
  daemons_.clear();
  for (const pid_t pid : processes_of_this_cluster({})) ::kill(pid, SIGKILL);
  ::unsetenv("SLURM_CONF");
}

}  // namespace ltc::test_support
