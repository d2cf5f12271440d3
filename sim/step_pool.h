// The host threads that step the SMs of one quantum (sim/README.md, "Parallel stepping"): the
// caller and `threads - 1` workers. A batch is a sequence of phases, each of n items; phase k's
// items start once every item of phase k - 1 is done (each thread waits for that and goes on,
// with no return to the caller in between). A phase's items are split into one contiguous range
// per thread (item i on the same thread from batch to batch while n stays the same: an SM's
// state stays in that core's caches); each thread runs its own range, then, unless the phase
// ends within a few microseconds, takes what is left of the others' (a thread that is not
// running, the host busy elsewhere, holds nothing up: the others take its items). Claims on a
// range stay in its owner's cache line until another thread comes to take from it. Which thread
// runs an item never matters: an item touches only its own state and what earlier phases made.
// Workers spin briefly for the next batch, then yield, then sleep.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
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
  // One phase of a batch: fn(i) for every i < n.
  struct Phase {
    size_t n = 0;
    const std::function<void(size_t)>* fn = nullptr;
  };
  static constexpr size_t kMaxPhases = 8;
  // Work that some items of a phase need done before they go on (an L2 item of the merge, which
  // the L2's next step and the SMs that sent lines need): the first item to need it runs it, the
  // others wait until it is done. The work waits only for work of this kind that is taken before
  // it is (what it needs), or for nothing, so such a phase always ends. reset() before the batch
  // (run() publishes it).
  class Once {
   public:
    void reset() { state_.store(kIdle, std::memory_order_relaxed); }
    bool idle() const { return state_.load(std::memory_order_relaxed) == kIdle; }
    bool done() const { return state_.load(std::memory_order_acquire) == kDone; }
    // Runs fn unless an item runs or ran it; returns whether this call ran it.
    template <class Fn>
    bool try_run(const Fn& fn) {
      int idle = kIdle;
      if (!state_.compare_exchange_strong(idle, kRunning, std::memory_order_acquire)) return false;
      try {
        fn();
      } catch (...) {
        state_.store(kDone, std::memory_order_release);
        throw;
      }
      state_.store(kDone, std::memory_order_release);
      return true;
    }
    // Returns once the work is done (an item took it, or takes it).
    void wait() const {
      for (int spins = 0; state_.load(std::memory_order_acquire) != kDone; ++spins) {
        if (spins < 2000) {
          relax();
        } else {
          std::this_thread::yield();
        }
      }
    }

   private:
    enum : int { kIdle, kRunning, kDone };
    std::atomic<int> state_{kIdle};
  };
  // The host's wall time since construction, read only when on (SimOptions::host_profile):
  // off, it reads no clock and says 0.
  class Stopwatch {
   public:
    explicit Stopwatch(bool on)
        : on_(on),
          t0_(on ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{}) {}
    double seconds() const {
      return on_ ? std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count()
                 : 0.0;
    }

   private:
    bool on_;
    std::chrono::steady_clock::time_point t0_;
  };
  // Adds the wall time from its construction to its end to `*sum`, a total several threads add
  // to (SimOptions::host_profile); with a null `sum`, nothing (and no clock read).
  class AddTime {
   public:
    explicit AddTime(std::atomic<double>* sum) : sum_(sum), clock_(sum != nullptr) {}
    AddTime(const AddTime&) = delete;
    AddTime& operator=(const AddTime&) = delete;
    ~AddTime() {
      if (!sum_) return;
      const double s = clock_.seconds();
      double cur = sum_->load(std::memory_order_relaxed);
      while (!sum_->compare_exchange_weak(cur, cur + s, std::memory_order_relaxed)) {
      }
    }

   private:
    std::atomic<double>* sum_;
    Stopwatch clock_;
  };
  // Steps of work, one after another, that some items of a phase need (in the merge: the L2's
  // slice groups, then with clusters the multicast settle): item i of step j needs every item of
  // step j - 1 done, and an item of the phase may need a whole step. Each item runs once (a Once
  // each), by whichever thread takes it first: the one whose range holds it (take) or one that
  // needs its step (finish). Nothing in it waits for an item no thread took, so the phase always
  // ends.
  class Chain {
   public:
    // The steps of the next batch (at most kMaxPhases, their functions kept until it ran).
    void reset(const Phase* steps, size_t count);
    size_t items() const { return at_[count_]; }
    // Item c of all the steps' items (step 0's first): which step holds it.
    std::pair<size_t, size_t> locate(size_t c) const {
      size_t j = 0;
      while (j + 1 < count_ && at_[j + 1] <= c) ++j;
      return {j, c - at_[j]};
    }
    size_t first_of(size_t j) const { return at_[j]; }
    // Item i of step j, unless a thread took it: runs it once step j - 1 is finished.
    void take(size_t j, size_t i) {
      Once& o = once_[at_[j] + i];
      if (!o.idle()) return;
      if (j > 0) finish(j - 1, i);
      o.try_run([&] { (*fn_[j])(i); });
    }
    // Every item of step j done: those no thread took run here, from item `from` (mod the
    // step's items: threads that need the step together start apart and share its items), then
    // those others took are waited for.
    void finish(size_t j, size_t from) {
      const size_t n = at_[j + 1] - at_[j];
      for (size_t r = 0; r < n; ++r) take(j, (from + r) % n);
      for (size_t i = at_[j]; i < at_[j + 1]; ++i) {
        const AddTime timed(waited_ && !once_[i].done() ? waited_ : nullptr);
        once_[i].wait();
      }
    }
    // SimOptions::host_profile: the seconds items wait in finish() for items other threads run
    // are added to `waited` (null: not counted).
    void set_timing(std::atomic<double>* waited) { waited_ = waited; }

   private:
    size_t count_ = 0;
    size_t at_[kMaxPhases + 1] = {};  // step j's first item among all
    const std::function<void(size_t)>* fn_[kMaxPhases] = {};
    std::unique_ptr<Once[]> once_;
    size_t capacity_ = 0;
    std::atomic<double>* waited_ = nullptr;
  };

  // A pause in a loop that waits for another thread.
  static void relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  // Runs the phases (at most kMaxPhases) in order as one batch: every call of phase k returns
  // before any of phase k + 1 starts. An exception is rethrown here: the one of the first phase
  // that threw, of its least item that threw; the later phases' items are then not called.
  void run(const Phase* phases, size_t count);
  // With timing on, each thread adds up the wall time of the items it runs (busy(t), read
  // between batches). Set before the first batch.
  void set_timing(bool on) {
    timing_ = on;
  }
  double busy(int thread) const {
    return done_[size_t(thread)].busy.load(std::memory_order_relaxed);
  }
  // The phases on the caller's thread alone.
  static void run_here(const Phase* phases, size_t count) {
    for (size_t p = 0; p < count; ++p) run_here(phases[p].n, *phases[p].fn);
  }
  // Calls fn(i) for every i < n on the caller's thread alone (a batch too small to share).
  static void run_here(size_t n, const std::function<void(size_t)>& fn) {
    for (size_t i = 0; i < n; ++i) fn(i);
  }

 private:
  // One thread's ranges of the batch, one word per phase: the batch's epoch (bits 32..63), the
  // range's end (16..31) and the next item to claim (0..15), on a host cache line of their own.
  struct alignas(64) Range {
    std::atomic<uint64_t> word[kMaxPhases];
  };
  // Items a thread ran, of every batch so far, on a host cache line of its own: the thread
  // alone writes it, so ending an item costs no read of another thread's line, and the others
  // read every thread's to see whether a phase ended.
  struct alignas(64) Done {
    std::atomic<uint64_t> n{0};
    std::atomic<double> busy{0};  // seconds in items (set_timing)
  };
  // The items a thread ran and the seconds they took (0 without timing): the count's release
  // publishes both.
  void count(int self, size_t ran, double spent) {
    Done& d = done_[size_t(self)];
    if (spent > 0)
      d.busy.store(d.busy.load(std::memory_order_relaxed) + spent, std::memory_order_relaxed);
    d.n.store(d.n.load(std::memory_order_relaxed) + ran, std::memory_order_release);
  }
  void work(int self);
  // Runs the items of batch `epoch` this thread can claim (its own range first), phase by phase,
  // counting them in done_; returns early when a newer batch started (this thread came late).
  void run_batch(int self, uint64_t epoch);
  // Claims and runs the items of phase p in r; returns how many, and adds their wall time to
  // `spent` with timing on.
  size_t run_range(Range& r, size_t p, uint64_t epoch, double& spent);
  bool claim(std::atomic<uint64_t>& word, uint64_t epoch, size_t& item);
  // Whether phase p of batch `epoch` is still running (false once it ended or a newer batch
  // started): the items every thread ran, summed, fall short of the phase's end.
  bool phase_open(size_t p, uint64_t epoch) const {
    uint64_t done = 0;
    for (size_t t = 0, n = workers_.size() + 1; t < n; ++t) {
      done += done_[t].n.load(std::memory_order_acquire);
    }
    return done < ends_[p].load(std::memory_order_relaxed) &&
           epoch_.load(std::memory_order_relaxed) == epoch;
  }
  bool timing_ = false;
  std::vector<std::thread> workers_;
  std::unique_ptr<Range[]> ranges_;             // one per thread (0: the caller)
  alignas(64) std::atomic<uint64_t> epoch_{0};  // the batch being run (workers wait for a new one)
  std::unique_ptr<Done[]> done_;                // one per thread
  std::atomic<int> sleepers_{0};
  std::atomic<bool> quit_{false};
  // The batch's phases: where each ends in the count of items run (read by a thread that may
  // come late, so atomic) and their functions (read once an item is claimed).
  uint64_t counted_ = 0;  // items of every batch so far (the caller's)
  std::atomic<uint64_t> ends_[kMaxPhases] = {};
  const std::function<void(size_t)>* fn_[kMaxPhases] = {};
  std::atomic<size_t> nphases_{0};
  std::atomic<size_t> failed_{kMaxPhases};  // the first phase an item of which threw
  std::mutex error_mutex_;
  std::exception_ptr error_;  // the batch's exception: its first phase's, least item's
  size_t error_phase_ = 0, error_item_ = 0;
  std::mutex mutex_;
  std::condition_variable wake_;
};

// Host threads for `ltc sim --threads` by default: the hardware's (at least 1).
int hardware_threads();

}  // namespace ltc::sim
