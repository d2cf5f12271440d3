#include "sim/memory.h"

#include "common/error.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#define LTC_SIM_SSE2 1
#else
#define LTC_SIM_SSE2 0
#endif

#include <cmath>
#include <stdexcept>

namespace ltc::sim {
namespace {

int log2_exact(int v) {
  int s = 0;
  while ((1 << s) < v) ++s;
  return s;
}

}  // namespace

// ---- SectorCache ------------------------------------------------------------------------------
SectorCache::SectorCache(uint64_t capacity_bytes, int ways, int line_bytes)
    : ways_(ways), line_shift_(log2_exact(line_bytes)) {
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
  uint32_t* tags = reinterpret_cast<uint32_t*>(&sets_data_[size_t(set_of_(line)) * stride_]);
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
    r.missed = sectors;
    r.evicted_dirty = dirty[way];
    r.evicted_line_addr = uint64_t(tags[way]) << line_shift_;
    tags[way] = uint32_t(line);
    valid[way] = uint8_t(sectors);
    dirty[way] = uint8_t(write ? sectors : 0);
  }
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

// ---- DRAM ---------------------------------------------------------------------------------------
Dram::Dram(sc_core::sc_module_name name, const hw::GpuConfig& gpu, MemoryStats& stats)
    : sc_core::sc_module(name), target("target"), stats_(stats) {
  const double per_channel =
      gpu.dram_sim_gbps() / double(gpu.sm.dram_channels) / gpu.clock_ghz;  // bytes per cycle
  channels_.assign(size_t(gpu.sm.dram_channels), BandwidthPort(per_channel));
  channel_of_ = FastMod(uint32_t(channels_.size()));
  latency_cycles_ = gpu.dram.latency_ns * gpu.clock_ghz;
  target.register_b_transport(this, &Dram::b_transport);
}

void Dram::b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const double t = to_cycles(now + delay);
  const uint64_t addr = p.get_address();
  BandwidthPort& ch = channels_[channel_of_(L2::mix_line(addr >> 8))];
  const unsigned len = p.get_data_length();
  const double start = ch.reserve_payload(t, len);
  if (p.is_write()) {
    stats_.dram_write_bytes += len;  // posted: the requester does not wait
  } else {
    stats_.dram_read_bytes += len;
    delay = cycles(start + latency_cycles_ - to_cycles(now));
  }
  p.set_response_status(tlm::TLM_OK_RESPONSE);
}

// ---- L2 -----------------------------------------------------------------------------------------
L2::L2(sc_core::sc_module_name name, const hw::GpuConfig& gpu, MemoryStats& stats)
    : sc_core::sc_module(name), target("target"), dram("dram"), stats_(stats) {
  const int n = gpu.sm.l2_slices;
  const uint64_t slice_bytes = uint64_t(gpu.l2_bytes() / n);
  const double slice_rate = gpu.l2_sim_bytes_per_cycle() / double(n);
  slices_.resize(size_t(n));
  for (auto& s : slices_) {
    s.tags = SectorCache(slice_bytes, gpu.sm.l2_ways, gpu.sm.line_bytes);
    s.port = BandwidthPort(slice_rate);
  }
  slice_of_ = FastMod(uint32_t(n));
  line_shift_ = log2_exact(gpu.sm.line_bytes);
  hit_latency_cycles_ = gpu.l2.latency_ns * gpu.clock_ghz;
  target.register_b_transport(this, &L2::b_transport);
  dram_payload_.set_extension(&dram_mask_);
}

L2::~L2() {
  dram_payload_.clear_extension(&dram_mask_);  // a member, not the payload's to free
}

void L2::b_transport(int, tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  const double now = to_cycles(sc_core::sc_time_stamp());
  const double t = now + to_cycles(delay);
  const uint64_t line_addr = p.get_address();
  SectorMask* mask = nullptr;
  p.get_extension(mask);
  const uint32_t sectors = mask ? mask->sectors : 0xfu;
  const uint64_t line = line_addr >> line_shift_;
  Slice& s = slices_[slice_of_(mix_line(line))];
  const unsigned len = p.get_data_length();
  const double bytes = double(len);
  const double start = s.port.reserve_payload(t, len);
  const bool write = p.is_write();
  const SectorCache::Result r = s.tags.access(line_addr, sectors, write);
  const int n = popcount4(sectors);
  stats_.l2_sectors += uint64_t(n);
  if (write) {
    stats_.l2_write_bytes += uint64_t(bytes);
    stats_.l2_hit_sectors += uint64_t(n);  // write-allocate without fetch (full sectors)
  } else {
    stats_.l2_read_bytes += uint64_t(bytes);
    stats_.l2_hit_sectors += uint64_t(n - popcount4(r.missed));
  }
  double done = start + hit_latency_cycles_;
  if (r.evicted_dirty) {
    // Write-back of the victim's dirty sectors: posted, but it takes its channel's bandwidth.
    dram_payload_.set_command(tlm::TLM_WRITE_COMMAND);
    dram_payload_.set_address(r.evicted_line_addr);
    dram_payload_.set_data_length(unsigned(32 * popcount4(r.evicted_dirty)));
    sc_core::sc_time d = cycles(start - now);
    dram->b_transport(dram_payload_, d);
  }
  if (!write && r.missed) {
    dram_payload_.set_command(tlm::TLM_READ_COMMAND);
    dram_payload_.set_address(line_addr);
    dram_payload_.set_data_length(unsigned(32 * popcount4(r.missed)));
    dram_mask_.sectors = r.missed;
    sc_core::sc_time d = cycles(start - now);
    dram->b_transport(dram_payload_, d);
    done = std::max(done, now + to_cycles(d));
  }
  delay = cycles(done - now);
  p.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace ltc::sim
