#include "sim/step_pool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace ltc::sim {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// Pauses, then yields, before a worker sleeps: a quantum's batch comes every few microseconds
// while a kernel runs, and a sleeping thread takes tens of microseconds to wake.
constexpr int kSpins = 2000, kYields = 4000;

}  // namespace

int hardware_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? int(n) : 1;
}

StepPool::StepPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

StepPool::~StepPool() {
  quit_.store(true);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    epoch_.fetch_add(1);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void StepPool::drain() {
  for (size_t i; (i = next_.fetch_add(1, std::memory_order_relaxed)) < n_;) {
    try {
      (*fn_)(i);
    } catch (...) {
      errors_[i] = std::current_exception();
    }
  }
}

void StepPool::run(size_t n, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  n_ = n;
  fn_ = &fn;
  errors_.assign(n, nullptr);
  next_.store(0, std::memory_order_relaxed);
  if (!workers_.empty() && n > 1) {
    busy_.store(int(workers_.size()), std::memory_order_relaxed);
    epoch_.fetch_add(1);  // publishes the batch (seq_cst: see work())
    if (sleepers_.load() > 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      wake_.notify_all();
    }
    drain();
    for (int spins = 0; busy_.load(std::memory_order_acquire) > 0; ++spins) {
      if (spins < kSpins) {
        cpu_relax();
      } else {
        std::this_thread::yield();
      }
    }
  } else {
    drain();
  }
  for (auto& e : errors_) {
    if (e) std::rethrow_exception(e);
  }
}

void StepPool::work() {
  uint64_t seen = 0;
  for (;;) {
    uint64_t e;
    for (int spins = 0; (e = epoch_.load(std::memory_order_acquire)) == seen; ++spins) {
      if (spins < kSpins) {
        cpu_relax();
      } else if (spins < kSpins + kYields) {
        std::this_thread::yield();
      } else {
        // Sleeps. sleepers_ and epoch_ are sequentially consistent: either run() sees this
        // sleeper and notifies, or this thread sees the new epoch before it waits.
        std::unique_lock<std::mutex> lock(mutex_);
        sleepers_.fetch_add(1);
        wake_.wait(lock, [&] { return epoch_.load() != seen; });
        sleepers_.fetch_sub(1);
      }
    }
    seen = e;
    if (quit_.load()) return;
    drain();
    busy_.fetch_sub(1, std::memory_order_release);
  }
}

}  // namespace ltc::sim
