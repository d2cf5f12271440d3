// One streaming multiprocessor: a SystemC module that the GPU steps one quantum at a time
// (Gpu::step, possibly on another host thread than SystemC's), advancing the SM cycle by cycle
// (skipping cycles in which no sub-partition can issue), and plain C++ inside:
// sub-partitions with a warp scheduler each, per-warp scoreboards, function units that say when
// they can take the next instruction, shared memory with a bank model, an L1, and a TLM-2.0
// initiator socket into the L2. Warps pull instructions from a WarpStream (the loop-compressed
// program), so no kernel is ever expanded in memory.
#pragma once

#include "model/hw/gpu.h"
#include "sim/cluster.h"
#include "sim/dispatch_policy.h"
#include "sim/memory.h"
#include "sim/simulator.h"
#include "sim/stats.h"
#include "sim/tensor_core.h"
#include "sim/units.h"
#include "traces/warp_stream.h"

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace ltc::sim {

inline constexpr Cycle kNever = std::numeric_limits<Cycle>::max() / 4;

// The block scheduler's dispatch interval: a slot that frees takes the dispatcher's next block at
// the end of the interval of this many cycles (counted from the kernel's launch) it frees in,
// whatever the quantum (sim/README.md, "Block dispatch"). The SM whose slot frees stops its step
// there; the GPU fills the slots of that boundary and steps the SM on.
inline constexpr Cycle kDispatchCycles = 32;
// Where a slot freed at `f` takes its next block, in a kernel launched at `launch`.
inline Cycle dispatch_boundary(Cycle f, Cycle launch) {
  return f < launch ? launch : launch + ((f - launch) / kDispatchCycles + 1) * kDispatchCycles;
}

// Register classes of traces/isa.h's implicit dependency rules.
enum : uint8_t {
  kFragments = 1,
  kAccumulatorTile = 2,  // the (m, n) tile of an lmma / mma
  kAllAccumulators = 4,  // dequant
  kValues = 8,
};

// One static instruction, decoded once per kernel: its unit, what it reads and writes, and its
// timing where that does not depend on addresses.
// The SM issues an instruction to its unit with the unit's busy cycles (`occupancy`; an LSU
// global access: its lines) and writes its result, ready `latency` after it starts in the unit,
// into the scoreboard classes of `writes` (sim/units.h).
struct DecodedInstr {
  Unit unit = Unit::kNone;
  uint8_t reads = 0, writes = 0;
  bool global = false;    // an LSU instruction to global memory (ldg, stg, ldgsts), not shared
  int32_t occupancy = 0;  // cycles its unit stays busy (the next instruction's earliest issue)
  int32_t latency = 0;    // start in its unit to result (compute units, shared memory)
  uint32_t simt = 1;      // SIMT warp instructions it stands for
  uint64_t thread_ops = 0;
  uint64_t tensor_ops = 0;
  uint64_t lmma_plane_ops = 0;  // an lmma's tensor_ops x its weight planes (0 for an mma)
  int32_t wavefronts = 0;       // shared memory: data-path cycles (conflicts included)
  int32_t conflict_wavefronts = 0;
  // Loop counters its addr / m / n use (traces::Affine::loop_depth, the depth of its eval).
  uint8_t addr_depth = 0, mn_depth = 0;
  // An ldgsts whose address has no block-x term: every block of a cluster loads the same lines,
  // so a line one block reads is multicast to the others (sim/cluster.h).
  bool cluster_shared = false;
};

// Everything the SMs share about the running kernel.
struct KernelPlan {
  const traces::Kernel* kernel = nullptr;
  std::vector<DecodedInstr> decoded;  // parallel to kernel->program
  std::vector<uint64_t> tensor_base;  // by tensor id: global byte address
  std::vector<uint64_t> tensor_bytes;
  int blocks_per_sm = 0;
  std::string occupancy_limit;
  int64_t l1_bytes = 0;  // L1 data capacity left beside the blocks' shared memory
};

// Called at every issue when functional simulation is on (sim/functional.h).
class IssueObserver {
 public:
  virtual ~IssueObserver() = default;
  virtual void begin_kernel(size_t index) = 0;  // trace kernel `index` launches
  virtual void end_kernel(size_t index) = 0;    // its last block retired
  virtual void on_issue(const traces::Instr& in, const traces::Affine::Point& p,
                        int64_t warp_id) = 0;
};

// Hands thread blocks to SMs in launch order (block id = by * grid_x + bx), as the GPU's block
// scheduler does: each SM holds up to the plan's blocks_per_sm.
class BlockDispatcher {
 public:
  // `limit` > 0: hand out only the first `limit` blocks. `policy` (may be null) is asked before
  // each block and told of each retirement (sim/dispatch_policy.h).
  void start(const KernelPlan* plan, Cycle launch, int64_t limit = 0,
             DispatchPolicy* policy = nullptr);
  int64_t total() const { return total_; }
  // Next block id, or -1 when all are handed out.
  int64_t take();
  // Every block handed out has retired (the kernel is done).
  bool finished() const { return retired_ >= total_; }
  // Blocks are left to hand out (a freed slot may take one).
  bool handing_out() const { return next_ < total_; }
  // Block `id`, dispatched at `start`, retired at `at`.
  void retired(int64_t id, Cycle start, Cycle at);
  int64_t retired_count() const { return retired_; }
  Cycle last_retire() const { return last_retire_; }
  DispatchPolicy* policy() const { return policy_; }

 private:
  const KernelPlan* plan_ = nullptr;
  DispatchPolicy* policy_ = nullptr;
  int64_t next_ = 0, total_ = 0, retired_ = 0;
  Cycle last_retire_ = 0;
};

// Parallel stepping (sim/README.md, "Parallel stepping"): within a quantum an SM touches nothing
// it shares. What it does to shared state it records, and the GPU applies the records after the
// quantum in (cycle, SM index, sequence) order; then each SM takes back what its records
// resolved to (Sm::resolve).
//
// One global access: its lines for the L2 (the SM's port reserved and each line's arrival known
// at issue) and, for a load, the warp that waits for the data.
struct AccessRecord {
  Cycle cycle = 0;  // the issue cycle
  uint32_t first_line = 0, lines = 0;
  int warp = -1;  // the warp slot waiting for it (a load), else -1
  int64_t block = 0;
  bool write = false;
  bool load_async = false;  // ldgsts: the data completes the warp's open cp.async group
  uint32_t frag = 0;        // ldg: the fragment buffer it writes
  uint64_t group = 0;       // ldgsts: the serial of the group it belongs to (Warp::commits)
  Cycle done = 0;           // what the SM knew at issue; after resolve: when the data is there
};
struct RecordedLine {
  uint64_t addr = 0;
  uint32_t sectors = 0;
  bool multicast = false;   // a cluster's shared line: a partner's copy or an L2 read, at the merge
  bool to_l2 = true;        // decided at the merge for multicast lines
  double enter = 0;         // cycle it enters the L2 (after the SM's port)
  Cycle copy_floor = 0;     // multicast: when a copy would be through the SM's port
  Cycle ready = 0;          // reads: when the data is back (the merge sets it)
  int64_t copy_token = -1;  // a copy of a read of this merge (ClusterMulticast::token_ready)
  int64_t read_token = -1;  // a multicast read whose time partners' copies take
};
// A block that retired (its slot is free for the next; the merge hands the dispatcher's next
// block to it).
struct RetireRecord {
  Cycle at = 0, start = 0;
  int64_t id = 0;
  uint32_t seq = 0;
};
// An issue for the observer (--functional), replayed in order at the merge.
struct IssueRecord {
  Cycle cycle = 0;
  uint32_t seq = 0;
  const traces::Instr* in = nullptr;
  traces::Affine::Point point;
  int64_t warp_id = 0;
};

class Sm : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Sm> l2;

  Sm(sc_core::sc_module_name name, int id, const hw::GpuConfig& gpu, BlockDispatcher& dispatcher);
  ~Sm() override;
  int id() const { return id_; }
  // --functional: issues are recorded for the observer (issue_records()).
  void set_observer(IssueObserver* o) { observer_ = o; }
  // --tc rtl: a back end that times every LMMA as it issues (TensorCoreModel::times_each_issue).
  void set_issue_timed_tensor_core(const TensorCoreModel* tc) { issue_timed_tc_ = tc; }
  // The running kernel's clusters (shared by all SMs; sim/cluster.h; read only while stepping).
  void set_multicast(ClusterMulticast* m) { multicast_ = m; }
  // The L2 the merge sends this SM's lines to (read only while stepping: its slicing).
  void set_l2(const L2* l2) { l2_ = l2; }
  // Counters of the running kernel; the GPU collects and clears them at each kernel boundary.
  KernelStats& stats() { return stats_; }
  // A kernel launches: per-kernel state cleared, the L1 flushed (as at a launch).
  void begin_kernel(const KernelPlan* plan, Cycle launch);
  // Takes the dispatcher's next block now (the GPU hands out the first wave round-robin over
  // the SMs, as the hardware block scheduler does); false when none is left.
  bool take_block(Cycle at);
  void finish_kernel(Cycle end);  // accounts the sub-partitions' cycles up to `end`

  // One quantum [q0, qe): runs the SM up to qe, recording its shared side effects. Touches only
  // this SM's state (and reads the plan, the dispatcher's totals and the multicast's shape). It
  // stops early at `stop` (a dispatch boundary where a slot of it frees) or at the dispatch
  // boundary of a block it retires on the way (stopped_at()); resume() goes on from there, after
  // the GPU filled the slot, adding to the quantum's records.
  void step(Cycle q0, Cycle qe, Cycle stop = kNever);
  void resume(Cycle stop = kNever);
  // Where the last step or resume stopped before the quantum's end (kNever: it reached it).
  Cycle stopped_at() const { return limit_ < qe_ ? limit_ : kNever; }
  // The next cycle the SM has work at (kNever: no resident block).
  Cycle next_cycle() const { return resident_blocks_ > 0 ? cycle_ : kNever; }
  // The quantum's records, for the merge.
  const std::vector<AccessRecord>& access_records() const { return accesses_; }
  const std::vector<RetireRecord>& retire_records() const { return retires_; }
  const std::vector<IssueRecord>& issue_records() const { return issues_; }
  // The quantum's lines for the L2 (L2::serve_phases).
  // The last step's lines (`slot`: where it filed its runs, L2::file_lines).
  SmLines l2_requests(uint32_t slot) const {
    return {l2_refs_.data(), uint32_t(l2_refs_.size()), slot};
  }
  // Per slice group of the L2 (L2::group_of): the lines that go there, in the SM's order.
  std::vector<L2Line>* group_lines() { return group_lines_.data(); }
  // The access records with cluster multicast lines (sim/cluster.h), in the SM's order.
  const std::vector<uint32_t>& multicast_accesses() const { return multicast_accesses_; }
  // The merge, in (cycle, SM, sequence) order over the multicast accesses (SystemC's thread):
  // access record `i`'s multicast lines become a partner's copy where one read the line first,
  // else a read whose copy the partners take.
  void prepare(size_t i);
  // After the L2 served them: the reads' data times (and the multicast reads' for partners).
  void settle_reads(Cycle q0);
  // After every delivery: the loads' data times into the warps (scoreboards, cp.async groups,
  // the L1's fills in flight), retirements that waited for them; fills retire_records().
  void resolve();
  // The GPU hands block `id` to a slot freed before `at`, at the slot's dispatch boundary `at`
  // (the SM stepped no further).
  void launch_at(int64_t id, Cycle at);
  // The lines of access record `i` (host-side prefetch of their L2 sets by the merge).
  const RecordedLine* lines_of(const AccessRecord& r) const { return &lines_[r.first_line]; }

 private:
  struct AccSlot {
    uint64_t key = 0;
    Cycle ready = 0;
  };
  static constexpr int kAccSlots = 16;  // a power of two (Sm::fetch)
  static constexpr int kMaxGroups = 32;
  struct Warp {
    // What the scheduler reads for every warp it considers comes first (one host cache line).
    Cycle ready = 0;  // dependencies of `next` resolved (kNever at a barrier)
    const DecodedInstr* dec = nullptr;
    Unit unit = Unit::kNone;  // dec->unit
    Stall why = Stall::kFragments;
    bool active = false;
    bool at_barrier = false;
    bool lsu_queued = false;  // waits in its sub-partition's LSU queue
    int sp = 0;
    const traces::Instr* next = nullptr;
    Cycle frag = 0, values = 0, acc_all = 0, last_done = 0;
    // Loads into named fragment buffers (index 0: loads naming none, which every reader waits
    // for); `frag` is the latest of all.
    std::array<Cycle, traces::kMaxFragBuffers + 1> frag_buf{};
    Cycle open_group = -1;    // completion of the uncommitted ldgsts, -1: none
    Cycle held = 0;           // `ready` saved while at a barrier
    Cycle fetched = 0;        // the cycle `next` was fetched in (its dependencies' earliest + 1)
    uint64_t commits = 0;     // cp.async groups committed (the next group's serial)
    uint64_t group_base = 0;  // serial of the oldest group not dropped by a wait
    int pending = 0;          // loads issued this quantum whose data the merge resolves
    Cycle start = 0;
    uint64_t key = 0;   // accumulator tile of `next` (lmma / mma)
    int acc_slot = -1;  // the slot of `acc` holding `key` when `next` was fetched, -1: none
    int ngroups = 0;
    int block = -1;
    uint64_t age = 0;
    int64_t global_id = 0;
    std::array<AccSlot, kAccSlots> acc{};
    std::array<Cycle, kMaxGroups> groups{};
    traces::WarpStream stream;
  };
  struct Block {
    bool active = false;
    int live = 0, arrived = 0;
    int deferred = 0;  // warps retired with loads pending (its end known at resolve)
    int64_t id = 0;
    Cycle start = 0, retire = 0;
    std::vector<int> warps;
  };
  struct SubPartition {
    int index = 0;           // in sps_
    std::vector<int> warps;  // resident warp slots, oldest first
    int last = -1;           // last issued slot (GTO) / round-robin position (LRR)
    Cycle wake = 0;          // earliest cycle it may issue
    Cycle accounted = 0;     // cycles before this are in stats
    Stall reason = Stall::kNoWarp;
    // Each Unit's instance: the sub-partition's own (in units_) or the SM's (per_sm).
    std::array<FunctionalUnit*, kUnitKinds + 1> unit{};
    // Its warps ready for the LSU but refused a slot, first come first served (Sm::lsu_ring_
    // from its index's row, `lsu_waiting` of them from `lsu_head`): while any waits, only the
    // first may take a freed slot (not the greedy or the oldest warp).
    uint32_t lsu_head = 0, lsu_waiting = 0;
  };

  static std::vector<FunctionalUnit> make_units(const hw::GpuConfig& gpu);
  void run_until();
  void launch_block(int64_t block_id, Cycle at);
  bool try_issue(SubPartition& sp, Cycle c);
  void issue(Warp& w, SubPartition& sp, Cycle c);
  void fetch(Warp& w, Cycle c);
  // `w.ready` and `w.why` for `w.next` fetched at `c`: when its dependencies are resolved.
  void resolve_deps(Warp& w, Cycle c);
  void commit_group(Warp& w, Cycle c);
  void write_fragments(Warp& w, uint32_t buffer, Cycle done);
  Cycle global_access(Warp& w, const traces::Instr& in, Cycle c);
  void arrive_barrier(Warp& w, Cycle c);
  // Every warp of `b` waiting at its barrier goes on (all its live warps arrived).
  void release_barrier(Block& b, Cycle c);
  void retire_warp(Warp& w, Cycle c);
  void record_retire(const Block& b);  // into retires_, for the merge
  void account(SubPartition& sp, Cycle c);

  const int id_;
  const hw::GpuConfig& gpu_;
  BlockDispatcher& dispatcher_;
  IssueObserver* observer_ = nullptr;
  const TensorCoreModel* issue_timed_tc_ = nullptr;
  ClusterMulticast* multicast_ = nullptr;
  const L2* l2_ = nullptr;
  const KernelPlan* plan_ = nullptr;
  const bool gto_;
  const int lanes_per_sp_;
  const int line_shift_;

  std::vector<Warp> warps_;
  std::vector<Block> blocks_;
  std::vector<SubPartition> sps_;
  int resident_blocks_ = 0;
  uint64_t next_age_ = 0;
  Cycle cycle_ = 0;   // the SM's local time (runs ahead of SystemC time within a quantum)
  Cycle qe_ = 0;      // the end of the quantum being stepped
  Cycle limit_ = 0;   // where the step stops: qe_, or a dispatch boundary before it
  Cycle launch_ = 0;  // the running kernel's launch (its dispatch boundaries count from it)
  // The units (kUnits): for each sub-partition a row of kUnitKinds + 1 (Unit::kNone's never
  // busy), then one row of the SM's own; SubPartition::unit points into it.
  std::vector<FunctionalUnit> units_;
  FunctionalUnit& lsu_;  // the SM's load/store path (Unit::kLsu)
  BandwidthPort noc_;
  // The sub-partitions take the LSU's free slots in a round robin over grants (the one after
  // the last granted tries first), and each serves its waiting warps first come first served
  // (SubPartition::lsu_waiting). The H200 shares its LSU so (tools/microbench/
  // smsp_arbitration.cu: with 8 warps of shared loads the last ends 1.00005x after the first);
  // in a fixed sub-partition order with greedy-then-oldest the warps ran one after the other.
  size_t lsu_first_ = 0;
  bool lsu_granted_ = false;   // the LSU granted since run_until cleared it
  std::vector<int> lsu_ring_;  // the sub-partitions' LSU queues, one row of lsu_ring_cap_ each
  uint32_t lsu_ring_cap_ = 0;  // warps a sub-partition holds at most
  int* lsu_queue(const SubPartition& sp) { return &lsu_ring_[size_t(sp.index) * lsu_ring_cap_]; }
  void lsu_wait(SubPartition& sp, Warp& w, int slot) {  // at the queue's end, once
    if (w.lsu_queued) return;
    const uint32_t tail = sp.lsu_head + sp.lsu_waiting++;
    lsu_queue(sp)[tail < lsu_ring_cap_ ? tail : tail - lsu_ring_cap_] = slot;
    w.lsu_queued = true;
  }
  // The LSU takes `busy` cycles of work at `c`; returns when it starts.
  Cycle lsu_issue(Cycle c, Cycle busy) {
    lsu_granted_ = true;
    return lsu_.issue(c, busy);
  }
  const DecodedInstr* decoded_ = nullptr;   // plan_->decoded.data()
  const traces::Instr* program_ = nullptr;  // plan_->kernel->program.data()
  SectorCache l1_;
  FillTimes l1_fills_;  // its lines' L2 reads in flight
  KernelStats stats_;
  // lines_'s requests for the L2, kept per slice group of the L2 (L2::group_of), so that a
  // group's thread reads, and writes the ready ticks of, a run of records no other group's
  // touches; l2_refs_ (by lines_'s index) says where each is (SmLines::refs).
  std::vector<std::vector<L2Line>> group_lines_;
  std::vector<uint32_t> l2_refs_;
  L2Line& l2_line(size_t i) {
    const uint32_t r = l2_refs_[i];
    return group_lines_[r >> SmLines::kPosBits][r & SmLines::kPosMask];
  }
  std::vector<uint32_t> multicast_accesses_;
  Cycle q0_ = 0;  // the quantum's start (SystemC's time at the merge)
  // The quantum's records (cleared by step).
  std::vector<AccessRecord> accesses_;
  std::vector<RecordedLine> lines_;
  std::vector<RetireRecord> retires_;
  std::vector<IssueRecord> issues_;
  uint32_t seq_ = 0;
  // The L1's fills in flight are known at the merge: their updates, and lookups of lines with
  // an update this quantum, are replayed in order by resolve(). `l1_touched_[slot]` == `quantum_`:
  // the slot has one.
  struct L1Op {
    bool record = false;  // record the fill of line `line` of access `access`; else a lookup
    uint32_t access = 0, line = 0;
    SectorCache::Result r;
    uint32_t sectors = 0;  // a lookup's sectors found
    double t = 0;          // a lookup's cycle
  };
  std::vector<L1Op> l1_ops_;
  std::vector<uint64_t> l1_touched_;
  uint64_t quantum_ = 0;
  std::vector<std::pair<int, Cycle>> deferred_retire_;  // warps retired with loads pending
  std::vector<int> retired_blocks_;  // block slots retired this quantum with their end unknown
  std::vector<int> refresh_;         // warps resolve() updates
};

}  // namespace ltc::sim
