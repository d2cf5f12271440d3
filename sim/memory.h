// The memory system below the SMs: a sliced L2 and DRAM channels, as SystemC modules joined by
// TLM-2.0 sockets (SM -> L2 -> DRAM). Loosely timed: an SM runs ahead of SystemC time by up to a
// quantum and calls b_transport with its local offset as the annotated delay; each target adds
// the time the request spends there (queueing behind earlier requests on a slice or a channel,
// then the latency) and returns. No event per request, no heap allocation per request.
// One transaction carries the lines of one warp instruction (LineBurst), and one the DRAM
// traffic those cause (DramBurst): each line keeps its own arrival tick and is served in the
// order it was sent, so the slices, channels and tags see exactly what one transaction per line
// would show them; only the socket calls and time conversions per line are saved.
//
// Time unit: SystemC time counts SM clock cycles, 1 ns = 1 cycle (sim/README.md).
#pragma once

#include "model/hw/gpu.h"
#include "sim/stats.h"
#include "sim/step_pool.h"

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <new>
#include <numeric>
#include <vector>

namespace ltc::sim {

// The s with 2^s >= v, the least: the shift of a power-of-two size (line bytes).
inline int log2_exact(int v) {
  int s = 0;
  while ((1 << s) < v) ++s;
  return s;
}

// SystemC's default time resolution is 1 ps, so one cycle (1 ns) is 1000 ticks; the conversions
// work on the integer tick count (no unit arithmetic per request).
inline constexpr double kTicksPerCycle = 1000;
inline Cycle now_cycles() {
  return Cycle((sc_core::sc_time_stamp().value() + 500) / 1000);
}
// A (fractional) cycle count as the ticks of an annotated delay: rounded to the nearest tick,
// never below zero; and ticks back to cycles. Every delay the memory system passes goes through
// these, so a burst's lines get the same times as separate transactions would.
// (Through int64_t: one instruction each way on x86-64, where the unsigned conversions take a
// branch; the same values below 2^63 ticks.)
inline uint64_t ticks_of(double c) {
  return c > 0 ? uint64_t(int64_t(c * kTicksPerCycle + 0.5)) : 0;
}
inline double cycles_of(uint64_t ticks) {
  return double(int64_t(ticks)) * (1.0 / kTicksPerCycle);
}
inline sc_core::sc_time cycles(double c) {
  // sc_time::from_value is an out-of-line library call on every request; one tick times the
  // count is inline and exact (sc_time's operator* rounds the product, exact below 2^52 ticks).
  static const sc_core::sc_time kTick = sc_core::sc_time::from_value(1);
  return kTick * double(ticks_of(c));
}
inline double to_cycles(const sc_core::sc_time& t) {
  return cycles_of(t.value());
}

// Starts loading the host cache line holding `p`. GCC 12 drops __builtin_prefetch when the
// address comes from FastMod's 128-bit product (the set index), so on x86 the instruction is
// written out.
inline void prefetch_host_line(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}

// Set bits among the four sector bits of a line's mask (x86-64's baseline has no popcnt).
inline int popcount4(uint32_t m) {
  static constexpr uint8_t kBits[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};
  return kBits[m & 15];
}

// The sector mask (bit i: sector i) of bytes [lo, hi) of one line, 0 <= lo < hi <= line bytes:
// sectors lo / 32 .. ceil(hi / 32) - 1.
inline uint32_t sectors_of(uint64_t lo, uint64_t hi) {
  return ((1u << ((hi + 31) / 32)) - 1) & ~((1u << (lo / 32)) - 1);
}

// x mod d for a fixed d without a division (Lemire, Kaser and Kurz 2019, "Faster remainder by
// direct computation"): exact for every 32-bit x; wider x is folded first.
class FastMod {
 public:
  FastMod() = default;
  explicit FastMod(uint32_t d) : d_(d), m_(d ? ~uint64_t(0) / d + 1 : 0) {}
  uint32_t operator()(uint64_t x) const {
    const uint32_t x32 = uint32_t(x ^ (x >> 32));
    const uint64_t low = m_ * x32;
    return uint32_t((static_cast<unsigned __int128>(low) * d_) >> 64);
  }
  uint32_t divisor() const { return d_; }

 private:
  uint32_t d_ = 0;
  uint64_t m_ = 0;
};

// Spreads consecutive lines over slices the way address hashing does on real GPUs (strided
// streams must not all land on one slice).
inline uint64_t mix_line(uint64_t x) {
  x ^= x >> 17;
  x *= 0xed5ad4bbu;
  x ^= x >> 11;
  x *= 0xac4c1b51u;
  x ^= x >> 15;
  return x;
}

// Where a line lives: its L2 slice, a hash of the line over the slices, and its DRAM channel. The
// slices sit in the memory partitions, so a slice's misses and write-backs go to its partition's
// channels: the S slices and C channels fall into P = gcd(S, C) partitions of S/P consecutive
// slices and C/P consecutive channels (an A100's 80 and 40: 40 of 2 slices and a channel; an
// H100's 96 and 80: 16 of 6 and 5), the line hashed over its partition's channels, so every
// channel takes the same share.
class AddressMap {
 public:
  AddressMap(int slices, int channels, int line_bytes)
      : slices_(uint32_t(slices)),
        channels_(uint32_t(channels)),
        partitions_(std::gcd(uint32_t(slices), uint32_t(channels))),
        line_shift_(log2_exact(line_bytes)) {}
  uint32_t partitions() const { return partitions_; }
  uint32_t slice_of(uint64_t addr) const { return slices_(mix_line(addr >> line_shift_)); }
  uint32_t partition_of(uint32_t s) const { return s / (slices_.divisor() / partitions_); }
  uint32_t channel_of(uint64_t addr) const { return channel_of(slice_of(addr), addr); }
  // The channel, among slice s's partition's, that takes the line's misses and write-backs. For
  // a line in its own slice, channel_of(addr); a line the sampler copied into another slice
  // (uncut_l2, standing in for one that slice would hold) writes back to that slice's channels.
  uint32_t channel_of(uint32_t s, uint64_t addr) const {
    const uint32_t n = channels_ / partitions_;
    return partition_of(s) * n + uint32_t(((mix_line(addr >> line_shift_) >> 32) * n) >> 32);
  }

 private:
  FastMod slices_;
  uint32_t channels_, partitions_;
  int line_shift_;
};

// A port that moves `rate` bytes per cycle: requests queue behind each other (first come, first
// served in call order).
class BandwidthPort {
 public:
  explicit BandwidthPort(double bytes_per_cycle = 1) : rate_(bytes_per_cycle) {
    for (int n = 0; n <= 4; ++n) sector_cycles_[n] = double(32 * n) / rate_;
  }
  // Cycle at which a transfer of `bytes` arriving at `t` starts; the port is busy until it ends.
  double reserve(double t, double bytes) {
    const double start = t > free_ ? t : free_;
    free_ = start + bytes / rate_;
    return start;
  }
  // reserve(t, 32 * n) for n = 0..4 sectors, the division done once at construction (the same
  // quotient, so the same result bit for bit).
  double reserve_sectors(double t, int n) {
    const double start = t > free_ ? t : free_;
    free_ = start + sector_cycles_[n];
    return start;
  }
  // A TLM payload of `len` bytes: whole sectors (up to a line) take the table, the rest divide.
  double reserve_payload(double t, unsigned len) {
    return len % 32 == 0 && len <= 128 ? reserve_sectors(t, int(len / 32))
                                       : reserve(t, double(len));
  }
  double free_at() const { return free_; }
  void set_free_at(double t) { free_ = t; }
  void reset() { free_ = 0; }

 private:
  double rate_;
  double free_ = 0;
  double sector_cycles_[5] = {};
};

// Set-associative tags with 32-byte sectors and LRU replacement (L1, L2 slices).
class SectorCache {
 public:
  SectorCache() = default;
  // `hashed_sets`: a line's set is a hash of its line number (the L2's slices, whose lines come
  // hashed over the slices: the low bits of the lines a strided stream touches at one time are
  // alike, and with the line number's low bits as the index they would all fall in a few sets of
  // each slice). Otherwise the low bits index the set (the L1).
  SectorCache(uint64_t capacity_bytes, int ways, int line_bytes, bool hashed_sets = false);
  struct Result {
    uint32_t missed = 0;         // sectors of the request that were not present
    uint32_t evicted_dirty = 0;  // dirty sectors written back by the replacement
    uint64_t evicted_line_addr = 0;
    uint32_t slot = kNoSlot;  // set * ways + way of the line now (kNoSlot: no capacity)
    bool installed = false;   // the line took a way anew (it was missing)
  };
  static constexpr uint32_t kNoSlot = ~uint32_t(0);
  uint64_t slots() const { return sets_ * uint64_t(ways_); }
  // Looks up `sectors` (bit i: sector i of the line) of the line holding `line_addr` and installs
  // them; `write` marks them dirty (write-back).
  Result access(uint64_t line_addr, uint32_t sectors, bool write);
  // A host-side hint: start loading the set of `line_addr` into the host's caches (a warp's
  // lines are looked up one after another; their misses then overlap). No simulated effect.
  void prefetch(uint64_t line_addr) const {
    if (sets_ == 0) return;
    const size_t index = set_of(line_addr >> line_shift_);
    const uint64_t* set = &sets_data_[index * stride_];
    prefetch_host_line(set);
    if (stride_ > 8) prefetch_host_line(set + 8);
  }
  // The first slot (Result::slot) of the set of `line_addr` (a host-side hint's address).
  uint64_t first_slot(uint64_t line_addr) const {
    return sets_ == 0 ? 0 : uint64_t(set_of(line_addr >> line_shift_)) * uint64_t(ways_);
  }
  void clear();
  // The lines of kernels that are not simulated pass through (sampled simulation's repeats):
  // each set takes, per stream, a Poisson(installs_per_set) count of new lines, which push out
  // its least recent ones (their write-back is the kernel's, not the cache's to time) and
  // become its most recent, the newest stream's most recent of all, each dirty with its
  // stream's probability. The new lines are fillers no request names (tags counted down from
  // the top of the line space in `filler`). Deterministic in `seed`. The dirty lines numbered
  // [keep_from, keep_to) stay the most recent, the new lines just below them (the outputs a
  // kernel wrote after the lines streamed for it).
  struct Stream {
    double installs_per_set = 0, dirty = 0;
  };
  void stream(const std::vector<Stream>& newest_first, uint32_t& filler, uint64_t seed,
              uint32_t keep_from = 0, uint32_t keep_to = 0);
  uint64_t sets() const { return sets_; }
  uint64_t dirty_sectors() const;  // of the valid lines
  uint64_t empty_slots() const;    // ways holding no line
  bool same_shape(const SectorCache& o) const {
    return sets_ == o.sets_ && ways_ == o.ways_ && line_shift_ == o.line_shift_ &&
           hashed_sets_ == o.hashed_sets_;
  }

 private:
  uint32_t set_of(uint64_t line) const {
    if (!hashed_sets_) return set_of_(line);
    // A multiply-xorshift mix with other constants than the slices' (mix_line), so that the
    // lines of one slice spread over all its sets.
    line ^= line >> 16;
    line *= 0x7feb352du;
    line ^= line >> 15;
    line *= 0x846ca68bu;
    line ^= line >> 16;
    return set_of_(line);
  }
  // 64-byte aligned storage (a host cache line), so that a set never straddles more host cache
  // lines than its size needs.
  template <class T>
  struct LineAligned {
    using value_type = T;
    LineAligned() = default;
    template <class U>
    LineAligned(const LineAligned<U>&) {}
    T* allocate(size_t n) {
      return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(64)));
    }
    void deallocate(T* p, size_t) { ::operator delete(p, std::align_val_t(64)); }
    bool operator==(const LineAligned&) const { return true; }
    bool operator!=(const LineAligned&) const { return false; }
  };
  // One set's ways lie together in one block of `stride_` words (a lookup touches one block):
  // the line numbers (32 bits: 2^32 lines of 128 B, 512 GiB, the simulated address space; the
  // launcher refuses more), then an LRU rank per way (0: most recent; a permutation), then the
  // valid and dirty sector masks. Blocks are padded to a power of two up to 64 bytes, else to a
  // multiple of 64 bytes, so that a lookup touches as few host cache lines as possible (two for
  // a 16-way L2 set, both prefetched by prefetch()).
  static constexpr uint32_t kNoLine = ~uint32_t(0);
  uint64_t sets_ = 0;
  FastMod set_of_;
  bool hashed_sets_ = false;
  int ways_ = 0;
  int line_shift_ = 7;
  size_t stride_ = 0;  // in 8-byte words
  std::vector<uint64_t, LineAligned<uint64_t>> sets_data_;
};

// When the data of a cache's lines arrives, per way (SectorCache::Result::slot): a request that
// finds sectors a miss installed, before that miss's data is back, waits for it, as a cache's
// miss-status registers merge it into the outstanding miss. (Without it a second reader of a
// line got it at the hit latency while the first still waited for DRAM.) The L1s and the L2
// slices keep one each beside their tags, which sampled simulation saves and restores; fills do
// not outlast a run.
class FillTimes {
 public:
  void resize(uint64_t slots) { fills_.assign(size_t(slots), 0); }
  // A host-side hint: start loading the words of slots from `slot` on.
  void prefetch(uint64_t slot) const {
    if (slot < fills_.size()) prefetch_host_line(&fills_[size_t(slot)]);
  }
  void clear() { std::fill(fills_.begin(), fills_.end(), 0); }
  // When the data of `sectors` of the access `r` at cycle `now` arrives: `now` when none of
  // them is on its way (a line installed anew has nothing on its way before its own miss is
  // recorded).
  double ready(const SectorCache::Result& r, uint32_t sectors, double now) const {
    if (r.slot == SectorCache::kNoSlot || r.installed) return now;
    const uint32_t f = fills_[r.slot];
    if (!(f & sectors & kSectors)) return now;
    const double ahead = double(ahead_of(f, now));
    return ahead > 0 ? std::floor(now) + ahead : now;
  }
  // The missed sectors of the access `r` at cycle `now` arrive at cycle `ready`; sectors still
  // on their way from an earlier miss of the line then come no sooner.
  void record(const SectorCache::Result& r, uint32_t sectors, double ready, double now) {
    if (r.slot == SectorCache::kNoSlot) return;
    uint32_t& f = fills_[r.slot];
    const double a = std::ceil(ready - std::floor(now));
    const int32_t ahead = a > 0 ? int32_t(std::min(a, double(kMaxAhead))) : 0;
    if (r.installed || ahead_of(f, now) <= 0) {
      f = pack(now, ahead, sectors);
    } else {
      f = pack(now, std::max(ahead, ahead_of(f, now)), (f | sectors) & kSectors);
    }
  }

 private:
  // One word per way: the arrival cycle's low 28 bits, then the sectors on their way (4 bits).
  // Arrivals are read as cycles ahead of `now` (a 28-bit difference: fills come within far
  // less than 2^27 cycles), so a run may be as long as it likes.
  static constexpr uint32_t kSectors = 0xf;
  static constexpr int32_t kMaxAhead = (1 << 26);
  static uint32_t pack(double now, int32_t ahead, uint32_t sectors) {  // ahead >= 0
    const uint32_t at = uint32_t(uint64_t(std::floor(now)) + uint64_t(ahead));
    return at << 4 | (sectors & kSectors);
  }
  static int32_t ahead_of(uint32_t f, double now) {
    const uint32_t at = f >> 4, cur = uint32_t(uint64_t(std::floor(now))) & 0x0fffffffu;
    return int32_t((at - cur) << 4) >> 4;  // sign-extended 28-bit difference
  }
  std::vector<uint32_t> fills_;
};

// What an SM asks of L2 for one warp instruction: the payload's address is the first line, its
// data length the bytes of all requested sectors, its command READ or WRITE; this extension
// lists the lines, in the order the L2 serves them, each with its sector mask (bit i: sector i)
// and its arrival as ticks after the current SystemC time. The L2 sets each read line's `ready`
// (ticks after the current time at which its data is back) and the payload's delay to the
// latest of them. A payload without it is one line: all sectors its bytes cover.
struct LineBurst : tlm::tlm_extension<LineBurst> {
  struct Line {
    uint64_t addr = 0;
    uint32_t sectors = 0;
    uint64_t enter = 0;  // ticks
    uint64_t ready = 0;  // ticks, reads
  };
  std::vector<Line> lines;  // capacity kept between transactions
  tlm::tlm_extension_base* clone() const override { return new LineBurst(*this); }
  void copy_from(const tlm::tlm_extension_base& e) override {
    lines = static_cast<const LineBurst&>(e).lines;
  }
};

// The DRAM traffic of one L2 burst, in the order the L2 caused it: dirty write-backs (posted)
// and line fills, each arriving `at` ticks after the current time. The DRAM sets each fill's
// `ready` ticks. The payload's command is IGNORE (the operations carry their own); a payload
// without it is one plain read or write.
struct DramBurst : tlm::tlm_extension<DramBurst> {
  struct Op {
    uint64_t addr = 0;
    uint32_t channel = 0;  // the DRAM channel (AddressMap)
    uint32_t bytes = 0;
    bool write = false;
    uint64_t at = 0;     // ticks
    uint64_t ready = 0;  // ticks, fills
    size_t line = 0;     // the LineBurst line a fill serves
  };
  std::vector<Op> ops;
  tlm::tlm_extension_base* clone() const override { return new DramBurst(*this); }
  void copy_from(const tlm::tlm_extension_base& e) override {
    ops = static_cast<const DramBurst&>(e).ops;
  }
};

// One line of a batch the L2 serves (L2::serve_phases): the line as a burst carries it (its ready
// ticks set for reads), its slice, and whether it is served at all. Written by the SM that sends
// it; serving it writes only `line.ready`.
struct L2Line {
  LineBurst::Line line;  // enter ticks after the batch's time; ready set for reads
  bool write = false;
  bool copy = false;    // a cluster partner's copy (sim/cluster.h): not served
  uint16_t offset = 0;  // its issue cycle's offset in the quantum (the merge's order)
  uint32_t slice = 0;
};

// What serving an L2Line found: its lookup, its DRAM operations (a dirty victim's write-back, a
// fill), and when its data is there; kept by what serves the line (a slice group of
// L2::serve_phases, in the memory of the thread that serves it).
struct L2Work {
  SectorCache::Result found;
  double done = 0;  // cycles
  using Op = DramBurst::Op;
  Op ops[2];
  uint8_t nops = 0;
};

// One SM's lines of a quantum for L2::serve_phases. The SM keeps them per group of slices
// (L2::group_of), each group's in the order it issued them, and files those runs under its slot
// in the L2's table (L2::file_lines); refs[i] says where its i-th line is: the group (the bits
// above kPosBits) and the place in the group's run.
struct SmLines {
  static constexpr uint32_t kPosBits = 24, kPosMask = (uint32_t(1) << kPosBits) - 1;
  const uint32_t* refs = nullptr;
  uint32_t count = 0;  // lines
  uint32_t slot = 0;
};

class Dram : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<Dram> target;
  Dram(sc_core::sc_module_name name, const hw::GpuConfig& gpu, MemoryStats& stats);
  size_t channels() const { return channels_.size(); }
  uint32_t channel_of(uint64_t addr) const { return map_.channel_of(addr); }
  // One operation arriving `at` ticks after `now` (ticks) on `channel`, counted in `stats`;
  // returns a read's ready ticks. (L2::serve_phases calls it per channel, in order.)
  uint64_t serve(uint64_t now, uint32_t channel, unsigned bytes, bool write, uint64_t at,
                 MemoryStats& stats);
  // The channels' work queued past cycle `end`; restored so that it resumes at cycle `start`
  // (MemoryState::dram_backlog).
  std::vector<double> backlog(double end) const;
  void set_backlog(const std::vector<double>& backlog, double start);

 private:
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  std::vector<BandwidthPort> channels_;
  AddressMap map_;
  double latency_cycles_;  // load-to-use beyond the L2 hit latency
  MemoryStats& stats_;
};

// A checkpoint of the memory system between two simulate() runs (SimOptions::start_state,
// end_state): the L2's lines (tags, valid and dirty sectors, LRU order), the next free global
// address and the work still queued. Layers above the core (sim/sampler/checkpoint.h) may edit it
// between runs.
struct MemoryState {
  std::vector<SectorCache> l2_slices;
  uint64_t next_address = 0;
  // The cycles each L2 slice and DRAM channel stayed busy past the last kernel's end (the
  // write-backs its misses posted, still queued): the next kernel, launched the GPU's kernel gap
  // later, finds what is left of them. Empty: none.
  std::vector<double> l2_backlog, dram_backlog;
};

class L2 : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<L2> target;  // one binding per SM
  tlm_utils::simple_initiator_socket<L2> dram;
  L2(sc_core::sc_module_name name, const hw::GpuConfig& gpu, MemoryStats& stats);
  ~L2() override;
  // The slices' lines into / from a MemoryState (load checks that the slicing is the same).
  void save(MemoryState& state) const;
  void load(const MemoryState& state);
  // Bytes of the dirty sectors the slices hold (a flush's DRAM writes).
  uint64_t dirty_bytes() const;
  // The slices' ports' work queued past cycle `end`, restored from `start` (as Dram's).
  std::vector<double> backlog(double end) const;
  void set_backlog(const std::vector<double>& backlog, double start);
  // Host-side hint for a request about to come (SectorCache::prefetch); no simulated effect.
  void prefetch(uint64_t line_addr) const {
    const Slice& s = slices_[slice_of(line_addr)];
    s.tags.prefetch(line_addr);
    s.fills.prefetch(s.tags.first_slot(line_addr));
  }
  uint32_t slice_of(uint64_t line_addr) const { return map_.slice_of(line_addr); }
  // The slices in `groups` groups of whole memory partitions (AddressMap) that serve_phases
  // serves in parallel; 1 by default.
  void set_groups(int groups);
  int groups() const { return int(groups_.size()); }
  uint32_t group_of(uint32_t slice) const { return group_of_slice_[slice]; }
  // The table of lines: `slots` slots per slice group, each group's in a row of its own, so
  // that a group finds its lines of every SM from a few host cache lines (not from each SM's).
  // An SM files its runs of lines (one per group, kept as they are until the batch is served)
  // under its slot: every group's row gets the slot's entry.
  void set_slots(size_t slots);
  void file_lines(uint32_t slot, std::vector<L2Line>* groups) {
    for (size_t g = 0; g < groups_.size(); ++g) {
      runs_[g * slots_ + slot] = {groups[g].data(), uint32_t(groups[g].size())};
    }
  }
  // Appends to `phases` the phases of a StepPool batch that serve the lines of `sms` (those not
  // a copy) as b_transport would serve them one burst after another in (issue cycle, SM, index)
  // order, at SystemC time `now` (ticks), with `dram` behind: with `parallel`, an item per slice
  // group (its partitions' slices and channels are its own: AddressMap), which serves its lines one
  // after another; else one item that serves the groups in turn. Each slice's and each channel's
  // work is in the lines' order, which is all that orders them. `quantum`: the cycles the
  // lines' offsets span. `sms` and `dram` are read until the phases ran; the lines' ready times
  // are set when they have.
  void serve_phases(const std::vector<SmLines>& sms, uint64_t now, int64_t quantum, Dram& dram,
                    bool parallel, std::vector<StepPool::Phase>& phases);
  // The slices' and the batches' DRAM channels' counters into the L2's MemoryStats (serve_phases
  // keeps them apart until asked).
  void flush_stats();
  // SimOptions::host_profile: the wall time of serving each group's lines is added to `served`
  // (null: not counted).
  void set_timing(std::atomic<double>* served) { served_ = served; }

 private:
  void b_transport(int id, tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  // A line at its slice: the port, the tags, the DRAM operations it causes (ops, not served).
  void lookup(const L2Line& l, L2Work& w, double now);
  // After its DRAM operations are served: fills in flight, the line's ready ticks.
  void finish(L2Line& l, L2Work& w, double now);
  void add_slice_stats();  // the slices' counters into stats_
  struct Slice {
    SectorCache tags;
    BandwidthPort port;
    FillTimes fills;    // its lines' DRAM reads in flight
    MemoryStats stats;  // counted here, added to the L2's (add_slice_stats)
  };
  std::vector<Slice> slices_;
  AddressMap map_;
  int line_shift_;
  double hit_latency_cycles_;
  MemoryStats& stats_;
  tlm::tlm_generic_payload dram_payload_;
  DramBurst dram_ops_;
  LineBurst one_line_;               // a payload without a LineBurst
  std::vector<L2Line> burst_lines_;  // b_transport's burst as L2Lines
  std::vector<L2Work> burst_work_;
  // serve_phases: per slice group, its lines in the batch's order and what serving them found.
  struct Group {
    std::vector<uint32_t> at;  // counting sort: lines per issue cycle offset, then positions
    std::vector<L2Line*> lines;
    std::vector<L2Work> work;  // by line
  };
  std::vector<Group> groups_;
  std::vector<uint32_t> group_of_slice_;
  struct LineRun {
    L2Line* lines = nullptr;
    uint32_t count = 0;
  };
  std::vector<LineRun> runs_;  // the table of lines: by group, by slot
  size_t slots_ = 0;
  std::vector<MemoryStats> channel_stats_;  // per DRAM channel
  // Group `index`'s lines of every SM in the batch's order (a counting sort) into `g`.
  void gather(Group& g, size_t index, const std::vector<SmLines>& sms, int64_t quantum);
  // The batch serve_phases set up, and its phases' items.
  struct Batch {
    const std::vector<SmLines>* sms = nullptr;
    uint64_t now_ticks = 0;
    double now = 0;
    int64_t quantum = 0;
    Dram* dram = nullptr;
  };
  Batch batch_;
  void serve_serial();
  void serve_group(size_t group);
  // A line's DRAM operations (its channels' own), then its fills and ready ticks.
  void serve_line(L2Line& l, L2Work& w);
  std::function<void(size_t)> serve_serial_, serve_group_;
  std::atomic<double>* served_ = nullptr;
  // Looks up `g`'s lines in order (those not a copy); looked(i, line, work) after each (i: its
  // position in the group).
  template <class Looked>
  void lookup_lines(Group& g, double now, Looked looked);
};

}  // namespace ltc::sim
