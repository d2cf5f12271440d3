#include "sim/sm.h"

#include "common/error.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace ltc::sim {
namespace {

using traces::Instr;
using traces::Opcode;

// The accumulator tile an lmma / mma works on; `depth`: DecodedInstr::mn_depth.
inline uint64_t acc_key(const Instr& in, const traces::Affine::Point& p, int depth) {
  return (uint64_t(in.m.eval(p, depth)) << 32) ^ uint64_t(in.n.eval(p, depth));
}

}  // namespace

// ---- BlockDispatcher ----------------------------------------------------------------------------
void BlockDispatcher::start(const KernelPlan* plan, Cycle launch, int64_t limit,
                            DispatchPolicy* policy) {
  plan_ = plan;
  policy_ = policy;
  next_ = 0;
  total_ = plan->kernel->blocks();
  if (limit > 0) total_ = std::min(total_, limit);
  retired_ = 0;
  last_retire_ = launch;
  if (policy_) policy_->begin_kernel(*plan->kernel, total_);
}

int64_t BlockDispatcher::take() {
  if (!plan_ || next_ >= total_) return -1;
  if (policy_ && !policy_->admit(next_)) {
    total_ = next_;
    return -1;
  }
  return next_++;
}

void BlockDispatcher::retired(int64_t id, Cycle start, Cycle at) {
  ++retired_;
  last_retire_ = std::max(last_retire_, at);
  if (policy_) policy_->retired(id, start, at);
}

// ---- Sm -----------------------------------------------------------------------------------------
std::vector<FunctionalUnit> Sm::make_units(const hw::GpuConfig& gpu) {
  constexpr size_t kRow = kUnitKinds + 1;
  std::vector<FunctionalUnit> units(kRow * size_t(gpu.sub_partitions_per_sm + 1));
  for (size_t row = 0; row < units.size() / kRow; ++row) {
    for (int u = 0; u < kUnitKinds; ++u) {
      units[row * kRow + size_t(u)] =
          FunctionalUnit(kUnits[size_t(u)].copies(gpu), kUnits[size_t(u)].queue);
    }
  }
  return units;
}

Sm::Sm(sc_core::sc_module_name name, int id, const hw::GpuConfig& gpu, BlockDispatcher& dispatcher)
    : sc_core::sc_module(name),
      l2("l2"),
      id_(id),
      gpu_(gpu),
      dispatcher_(dispatcher),
      gto_(gpu.sm.scheduler == "gto"),
      lanes_per_sp_(std::max(1, gpu.fp32_lanes_per_sm() / gpu.sub_partitions_per_sm)),
      line_shift_(log2_exact(gpu.sm.line_bytes)),
      units_(make_units(gpu)),
      lsu_(units_[units_.size() - kUnitKinds - 1 + size_t(Unit::kLsu)]),
      noc_(double(gpu.sm.noc_bytes_per_cycle)) {
  blocks_.resize(size_t(gpu.sm.max_blocks));
  sps_.resize(size_t(gpu.sub_partitions_per_sm));
  lsu_ring_cap_ = uint32_t(gpu.sm.max_warps / gpu.sub_partitions_per_sm);
  lsu_ring_.assign(sps_.size() * lsu_ring_cap_, 0);
}

Sm::~Sm() = default;

void Sm::begin_kernel(const KernelPlan* plan, Cycle launch) {
  plan_ = plan;
  stats_ = KernelStats{};
  constexpr size_t kRow = kUnitKinds + 1;
  for (auto& u : units_) u.reset();
  for (auto& sp : sps_) {
    sp = SubPartition{};
    sp.index = int(&sp - sps_.data());
    sp.accounted = sp.wake = launch;
    for (size_t u = 0; u < kRow; ++u) {
      const bool per_sm = u < size_t(kUnitKinds) && kUnits[u].per_sm;
      sp.unit[u] = &units_[(per_sm ? sps_.size() : size_t(sp.index)) * kRow + u];
    }
  }
  for (auto& b : blocks_) b = Block{};
  // Warp slots for as many blocks as this SM can hold at once (its occupancy, or its share of a
  // grid smaller than a wave): a GPU's worth of slots (about 6 MB on an H200) costs a short
  // simulation more than its cycles do.
  const int64_t sms = gpu_.sms;
  const int64_t held =
      std::min<int64_t>(plan->blocks_per_sm, (dispatcher_.total() + sms - 1) / sms);
  const size_t slots = size_t(held) * size_t(plan->kernel->warps_per_block());
  if (warps_.size() < slots) warps_.resize(slots);
  for (auto& w : warps_) w.active = false;
  resident_blocks_ = 0;
  lsu_first_ = 0;
  decoded_ = plan->decoded.data();
  program_ = plan->kernel->program.data();
  noc_.reset();
  cycle_ = std::max(cycle_, launch);
  launch_ = launch;
  l1_ = SectorCache(uint64_t(std::max<int64_t>(plan->l1_bytes, 0)), gpu_.sm.l1_ways,
                    gpu_.sm.line_bytes);
  l1_fills_.resize(l1_.slots());
  l1_touched_.assign(size_t(l1_.slots()), 0);
}

bool Sm::take_block(Cycle at) {
  const int64_t id = dispatcher_.take();
  if (id < 0) return false;
  launch_block(id, at);
  return true;
}

void Sm::finish_kernel(Cycle end) {
  for (auto& sp : sps_) {
    if (end > sp.accounted) {
      stats_.stall_cycles[size_t(sp.warps.empty() ? Stall::kNoWarp : sp.reason)] +=
          uint64_t(end - sp.accounted);
      sp.accounted = end;
    }
  }
}

void Sm::step(Cycle q0, Cycle qe, Cycle stop) {
  accesses_.clear();
  lines_.clear();
  retires_.clear();
  issues_.clear();
  l1_ops_.clear();
  seq_ = 0;
  ++quantum_;
  qe_ = qe;
  l2_refs_.clear();
  group_lines_.resize(size_t(l2_->groups()));
  for (auto& v : group_lines_) v.clear();
  multicast_accesses_.clear();
  q0_ = q0;
  cycle_ = std::max(cycle_, q0);
  limit_ = std::min(qe, stop);
  if (resident_blocks_ > 0) run_until();
}

void Sm::resume(Cycle stop) {
  limit_ = std::min(qe_, stop);
  if (resident_blocks_ > 0) run_until();
}

void Sm::run_until() {
  // limit_ falls to a dispatch boundary when a block retires (retire_warp).
  while (cycle_ < limit_) {
    Cycle next = kNever;
    // The sub-partitions from lsu_first_ on, wrapping around.
    SubPartition* const begin = sps_.data();
    SubPartition* const end = begin + sps_.size();
    SubPartition* sp = begin + lsu_first_;
    for (size_t i = sps_.size(); i > 0; --i, ++sp) {
      if (sp == end) sp = begin;
      if (sp->wake <= cycle_) {
        account(*sp, cycle_);
        lsu_granted_ = false;
        const bool issued = try_issue(*sp, cycle_);
        if (lsu_granted_) lsu_first_ = sp + 1 == end ? 0 : size_t(sp + 1 - begin);
        if (issued) {
          ++stats_.issue_cycles;
          sp->accounted = cycle_ + 1;
          sp->wake = cycle_ + 1;
        }
      }
      next = std::min(next, sp->wake);
    }
    if (resident_blocks_ == 0) return;
    if (next >= kNever) {
      throw std::runtime_error("sim: SM " + std::to_string(id_) +
                               " deadlocked (every resident warp waits at a barrier that no warp "
                               "can reach) in kernel " +
                               plan_->kernel->name);
    }
    cycle_ = next > cycle_ ? next : cycle_ + 1;
  }
}

void Sm::account(SubPartition& sp, Cycle c) {
  if (c > sp.accounted) {
    stats_.stall_cycles[size_t(sp.reason)] += uint64_t(c - sp.accounted);
    sp.accounted = c;
  }
}

void Sm::launch_at(int64_t id, Cycle at) {
  // Nothing ran at cycles from `at` on (the SM only skipped ahead to its next wake): it resumes
  // there.
  cycle_ = resident_blocks_ == 0 ? at : std::min(cycle_, at);
  launch_block(id, at);
}

void Sm::launch_block(int64_t block_id, Cycle at) {
  const traces::Kernel& k = *plan_->kernel;
  // Not a slot, nor a warp slot below, whose block or warp waits for its loads' data (resolve).
  int slot = 0;
  while (blocks_[size_t(slot)].active || blocks_[size_t(slot)].deferred > 0) ++slot;
  Block& b = blocks_[size_t(slot)];
  b.active = true;
  b.live = int(k.warps_per_block());
  b.arrived = 0;
  b.deferred = 0;
  b.id = block_id;
  b.start = at;
  b.retire = at;
  b.warps.clear();
  ++resident_blocks_;
  // Launch order (traces/trace.h): id = (bz * grid_y + by) * grid_x + bx.
  const int64_t bx = block_id % k.grid_x, row = block_id / k.grid_x;
  const int64_t by = row % k.grid_y, bz = row / k.grid_y;
  int ws = 0;
  for (int64_t wy = 0; wy < k.warps_y; ++wy) {
    for (int64_t wx = 0; wx < k.warps_x; ++wx) {
      while (size_t(ws) < warps_.size() &&
             (warps_[size_t(ws)].active || warps_[size_t(ws)].pending > 0)) {
        ++ws;
      }
      if (size_t(ws) == warps_.size())
        throw std::logic_error("sim: an SM took more warps than it holds");
      Warp& w = warps_[size_t(ws)];
      w = Warp{};
      w.active = true;
      w.stream = traces::WarpStream(&k.program, bx, by, wx, wy, bz);
      w.block = slot;
      w.sp = ws % int(sps_.size());
      w.age = next_age_++;
      w.global_id = (block_id * k.warps_y + wy) * k.warps_x + wx;
      w.start = at;
      b.warps.push_back(ws);
      SubPartition& sp = sps_[size_t(w.sp)];
      sp.warps.push_back(ws);
      if (sp.wake > at) {
        sp.wake = at;
      }
      fetch(w, at - 1);
    }
  }
  stats_.blocks += 1;
  stats_.warps += uint64_t(k.warps_per_block());
}

// The issue path runs once per warp instruction: try_issue is inlined into run_until and fetch
// into issue (a call each costs the saving and restoring of the callee-saved registers).
#define LTC_SIM_HOT inline __attribute__((always_inline))

LTC_SIM_HOT bool Sm::try_issue(SubPartition& sp, Cycle c) {
  if (sp.warps.empty()) {
    sp.reason = Stall::kNoWarp;
    sp.wake = kNever;
    return false;
  }
  Cycle best_t = kNever;
  Stall best_why = Stall::kBarrier;
  auto consider = [&](int slot) -> bool {
    Warp& w = warps_[size_t(slot)];
    Cycle uf = sp.unit[size_t(w.unit)]->free_at();
    Cycle t = std::max(w.ready, uf);
    const bool lsu = w.unit == Unit::kLsu;
    if (t <= c) {
      // A free LSU slot goes to the sub-partition's first waiting warp, if any waits.
      if (lsu && sp.lsu_waiting > 0) {
        if (lsu_queue(sp)[sp.lsu_head] == slot) {
          sp.lsu_head = sp.lsu_head + 1 < lsu_ring_cap_ ? sp.lsu_head + 1 : 0;
          --sp.lsu_waiting;
          w.lsu_queued = false;
        } else {
          lsu_wait(sp, w, slot);
          uf = t = c + 1;  // not its turn: look again next cycle
        }
      }
      if (t <= c) {
        issue(w, sp, c);
        sp.last = slot;
        return true;
      }
    } else if (w.ready <= c && lsu && !w.lsu_queued) {
      lsu_wait(sp, w, slot);  // ready, refused a slot
    }
    if (t < best_t) {
      best_t = t;
      best_why = w.ready >= uf ? w.why : busy_stall(w.unit);
    }
    return false;
  };
  if (gto_) {
    if (sp.last >= 0 && warps_[size_t(sp.last)].active && warps_[size_t(sp.last)].sp == sp.index &&
        consider(sp.last)) {
      return true;
    }
    for (int slot : sp.warps) {
      if (slot != sp.last && consider(slot)) return true;
    }
  } else {
    const size_t n = sp.warps.size();
    size_t start = 0;
    for (size_t i = 0; i < n; ++i) {
      if (sp.warps[i] == sp.last) start = i + 1;
    }
    for (size_t i = 0; i < n; ++i) {
      if (consider(sp.warps[(start + i) % n])) return true;
    }
  }
  sp.wake = best_t;
  sp.reason = best_why;
  return false;
}

LTC_SIM_HOT void Sm::fetch(Warp& w, Cycle c) {
  w.next = w.stream.next();
  if (!w.next) {
    retire_warp(w, c);
    return;
  }
  w.dec = &decoded_[w.next - program_];
  w.unit = w.dec->unit;
  w.fetched = c;
  resolve_deps(w, c);
}

LTC_SIM_HOT void Sm::resolve_deps(Warp& w, Cycle c) {
  const DecodedInstr& d = *w.dec;
  Cycle r = c + 1;
  Stall why = Stall::kFragments;
  auto need = [&](Cycle t, Stall s) {
    if (t > r) {
      r = t;
      why = s;
    }
  };
  if (d.reads & kFragments) {
    const uint32_t f = w.next->frag;
    need(f ? std::max(w.frag_buf[f], w.frag_buf[0]) : w.frag, Stall::kFragments);
  }
  if (d.reads & kValues) need(w.values, Stall::kValues);
  if (d.reads & kAllAccumulators) need(w.acc_all, Stall::kAccumulator);
  if (d.reads & kAccumulatorTile) {
    w.key = acc_key(*w.next, w.stream.point(), d.mn_depth);
    // A non-zero key is in at most one slot (a key is installed only where no slot holds it;
    // unused slots hold key 0), so finding it ends the search: first where the warp's next tile
    // usually is (the slot after the last one, or the last one again), else a scan of all.
    const int after = (w.acc_slot + 1) & (kAccSlots - 1), again = w.acc_slot & (kAccSlots - 1);
    if (w.key != 0 && w.acc[size_t(after)].key == w.key) {
      w.acc_slot = after;
      need(w.acc[size_t(after)].ready, Stall::kAccumulator);
    } else if (w.key != 0 && w.acc[size_t(again)].key == w.key) {
      w.acc_slot = again;
      need(w.acc[size_t(again)].ready, Stall::kAccumulator);
    } else {
      w.acc_slot = -1;
      for (int i = 0; i < kAccSlots; ++i) {
        if (w.acc[size_t(i)].key == w.key) {
          need(w.acc[size_t(i)].ready, Stall::kAccumulator);
          w.acc_slot = i;
        }
      }
    }
  }
  if (w.next->op == Opcode::kWait) {
    if (w.open_group >= 0) commit_group(w, c);  // wait commits the open group first (isa.h)
    const int keep = int(std::min<uint64_t>(w.next->count, uint64_t(w.ngroups)));
    for (int g = 0; g < w.ngroups - keep; ++g) need(w.groups[size_t(g)], Stall::kAsyncWait);
  }
  w.ready = r;
  w.why = why;
}

void Sm::write_fragments(Warp& w, uint32_t buffer, Cycle done) {
  w.frag = std::max(w.frag, done);
  w.frag_buf[buffer] = std::max(w.frag_buf[buffer], done);
}

void Sm::commit_group(Warp& w, Cycle c) {
  if (w.ngroups == kMaxGroups) {  // fold the two oldest: waits on either wait for both
    w.groups[1] = std::max(w.groups[0], w.groups[1]);
    std::copy(w.groups.begin() + 1, w.groups.end(), w.groups.begin());
    --w.ngroups;
  }
  w.groups[size_t(w.ngroups++)] = w.open_group >= 0 ? w.open_group : c;
  w.open_group = -1;
  ++w.commits;
}

void Sm::issue(Warp& w, SubPartition& sp, Cycle c) {
  const Instr& in = *w.next;
  const DecodedInstr& d = *w.dec;
  stats_.issued[size_t(in.op)] += 1;
  stats_.simt_instructions += d.simt;
  stats_.thread_ops += d.thread_ops;
  stats_.tensor_ops += d.tensor_ops;
  if (d.lmma_plane_ops) {
    stats_.lmma_ops += d.tensor_ops;
    stats_.lmma_plane_ops += d.lmma_plane_ops;
  }
  if (observer_) issues_.push_back({c, seq_++, &in, w.stream.point(), w.global_id});
  Cycle done = c + 1;
  FunctionalUnit& unit = *sp.unit[size_t(d.unit)];
  switch (d.unit) {
    case Unit::kTensor: {
      // --tc rtl: this LMMA's own cycles in the verilated tile; else the decoded timing.
      const hw::TensorOpTiming t = issue_timed_tc_ && in.op == Opcode::kLmma
                                       ? issue_timed_tc_->issue_lmma(in.lmma)
                                       : hw::TensorOpTiming{d.occupancy, d.latency};
      done = unit.issue(c, Cycle(t.issue_cycles)) + Cycle(t.latency_cycles);
      stats_.tensor_busy_cycles += uint64_t(t.issue_cycles);
      break;
    }
    case Unit::kLsu:
      if (d.global) {
        done = global_access(w, in, c);
        if (in.op == Opcode::kLdGlobalAsync) {
          w.open_group = std::max(w.open_group, done);
          stats_.mem.smem_bytes += in.bytes;
        }
      } else {
        done = lsu_issue(c, d.wavefronts) + d.latency;
        stats_.mem.smem_bytes += in.bytes;
        stats_.mem.smem_wavefronts += uint64_t(d.wavefronts);
        stats_.mem.bank_conflict_cycles += uint64_t(d.conflict_wavefronts);
      }
      break;
    case Unit::kNone:
      if (in.op == Opcode::kCommit) {
        commit_group(w, c);  // an empty group is complete at once
      } else if (in.op == Opcode::kWait) {
        const int keep = int(std::min<uint64_t>(in.count, uint64_t(w.ngroups)));
        std::copy(w.groups.begin() + (w.ngroups - keep), w.groups.begin() + w.ngroups,
                  w.groups.begin());
        w.ngroups = keep;
        w.group_base = w.commits - uint64_t(keep);
      }
      break;
    default:  // a unit of the decoded occupancy and latency (CUDA cores, SFU)
      done = unit.issue(c, d.occupancy) + d.latency;
      break;
  }
  // The result, into the scoreboard classes the instruction writes.
  if (d.writes & kValues) w.values = std::max(w.values, done);
  if (d.writes & kFragments) write_fragments(w, in.frag, done);
  if (d.writes & kAccumulatorTile) {
    // The slot of this tile (found by fetch; only issue changes the slots), else a free
    // (retired) slot, else the earliest-ready one.
    AccSlot* slot = w.acc_slot >= 0 ? &w.acc[size_t(w.acc_slot)] : nullptr;
    if (!slot) {
      slot = &w.acc[0];
      for (AccSlot& s : w.acc) {
        if (s.ready < slot->ready) slot = &s;
      }
      if (slot->ready > c) w.acc_all = std::max(w.acc_all, slot->ready);
    }
    slot->key = w.key;
    slot->ready = done;
    w.acc_slot = int(slot - w.acc.data());  // where fetch looks first for the next tile
    w.acc_all = std::max(w.acc_all, done);
  }
  w.last_done = std::max(w.last_done, done);
  if (in.op == Opcode::kBarrier) {
    fetch(w, c);
    if (w.active) arrive_barrier(w, c);
    return;
  }
  fetch(w, c);
}

void Sm::arrive_barrier(Warp& w, Cycle c) {
  Block& b = blocks_[size_t(w.block)];
  w.held = w.ready;
  w.ready = kNever;
  w.why = Stall::kBarrier;
  w.at_barrier = true;
  ++b.arrived;
  if (b.arrived >= b.live) release_barrier(b, c);
}

void Sm::release_barrier(Block& b, Cycle c) {
  b.arrived = 0;
  for (int slot : b.warps) {
    Warp& o = warps_[size_t(slot)];
    if (!o.active || !o.at_barrier) continue;
    o.at_barrier = false;
    o.ready = std::max(o.held, c + 1);
    SubPartition& sp = sps_[size_t(o.sp)];
    sp.wake = std::min(sp.wake, o.ready);
  }
}

void Sm::retire_warp(Warp& w, Cycle c) {
  w.active = false;
  w.next = nullptr;
  const int slot = int(&w - warps_.data());
  SubPartition& sp = sps_[size_t(w.sp)];
  sp.warps.erase(std::find(sp.warps.begin(), sp.warps.end(), slot));
  if (sp.last == slot) sp.last = -1;
  Block& b = blocks_[size_t(w.block)];
  if (w.pending > 0) {
    deferred_retire_.push_back({slot, c});  // its end waits for its loads' data (resolve)
    ++b.deferred;
  } else {
    const Cycle end = std::max({w.last_done, c + 1, w.open_group});
    stats_.warp_cycles += uint64_t(end - w.start);
    b.retire = std::max(b.retire, end);
  }
  --b.live;
  if (b.live == 0) {
    // The slot is free. Its end known, the GPU hands it the next block at that end's dispatch
    // boundary, where the step stops (while blocks are left; a boundary past this quantum: the
    // GPU stops the step of the quantum it falls in); else once resolve() knows it (>= qe_).
    b.active = false;
    --resident_blocks_;
    if (b.deferred == 0) {
      record_retire(b);
      if (dispatcher_.handing_out())
        limit_ = std::min(limit_, dispatch_boundary(b.retire, launch_));
    } else {
      retired_blocks_.push_back(int(&b - blocks_.data()));
    }
  } else if (b.arrived > 0 && b.arrived >= b.live) {
    // The warps still running all wait at a barrier this warp will never reach.
    release_barrier(b, c);
  }
}

Cycle Sm::global_access(Warp& w, const Instr& in, Cycle c) {
  const uint64_t off = uint64_t(in.addr.eval(w.stream.point(), w.dec->addr_depth));
  const uint64_t tbytes = plan_->tensor_bytes[in.tensor];
  if (off >= tbytes) return c + 1;  // nothing of the tensor (the validator rejects such traces)
  const uint64_t bytes = std::min<uint64_t>(in.bytes, tbytes - off);
  if (bytes == 0) return c + 1;
  const uint64_t addr = plan_->tensor_base[in.tensor] + off;
  const uint64_t first = addr >> line_shift_, last = (addr + bytes - 1) >> line_shift_;
  const uint64_t line_bytes = uint64_t(1) << line_shift_;
  // A tensor memory accelerator (sm.tma) moves cp.async tiles itself: no LSU cycles.
  // (It still takes its turn in the LSU's round robin over the sub-partitions.)
  Cycle start = c;
  if (in.op == Opcode::kLdGlobalAsync && gpu_.sm.tma) {
    lsu_granted_ = true;
  } else {
    start = lsu_issue(c, Cycle(last - first + 1));
  }
  Cycle done = start + 1;
  // The lines that go to L2 are recorded (AccessRecord), each entering through this SM's port at
  // its own cycle; the merge sends them as one burst (memory.h, LineBurst) and the loads' data
  // times come back in resolve().
  const bool write = in.op == Opcode::kStGlobal;
  const uint32_t index = uint32_t(accesses_.size());
  const uint32_t first_line = uint32_t(lines_.size());
  bool waits = false;  // the data comes from the merge
  auto to_l2 = [&](uint64_t base, uint32_t sectors, Cycle t) -> RecordedLine& {
    const int n = popcount4(sectors);
    const double enter = noc_.reserve_sectors(double(t), n);
    RecordedLine& l = lines_.emplace_back();
    l.addr = base;
    l.sectors = sectors;
    l.enter = enter;
    // Its L2 request, ready for the merge (l2_line(i) for lines_[i]).
    const uint32_t slice = l2_->slice_of(base), group = l2_->group_of(slice);
    std::vector<L2Line>& run = group_lines_[group];
    if (run.size() > SmLines::kPosMask) {
      throw std::length_error(
          "sim: an SM sent more than 16777215 L2 lines to one slice group in a quantum (a "
          "shorter --quantum sends fewer)");
    }
    l2_refs_.push_back(group << SmLines::kPosBits | uint32_t(run.size()));
    L2Line& b = run.emplace_back();
    b.line.addr = base;
    b.line.sectors = sectors;
    b.line.enter = ticks_of(enter - double(q0_));
    b.write = write;
    b.offset = uint16_t(c - q0_);
    b.slice = slice;
    return l;
  };
  const bool multicast = in.op == Opcode::kLdGlobalAsync && w.dec->cluster_shared && multicast_ &&
                         multicast_->active();
  for (uint64_t line = first; line <= last; ++line) {
    const uint64_t base = line << line_shift_;
    const uint64_t lo = std::max(addr, base) - base,
                   hi = std::min(addr + bytes, base + line_bytes) - base;
    const uint32_t sectors = sectors_of(lo, hi);  // hi > lo: the line holds part of the access
    const Cycle t = Cycle(start) + Cycle(line - first);
    if (in.op == Opcode::kLdGlobal) {
      const SectorCache::Result r = l1_.access(base, sectors, false);
      const int n = popcount4(sectors);
      stats_.mem.l1_sectors += uint64_t(n);
      stats_.mem.l1_hit_sectors += uint64_t(n - popcount4(r.missed));
      done = std::max(done, t + gpu_.sm.l1_latency_cycles);
      // Sectors found whose fill from the L2 is still on its way come with it (memory.h); a
      // fill this quantum is known at the merge.
      const bool touched = r.slot != SectorCache::kNoSlot && l1_touched_[r.slot] == quantum_;
      if (const uint32_t hit = sectors & ~r.missed) {
        if (touched) {
          l1_ops_.push_back({false, index, 0, r, hit, double(t)});
          waits = true;
        } else {
          done = std::max(done, Cycle(l1_fills_.ready(r, hit, double(t)) + 0.999999));
        }
      }
      if (r.missed) {
        to_l2(base, r.missed, t);
        l1_ops_.push_back({true, index, uint32_t(lines_.size() - 1 - first_line), r, 0, 0});
        if (r.slot != SectorCache::kNoSlot) l1_touched_[r.slot] = quantum_;
      }
    } else if (multicast) {
      // A cluster's shared tile (sim/cluster.h): a partner block's copy when it read the line
      // first, else an L2 read whose copy the partners take; either way through this SM's port.
      RecordedLine& l = to_l2(base, sectors, t);
      l.multicast = true;
      l.copy_floor = Cycle(noc_.free_at() + 0.999999);
    } else if (!write) {
      to_l2(base, sectors, t);  // cp.async.cg: L2 only
    } else {
      to_l2(base, sectors, t);  // posted write
      done = std::max(done, t + 1);
    }
  }
  const uint32_t nlines = uint32_t(lines_.size()) - first_line;
  if (nlines == 0 && !waits) return done;
  AccessRecord& a = accesses_.emplace_back();
  a.cycle = c;
  a.first_line = first_line;
  a.lines = nlines;
  a.block = blocks_[size_t(w.block)].id;
  a.write = write;
  a.done = done;
  if (multicast) multicast_accesses_.push_back(index);
  if (write) return done;
  a.warp = int(&w - warps_.data());
  a.load_async = in.op == Opcode::kLdGlobalAsync;
  a.frag = in.frag;
  a.group = w.commits;
  ++w.pending;
  // The data comes no sooner than the quantum's end (an L2 round trip is longer than a quantum:
  // Gpu::Gpu); resolve() raises what this lower bound went into to the data's time.
  return std::max(done, qe_);
}

void Sm::prepare(size_t i) {
  AccessRecord& a = accesses_[i];
  RecordedLine* rl = &lines_[a.first_line];
  for (uint32_t k = 0; k < a.lines; ++k) {
    RecordedLine& l = rl[k];
    if (!l.multicast) continue;
    const ClusterMulticast::Taken t = multicast_->take(a.block, l.addr >> line_shift_);
    l.to_l2 = !t.copy;
    if (t.copy) {
      l2_line(size_t(&l - lines_.data())).copy = true;
      stats_.mem.multicast_bytes += uint64_t(32 * popcount4(l.sectors));
      l.copy_token = t.token;
      l.ready = std::max(t.ready, l.copy_floor);  // a token's: in resolve()
      continue;
    }
    l.read_token = multicast_->read(a.block, l.addr >> line_shift_);
  }
}

void Sm::settle_reads(Cycle q0) {
  for (const AccessRecord& a : accesses_) {
    if (a.write) continue;
    RecordedLine* rl = &lines_[a.first_line];
    for (uint32_t k = 0; k < a.lines; ++k) {
      RecordedLine& l = rl[k];
      if (!l.to_l2) continue;
      // A read line's data is usable from the first whole cycle after its ready tick.
      l.ready =
          Cycle(double(q0) + cycles_of(l2_line(size_t(&l - lines_.data())).line.ready) + 0.999999);
      if (l.read_token >= 0) multicast_->settle(l.read_token, l.ready);
    }
  }
}

void Sm::resolve() {
  // The L1's fills and the lookups that found them, in the order the SM made them.
  for (const L1Op& op : l1_ops_) {
    AccessRecord& a = accesses_[op.access];
    if (op.record) {
      const RecordedLine& l = lines_[a.first_line + op.line];
      l1_fills_.record(op.r, l.sectors, double(l.ready), double(a.cycle));
    } else {
      a.done = std::max(a.done, Cycle(l1_fills_.ready(op.r, op.sectors, op.t) + 0.999999));
    }
  }
  // Each load's data time goes where issue() put the quantum's end in its place: the
  // scoreboard, the cp.async group, the warp's last completion. (No instruction that waits for
  // it issued this quantum: each waited at least for the quantum's end.)
  std::vector<int>& touched = refresh_;
  touched.clear();
  for (AccessRecord& a : accesses_) {
    if (a.warp < 0) continue;
    RecordedLine* rl = &lines_[a.first_line];
    for (uint32_t k = 0; k < a.lines; ++k) {
      if (rl[k].copy_token >= 0) {  // a copy of a partner's read of this quantum
        rl[k].ready = std::max(multicast_->token_ready(rl[k].copy_token), rl[k].copy_floor);
      }
      a.done = std::max(a.done, rl[k].ready);
    }
    a.done = std::max(a.done, qe_);
    Warp& w = warps_[size_t(a.warp)];
    --w.pending;
    w.last_done = std::max(w.last_done, a.done);
    if (!a.load_async) {
      write_fragments(w, a.frag, a.done);
    } else if (a.group >= w.commits) {
      w.open_group = std::max(w.open_group, a.done);
    } else if (a.group >= w.group_base) {
      // groups[0] holds the folded oldest serials (commit_group), groups[k] the later ones.
      const uint64_t first = w.commits - uint64_t(w.ngroups);
      const size_t g = a.group > first ? size_t(a.group - first) : 0;
      w.groups[g] = std::max(w.groups[g], a.done);
    }
    if (w.active && w.next) touched.push_back(a.warp);
  }
  for (int slot : touched) {
    Warp& w = warps_[size_t(slot)];
    if (!w.active || !w.next) continue;
    // Its next instruction's dependencies again, from the resolved times (never earlier).
    const Cycle ready = w.ready, held = w.held;
    const Stall why = w.why;
    resolve_deps(w, w.fetched);
    if (w.at_barrier) {
      w.held = std::max(held, w.ready);
      w.ready = ready;
      w.why = why;
    } else if (w.ready <= ready) {
      w.ready = ready;
      w.why = why;
    }
  }
  for (const auto& [slot, c] : deferred_retire_) {
    Warp& w = warps_[size_t(slot)];
    const Cycle end = std::max({w.last_done, c + 1, w.open_group});
    stats_.warp_cycles += uint64_t(end - w.start);
    Block& b = blocks_[size_t(w.block)];
    b.retire = std::max(b.retire, end);
    --b.deferred;
  }
  deferred_retire_.clear();
  for (int slot : retired_blocks_) record_retire(blocks_[size_t(slot)]);
  retired_blocks_.clear();
}

void Sm::record_retire(const Block& b) {
  ++stats_.timed_blocks;
  stats_.timed_block_cycles += uint64_t(b.retire - b.start);
  retires_.push_back({b.retire, b.start, b.id, seq_++});
}

}  // namespace ltc::sim
