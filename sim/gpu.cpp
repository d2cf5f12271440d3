#include "sim/gpu.h"

#include "common/error.h"
#include "common/int_math.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

namespace ltc::sim {
namespace {

using traces::Instr;
using traces::Opcode;

// Bytes one SIMT load/store instruction moves per warp at most (32 threads x 16 bytes).
constexpr int64_t kSimtBytes = 512;

// With SimOptions::host_profile, a batch's wall time into the HostProfile: from construction to
// stop() (or the end of its scope).
class HostTimer {
 public:
  explicit HostTimer(HostProfile& h) : h_(h.on ? &h : nullptr), clock_(h.on) {}
  HostTimer(const HostTimer&) = delete;
  HostTimer& operator=(const HostTimer&) = delete;
  ~HostTimer() { stop(); }
  double seconds() const { return clock_.seconds(); }
  void stop() {
    if (!h_) return;
    h_->batch_s += seconds();
    ++h_->batches;
    h_ = nullptr;
  }

 private:
  HostProfile* h_;
  StepPool::Stopwatch clock_;
};

}  // namespace

int64_t smem_wavefronts(uint64_t bytes_per_thread, uint64_t stride, int banks) {
  // A warp's request is served in phases of 128 bytes' worth of threads (32 threads of 4 bytes,
  // 16 of 8, 8 of 16); in each phase, a bank that holds k distinct 4-byte words needs k cycles
  // (threads reading the same word share it: broadcast).
  const uint64_t e = std::max<uint64_t>(bytes_per_thread, 1);
  const uint64_t per_phase = std::max<uint64_t>(1, std::min<uint64_t>(32, uint64_t(banks) * 4 / e));
  int64_t total = 0;
  for (uint64_t first = 0; first < 32; first += per_phase) {
    std::vector<std::vector<uint64_t>> words(static_cast<size_t>(banks));
    for (uint64_t t = first; t < std::min<uint64_t>(32, first + per_phase); ++t) {
      for (uint64_t b = 0; b < e; b += 4) {
        const uint64_t word = (t * stride + b) / 4;
        auto& w = words[static_cast<size_t>(word % uint64_t(banks))];
        if (std::find(w.begin(), w.end(), word) == w.end()) w.push_back(word);
      }
    }
    size_t worst = 1;
    for (const auto& w : words) worst = std::max(worst, w.size());
    total += int64_t(worst);
  }
  return total;
}

Occupancy kernel_occupancy(const traces::Kernel& k, const hw::GpuConfig& gpu) {
  const int64_t wpb = k.warps_per_block();
  const std::string error =
      hw::block_limits_error(gpu, wpb, int64_t(k.regs_per_thread), int64_t(k.smem_bytes));
  if (!error.empty()) throw InputError("kernel " + k.name + ": " + error);
  return hw::block_occupancy(gpu, wpb, int64_t(k.regs_per_thread), int64_t(k.smem_bytes));
}

KernelPlan plan_kernel(const traces::Trace& trace, size_t index, const hw::GpuConfig& gpu,
                       const TensorCoreModel& tc, uint64_t& next_address) {
  const traces::Kernel& k = trace.kernels[index];
  const std::string where = "kernel " + k.name;
  KernelPlan plan;
  plan.kernel = &k;
  const hw::SmConfig& sm = gpu.sm;
  const int sps = gpu.sub_partitions_per_sm;
  const int sfu_per_sp = std::max(1, sm.sfu_ops_per_cycle / sps);
  const int64_t bank_bytes = int64_t(sm.smem_banks) * 4;

  const Occupancy occ = kernel_occupancy(k, gpu);
  plan.blocks_per_sm = occ.blocks_per_sm;
  plan.occupancy_limit = occ.limit;
  const int64_t smem_per_block = occ.smem_per_block;
  plan.l1_bytes = int64_t(gpu.l1_kb_per_sm) * 1024 - plan.blocks_per_sm * smem_per_block;

  // Tensors at fresh, 4 KiB-aligned global addresses.
  uint32_t max_id = 0;
  for (const auto& t : k.tensors) max_id = std::max(max_id, t.id);
  plan.tensor_base.assign(size_t(max_id) + 1, 0);
  plan.tensor_bytes.assign(size_t(max_id) + 1, 0);
  for (const auto& t : k.tensors) {
    plan.tensor_base[t.id] = next_address;
    plan.tensor_bytes[t.id] = t.bytes;
    next_address += (t.bytes + 4095) / 4096 * 4096;
    // The caches keep 32-bit line numbers (memory.h): 2^32 - 1 lines of address space.
    const uint64_t space = ((uint64_t(1) << 32) - 1) * uint64_t(gpu.sm.line_bytes);
    if (next_address > space) {
      throw InputError(where + ": the trace's tensors need more than the simulator's " +
                       std::to_string(space >> 30) + " GiB address space (tensor " + t.name +
                       "; a run allocates every kernel's tensors afresh)");
    }
  }

  plan.decoded.resize(k.program.size());
  for (size_t i = 0; i < k.program.size(); ++i) {
    const Instr& in = k.program[i];
    DecodedInstr& d = plan.decoded[i];
    // `int_ops` of the ops on the INT32 lanes: a sub-partition's share of the SM's CUDA cores
    // (GpuConfig::cuda_core_cycles, the roofline's rule too).
    auto cuda = [&](uint64_t ops, uint8_t reads, uint64_t int_ops = 0) {
      d.unit = Unit::kAlu;
      d.reads = reads;
      d.writes = kValues;
      d.thread_ops = ops;
      d.simt = uint32_t(std::max<uint64_t>(1, (ops + 31) / 32));
      constexpr double kMaxOccupancy = double(1 << 30);  // latency adds to it in an int32_t
      const double cycles = std::ceil(
          double(sps) * gpu.cuda_core_cycles(double(ops - int_ops), double(int_ops)) - 1e-9);
      d.occupancy = int32_t(std::clamp(cycles, 1.0, kMaxOccupancy));
      d.latency = d.occupancy + sm.alu_latency_cycles;
    };
    auto tensor = [&](const hw::TensorOpTiming& t, const golden::LmmaShape& shape) {
      d.unit = Unit::kTensor;
      d.reads = kFragments | kAccumulatorTile;
      d.writes = kAccumulatorTile;
      d.occupancy = int32_t(t.issue_cycles);
      d.latency = int32_t(t.latency_cycles);
      d.tensor_ops = 2ull * uint64_t(shape.m) * uint64_t(shape.n) * uint64_t(shape.k);
    };
    auto smem = [&](uint8_t reads, uint8_t writes) {
      d.unit = Unit::kLsu;
      d.reads = reads;
      d.writes = writes;
      d.simt = uint32_t(std::max<int64_t>(1, ceil_div(int64_t(in.bytes), kSimtBytes)));
      const int64_t ideal = std::max<int64_t>(1, ceil_div(int64_t(in.bytes), bank_bytes));
      d.wavefronts = in.stride ? int32_t(smem_wavefronts(in.bytes / 32, in.stride, sm.smem_banks))
                               : int32_t(ideal);
      d.conflict_wavefronts = d.wavefronts - int32_t(ideal);
      d.occupancy = d.wavefronts;
      d.latency = sm.smem_latency_cycles + d.wavefronts - 1;
    };
    d.addr_depth = uint8_t(in.addr.loop_depth());
    d.mn_depth = uint8_t(std::max(in.m.loop_depth(), in.n.loop_depth()));
    d.cluster_shared =
        in.op == Opcode::kLdGlobalAsync && in.addr.coef[size_t(traces::AffineVar::kBx)] == 0;
    try {
      switch (in.op) {
        case Opcode::kLdGlobal:
        case Opcode::kLdGlobalAsync:
        case Opcode::kStGlobal:
          d.unit = Unit::kLsu;
          d.global = true;
          d.reads = in.op == Opcode::kStGlobal ? uint8_t(kValues | kFragments) : uint8_t(0);
          d.writes = in.op == Opcode::kLdGlobal ? kFragments : 0;
          d.simt = uint32_t(std::max<int64_t>(1, ceil_div(int64_t(in.bytes), kSimtBytes)));
          break;
        case Opcode::kLdShared:
          smem(0, kFragments);
          break;
        case Opcode::kStShared:
          smem(kValues | kFragments, 0);
          break;
        case Opcode::kBarrier:
        case Opcode::kCommit:
        case Opcode::kWait:
          d.unit = Unit::kNone;
          break;
        case Opcode::kPrecompute:
        case Opcode::kQuantTable:
          cuda(in.cuda_ops(), kFragments | kValues);
          break;
        case Opcode::kAlu:
          cuda(in.cuda_ops(), kFragments | kValues, in.int_ops);
          break;
        case Opcode::kDequant:
          cuda(in.cuda_ops(), kFragments | kValues | kAllAccumulators);
          break;
        case Opcode::kSfu:
          d.unit = Unit::kSfu;
          d.reads = kFragments | kValues;
          d.writes = kValues;
          d.thread_ops = in.count;
          d.simt = uint32_t(std::max<uint64_t>(1, (in.count + 31) / 32));
          d.occupancy = int32_t(
              std::max<uint64_t>(1, (in.count + uint64_t(sfu_per_sp) - 1) / uint64_t(sfu_per_sp)));
          d.latency = d.occupancy + sm.sfu_latency_cycles;
          break;
        case Opcode::kLmma: {
          if (!gpu.has_lut_tensor()) {
            throw InputError(
                "lmma needs a GPU with LUT tensor cores; '" + gpu.name +
                "' has none (valid: a GPU with a lut_tensor section, e.g. a100-lut4x)");
          }
          tensor(tc.lmma(in.lmma), in.lmma.shape);
          d.lmma_plane_ops = d.tensor_ops * uint64_t(in.lmma.wbits);
          break;
        }
        case Opcode::kMma: {
          tensor(tc.mma(in.mma), in.mma.shape);
          break;
        }
        case Opcode::kLoop:
        case Opcode::kEndLoop:
          break;
      }
    } catch (const InputError& e) {
      throw InputError(where + ": instruction " + std::to_string(i) + " (" + in.str() +
                       "): " + e.what());
    }
  }
  return plan;
}

Gpu::Gpu(sc_core::sc_module_name name, const traces::Trace& trace, const hw::GpuConfig& gpu,
         const SimOptions& options, const TensorCoreModel& tc, const std::atomic<bool>& stop,
         IssueObserver* observer, std::vector<size_t> kernels)
    : sc_core::sc_module(name),
      trace_(trace),
      gpu_(gpu),
      options_(options),
      tc_(tc),
      stop_(stop),
      observer_(observer),
      kernels_(std::move(kernels)),
      dram_("dram", gpu, mem_),
      l2_("l2", gpu, mem_),
      quantum_(options.quantum_cycles),
      // The verilated tile (--tc rtl) is one model for all SMs: they step on one thread.
      pool_(tc.times_each_issue() ? 1 : std::max(1, options.threads)) {
  l2_.dram.bind(dram_.target);
  // One slice group per thread, taken by whichever thread is free: each group reads every
  // stepping SM's run of lines for it, and the SMs that sent lines wait for its slowest group.
  l2_.set_groups(pool_.threads());
  if (options.start_state) {
    l2_.load(*options.start_state);
    next_address_ = options.start_state->next_address;
    // The first kernel launches at cycle 0, the kernel gap after the state's kernel ended.
    const double start = -double(gpu.step_kernel_gap_cycles());
    l2_.set_backlog(options.start_state->l2_backlog, start);
    dram_.set_backlog(options.start_state->dram_backlog, start);
  }
  for (int i = 0; i < gpu.sms; ++i) {
    sms_.push_back(std::make_unique<Sm>(("sm" + std::to_string(i)).c_str(), i, gpu, dispatcher_));
    sms_.back()->l2.bind(l2_.target);
    sms_.back()->set_observer(observer);
    if (tc.times_each_issue()) sms_.back()->set_issue_timed_tensor_core(&tc);
    sms_.back()->set_multicast(&multicast_);
    sms_.back()->set_l2(&l2_);
  }
  // The SMs dealt to the threads in turn: thread t's range of a batch holds SMs t, t + threads,
  // ... (about), so that a kernel of fewer blocks than SMs (they take the first SMs) still
  // spreads over every thread.
  const size_t threads = size_t(pool_.threads());
  for (size_t t = 0; t < threads; ++t) {
    for (size_t i = t; i < sms_.size(); i += threads) deal_.push_back(i);
  }
  // An SM's slot in the L2's table of lines: its place in deal_, so that the SMs one thread
  // steps file theirs side by side.
  slot_.resize(sms_.size());
  for (size_t k = 0; k < deal_.size(); ++k) slot_[deal_[k]] = uint32_t(k);
  l2_.set_slots(sms_.size());
  result_.clock_ghz = gpu.clock_ghz;
  result_.host.on = options.host_profile;
  pool_.set_timing(options.host_profile);
  if (options.host_profile) {
    l2_.set_timing(&l2_serve_);
    chain_.set_timing(&l2_wait_);
  }
  SC_HAS_PROCESS(Gpu);
  SC_THREAD(run);
  SC_METHOD(progress_tick);
  sensitive << progress_event_;
  dont_initialize();
}

KernelStats Gpu::collect(Cycle end) {
  KernelStats ks;
  const traces::Kernel& k = *plan_.kernel;
  ks.name = k.name;
  ks.gemm = k.gemm.m > 0;
  ks.start_cycle = launch_;
  ks.cycles = end - launch_;
  for (auto& sm : sms_) {
    sm->finish_kernel(end);
    ks += sm->stats();
  }
  if (dispatcher_.policy()) {
    // The policy's choice of blocks in place of every block's (sim/dispatch_policy.h).
    if (const auto t = dispatcher_.policy()->timed_blocks()) {
      std::tie(ks.timed_blocks, ks.timed_block_cycles) = *t;
    }
  }
  ks.blocks_per_sm = plan_.blocks_per_sm;
  ks.occupancy_limit = plan_.occupancy_limit;
  ks.tensor_cores = uint64_t(gpu_.tensor_cores());
  ks.sms = gpu_.sms;
  ks.max_warps_per_sm = gpu_.sm.max_warps;
  ks.clock_ghz = gpu_.loaded_clock_ghz(ks.tensor_utilization());
  // L2 and DRAM counters are global: this kernel's share is what they gained during it.
  // (The SMs count no L2 or DRAM traffic, the L2 and DRAM nothing else.)
  l2_.flush_stats();
  for_each_memory_counter([](uint64_t& k, const uint64_t& g) { k += g; }, ks.mem, mem_);
  mem_ = MemoryStats{};
  return ks;
}

void Gpu::record_busy() {
  HostProfile& h = result_.host;
  if (!h.on) return;
  h.l2_serve_s = l2_serve_.load(std::memory_order_relaxed);
  h.l2_wait_s = l2_wait_.load(std::memory_order_relaxed);
  h.thread_busy_s.clear();
  if (pool_.threads() == 1) {
    h.thread_busy_s.push_back(h.batch_s);
  } else {
    for (int t = 0; t < pool_.threads(); ++t) h.thread_busy_s.push_back(pool_.busy(t));
  }
}

void Gpu::collect_partial() {
  record_busy();
  if (!in_kernel_) return;
  const Cycle end = std::max(now_cycles(), dispatcher_.last_retire());
  result_.kernels.push_back(collect(end));
  result_.cycles = end;
  in_kernel_ = false;
}

void Gpu::run() {
  wall_start_ = last_progress_ = std::chrono::steady_clock::now();
  Cycle t = 0;
  for (running_ = 0; running_ < kernels_.size(); ++running_) {
    if (stop_.load()) break;
    plan_ = plan_kernel(trace_, kernels_[running_], gpu_, tc_, next_address_);
    launch_ = now_cycles();
    dispatcher_.start(&plan_, launch_, options_.block_limit, options_.dispatch);
    freed_.clear();
    // Clusters only where the GPU has them (hw::SmConfig::cluster_size); elsewhere a cluster
    // kernel runs as independent blocks.
    const traces::Kernel& kernel = *plan_.kernel;
    multicast_.start(kernel.cluster_x <= gpu_.sm.cluster_size ? kernel.cluster_x : 1, kernel.grid_x,
                     dispatcher_.total());
    // Each SM clears its state and its L1 on the thread that steps it (StepPool::run's ranges).
    HostTimer timer(result_.host);
    pool_.run(sms_.size(), [&](size_t k) { sms_[deal_[k]]->begin_kernel(&plan_, launch_); });
    timer.stop();
    // The first wave: one block per SM per round, until every SM holds blocks_per_sm.
    for (int round = 0; round < plan_.blocks_per_sm; ++round) {
      bool any = false;
      for (auto& sm : sms_) any = sm->take_block(launch_) || any;
      if (!any) break;
    }
    next_.resize(sms_.size());
    for (size_t i = 0; i < sms_.size(); ++i) next_[i] = sms_[i]->next_cycle();
    stepped_.assign(sms_.size(), kNever);
    lines_.resize(sms_.size());
    ahead_.assign(sms_.size(), 0);
    role_.assign(sms_.size(), kIdle);
    sent_.assign(sms_.size(), 0);
    retires_.assign(sms_.size(), 0);
    due_.assign(sms_.size(), 0);
    stops_.assign(sms_.size(), kNever);
    stopped_.assign(sms_.size(), kNever);
    reported_.assign(sms_.size(), 0);
    in_kernel_ = true;
    if (observer_) observer_->begin_kernel(kernels_[running_]);
    progress_event_.notify(sc_core::SC_ZERO_TIME);
    while (!dispatcher_.finished()) {
      if (stop_.load()) return;  // simulate() collects what ran (collect_partial)
      const Cycle q0 = now_cycles();
      const Cycle next = step(q0);
      ++result_.host.quanta;
      if (dispatcher_.finished()) break;
      if (next >= kNever) {
        throw std::logic_error("sim: blocks of kernel " + kernel.name +
                               " are neither running nor retired");
      }
      wait(cycles(double(next - q0)));
    }
    const Cycle end = std::max(dispatcher_.last_retire(), now_cycles());
    if (end > now_cycles()) wait(cycles(double(end - now_cycles())));
    result_.kernels.push_back(collect(end));
    in_kernel_ = false;
    if (observer_) observer_->end_kernel(kernels_[running_]);
    t = end;
    result_.cycles = t;
    if (running_ + 1 < kernels_.size()) wait(cycles(double(gpu_.step_kernel_gap_cycles())));
  }
  if (options_.end_state) {
    l2_.save(*options_.end_state);
    options_.end_state->next_address = next_address_;
    options_.end_state->l2_backlog = l2_.backlog(double(t));
    options_.end_state->dram_backlog = dram_.backlog(double(t));
  }
  // The step's output still dirty in the L2: what writing it back to DRAM moves (RunStats).
  result_.end_writeback_bytes = l2_.dirty_bytes();
  record_busy();
  // No sc_stop(): with every SM idle the event queue drains and sc_start() returns.
}

Cycle Gpu::step(Cycle q0) {
  const Cycle qe = q0 + quantum_;
  // What this thread reads of the SMs between quanta lies in a few arrays of its own (next_,
  // lines_, retires_, ...), written by each SM's batch item: an SM's own state stays in the
  // cache of the thread that steps it. SMs the last merge stepped ahead through this quantum
  // (merge) take part in its merge without stepping again. An SM steps when it has work in the
  // quantum or a slot of it takes a block there; it stops at that slot's dispatch boundary.
  slot_stops(q0, qe, stops_);
  stepping_.clear();
  size_t to_step = 0;
  for (size_t i = 0; i < sms_.size(); ++i) {
    uint8_t& role = role_[i];
    role = kIdle;
    sent_[i] = 0;
    if (ahead_[i]) {
      if (ahead_q0_ != q0) throw std::logic_error("sim: an SM stepped ahead into another quantum");
      ahead_[i] = 0;
      role = kSettle;
    } else if (next_[i] < qe || stops_[i] < qe) {
      role = kStep;
      ++to_step;
    }
    if (role != kIdle) stepping_.push_back(sms_[i].get());
  }
  // Every batch over the SMs has one item per SM (an SM without work: nothing to do), in the
  // order deal_ gives them, so that an SM is stepped by the same thread from batch to batch
  // (StepPool::run).
  each_sm(to_step, [&](size_t i) {
    if (role_[i] == kStep) step_sm(*sms_[i], q0, qe, stops_[i]);
  });
  dispatch_within(q0, qe);
  // The L2's batch holds the SMs with lines (their order: the SMs' order).
  requests_.clear();
  size_t lines = 0;
  for (const Sm* sm : stepping_) {
    const SmLines& l = lines_[size_t(sm->id())];
    sent_[size_t(sm->id())] = l.count > 0;
    if (l.count == 0) continue;
    requests_.push_back(l);
    lines += l.count;
  }
  merge(q0, qe, lines);
  // Slots filled at qe start the next quantum there (also where no block was left for them:
  // the merge's step ahead counted on it).
  Cycle next = filled_at_end_ ? qe : kNever;
  for (const Cycle c : next_) next = std::min(next, c);
  // A slot freeing later is filled at its dispatch boundary.
  for (const Ref& f : freed_) next = std::min(next, f.cycle);
  return std::max(next, qe);
}

template <class Item>
void Gpu::each_sm(size_t busy, Item item) {
  const HostTimer timer(result_.host);  // the batch's wall time, with --host-profile
  if (busy > 1 && pool_.threads() > 1) {
    pool_.run(sms_.size(), [&](size_t k) { item(deal_[k]); });
  } else {
    for (const Sm* sm : stepping_) item(size_t(sm->id()));
  }
}

void Gpu::step_sm(Sm& sm, Cycle q0, Cycle qe, Cycle stop) {
  sm.step(q0, qe, stop);
  reported_[size_t(sm.id())] = 0;
  stepped(sm);
}

void Gpu::stepped(Sm& sm) {
  const size_t id = size_t(sm.id());
  stepped_[id] = sm.next_cycle();  // resolve() changes neither its cycle nor blocks
  stopped_[id] = sm.stopped_at();
  retires_[id] = uint32_t(sm.retire_records().size());
  const uint32_t slot = slot_[id];
  l2_.file_lines(slot, sm.group_lines());
  lines_[id] = sm.l2_requests(slot);
}

void Gpu::slot_stops(Cycle q0, Cycle qe, std::vector<Cycle>& stops) const {
  stops.assign(sms_.size(), kNever);
  if (!dispatcher_.handing_out()) return;  // no block for a slot: nothing to stop for
  for (const Ref& f : freed_) {
    if (f.cycle >= q0 && f.cycle < qe) stops[size_t(f.sm)] = std::min(stops[size_t(f.sm)], f.cycle);
  }
}

void Gpu::report_retires() {
  // An SM that stepped ahead (merge) holds the next quantum's records: that quantum reports them.
  for (const Sm* sm : stepping_) {
    const size_t id = size_t(sm->id());
    if (ahead_[id] || reported_[id] >= retires_[id]) continue;
    const auto& rs = sm->retire_records();
    for (uint32_t& i = reported_[id]; i < retires_[id]; ++i) {
      dispatcher_.retired(rs[i].id, rs[i].start, rs[i].at);
      freed_.push_back({dispatch_boundary(rs[i].at, launch_), sm->id(), i});
    }
  }
}

size_t Gpu::fill_slots(Cycle at) {
  // The slots whose dispatch boundary is `at` (or, not stepped to, before it) are filled SM by
  // SM (the block scheduler walks the SMs in order), each SM's in the order they freed.
  if (freed_.empty()) return 0;
  const auto due = std::stable_partition(freed_.begin(), freed_.end(),
                                         [&](const Ref& f) { return f.cycle <= at; });
  std::stable_sort(freed_.begin(), due, [](const Ref& a, const Ref& b) { return a.sm < b.sm; });
  for (auto f = freed_.begin(); f != due; ++f) {
    const int64_t id = dispatcher_.take();
    if (id >= 0) {
      sms_[size_t(f->sm)]->launch_at(id, at);
      next_[size_t(f->sm)] = sms_[size_t(f->sm)]->next_cycle();
    }
  }
  const size_t n = size_t(due - freed_.begin());
  freed_.erase(freed_.begin(), due);
  return n;
}

void Gpu::dispatch_within(Cycle q0, Cycle qe) {
  // Boundary by boundary: every SM has stepped to its stop or past it, so every slot that frees
  // before the earliest stop g is known (an SM stops at the first boundary where one of its slots
  // frees); those are filled at g and the SMs stopped there step on, to their next stop.
  report_retires();
  for (;;) {
    Cycle g = kNever;
    for (const Sm* sm : stepping_) g = std::min(g, stopped_[size_t(sm->id())]);
    if (g >= qe) return;
    fill_slots(g);
    slot_stops(q0, qe, stops_);
    size_t n = 0;
    for (const Sm* sm : stepping_) n += stopped_[size_t(sm->id())] == g;
    each_sm(n, [&](size_t i) {
      if (role_[i] != kIdle && stopped_[i] == g) {
        sms_[i]->resume(stops_[i]);
        stepped(*sms_[i]);
      }
    });
    report_retires();
  }
}

void Gpu::merge(Cycle q0, Cycle qe, size_t lines) {
  // The L2 (and DRAM behind it) takes the SMs' accesses in (issue cycle, SM, sequence) order,
  // which also decides the cluster multicast copies; it serves them per slice group (with its
  // DRAM channels) in parallel (L2::serve_phases), in that order on each.
  const bool multicast = multicast_.active();
  multicast_.begin_merge();
  if (multicast) {
    // Keys (cycle - q0, SM, index): one integer compare each.
    keys_.clear();
    for (Sm* sm : stepping_) {
      const auto& a = sm->access_records();
      for (const uint32_t i : sm->multicast_accesses()) {
        keys_.push_back(uint64_t(a[i].cycle - q0) << 48 | uint64_t(sm->id()) << 32 | i);
      }
    }
    std::sort(keys_.begin(), keys_.end());
    for (const uint64_t key : keys_) sms_[size_t(key >> 32 & 0xffff)]->prepare(uint32_t(key));
  }
  // A few lines are not worth an item per slice group (the SMs that sent lines wait for every
  // group's): there the L2 serves the quantum's lines as one item beside the SMs' items.
  constexpr size_t kParallelLines = 256;
  const bool parallel = lines >= kParallelLines;
  // One batch on the pool: the L2's phases (L2::serve_phases), then, with clusters, the reads'
  // data times (a multicast copy takes its partner's read's time: every read settled first),
  // then each SM's loads' data times (and its step ahead, below).
  phases_.clear();
  l2_.serve_phases(requests_, sc_core::sc_time_stamp().value(), quantum_, dram_, parallel, phases_);
  const std::function<void(size_t)> settle = [&](size_t) {
    for (Sm* sm : stepping_) {
      if (sent_[size_t(sm->id())]) sm->settle_reads(q0);
    }
  };
  if (multicast) phases_.push_back({1, &settle});
  // An SM that retired no block and has no slot due at this merge steps through the next
  // quantum at once, in the same batch item, when that quantum is sure to start at this one's
  // end: some SM has work by this quantum's end (anchored_: an SM not stepping this quantum, a
  // slot freeing there, or an SM whose step ended there; resolve() changes neither an SM's cycle
  // nor its blocks) and this SM has work within the next quantum. Nothing this thread does
  // before that quantum touches the SM (the dispatcher fills only the slots due; the observer,
  // when there is one, wants every SM's issues first: then none steps ahead), so the step is the
  // one the next quantum would make: an SM's step reads only its own state and the quantum's
  // bounds.
  const bool ahead = pool_.threads() > 1 && !observer_ && !stop_.load();
  if (ahead) {
    anchored_ = false;
    for (const Ref& f : freed_) {
      due_[size_t(f.sm)] |= f.cycle <= qe;
      anchored_ = anchored_ || f.cycle == qe;
    }
    for (size_t i = 0; i < sms_.size() && !anchored_; ++i) {
      anchored_ = (role_[i] == kIdle ? next_[i] : stepped_[i]) <= qe;
    }
    ahead_q0_ = qe;
    slot_stops(qe, qe + quantum_, stops_);
  }
  const auto resolve = [&](size_t id) {
    Sm& sm = *sms_[id];
    if (role_[id] == kIdle) {
      // An SM without work in this quantum may have some in the next.
      if (ahead && anchored_ && !due_[id] && next_[id] < qe + quantum_) {
        step_sm(sm, qe, qe + quantum_, stops_[id]);
        ahead_[id] = 1;
      }
      return;
    }
    if (!multicast) sm.settle_reads(q0);
    sm.resolve();
    next_[id] = sm.next_cycle();
    retires_[id] = uint32_t(sm.retire_records().size());
    if (ahead && anchored_ && retires_[id] == 0 && !due_[id] && next_[id] < qe + quantum_) {
      step_sm(sm, qe, qe + quantum_, stops_[id]);
      ahead_[id] = 1;
    }
  };
  // Items with work: every SM may step ahead. On the pool, an item per SM in deal_'s order (an
  // SM is resolved and stepped by the same thread from quantum to quantum); else the stepping
  // SMs here. Where SMs step ahead and some sent the L2 lines, the batch is one phase: the L2's
  // items (one per slice group, or the one item that serves a small quantum's lines), with
  // clusters the multicast settle, and the SMs: steps, each of whose items needs every item of
  // the step before it; an SM that sent lines needs every item of the last. What an item needs
  // it finishes: it runs every item of that step no thread has taken yet (each once the step
  // before is finished), then waits for those others took (StepPool::Chain), so the phase ends
  // whichever threads the host runs, and threads that need a step at once share its items. An
  // SM that sent no line needs nothing. Each thread's range holds its share of the first step,
  // its SMs without lines, its share of the later steps, then its SMs with lines: the SMs
  // without lines, most of the work, keep it busy while the steps follow each other.
  const size_t busy = ahead ? sms_.size() : parallel ? stepping_.size() : 1;
  HostTimer timer(result_.host);  // the batch's wall time, with --host-profile
  if (pool_.threads() > 1 && (busy > 1 || parallel)) {
    const std::function<void(size_t)> each = [&](size_t k) { resolve(deal_[k]); };
    const size_t steps = phases_.size();
    const std::function<void(size_t)> flow = [&](size_t k) {
      const int32_t item = first_items_[k];
      if (item < 0) {
        const auto [j, i] = chain_.locate(size_t(-1 - item));
        return chain_.take(j, i);
      }
      const size_t id = deal_[size_t(item)];
      if (sent_[id]) {
        chain_.finish(steps - 1, size_t(item));
        if (result_.host.on) chain_end_.note(timer.seconds());
      }
      resolve(id);
    };
    StepPool::Phase batch[1];
    if (ahead && steps > 0) {
      chain_.reset(phases_.data(), steps);
      const size_t threads = size_t(pool_.threads()), n = sms_.size();
      first_items_.clear();
      const auto l2_share = [&](size_t t, size_t j) {
        const size_t m = phases_[j].n;
        for (size_t i = t * m / threads; i < (t + 1) * m / threads; ++i) {
          first_items_.push_back(-1 - int32_t(chain_.first_of(j) + i));
        }
      };
      const auto sm_share = [&](size_t t, bool lines) {
        for (size_t k = t * n / threads; k < (t + 1) * n / threads; ++k) {
          if (bool(sent_[deal_[k]]) == lines) first_items_.push_back(int32_t(k));
        }
      };
      for (size_t t = 0; t < threads; ++t) {
        l2_share(t, 0);
        sm_share(t, false);
        for (size_t j = 1; j < steps; ++j) l2_share(t, j);
        sm_share(t, true);
      }
      batch[0] = {first_items_.size(), &flow};
      chain_end_.reset();
      pool_.run(batch, 1);
      result_.host.l2_chain_s += chain_end_.seconds();
    } else {
      phases_.push_back({sms_.size(), &each});
      pool_.run(phases_.data(), phases_.size());
    }
  } else {
    StepPool::run_here(phases_.data(), phases_.size());
    for (const Sm* sm : stepping_) resolve(size_t(sm->id()));
  }
  timer.stop();
  if (ahead) {
    for (const Ref& f : freed_) due_[size_t(f.sm)] = 0;
  }
  if (observer_) {
    order_.clear();
    for (Sm* sm : stepping_) {
      const auto& r = sm->issue_records();
      for (uint32_t i = 0; i < r.size(); ++i) order_.push_back({r[i].cycle, sm->id(), i});
    }
    std::sort(order_.begin(), order_.end());
    for (const Ref& o : order_) {
      const IssueRecord& r = sms_[size_t(o.sm)]->issue_records()[o.seq];
      observer_->on_issue(*r.in, r.point, r.warp_id);
    }
  }
  // Retirements: the dispatcher (and its policy) learns of each as the merge finds it, SM by
  // SM (those whose end the step knew at dispatch_within). A slot takes the dispatcher's next
  // block at its dispatch boundary: here if that is this quantum's end, else at the step of the
  // quantum it falls in (slot_stops; a block whose end resolve() found frees after this one).
  report_retires();
  filled_at_end_ = fill_slots(qe) > 0;
}

void Gpu::progress_tick() {
  if (!options_.progress || stop_.load()) return;
  const auto now = std::chrono::steady_clock::now();
  if (std::chrono::duration<double>(now - last_progress_).count() >= options_.progress_every_s &&
      in_kernel_) {
    last_progress_ = now;
    Progress p;
    p.kernel = running_;
    p.kernels = kernels_.size();
    p.name = plan_.kernel->name;
    p.blocks = dispatcher_.total();
    p.blocks_done = dispatcher_.retired_count();
    p.cycles = now_cycles();
    p.wall_s = std::chrono::duration<double>(now - wall_start_).count();
    options_.progress(p);
  }
  if (in_kernel_) next_trigger(cycles(20000));
}

}  // namespace ltc::sim
