// Whole-file reads, atomic writes and inter-process locks.
#pragma once

#include <cstddef>
#include <string>

namespace ltc {

// Reads a whole file; throws std::runtime_error naming the path when it cannot.
std::string read_text(const std::string& path);

// The last `max_chars` characters of a file (a tool's log for an error message); "" when the file
// cannot be read.
std::string read_tail(const std::string& path, size_t max_chars);

// Writes `text` to `path` atomically: a temporary file in the same folder (named after the process
// and thread, so concurrent writers do not collide), then a rename. Readers never see a
// half-written file. Creates the parent folders.
void write_text_atomic(const std::string& path, const std::string& text);

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
