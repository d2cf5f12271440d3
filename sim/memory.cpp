#include "sim/memory.h"

#include "common/error.h"

#include <cmath>
#include <stdexcept>

namespace ltc::sim {
namespace {

int popcount4(uint32_t m) {
  return int((m & 1) + ((m >> 1) & 1) + ((m >> 2) & 1) + ((m >> 3) & 1));
}

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
  // Branch-free scans (the compiler vectorizes them): which way holds the line, which is LRU.
  int way = -1, lru = 0;
  const uint32_t tag = uint32_t(line);
  for (int w = 0; w < ways_; ++w) {
    way = tags[w] == tag ? w : way;
    lru = rank[w] == ways_ - 1 ? w : lru;
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
  for (int w = 0; w < ways_; ++w) rank[w] = uint8_t(rank[w] + (rank[w] < old));
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
  const double t = to_cycles(sc_core::sc_time_stamp() + delay);
  const uint64_t addr = p.get_address();
  BandwidthPort& ch = channels_[channel_of_(L2::mix_line(addr >> 8))];
  const double bytes = double(p.get_data_length());
  const double start = ch.reserve(t, bytes);
  if (p.is_write()) {
    stats_.dram_write_bytes += uint64_t(bytes);  // posted: the requester does not wait
  } else {
    stats_.dram_read_bytes += uint64_t(bytes);
    delay = cycles(start + latency_cycles_ - to_cycles(sc_core::sc_time_stamp()));
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
  const double bytes = double(p.get_data_length());
  const double start = s.port.reserve(t, bytes);
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
