#include "sim/step_pool.h"

#include <algorithm>
#include <chrono>

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

// How long a thread that ended its range waits for the batch to end before it takes items of
// the others' ranges: about an item of a quantum's batch.
constexpr std::chrono::nanoseconds kStealAfter{4000};

// Range::word: the batch's epoch (its low 32 bits), the range's end and its next item.
constexpr uint64_t pack(uint64_t epoch, uint64_t end, uint64_t next) {
  return (epoch & 0xffffffff) << 32 | end << 16 | next;
}
constexpr uint64_t epoch_of(uint64_t w) {
  return w >> 32;
}
constexpr uint64_t end_of(uint64_t w) {
  return w >> 16 & 0xffff;
}
constexpr uint64_t next_of(uint64_t w) {
  return w & 0xffff;
}

}  // namespace

int hardware_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? int(n) : 1;
}

StepPool::StepPool(int threads) : ranges_(std::make_unique<Range[]>(size_t(std::max(threads, 1)))) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { work(i); });
}

StepPool::~StepPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    quit_.store(true);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

bool StepPool::claim(Range& r, uint64_t epoch, size_t& item) {
  uint64_t w = r.word.load(std::memory_order_acquire);
  while (epoch_of(w) == (epoch & 0xffffffff) && next_of(w) < end_of(w)) {
    // Acquire: the batch's function (run() wrote it before it released the ranges).
    if (r.word.compare_exchange_weak(w, w + 1, std::memory_order_acq_rel,
                                     std::memory_order_acquire)) {
      item = size_t(next_of(w));
      return true;
    }
  }
  return false;
}

size_t StepPool::run_range(Range& r, uint64_t epoch) {
  size_t ran = 0, i = 0;
  while (claim(r, epoch, i)) {
    // The item is this thread's; the batch's function stays as it is until every claimed item
    // is done (run() waits for it).
    try {
      (*fn_)(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex_);
      if (!error_ || i < error_item_) {
        error_ = std::current_exception();
        error_item_ = i;
      }
    }
    ++ran;
  }
  return ran;
}

void StepPool::run_batch(int self, uint64_t epoch) {
  // The thread's own range is counted done before it looks at the others' (each a host cache
  // line another thread wrote): the batch's last range to end ends the batch at once. While
  // every thread runs, the ranges end about together: the thread waits a moment for the batch
  // to end (or the next to start) before it looks, so that it is not late for the next batch;
  // a range whose thread the host does not run is taken after that moment.
  const int threads = this->threads();
  if (const size_t ran = run_range(ranges_[size_t(self)], epoch)) {
    done_.fetch_add(ran, std::memory_order_acq_rel);
  }
  const auto until = std::chrono::steady_clock::now() + kStealAfter;
  while (done_.load(std::memory_order_acquire) < n_.load(std::memory_order_relaxed) &&
         epoch_.load(std::memory_order_relaxed) == epoch) {
    if (std::chrono::steady_clock::now() >= until) break;
    cpu_relax();
  }
  if (done_.load(std::memory_order_acquire) >= n_.load(std::memory_order_relaxed) ||
      epoch_.load(std::memory_order_relaxed) != epoch) {
    return;
  }
  for (int k = 1; k < threads; ++k) {
    if (const size_t ran = run_range(ranges_[size_t((self + k) % threads)], epoch)) {
      done_.fetch_add(ran, std::memory_order_acq_rel);
    }
  }
}

void StepPool::run(size_t n, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  if (workers_.empty() || n == 1) return run_here(n, fn);
  if (n > 0xffff) throw std::length_error("StepPool: more than 65535 items");
  fn_ = &fn;
  n_.store(n, std::memory_order_relaxed);
  error_ = nullptr;
  done_.store(0, std::memory_order_relaxed);
  const uint64_t epoch = epoch_.load(std::memory_order_relaxed) + 1;
  const size_t threads = size_t(this->threads());
  for (size_t t = 0; t < threads; ++t) {
    ranges_[t].word.store(pack(epoch, (t + 1) * n / threads, t * n / threads),
                          std::memory_order_release);
  }
  epoch_.store(epoch);  // seq_cst: see work()
  if (sleepers_.load() > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    wake_.notify_all();
  }
  // The caller runs its range and takes what the others leave: with the host busy elsewhere it
  // may run them all, and waits only for items a worker has claimed.
  run_batch(0, epoch);
  for (int spins = 0; done_.load(std::memory_order_acquire) < n; ++spins) {
    if (spins < kSpins) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
  if (error_) std::rethrow_exception(error_);
}

void StepPool::work(int self) {
  uint64_t seen = 0;
  for (int idle = 0;;) {
    const uint64_t epoch = epoch_.load(std::memory_order_acquire);
    if (epoch != seen) {
      seen = epoch;
      idle = 0;
      // Every item this thread ran is counted before it looks for the next batch: run() does
      // not start one before all are.
      run_batch(self, epoch);
      continue;
    }
    if (quit_.load(std::memory_order_relaxed)) return;
    if (++idle < kSpins) {
      cpu_relax();
    } else if (idle < kSpins + kYields) {
      std::this_thread::yield();
    } else {
      // Sleeps until a new batch. sleepers_ and epoch_ are sequentially consistent with run()'s
      // store and load: either run() sees this sleeper and notifies, or this thread sees the
      // new batch before it waits.
      std::unique_lock<std::mutex> lock(mutex_);
      sleepers_.fetch_add(1);
      wake_.wait(lock, [&] { return quit_.load() || epoch_.load() != seen; });
      sleepers_.fetch_sub(1);
      idle = 0;
    }
  }
}

}  // namespace ltc::sim
