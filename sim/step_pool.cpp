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

StepPool::StepPool(int threads)
    : ranges_(std::make_unique<Range[]>(size_t(std::max(threads, 1)))),
      done_(std::make_unique<Done[]>(size_t(std::max(threads, 1)))) {
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

bool StepPool::claim(std::atomic<uint64_t>& word, uint64_t epoch, size_t& item) {
  uint64_t w = word.load(std::memory_order_acquire);
  while (epoch_of(w) == (epoch & 0xffffffff) && next_of(w) < end_of(w)) {
    // Acquire: the batch's functions (run() wrote them before it released the ranges).
    if (word.compare_exchange_weak(w, w + 1, std::memory_order_acq_rel,
                                   std::memory_order_acquire)) {
      item = size_t(next_of(w));
      return true;
    }
  }
  return false;
}

size_t StepPool::run_range(Range& r, size_t p, uint64_t epoch, double& spent) {
  size_t ran = 0, i = 0;
  while (claim(r.word[p], epoch, i)) {
    // The item is this thread's; the batch's functions stay as they are until every claimed
    // item is done (run() waits for it). After an item of an earlier phase threw, the items are
    // only counted.
    if (failed_.load(std::memory_order_relaxed) >= p) {
      const Stopwatch clock(timing_);
      try {
        (*fn_[p])(i);
        spent += clock.seconds();
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex_);
        if (!error_ || p < error_phase_ || (p == error_phase_ && i < error_item_)) {
          error_ = std::current_exception();
          error_phase_ = p;
          error_item_ = i;
        }
        failed_.store(error_phase_, std::memory_order_relaxed);
      }
    }
    ++ran;
  }
  return ran;
}

void StepPool::run_batch(int self, uint64_t epoch) {
  // In each phase the thread's own range is counted done before it looks at the others' (each
  // a host cache line another thread wrote): the phase's last range to end ends the phase at
  // once. While every thread runs, the ranges end about together: the thread waits a moment for
  // the phase to end before it looks, so that it is not late for the next; a range whose thread
  // the host does not run is taken after that moment. Then it waits for the phase to end: the
  // next phase's items read what this one's made. (Only the caller waits for the last phase.)
  const int threads = this->threads();
  const size_t phases = nphases_.load(std::memory_order_relaxed);
  for (size_t p = 0; p < phases; ++p) {
    double spent = 0;
    if (const size_t ran = run_range(ranges_[size_t(self)], p, epoch, spent)) {
      count(self, ran, spent);
    }
    const auto until = std::chrono::steady_clock::now() + kStealAfter;
    while (phase_open(p, epoch)) {
      if (std::chrono::steady_clock::now() >= until) break;
      cpu_relax();
    }
    if (phase_open(p, epoch)) {
      for (int k = 1; k < threads; ++k) {
        spent = 0;
        if (const size_t ran = run_range(ranges_[size_t((self + k) % threads)], p, epoch, spent)) {
          count(self, ran, spent);
        }
      }
    }
    if (p + 1 == phases && self != 0) return;
    for (int spins = 0; phase_open(p, epoch); ++spins) {
      if (spins < kSpins) {
        cpu_relax();
      } else {
        std::this_thread::yield();
      }
    }
    if (epoch_.load(std::memory_order_relaxed) != epoch) return;  // came late: a newer batch
  }
}

void StepPool::Chain::reset(const Phase* steps, size_t count) {
  if (count > kMaxPhases) throw std::length_error("StepPool::Chain: more than 8 steps");
  count_ = count;
  for (size_t j = 0; j < count; ++j) {
    at_[j + 1] = at_[j] + steps[j].n;
    fn_[j] = steps[j].fn;
  }
  if (items() > capacity_) {
    capacity_ = items();
    once_ = std::make_unique<Once[]>(capacity_);
  }
  for (size_t c = 0; c < items(); ++c) once_[c].reset();
}

void StepPool::run(size_t n, const std::function<void(size_t)>& fn) {
  const Phase phase{n, &fn};
  run(&phase, 1);
}

void StepPool::run(const Phase* phases, size_t count) {
  if (count > kMaxPhases) throw std::length_error("StepPool: more than 8 phases");
  size_t items = 0, largest = 0;
  for (size_t p = 0; p < count; ++p) {
    items += phases[p].n;
    largest = std::max(largest, phases[p].n);
  }
  if (items == 0) return;
  if (workers_.empty() || items == 1) return run_here(phases, count);
  if (largest > 0xffff) throw std::length_error("StepPool: more than 65535 items");
  error_ = nullptr;
  failed_.store(kMaxPhases, std::memory_order_relaxed);
  const uint64_t epoch = epoch_.load(std::memory_order_relaxed) + 1;
  const size_t threads = size_t(this->threads());
  for (size_t p = 0; p < count; ++p) {
    const size_t n = phases[p].n;
    fn_[p] = phases[p].fn;
    counted_ += n;
    ends_[p].store(counted_, std::memory_order_relaxed);
    for (size_t t = 0; t < threads; ++t) {
      ranges_[t].word[p].store(pack(epoch, (t + 1) * n / threads, t * n / threads),
                               std::memory_order_release);
    }
  }
  nphases_.store(count, std::memory_order_relaxed);
  epoch_.store(epoch);  // seq_cst: see work()
  if (sleepers_.load() > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    wake_.notify_all();
  }
  // The caller runs its ranges and takes what the others leave: with the host busy elsewhere it
  // may run them all, and waits only for items a worker has claimed. It returns once the last
  // phase ended.
  run_batch(0, epoch);
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
