// The host threads that step the SMs of one quantum (sim/README.md, "Parallel stepping"): the
// caller and `threads - 1` workers. A batch of n items is split into one contiguous range per
// thread (item i on the same thread from batch to batch while n stays the same: an SM's state
// stays in that core's caches); each thread runs its own range, then, unless the batch ends
// within a few microseconds, takes what is left of the others' (a thread that is not running,
// the host busy elsewhere, holds nothing up: the others take its items). Claims on a range
// stay in its owner's cache line until another thread comes to take from it. Which thread runs
// an item never matters: an item touches only its own state. Workers spin briefly for the next
// batch, then yield, then sleep.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace ltc::sim {

class StepPool {
 public:
  explicit StepPool(int threads);
  ~StepPool();
  StepPool(const StepPool&) = delete;
  StepPool& operator=(const StepPool&) = delete;
  int threads() const { return int(workers_.size()) + 1; }
  // Calls fn(i) for every i < n, on the pool's threads; returns when every call returned. An
  // exception is rethrown here: the one of the least i that threw.
  void run(size_t n, const std::function<void(size_t)>& fn);
  // Calls fn(i) for every i < n on the caller's thread alone (a batch too small to share).
  static void run_here(size_t n, const std::function<void(size_t)>& fn) {
    for (size_t i = 0; i < n; ++i) fn(i);
  }

 private:
  // One thread's range of the batch: its epoch (bits 32..63), its end (16..31) and the next item
  // to claim (0..15), in one word on a host cache line of its own.
  struct alignas(64) Range {
    std::atomic<uint64_t> word{0};
  };
  void work(int self);
  // Runs the items of batch `epoch` this thread can claim (its own range first), counting them
  // in done_.
  void run_batch(int self, uint64_t epoch);
  size_t run_range(Range& r, uint64_t epoch);  // claims and runs r's items; returns how many
  bool claim(Range& r, uint64_t epoch, size_t& item);
  std::vector<std::thread> workers_;
  std::unique_ptr<Range[]> ranges_;             // one per thread (0: the caller)
  alignas(64) std::atomic<uint64_t> epoch_{0};  // the batch being run (workers wait for a new one)
  alignas(64) std::atomic<size_t> done_{0};     // items of the batch done
  std::atomic<int> sleepers_{0};
  std::atomic<bool> quit_{false};
  const std::function<void(size_t)>* fn_ = nullptr;
  std::atomic<size_t> n_{0};  // the batch's items
  std::mutex error_mutex_;
  std::exception_ptr error_;  // the batch's exception of the least item that threw
  size_t error_item_ = 0;
  std::mutex mutex_;
  std::condition_variable wake_;
};

// Host threads for `ltc sim --threads` by default: the hardware's (at least 1).
int hardware_threads();

}  // namespace ltc::sim
