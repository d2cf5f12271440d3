#include "common/file_io.h"

#include "common/error.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

namespace ltc {

namespace fs = std::filesystem;

namespace {

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

std::string read_input_file(const std::string& path, uint64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of blocking.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    throw InputError(path + ": cannot open (" + strerror(err) + ")");
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw InputError(path + ": cannot stat (" + strerror(errno) + ")");
  if (!S_ISREG(st.st_mode)) {
    throw InputError(path + ": is " + file_kind(st.st_mode) +
                     ", not a regular file (give the path of a file)");
  }
  auto too_large = [&](uint64_t bytes) {
    return InputError(path + ": " + std::to_string(bytes) + " bytes or more, over the limit of " +
                      std::to_string(max_bytes) + " bytes for an input file (wrong file?)");
  };
  if (uint64_t(st.st_size) > max_bytes) throw too_large(uint64_t(st.st_size));
  // Read at most max_bytes + 1: a file that grows while it is read is still bounded.
  std::string data;
  data.resize(size_t(st.st_size));
  size_t got = 0;
  for (;;) {
    if (got == data.size()) {
      if (data.size() > max_bytes) throw too_large(data.size());
      data.resize(std::min<uint64_t>(max_bytes + 1, data.size() + 65536));
    }
    const ssize_t n = ::read(fd, data.data() + got, data.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw InputError(path + ": read failed (" + strerror(errno) + ")");
    }
    if (n == 0) break;
    got += size_t(n);
  }
  data.resize(got);
  if (got > max_bytes) throw too_large(got);
  return data;
}

std::string read_text(const std::string& path) {
  try {
    return read_input_file(path);
  } catch (const InputError& e) {
    throw std::runtime_error(std::string("cannot read ") + e.what());
  }
}

void check_file_name(const std::string& name, const std::string& what) {
  bool ok = !name.empty() && name.size() <= 128 && name[0] != '.';
  for (char c : name) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '-' || c == '.');
  }
  if (!ok) {
    throw InputError(what + ": '" + name +
                     "' is not a plain file name (valid: 1..128 letters, digits, _ - ., not "
                     "starting with '.'; it names files written inside the output directory)");
  }
}

void check_not_an_input(const std::string& output, const std::string& flag,
                        const std::vector<std::string>& inputs) {
  std::error_code ec;
  if (!fs::exists(output, ec)) return;
  for (const std::string& in : inputs) {
    if (in.empty()) continue;
    if (fs::equivalent(output, in, ec)) {
      throw InputError(flag + ": '" + output + "' is the input file '" + in +
                       "'; writing it would destroy the input (give another output path)");
    }
  }
}

std::string read_tail(const std::string& path, size_t max_chars) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string s = ss.str();
  return s.size() > max_chars ? s.substr(s.size() - max_chars) : s;
}

namespace {

// A temporary beside `path`, named after the process and thread so concurrent writers differ.
std::string temporary_beside(const std::string& path) {
  return path + ".tmp." + std::to_string(::getpid()) + "." +
         std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
}

void rename_over(const std::string& tmp, const std::string& path) {
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw std::runtime_error("cannot rename " + tmp + " to " + path + ": " + ec.message());
  }
}

}  // namespace

void write_text_atomic(const std::string& path, const std::string& text) {
  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path());
  const std::string tmp = temporary_beside(path);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp);
    out << text;
    out.flush();
    if (!out) throw std::runtime_error("write failed: " + tmp);
  }
  rename_over(tmp, path);
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), tmp_(temporary_beside(path_)) {}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  std::error_code ec;
  fs::remove(tmp_, ec);
}

void AtomicFile::commit() {
  rename_over(tmp_, path_);
  committed_ = true;
}

void FileLock::open_file(const std::string& path) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw std::runtime_error("cannot open lock file " + path + ": " + strerror(errno));
}

void FileLock::write_holder() {
  char host[128] = {};
  ::gethostname(host, sizeof host - 1);
  const std::string who = "pid " + std::to_string(::getpid()) + " on " + host;
  (void)!::ftruncate(fd_, 0);
  (void)!::pwrite(fd_, who.data(), who.size(), 0);
}

FileLock::FileLock(const std::string& path) {
  open_file(path);
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    ::close(fd_);
    fd_ = -1;
    throw std::runtime_error("cannot lock " + path);
  }
  write_holder();
}

FileLock::FileLock(const std::string& path, const std::string& what) {
  open_file(path);
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    char holder[256] = {};
    (void)!::pread(fd_, holder, sizeof holder - 1, 0);
    ::close(fd_);
    fd_ = -1;
    throw InputError(what + ": another ltc process is using it (" +
                     (holder[0] ? std::string(holder) : std::string("holder unknown")) +
                     "); wait for it or stop it, then rerun");
  }
  write_holder();
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

}  // namespace ltc
