// Sampled simulation's edits of a memory checkpoint (MemoryState, sim/memory.h) between runs: the
// L2 cut to a slice of the GPU and back, the lines of kernels not simulated passed through it,
// and the queues they drain.
#pragma once

#include "model/hw/gpu.h"
#include "sim/memory.h"

#include <cstdint>
#include <vector>

namespace ltc::sim {

// The L2 of a GPU cut to 1 / f of its slices (a slice of the GPU, README.md) and back. A
// line's slice is a hash of it modulo the slices (mix_line), so with f dividing the n slices
// the whole GPU's slices s, s + n / f, s + 2n / f, ... map onto slice s of the cut one, and a
// line keeps its set. cut_l2 keeps the whole L2's first n / f slices: an even sample of its
// lines, dirty ones as often as in the whole L2, as the cut GPU moves 1 / f of the lines. (Every
// kernel's tensors live at fresh addresses, so no kernel reads another's lines; what a kernel
// meets in the L2 is how full and how dirty it is.) uncut_l2 gives every slice of the whole L2 a
// copy of its cut slice: each line is then found in its own slice, and its copies in the f - 1
// others are never looked up but fill their ways (dirty ones are written back when evicted) as
// the lines of the blocks the cut GPU did not run would. The next free address is kept.
MemoryState cut_l2(const MemoryState& whole, int f);
MemoryState uncut_l2(const MemoryState& cut, int f);

// The bytes a kernel starting from `state` on `gpu` finds still to be written to DRAM: the L2's
// dirty sectors and the DRAM channels' queued work (the loop trips, README.md).
double pending_write_bytes(const MemoryState& state, const hw::GpuConfig& gpu);
// The bytes the L2 of `state` still takes before a line it brings in evicts one: its empty ways.
double empty_l2_bytes(const MemoryState& state, const hw::GpuConfig& gpu);

// Kernels that are not simulated (sampled simulation's repeats) move new lines through the L2,
// in the order given, each `lines` of them, `dirty_lines` of those written: SectorCache::stream
// over its slices. Once a set has taken as many new lines as it has ways, older streams no
// longer matter, so a run of repeats costs about as much as one. The dirty lines numbered
// [keep_from, keep_to) stay newer than the streamed ones.
struct LineStream {
  double lines = 0, dirty_lines = 0;
};
void stream_l2(MemoryState& state, const std::vector<LineStream>& oldest_first, uint64_t seed,
               uint32_t keep_from = 0, uint32_t keep_to = 0);

// The work `state`'s L2 slices and DRAM channels had queued, `cycles` later (kernels that are
// not simulated ran meanwhile and absorbed it), but at least what the last of them left queued
// at its end (`left`'s l2_backlog and dram_backlog).
void drain_backlog(MemoryState& state, double cycles, const MemoryState& left);

}  // namespace ltc::sim
