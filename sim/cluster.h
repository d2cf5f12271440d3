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
#include <vector>

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
    begin_merge();
  }
  bool active() const { return cluster_x_ > 1; }

  // The simulator's merge (sim/README.md, "Parallel stepping") asks in its order, before the
  // L2 has served the reads of its quantum: a read's time comes later, by its token.
  struct Taken {
    bool copy = false;   // a partner read the line: this block takes that copy
    Cycle ready = 0;     // when the copy is ready (token < 0)
    int64_t token = -1;  // else the read of this merge whose ready it is (token_ready)
  };
  // Block `block` asks for line `line`: a partner's copy, or none (the block reads the line from
  // L2 itself: then read()).
  Taken take(int64_t block, uint64_t line) {
    auto it = lines_.find(Key{cluster_of(block), line});
    if (it == lines_.end() || it->second.reader == block) return {};
    const Taken t{true, it->second.ready, it->second.token};
    if (--it->second.waiting == 0) lines_.erase(it);
    return t;
  }
  // Block `block` reads `line` from L2 in this merge: the cluster's other blocks that will ask
  // for it take this copy. Returns the token whose ready settle() gives (-1: none to give).
  int64_t read(int64_t block, uint64_t line) {
    const int64_t others = members(block) - 1;
    if (others < 1) return -1;
    // A repeated load of the block's own line keeps the first entry.
    const Key key{cluster_of(block), line};
    const int64_t token = int64_t(pending_.size());
    if (!lines_.try_emplace(key, Entry{block, 0, others, token}).second) return -1;
    pending_.push_back(key);
    token_ready_.push_back(0);
    return token;
  }
  // The read of `token` is ready at `ready` (the merge, once the L2 served it).
  void settle(int64_t token, Cycle ready) {
    token_ready_[size_t(token)] = ready;
    auto it = lines_.find(pending_[size_t(token)]);
    if (it != lines_.end() && it->second.token == token) {
      it->second.ready = ready;
      it->second.token = -1;
    }
  }
  Cycle token_ready(int64_t token) const { return token_ready_[size_t(token)]; }
  // A merge starts: its tokens count from 0 (every earlier one was settled).
  void begin_merge() {
    pending_.clear();
    token_ready_.clear();
  }

 private:
  struct Key {
    int64_t cluster;
    uint64_t line;
    bool operator==(const Key& o) const { return cluster == o.cluster && line == o.line; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return size_t(mix_line(k.line) ^ (uint64_t(k.cluster) * 0x9e3779b97f4a7c15u));
    }
  };
  struct Entry {
    int64_t reader;
    Cycle ready;
    int64_t waiting;  // blocks of the cluster still to take it
    int64_t token;    // >= 0: its ready is the read of this merge's token (settle)
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
  std::vector<Key> pending_;        // by token: the line it reads
  std::vector<Cycle> token_ready_;  // by token, once settled
};

}  // namespace ltc::sim
