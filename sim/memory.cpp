#include "sim/memory.h"

#include "common/error.h"
#include "sim/step_pool.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#define LTC_SIM_SSE2 1
#else
#define LTC_SIM_SSE2 0
#endif

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

namespace ltc::sim {
// ---- SectorCache ------------------------------------------------------------------------------
SectorCache::SectorCache(uint64_t capacity_bytes, int ways, int line_bytes, bool hashed_sets)
    : hashed_sets_(hashed_sets), ways_(ways), line_shift_(log2_exact(line_bytes)) {
  if (ways < 1 || ways > 255) throw InputError("cache: ways must be in 1..255");
  const uint64_t lines = capacity_bytes / uint64_t(line_bytes);
  sets_ = lines / uint64_t(ways);
  if (sets_ > UINT32_MAX) throw InputError("cache: more than 2^32 sets");
  set_of_ = FastMod(uint32_t(sets_));
  stride_ = (7 * size_t(ways) + 7) / 8;  // 4 B tag + rank, valid, dirty bytes per way
  size_t padded = 1;
  while (padded < stride_ && padded < 8) padded *= 2;
  stride_ = stride_ <= 8 ? padded : (stride_ + 7) / 8 * 8;
  clear();
}

void SectorCache::clear() {
  sets_data_.assign(size_t(sets_) * stride_, 0);
  for (size_t set = 0; set < sets_; ++set) {
    uint32_t* t = reinterpret_cast<uint32_t*>(&sets_data_[set * stride_]);
    uint8_t* r = reinterpret_cast<uint8_t*>(t + ways_);
    for (int w = 0; w < ways_; ++w) {
      t[w] = kNoLine;
      r[w] = uint8_t(w);
    }
  }
}

SectorCache::Result SectorCache::access(uint64_t line_addr, uint32_t sectors, bool write) {
  Result r;
  if (sets_ == 0) {
    r.missed = sectors;
    return r;
  }
  const uint64_t line = line_addr >> line_shift_;
  if (line >= kNoLine) {
    throw std::length_error("sim: address beyond the simulator's 2^32 cache lines");
  }
  const size_t set = set_of(line);
  uint32_t* tags = reinterpret_cast<uint32_t*>(&sets_data_[set * stride_]);
  uint8_t* rank = reinterpret_cast<uint8_t*>(tags + ways_);
  uint8_t* valid = rank + ways_;
  uint8_t* dirty = valid + ways_;
  const uint32_t tag = uint32_t(line);
  int way = -1, lru = 0;
  if (LTC_SIM_SSE2 && ways_ == 16) {
#if LTC_SIM_SSE2
    // The L2's 16 ways in SSE2 registers: four tag compares, one rank compare (line numbers are
    // unique in a set and the ranks a permutation, so the first match is the only one).
    const __m128i want = _mm_set1_epi32(int(tag));
    const __m128i* t = reinterpret_cast<const __m128i*>(tags);
    const int hit =
        _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(_mm_load_si128(t), want))) |
        _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(_mm_load_si128(t + 1), want))) << 4 |
        _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(_mm_load_si128(t + 2), want))) << 8 |
        _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(_mm_load_si128(t + 3), want))) << 12;
    const __m128i ranks = _mm_load_si128(reinterpret_cast<const __m128i*>(rank));
    const int oldest = _mm_movemask_epi8(_mm_cmpeq_epi8(ranks, _mm_set1_epi8(15)));
    way = hit ? __builtin_ctz(unsigned(hit)) : -1;
    lru = oldest ? __builtin_ctz(unsigned(oldest)) : 0;
#endif
  } else {
    // Branch-free scans: which way holds the line, which is LRU.
    for (int w = 0; w < ways_; ++w) {
      way = tags[w] == tag ? w : way;
      lru = rank[w] == ways_ - 1 ? w : lru;
    }
  }
  if (way >= 0) {
    r.missed = sectors & ~uint32_t(valid[way]);
    valid[way] = uint8_t(valid[way] | sectors);
    if (write) dirty[way] = uint8_t(dirty[way] | sectors);
  } else {
    way = lru;
    r.installed = true;
    r.missed = sectors;
    r.evicted_dirty = dirty[way];
    r.evicted_line_addr = uint64_t(tags[way]) << line_shift_;
    tags[way] = uint32_t(line);
    valid[way] = uint8_t(sectors);
    dirty[way] = uint8_t(write ? sectors : 0);
  }
  r.slot = uint32_t(set * size_t(ways_) + size_t(way));
  const uint8_t old = rank[way];
  if (LTC_SIM_SSE2 && ways_ == 16) {
#if LTC_SIM_SSE2
    // rank += (rank < old): the compare gives -1 where true (ranks < 16, so signed is exact).
    __m128i* rv = reinterpret_cast<__m128i*>(rank);
    const __m128i ranks = _mm_load_si128(rv);
    _mm_store_si128(rv, _mm_sub_epi8(ranks, _mm_cmplt_epi8(ranks, _mm_set1_epi8(char(old)))));
#endif
  } else {
    for (int w = 0; w < ways_; ++w) rank[w] = uint8_t(rank[w] + (rank[w] < old));
  }
  rank[way] = 0;
  return r;
}

namespace {
uint64_t splitmix(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}
double uniform(uint64_t& x) {
  return double(splitmix(x) >> 11) * (1.0 / 9007199254740992.0);
}
}  // namespace

uint64_t SectorCache::dirty_sectors() const {
  uint64_t n = 0;
  for (size_t set = 0; set < sets_; ++set) {
    const uint32_t* tags = reinterpret_cast<const uint32_t*>(&sets_data_[set * stride_]);
    const uint8_t* valid = reinterpret_cast<const uint8_t*>(tags + ways_) + ways_;
    const uint8_t* dirty = valid + ways_;
    for (int w = 0; w < ways_; ++w) {
      if (tags[w] != kNoLine) n += uint64_t(__builtin_popcount(unsigned(valid[w] & dirty[w])));
    }
  }
  return n;
}

uint64_t SectorCache::empty_slots() const {
  uint64_t n = 0;
  for (size_t set = 0; set < sets_; ++set) {
    const uint32_t* tags = reinterpret_cast<const uint32_t*>(&sets_data_[set * stride_]);
    for (int w = 0; w < ways_; ++w) n += tags[w] == kNoLine ? 1 : 0;
  }
  return n;
}

void SectorCache::stream(const std::vector<Stream>& newest_first, uint32_t& filler, uint64_t seed,
                         uint32_t keep_from, uint32_t keep_to) {
  if (sets_ == 0 || newest_first.empty()) return;
  const int ways = ways_;
  std::vector<double> limit;
  for (const Stream& st : newest_first) limit.push_back(std::exp(-st.installs_per_set));
  uint64_t rng = seed;
  uint8_t new_dirty[256];  // the set's new lines, newest first
  uint8_t by_rank[256];    // the set's ways, most recent first
  for (size_t set = 0; set < sets_; ++set) {
    uint32_t* tags = reinterpret_cast<uint32_t*>(&sets_data_[set * stride_]);
    uint8_t* rank = reinterpret_cast<uint8_t*>(tags + ways);
    uint8_t* valid = rank + ways;
    uint8_t* dirty = valid + ways;
    const auto kept = [&](int w) {
      return dirty[w] != 0 && valid[w] != 0 && tags[w] >= keep_from && tags[w] < keep_to;
    };
    int keep = 0;
    for (int w = 0; w < ways; ++w) keep += kept(w);
    // Each stream's Poisson count (Knuth: multiplying uniforms), newest first, until the set is
    // all kept and new lines.
    int k = 0;
    for (size_t i = 0; i < newest_first.size() && k < ways - keep; ++i) {
      for (double p = uniform(rng); p > limit[i] && k < ways - keep; p *= uniform(rng)) {
        new_dirty[k++] = uniform(rng) < newest_first[i].dirty ? 0xf : 0;
      }
    }
    if (k == 0) continue;
    // New ranks: the kept lines first, as they were; then the k new lines, each in the place of
    // one of the k least recent others (pushed out); then the other others, as they were.
    for (int w = 0; w < ways; ++w) by_rank[rank[w]] = uint8_t(w);
    int next_kept = 0, next_other = keep + k, pushed = 0;
    for (int r = 0; r < ways; ++r) {
      const int w = by_rank[r];
      if (kept(w)) {
        rank[w] = uint8_t(next_kept++);
      } else if (next_other < ways) {
        rank[w] = uint8_t(next_other++);
      } else {
        rank[w] = uint8_t(keep + pushed);
        tags[w] = --filler;
        valid[w] = 0xf;
        dirty[w] = new_dirty[pushed++];
      }
    }
  }
}

// ---- DRAM ---------------------------------------------------------------------------------------
Dram::Dram(sc_core::sc_module_name name, const hw::GpuConfig& gpu, MemoryStats& stats)
    : sc_core::sc_module(name),
      target("target"),
      map_(gpu.sm.l2_slices, gpu.sm.dram_channels, gpu.sm.line_bytes),
      stats_(stats) {
  channels_.assign(size_t(gpu.sm.dram_channels), BandwidthPort(gpu.dram_channel_bytes_per_cycle()));
  latency_cycles_ = gpu.dram.latency_ns * gpu.clock_ghz;
  target.register_b_transport(this, &Dram::b_transport);
}

void Dram::b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  const uint64_t now = sc_core::sc_time_stamp().value();
  DramBurst* burst = nullptr;
  p.get_extension(burst);
  if (burst) {
    for (DramBurst::Op& op : burst->ops) {
      op.ready = serve(now, op.channel, op.bytes, op.write, op.at, stats_);
    }
  } else {
    const uint64_t ready = serve(now, channel_of(p.get_address()), p.get_data_length(),
                                 p.is_write(), delay.value(), stats_);
    if (!p.is_write()) delay = sc_core::sc_time::from_value(ready);
  }
  p.set_response_status(tlm::TLM_OK_RESPONSE);
}

uint64_t Dram::serve(uint64_t now, uint32_t channel, unsigned bytes, bool write, uint64_t at,
                     MemoryStats& stats) {
  const double t = cycles_of(now + at);
  BandwidthPort& ch = channels_[channel];
  const double start = ch.reserve_payload(t, bytes);
  if (write) {
    stats.dram_write_bytes += bytes;  // posted: the requester does not wait
    return 0;
  }
  stats.dram_read_bytes += bytes;
  return ticks_of(start + latency_cycles_ - cycles_of(now));
}

// ---- L2 -----------------------------------------------------------------------------------------
L2::L2(sc_core::sc_module_name name, const hw::GpuConfig& gpu, MemoryStats& stats)
    : sc_core::sc_module(name),
      target("target"),
      dram("dram"),
      map_(gpu.sm.l2_slices, gpu.sm.dram_channels, gpu.sm.line_bytes),
      stats_(stats) {
  const int n = gpu.sm.l2_slices;
  const uint64_t slice_bytes = uint64_t(gpu.l2_bytes() / n);
  const double slice_rate = gpu.l2_sim_bytes_per_cycle() / double(n);
  slices_.resize(size_t(n));
  for (auto& s : slices_) {
    s.tags = SectorCache(slice_bytes, gpu.sm.l2_ways, gpu.sm.line_bytes, true);
    s.port = BandwidthPort(slice_rate);
    s.fills.resize(s.tags.slots());
  }
  line_shift_ = log2_exact(gpu.sm.line_bytes);
  hit_latency_cycles_ = gpu.l2.latency_ns * gpu.clock_ghz;
  target.register_b_transport(this, &L2::b_transport);
  dram_payload_.set_extension(&dram_ops_);
  set_groups(1);
  serve_serial_ = [this](size_t) { serve_serial(); };
  serve_group_ = [this](size_t g) { serve_group(g); };
}

L2::~L2() {
  dram_payload_.clear_extension(&dram_ops_);  // a member, not the payload's to free
}

uint64_t L2::dirty_bytes() const {
  uint64_t sectors = 0;
  for (const Slice& s : slices_) sectors += s.tags.dirty_sectors();
  return 32 * sectors;
}

void L2::save(MemoryState& state) const {
  state.l2_slices.clear();
  for (const Slice& s : slices_) state.l2_slices.push_back(s.tags);
}

void L2::load(const MemoryState& state) {
  bool same = state.l2_slices.size() == slices_.size();
  for (size_t i = 0; same && i < slices_.size(); ++i) {
    same = state.l2_slices[i].same_shape(slices_[i].tags);
  }
  if (!same) throw std::invalid_argument("sim: a memory state from another GPU's L2");
  for (size_t i = 0; i < slices_.size(); ++i) {
    slices_[i].tags = state.l2_slices[i];
    slices_[i].fills.clear();
  }
}

namespace {

// A port's work queued past cycle `end`, and back from `start`: over the ports of `ports`
// (`port_of` picks each element's BandwidthPort).
template <class Ports, class PortOf>
std::vector<double> port_backlog(const Ports& ports, PortOf port_of, double end) {
  std::vector<double> b;
  for (const auto& p : ports) b.push_back(std::max(0.0, port_of(p).free_at() - end));
  return b;
}

template <class Ports, class PortOf>
void set_port_backlog(Ports& ports, PortOf port_of, const std::vector<double>& b, double start) {
  if (b.empty()) return;
  if (b.size() != ports.size()) throw std::invalid_argument("sim: a backlog from another GPU");
  for (size_t i = 0; i < ports.size(); ++i) port_of(ports[i]).set_free_at(start + b[i]);
}

constexpr auto kSlicePort = [](auto& slice) -> auto& {
  return slice.port;
};
constexpr auto kChannel = [](auto& channel) -> auto& {
  return channel;
};

}  // namespace

std::vector<double> L2::backlog(double end) const {
  return port_backlog(slices_, kSlicePort, end);
}

void L2::set_backlog(const std::vector<double>& backlog, double start) {
  set_port_backlog(slices_, kSlicePort, backlog, start);
}

std::vector<double> Dram::backlog(double end) const {
  return port_backlog(channels_, kChannel, end);
}

void Dram::set_backlog(const std::vector<double>& backlog, double start) {
  set_port_backlog(channels_, kChannel, backlog, start);
}

void L2::lookup(const L2Line& l, L2Work& w, double now) {
  const double t = now + cycles_of(l.line.enter);
  Slice& s = slices_[l.slice];
  const int n = popcount4(l.line.sectors);
  const unsigned len = unsigned(32 * n);
  const double start = s.port.reserve_payload(t, len);
  const SectorCache::Result r = s.tags.access(l.line.addr, l.line.sectors, l.write);
  w.found = r;
  s.stats.l2_sectors += uint64_t(n);
  if (l.write) {
    s.stats.l2_write_bytes += len;
    s.stats.l2_hit_sectors += uint64_t(n);  // write-allocate without fetch (full sectors)
  } else {
    s.stats.l2_read_bytes += len;
    s.stats.l2_hit_sectors += uint64_t(n - popcount4(r.missed));
  }
  w.done = start + hit_latency_cycles_;
  const uint64_t at = ticks_of(start - now);
  w.nops = 0;
  if (r.evicted_dirty) {
    // Write-back of the victim's dirty sectors: posted, but it takes its channel's bandwidth.
    const uint64_t victim = r.evicted_line_addr;
    w.ops[w.nops++] = {victim, map_.channel_of(l.slice, victim),
                       unsigned(32 * popcount4(r.evicted_dirty)), true, at};
  }
  if (!l.write && r.missed) {
    w.ops[w.nops++] = {l.line.addr, map_.channel_of(l.slice, l.line.addr),
                       unsigned(32 * popcount4(r.missed)), false, at};
  }
}

void L2::finish(L2Line& l, L2Work& w, double now) {
  // Sectors found whose fill is still on its way come with it (FillTimes), and the line's fill
  // from DRAM is recorded.
  FillTimes& fills = slices_[l.slice].fills;
  const SectorCache::Result& r = w.found;
  if (l.write) {
    fills.record(r, 0, 0, now);  // written sectors are there at once
  } else {
    if (const uint32_t hit = l.line.sectors & ~r.missed) {
      w.done = std::max(w.done, fills.ready(r, hit, now));
    }
    for (int o = 0; o < w.nops; ++o) {
      if (w.ops[o].write) continue;
      w.done = std::max(w.done, now + cycles_of(w.ops[o].ready));
      fills.record(r, r.missed, w.done, now);
    }
  }
  l.line.ready = ticks_of(w.done - now);
}

void L2::add_slice_stats() {
  for (Slice& s : slices_) {
    for_each_memory_counter([](uint64_t& a, uint64_t& b) { a += b, b = 0; }, stats_, s.stats);
  }
}

void L2::b_transport(int, tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  const uint64_t stamp = sc_core::sc_time_stamp().value();
  const double now = cycles_of(stamp);
  LineBurst* burst = nullptr;
  p.get_extension(burst);
  if (!burst) {  // one line: the sectors its bytes cover
    const uint64_t line_bytes = uint64_t(1) << line_shift_;
    const uint64_t addr = p.get_address(), base = addr >> line_shift_ << line_shift_;
    const uint64_t lo = addr - base,
                   hi = std::min<uint64_t>(lo + std::max(p.get_data_length(), 1u), line_bytes);
    burst = &one_line_;
    burst->lines.assign(1, LineBurst::Line{});
    burst->lines[0].addr = base;
    burst->lines[0].sectors = sectors_of(lo, hi);
    burst->lines[0].enter = delay.value();
  }
  std::vector<LineBurst::Line>& lines = burst->lines;
  burst_lines_.resize(lines.size());
  burst_work_.resize(lines.size());
  std::vector<DramBurst::Op>& ops = dram_ops_.ops;
  ops.clear();
  unsigned dram_bytes = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    L2Line& l = burst_lines_[i];
    l.line = lines[i];
    l.write = p.is_write();
    l.slice = slice_of(l.line.addr);
    L2Work& w = burst_work_[i];
    lookup(l, w, now);
    for (int o = 0; o < w.nops; ++o) {
      ops.push_back(w.ops[o]);
      ops.back().line = i;
      dram_bytes += w.ops[o].bytes;
    }
  }
  if (!ops.empty()) {
    dram_payload_.set_command(tlm::TLM_IGNORE_COMMAND);
    dram_payload_.set_address(ops[0].addr);
    dram_payload_.set_data_length(dram_bytes);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    dram->b_transport(dram_payload_, d);
  }
  uint64_t latest = 0;
  for (size_t i = 0, o = 0; i < lines.size(); ++i) {
    L2Line& l = burst_lines_[i];
    L2Work& w = burst_work_[i];
    for (int k = 0; k < w.nops; ++k) w.ops[k].ready = ops[o++].ready;
    finish(l, w, now);
    lines[i].ready = l.line.ready;
    latest = std::max(latest, l.line.ready);
  }
  add_slice_stats();
  delay = sc_core::sc_time::from_value(latest);
  p.set_response_status(tlm::TLM_OK_RESPONSE);
}

void L2::set_groups(int groups) {
  const size_t n = slices_.size();
  // Groups of whole memory partitions (AddressMap): no two groups share a slice or a channel.
  // At most one per partition, and as many as SmLines::refs can name.
  const size_t parts = map_.partitions();
  const size_t most = std::min(parts, size_t(1) << (32 - SmLines::kPosBits));
  const size_t g = std::clamp<size_t>(size_t(std::max(groups, 1)), 1, most);
  groups_.assign(g, Group{});
  group_of_slice_.resize(n);
  for (size_t s = 0; s < n; ++s)
    group_of_slice_[s] = uint32_t(map_.partition_of(uint32_t(s)) * g / parts);
}

void L2::set_slots(size_t slots) {
  slots_ = slots;
  runs_.assign(groups_.size() * slots, LineRun{});
}

void L2::gather(Group& g, size_t index, const std::vector<SmLines>& sms, int64_t quantum) {
  // A counting sort on the issue cycle's offset: the SMs in rank order, each one's lines in its
  // order, so that lines of one cycle stay in (SM, index) order on each slice and channel.
  const LineRun* row = runs_.data() + index * slots_;
  g.at.assign(size_t(quantum) + 1, 0);
  for (const SmLines& m : sms) {
    const LineRun& run = row[m.slot];
    for (uint32_t j = 0; j < run.count; ++j) ++g.at[size_t(run.lines[j].offset) + 1];
  }
  for (size_t i = 1; i < g.at.size(); ++i) g.at[i] += g.at[i - 1];
  g.lines.resize(g.at.back());
  g.work.resize(g.at.back());
  for (const SmLines& m : sms) {
    const LineRun& run = row[m.slot];
    for (uint32_t j = 0; j < run.count; ++j) {
      L2Line& l = run.lines[j];
      g.lines[g.at[l.offset]++] = &l;
    }
  }
}

template <class Looked>
void L2::lookup_lines(Group& g, double now, Looked looked) {
  for (size_t i = 0; i < g.lines.size(); ++i) {
    L2Line* l = g.lines[i];
    // Host-side hint (no simulated effect): the tags and fills of a line a few ahead.
    if (i + 4 < g.lines.size()) prefetch(g.lines[i + 4]->line.addr);
    if (l->copy) continue;
    lookup(*l, g.work[i], now);
    looked(i, *l, g.work[i]);
  }
}

void L2::serve_phases(const std::vector<SmLines>& sms, uint64_t now_ticks, int64_t quantum,
                      Dram& dram, bool parallel, std::vector<StepPool::Phase>& phases) {
  if (sms.empty()) return;
  batch_ = {&sms, now_ticks, cycles_of(now_ticks), quantum, &dram};
  channel_stats_.resize(dram.channels());
  phases.push_back(groups_.size() == 1 || !parallel
                       ? StepPool::Phase{1, &serve_serial_}
                       : StepPool::Phase{groups_.size(), &serve_group_});
}

void L2::serve_line(L2Line& l, L2Work& w) {
  Dram& dram = *batch_.dram;
  for (int o = 0; o < w.nops; ++o) {
    L2Work::Op& op = w.ops[o];
    op.ready = dram.serve(batch_.now_ticks, op.channel, op.bytes, op.write, op.at,
                          channel_stats_[op.channel]);
  }
  finish(l, w, batch_.now);
}

void L2::serve_serial() {
  // The groups one after another: no two share a slice or a channel, so each slice and channel
  // sees its lines in the batch's order either way.
  for (size_t g = 0; g < groups_.size(); ++g) serve_group(g);
}

void L2::serve_group(size_t gi) {
  // A group's lines, in the batch's order, one at a time: its slices and channels are its own.
  const StepPool::AddTime timed(served_);
  Group& g = groups_[gi];
  gather(g, gi, *batch_.sms, batch_.quantum);
  lookup_lines(g, batch_.now, [&](size_t, L2Line& l, L2Work& w) { serve_line(l, w); });
}

void L2::flush_stats() {
  add_slice_stats();
  for (MemoryStats& c : channel_stats_) {
    for_each_memory_counter([](uint64_t& a, uint64_t& b) { a += b, b = 0; }, stats_, c);
  }
}

}  // namespace ltc::sim
