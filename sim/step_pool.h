// The host threads that step the SMs of one quantum (sim/README.md, "Parallel stepping"): the
// caller and `threads - 1` workers claim items from a shared counter until none is left, and the
// caller goes on once every claimed item is done. Which thread runs an item never matters: an
// item touches only its own state. A worker that is not running (the host busy elsewhere)
// holds nothing up: the caller claims its items. Workers spin briefly for the next batch, then
// yield, then sleep.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
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

 private:
  void work();
  bool claim_and_run();  // runs one unclaimed item of the batch; false when none is left
  std::vector<std::thread> workers_;
  std::atomic<uint64_t> state_{0};  // the batch: epoch, item count, next item (step_pool.cpp)
  std::atomic<size_t> done_{0};     // items of the batch done
  std::atomic<int> sleepers_{0};
  std::atomic<bool> quit_{false};
  const std::function<void(size_t)>* fn_ = nullptr;
  std::vector<std::exception_ptr> errors_;
  std::mutex mutex_;
  std::condition_variable wake_;
};

// Host threads for `ltc sim --threads` by default: the hardware's (at least 1).
int hardware_threads();

}  // namespace ltc::sim
