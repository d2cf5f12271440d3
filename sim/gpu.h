// The whole GPU: SMs, the sliced L2 and DRAM, joined by TLM-2.0 sockets, and a launcher process
// that runs the trace's kernels in order (each kernel's blocks handed out by the dispatcher;
// the next kernel starts GpuConfig::step_kernel_gap_cycles after the last block of the previous
// retires) and steps the SMs a quantum at a time on a pool of host threads, merging what they
// did to shared state in (cycle, SM, sequence) order (sim/README.md, "Parallel stepping").
#pragma once

#include "sim/memory.h"
#include "sim/simulator.h"
#include "sim/sm.h"
#include "sim/step_pool.h"
#include "sim/tensor_core.h"

#include <systemc>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <utility>
#include <vector>

namespace ltc::sim {

// Shared-memory wavefronts (data-path cycles) of one warp access where thread t moves
// `bytes_per_thread` bytes at t * stride: the bank model of 4-byte banks, with broadcast.
int64_t smem_wavefronts(uint64_t bytes_per_thread, uint64_t stride, int banks);

// Resident blocks per SM and what limits them: hw::block_occupancy for the kernel's warps,
// registers and shared memory. Throws InputError when one block does not fit an SM.
using Occupancy = hw::BlockOccupancy;
Occupancy kernel_occupancy(const traces::Kernel& k, const hw::GpuConfig& gpu);

// Decodes a kernel for the SMs: per static instruction its unit, dependencies and timing;
// tensor addresses; occupancy. Throws InputError naming the kernel and instruction.
KernelPlan plan_kernel(const traces::Trace& trace, size_t index, const hw::GpuConfig& gpu,
                       const TensorCoreModel& tc, uint64_t& next_address);

class Gpu : public sc_core::sc_module {
 public:
  Gpu(sc_core::sc_module_name name, const traces::Trace& trace, const hw::GpuConfig& gpu,
      const SimOptions& options, const TensorCoreModel& tc, const std::atomic<bool>& stop,
      IssueObserver* observer, std::vector<size_t> kernels);
  RunStats& result() { return result_; }
  // Statistics of the kernel running when the simulation stopped early.
  void collect_partial();

 private:
  void run();
  void progress_tick();
  // The pool's threads' busy time into result_.host (SimOptions::host_profile).
  void record_busy();
  KernelStats collect(Cycle end);
  // Steps every SM with work through [q0, q0 + quantum_), then merges; returns the cycle the
  // next quantum starts at (kNever: no SM has work).
  Cycle step(Cycle q0);
  void merge(Cycle q0, Cycle qe, size_t lines);
  void step_sm(Sm& sm, Cycle q0, Cycle qe, Cycle stop);
  // After step_sm or Sm::resume: what the SystemC thread reads of the SM (its next cycle, where
  // it stopped, its lines and its keys filed with the L2).
  void stepped(Sm& sm);
  // Dispatch within a quantum [q0, qe): the SMs stopped at a dispatch boundary before qe get
  // their slots filled there and step on, boundary by boundary (sim/README.md, "Block dispatch").
  void dispatch_within(Cycle q0, Cycle qe);
  // Each stepping SM's retirements not yet reported (from reported_ on): to the dispatcher and
  // into freed_, SM by SM.
  void report_retires();
  // Fills the slots in freed_ whose dispatch boundary is at most `at`, SM by SM, with blocks
  // starting at `at`; returns how many slots it filled or found no block for.
  size_t fill_slots(Cycle at);
  // By SM: the dispatch boundary in [q0, qe) where the first of its slots in freed_ frees
  // (kNever: none before qe).
  void slot_stops(Cycle q0, Cycle qe, std::vector<Cycle>& stops) const;
  // item(SM index) for every SM on the pool, in deal_'s order, when `busy` (items with work) is
  // at least 2 and the pool has threads; else for the stepping SMs here (an SM not stepping has
  // nothing to do then).
  template <class Item>
  void each_sm(size_t busy, Item item);  // steps `sm` and files its lines (lines_)

  const traces::Trace& trace_;
  const hw::GpuConfig& gpu_;
  const SimOptions& options_;
  const TensorCoreModel& tc_;
  const std::atomic<bool>& stop_;
  IssueObserver* observer_;
  std::vector<size_t> kernels_;
  MemoryStats mem_;
  BlockDispatcher dispatcher_;
  ClusterMulticast multicast_;
  Dram dram_;
  L2 l2_;
  std::vector<std::unique_ptr<Sm>> sms_;
  KernelPlan plan_;
  sc_core::sc_event progress_event_;
  size_t running_ = 0;  // position in kernels_
  bool in_kernel_ = false;
  Cycle launch_ = 0;
  uint64_t next_address_ = 0;
  RunStats result_;
  std::chrono::steady_clock::time_point wall_start_, last_progress_;
  Cycle quantum_;
  StepPool pool_;
  std::vector<Sm*> stepping_;  // the SMs with work in the quantum being stepped
  struct Ref {
    Cycle cycle;
    int sm;
    uint32_t seq;
    bool operator<(const Ref& o) const {
      return cycle != o.cycle ? cycle < o.cycle : sm != o.sm ? sm < o.sm : seq < o.seq;
    }
  };
  std::vector<Ref> order_;          // the merge's order of the records of one kind
  std::vector<uint64_t> keys_;      // the merge's order of the multicast accesses
  std::vector<Cycle> next_;         // by SM: Sm::next_cycle() as of the last merge
  std::vector<Cycle> stepped_;      // by SM: Sm::next_cycle() after its last step
  std::vector<SmLines> lines_;      // by SM: its last step's lines
  std::vector<uint8_t> ahead_;      // by SM: stepped through the quantum after the last merge's
  std::vector<uint8_t> due_;        // by SM: a slot of it is filled at this merge
  std::vector<Cycle> stops_;        // by SM: where its next step or resume stops for a slot
  std::vector<Cycle> stopped_;      // by SM: where its last step or resume stopped (kNever: qe)
  std::vector<uint32_t> reported_;  // by SM: its retire records reported (report_retires)
  Cycle ahead_q0_ = 0;              // the quantum SMs stepped ahead into
  bool anchored_ = false;           // the next quantum starts at this one's end (merge)
  bool filled_at_end_ = false;      // the merge filled slots at the quantum's end
  // By SM, its part in the quantum being stepped: none, stepping (kStep), or stepped ahead by
  // the last merge and only merged (kSettle).
  enum Role : uint8_t { kIdle, kStep, kSettle };
  std::vector<uint8_t> role_;
  std::vector<size_t> deal_;       // by item of a batch over the SMs: its SM
  std::vector<uint32_t> slot_;     // by SM: its item in deal_, its slot in the L2's table of lines
  std::vector<SmLines> requests_;  // by stepping SM with lines: its lines for the L2
  std::vector<uint8_t> sent_;      // by SM: it sent the L2 lines in the quantum being merged
  std::vector<uint32_t> retires_;  // by SM: blocks retired in the quantum being merged
  // Block slots freed, not yet filled: (their dispatch boundary, SM, -).
  std::vector<Ref> freed_;
  std::vector<StepPool::Phase> phases_;  // the merge's batch on the pool
  // The items of the merge's one phase: the L2's items (-1 - their place in the chain below)
  // and the SMs (their place in deal_), each thread's range its share of both.
  std::vector<int32_t> first_items_;
  // The merge's steps (the L2's items, the multicast settle), each item run once by the first
  // thread that takes or needs it.
  StepPool::Chain chain_;
  // SimOptions::host_profile: when, in a merge's batch, the first SM that sent lines found the
  // L2's last step done (any thread notes it; seconds from the batch's start).
  struct FirstTime {
    std::atomic<double> at{-1};
    void reset() { at.store(-1, std::memory_order_relaxed); }
    void note(double t) {
      double cur = at.load(std::memory_order_relaxed);
      while ((cur < 0 || t < cur) && !at.compare_exchange_weak(cur, t, std::memory_order_relaxed)) {
      }
    }
    double seconds() const { return std::max(0.0, at.load(std::memory_order_relaxed)); }
  };
  FirstTime chain_end_;
  // host_profile: the L2's items' time and SM items' waits in chain_, every thread's summed.
  std::atomic<double> l2_serve_{0}, l2_wait_{0};
};

}  // namespace ltc::sim
