// Thread-block clusters with TMA multicast (Hopper; hw::SmConfig::cluster_size, the trace's
// Kernel::cluster_x): the blocks of one cluster run on different SMs, and a tile they all load
// (an ldgsts whose address has no block-x term, DecodedInstr::cluster_shared: the A tile of a
// GEMM whose cluster spans N) is read from L2 once and delivered to each one's shared memory.
// Loads that differ between the blocks are not tracked (a GEMV's weights would otherwise fill
// the table with lines no partner asks for). The first
// block of the cluster to ask for a line reads it (through its SM's port and the L2 slice); each
// other block of the cluster asking for the same line takes that copy: no L2 slice bandwidth and
// no L2 read bytes, only its own SM's port, ready when both the copy and its port are
// (sim/README.md, "Against real hardware").
#pragma once

#include "sim/memory.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>

namespace ltc::sim {

class ClusterMulticast {
 public:
  // A kernel launches: `cluster_x` blocks per cluster along grid x (1: no multicast), block
  // ids < `blocks` run.
  void start(int64_t cluster_x, int64_t grid_x, int64_t blocks) {
    cluster_x_ = cluster_x;
    grid_x_ = grid_x;
    blocks_ = blocks;
    lines_.clear();
  }
  bool active() const { return cluster_x_ > 1; }

  // Block `block` asks for line `line` at `t`. Returns the cycle a partner's copy is ready, or
  // -1 when the block reads the line from L2 itself (then record() its ready cycle).
  Cycle take(int64_t block, uint64_t line) {
    auto it = lines_.find(Key{cluster_of(block), line});
    if (it == lines_.end() || it->second.reader == block) return -1;
    const Cycle ready = it->second.ready;
    if (--it->second.waiting == 0) lines_.erase(it);
    return ready;
  }
  // Block `block` read `line` from L2, ready at `ready`: the cluster's other blocks that will
  // ask for it take this copy.
  void record(int64_t block, uint64_t line, Cycle ready) {
    const int64_t others = members(block) - 1;
    if (others < 1) return;
    // A repeated load of the block's own line keeps the first entry.
    lines_.try_emplace(Key{cluster_of(block), line}, Entry{block, ready, others});
  }

 private:
  struct Key {
    int64_t cluster;
    uint64_t line;
    bool operator==(const Key& o) const { return cluster == o.cluster && line == o.line; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return size_t(L2::mix_line(k.line) ^ (uint64_t(k.cluster) * 0x9e3779b97f4a7c15u));
    }
  };
  struct Entry {
    int64_t reader;
    Cycle ready;
    int64_t waiting;  // blocks of the cluster still to take it
  };
  int64_t cluster_of(int64_t block) const {
    const int64_t bx = block % grid_x_, by = block / grid_x_;
    return by * grid_x_ + bx / cluster_x_ * cluster_x_;  // the id of its first block
  }
  // Blocks of `block`'s cluster that run (the grid's last column of clusters may be partial).
  int64_t members(int64_t block) const {
    const int64_t first = cluster_of(block);
    const int64_t in_row = std::min(cluster_x_, grid_x_ - first % grid_x_);
    return std::max<int64_t>(0, std::min(in_row, blocks_ - first));
  }

  int64_t cluster_x_ = 1, grid_x_ = 1, blocks_ = 0;
  std::unordered_map<Key, Entry, KeyHash> lines_;
};

}  // namespace ltc::sim
