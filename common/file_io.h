// Whole-file reads, atomic writes and inter-process locks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ltc {

// The most bytes a file the user names is read up to (traces, JSON configs, specs): a whole LLM
// step's trace is a few MB, so a larger file is a wrong path (a disk image, /dev/zero), not input.
inline constexpr uint64_t kMaxInputFileBytes = uint64_t(1) << 30;

// Reads a whole input file the user named: a regular file (a FIFO, device, socket or directory
// is refused, naming what it is, before anything is read: /dev/zero would never end, a FIFO
// would block) of at most `max_bytes` (the limit is named). Throws InputError "<path>: ...".
std::string read_input_file(const std::string& path, uint64_t max_bytes = kMaxInputFileBytes);

// Reads a whole file ltc or its tools wrote, with read_input_file's checks; throws
// std::runtime_error naming the path when it cannot (a failed run, not bad input).
std::string read_text(const std::string& path);

// The last `max_chars` characters of a file (a tool's log for an error message); "" when the file
// cannot be read.
std::string read_tail(const std::string& path, size_t max_chars);

// Refuses (InputError naming `flag`) an output path that is the same file as one of `inputs`
// (a hard link or another spelling of it included): writing it would destroy the input.
void check_not_an_input(const std::string& output, const std::string& flag,
                        const std::vector<std::string>& inputs);

// Refuses (InputError "<what>: ...") a name that would not stay a single file inside the output
// directory it is joined to: valid are 1..128 letters, digits, '_', '-' and '.', not starting with
// '.' (so no "..", no '/', no hidden file).
void check_file_name(const std::string& name, const std::string& what);

// Writes `text` to `path` atomically: a temporary file in the same folder (named after the process
// and thread, so concurrent writers do not collide), then a rename. Readers never see a
// half-written file. Creates the parent folders.
void write_text_atomic(const std::string& path, const std::string& text);

// A file that another writer fills (a verilated model's VCD, a tool's output): it writes
// temporary(), a name beside `path` made as write_text_atomic's; commit() renames it over `path`.
// Destroyed without commit() (the run failed), the temporary is removed and `path` untouched.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  const std::string& temporary() const { return tmp_; }
  void commit();  // throws std::runtime_error naming both paths when the rename fails

 private:
  std::string path_, tmp_;
  bool committed_ = false;
};

// An exclusive lock on `path` (flock; the file is created if absent) while the object lives. The
// holder's pid and host are written into the file so a waiting or failing process can name it.
class FileLock {
 public:
  // Waits until no other process holds the lock (a cache entry being built by another process).
  explicit FileLock(const std::string& path);
  // Fails at once when another process holds the lock: throws InputError naming `what` and the
  // holder (two ltc processes must not rewrite one results store).
  FileLock(const std::string& path, const std::string& what);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  void open_file(const std::string& path);
  void write_holder();
  int fd_ = -1;
};

}  // namespace ltc
