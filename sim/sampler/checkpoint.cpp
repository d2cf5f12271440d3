#include "sim/sampler/checkpoint.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace ltc::sim {

void stream_l2(MemoryState& state, const std::vector<LineStream>& oldest_first, uint64_t seed,
               uint32_t keep_from, uint32_t keep_to) {
  if (state.l2_slices.empty()) return;
  const double sets = double(state.l2_slices.size()) * double(state.l2_slices[0].sets());
  std::vector<SectorCache::Stream> newest_first;
  for (auto it = oldest_first.rbegin(); it != oldest_first.rend(); ++it) {
    if (it->lines <= 0) continue;
    newest_first.push_back({it->lines / sets, std::min(1.0, it->dirty_lines / it->lines)});
  }
  uint32_t filler = ~uint32_t(0);
  for (size_t i = 0; i < state.l2_slices.size(); ++i) {
    state.l2_slices[i].stream(newest_first, filler, seed * 0x100000001b3u + i, keep_from, keep_to);
  }
}

void drain_backlog(MemoryState& state, double cycles, const MemoryState& left) {
  for (auto [queue, last] : {std::pair{&state.l2_backlog, &left.l2_backlog},
                             std::pair{&state.dram_backlog, &left.dram_backlog}}) {
    for (size_t i = 0; i < queue->size(); ++i) {
      (*queue)[i] = std::max((*queue)[i] - cycles, i < last->size() ? (*last)[i] : 0.0);
    }
  }
}

MemoryState cut_l2(const MemoryState& whole, int f) {
  const size_t n = whole.l2_slices.size();
  if (f < 1 || n % size_t(f) != 0) throw std::invalid_argument("cut_l2: f must divide the slices");
  MemoryState cut;
  cut.next_address = whole.next_address;
  cut.l2_slices.assign(whole.l2_slices.begin(), whole.l2_slices.begin() + long(n / size_t(f)));
  // The ports as the slices: the first 1 / f of them (channels, like slices, by a hash modulo).
  for (auto [from, to] : {std::pair{&whole.l2_backlog, &cut.l2_backlog},
                          std::pair{&whole.dram_backlog, &cut.dram_backlog}}) {
    if (from->size() % size_t(f) != 0) {
      throw std::invalid_argument("cut_l2: f must divide the slices and DRAM channels");
    }
    to->assign(from->begin(), from->begin() + long(from->size() / size_t(f)));
  }
  return cut;
}

MemoryState uncut_l2(const MemoryState& cut, int f) {
  MemoryState whole;
  whole.next_address = cut.next_address;
  const size_t m = cut.l2_slices.size();
  for (size_t j = 0; j < m * size_t(f); ++j) whole.l2_slices.push_back(cut.l2_slices[j % m]);
  for (auto [from, to] : {std::pair{&cut.l2_backlog, &whole.l2_backlog},
                          std::pair{&cut.dram_backlog, &whole.dram_backlog}}) {
    for (size_t j = 0; j < from->size() * size_t(f); ++j) to->push_back((*from)[j % from->size()]);
  }
  return whole;
}

double pending_write_bytes(const MemoryState& state, const hw::GpuConfig& gpu) {
  double bytes = 0;
  for (const SectorCache& c : state.l2_slices) bytes += 32.0 * double(c.dirty_sectors());
  for (double b : state.dram_backlog) bytes += b * gpu.dram_channel_bytes_per_cycle();
  return bytes;
}

double empty_l2_bytes(const MemoryState& state, const hw::GpuConfig& gpu) {
  double slots = 0;
  for (const SectorCache& c : state.l2_slices) slots += double(c.empty_slots());
  return slots * double(gpu.sm.line_bytes);
}

}  // namespace ltc::sim
