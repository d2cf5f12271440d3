#include "sim/memory.h"

#include "model/golden/error.h"

#include <cmath>

namespace ltc::sim {
namespace {

int popcount4(uint32_t m) {
  return int((m & 1) + ((m >> 1) & 1) + ((m >> 2) & 1) + ((m >> 3) & 1));
}

// Spreads consecutive lines over slices / channels the way address hashing does on real GPUs
// (strided streams must not all land on one slice).
uint64_t mix(uint64_t x) {
  x ^= x >> 17;
  x *= 0xed5ad4bbu;
  x ^= x >> 11;
  x *= 0xac4c1b51u;
  x ^= x >> 15;
  return x;
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
  const uint64_t lines = capacity_bytes / uint64_t(line_bytes);
  sets_ = lines / uint64_t(ways);
  if (sets_ > UINT32_MAX) throw InputError("cache: more than 2^32 sets");
  set_of_ = FastMod(uint32_t(sets_));
  clear();
}

void SectorCache::clear() {
  const size_t n = size_t(sets_ * uint64_t(ways_));
  tags_.assign(n, ~uint64_t(0));
  stamps_.assign(n, 0);
  valid_.assign(n, 0);
  dirty_.assign(n, 0);
  clock_ = 0;
}

SectorCache::Result SectorCache::access(uint64_t line_addr, uint32_t sectors, bool write) {
  Result r;
  if (sets_ == 0) {
    r.missed = sectors;
    return r;
  }
  const uint64_t line = line_addr >> line_shift_;
  const size_t base = size_t(set_of_(line)) * size_t(ways_);
  const uint64_t* tags = &tags_[base];
  ++clock_;
  for (int w = 0; w < ways_; ++w) {
    if (tags[w] == line) {
      const size_t i = base + size_t(w);
      r.missed = sectors & ~uint32_t(valid_[i]);
      valid_[i] = uint8_t(valid_[i] | sectors);
      if (write) dirty_[i] = uint8_t(dirty_[i] | sectors);
      stamps_[i] = clock_;
      return r;
    }
  }
  size_t victim = base;
  for (int w = 1; w < ways_; ++w) {
    if (stamps_[base + size_t(w)] < stamps_[victim]) victim = base + size_t(w);
  }
  r.missed = sectors;
  r.evicted_dirty = dirty_[victim];
  r.evicted_line_addr = tags_[victim] << line_shift_;
  tags_[victim] = line;
  valid_[victim] = uint8_t(sectors);
  dirty_[victim] = uint8_t(write ? sectors : 0);
  stamps_[victim] = clock_;
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
  BandwidthPort& ch = channels_[channel_of_(mix(addr >> 8))];
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
  Slice& s = slices_[slice_of_(mix(line))];
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
