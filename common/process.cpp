#include "common/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace ltc {

double cpu_seconds_used() {
  double s = 0;
  for (const int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage u{};
    getrusage(who, &u);
    s += double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  }
  return s;
}

namespace {

// Process groups of running tools, so an interrupt (Ctrl-C, kill) of ltc also stops them: the
// tools run in their own groups and would not see the terminal's signal.
constexpr int kMaxChildren = 256;
std::atomic<pid_t> g_children[kMaxChildren];

extern "C" void kill_children_and_die(int sig) {
  for (auto& c : g_children) {
    const pid_t pid = c.load();
    if (pid > 0) ::kill(-pid, SIGKILL);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_signal_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction sa {};
      sa.sa_handler = kill_children_and_die;
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

int register_child(pid_t pid) {
  for (int i = 0; i < kMaxChildren; ++i) {
    pid_t expected = 0;
    if (g_children[i].compare_exchange_strong(expected, pid)) return i;
  }
  return -1;
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& workdir,
                          const std::string& log_path, double timeout_s) {
  if (argv.empty()) throw std::runtime_error("run_process: empty command");
  std::vector<char*> cargs;
  for (const auto& a : argv) cargs.push_back(const_cast<char*>(a.c_str()));
  cargs.push_back(nullptr);

  // Without a log the child writes to ltc's stderr: never to stdout, which `--json` owns.
  const int log_fd = log_path.empty()
                         ? ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 0)
                         : ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) throw std::runtime_error("cannot write log " + log_path + ": " + strerror(errno));
  // A pipe that closes on a successful exec tells the parent whether the program started.
  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) {
    ::close(log_fd);
    throw std::runtime_error("pipe failed");
  }
  install_signal_handlers();
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    throw std::runtime_error("fork failed");
  }
  if (pid == 0) {
    ::setpgid(0, 0);  // own process group, so a timeout kills the tool and its children
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // and ltc dying (even by SIGKILL) kills the tool
    ::close(status_pipe[0]);
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    if (::chdir(workdir.c_str()) != 0) {
      const int e = errno;
      (void)!::write(status_pipe[1], &e, sizeof e);
      _exit(127);
    }
    ::execvp(cargs[0], cargs.data());
    const int e = errno;
    (void)!::write(status_pipe[1], &e, sizeof e);
    _exit(127);
  }
  ::setpgid(pid, pid);
  const int slot = register_child(pid);
  ::close(log_fd);
  ::close(status_pipe[1]);
  int child_errno = 0;
  const ssize_t got = ::read(status_pipe[0], &child_errno, sizeof child_errno);
  ::close(status_pipe[0]);

  ProcessResult r;
  int status = 0;
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (timeout_s > 0 && elapsed > timeout_s && !r.timed_out) {
      r.timed_out = true;
      ::kill(-pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(elapsed < 1 ? 5 : 50));
  }
  if (slot >= 0) g_children[slot].store(0);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (got == static_cast<ssize_t>(sizeof child_errno)) {
    throw std::runtime_error("cannot run '" + argv[0] + "' in " + workdir + ": " +
                             strerror(child_errno));
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (log_path.empty()) return r;
  std::ifstream in(log_path);
  std::stringstream ss;
  ss << in.rdbuf();
  r.log = ss.str();
  return r;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string tool_version(const std::vector<std::string>& argv) {
  std::string cmd;
  for (const auto& a : argv) cmd += a + " ";
  cmd += "2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return "";
  char buf[512];
  std::string first;
  if (std::fgets(buf, sizeof buf, p)) first = buf;
  while (std::fgets(buf, sizeof buf, p)) {
  }
  const int rc = ::pclose(p);
  if (rc != 0) return "";
  while (!first.empty() && (first.back() == '\n' || first.back() == '\r')) first.pop_back();
  return first;
}

}  // namespace ltc
