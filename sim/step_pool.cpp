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

// A worker pauses, then yields, before it sleeps: a quantum's batch comes every few
// microseconds while a kernel runs, and a sleeping thread takes tens of microseconds to wake.
constexpr int kSpins = 2000, kYields = 4000;

// StepPool::state_: the batch's epoch (bits 32..63), its item count (16..31), the next item to
// claim (0..15).
constexpr uint64_t epoch_of(uint64_t s) {
  return s >> 32;
}
constexpr uint64_t count_of(uint64_t s) {
  return s >> 16 & 0xffff;
}
constexpr uint64_t next_of(uint64_t s) {
  return s & 0xffff;
}

}  // namespace

int hardware_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? int(n) : 1;
}

StepPool::StepPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

StepPool::~StepPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    quit_.store(true);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

bool StepPool::claim_and_run() {
  uint64_t s = state_.load(std::memory_order_acquire);
  while (next_of(s) < count_of(s)) {
    if (state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel)) {
      // The item is this thread's; the batch's function and errors stay as they are until
      // every claimed item is done (run() waits for it), so they are read safely here.
      const size_t i = size_t(next_of(s));
      try {
        (*fn_)(i);
      } catch (...) {
        errors_[i] = std::current_exception();
      }
      done_.fetch_add(1, std::memory_order_release);
      return true;
    }
  }
  return false;
}

void StepPool::run(size_t n, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  if (n > 0xffff) throw std::length_error("StepPool: more than 65535 items");
  fn_ = &fn;
  errors_.assign(n, nullptr);
  done_.store(0, std::memory_order_relaxed);
  const uint64_t epoch = (epoch_of(state_.load(std::memory_order_relaxed)) + 1) & 0xffffffff;
  state_.store(epoch << 32 | uint64_t(n) << 16);  // seq_cst: see work()
  if (!workers_.empty() && n > 1 && sleepers_.load() > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    wake_.notify_all();
  }
  // The caller claims items too: with the host busy elsewhere it may run them all, and waits
  // only for items a worker has claimed.
  while (claim_and_run()) {
  }
  for (int spins = 0; done_.load(std::memory_order_acquire) < n; ++spins) {
    if (spins < kSpins) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
  for (auto& e : errors_) {
    if (e) std::rethrow_exception(e);
  }
}

void StepPool::work() {
  for (int idle = 0;;) {
    if (claim_and_run()) {
      idle = 0;
      continue;
    }
    if (quit_.load(std::memory_order_relaxed)) return;
    if (++idle < kSpins) {
      cpu_relax();
    } else if (idle < kSpins + kYields) {
      std::this_thread::yield();
    } else {
      // Sleeps until a batch has items to claim. sleepers_ and state_ are sequentially
      // consistent with run()'s store and load: either run() sees this sleeper and notifies, or
      // this thread sees the new batch before it waits.
      std::unique_lock<std::mutex> lock(mutex_);
      sleepers_.fetch_add(1);
      wake_.wait(lock, [&] {
        const uint64_t s = state_.load();
        return quit_.load() || next_of(s) < count_of(s);
      });
      sleepers_.fetch_sub(1);
      idle = 0;
    }
  }
}

}  // namespace ltc::sim
