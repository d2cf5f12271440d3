// The decode attention kernel's plan (flash-decoding), one rule for the compiler that emits it and
// the roofline's compiled plan that costs it.
//
// The query rows of a KV group (its heads x the step's new tokens; GQA folds them into the MMA's
// M) are one unit of work per sequence and KV head, padded to 16-row MMA tiles. A group too large
// for one block's shared memory has its rows split over `row_blocks` blocks, each reading the
// whole cache of the group (from L2 after the first: the row blocks of a group run side by side).
// Each unit's cache is cut into `splits` ranges of whole key tiles that run as separate blocks
// when the grid is smaller than the GPU; a combine kernel takes the keys no split took and merges
// the splits' partial (max, sum, O) rows, `merge` of them per pass through shared memory. The
// partial rows are laid out [group][split][the group's rows][O, max, sum].
//
// Two block layouts:
// - key split (separate K and V caches): each of the block's warps takes a quarter of every key
//   tile and keeps its partial O for every row; the warps' partials are merged in shared memory
//   at the end. Rows too wide for two 4-warp stages and Q run 2-warp blocks of 32-key tiles.
// - value split (a latent cache, MLA's absorbed decode, as FlashMLA): the warps split a tile's
//   keys for S = Q K^T, trade their rows' maxima and P through shared memory, and each warp keeps
//   O for its v_dim / warps columns of every row over every key (its O in registers). Up to 64
//   rows per block (FlashMLA's block of 64 heads), as many warps as keep each thread's O within
//   128 registers. Its combine kernel runs per `chunk_rows` rows of a group (at most 16), so
//   that merging the splits' wide partial rows is spread over the GPU.
#pragma once

#include "model/hw/gpu.h"
#include "model/llm/graph.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace ltc::tiling {

struct DecodeAttentionShape {
  int64_t batch = 1, heads = 1, kv_heads = 1, q_len = 1, kv_len = 1;
  int64_t head_dim = 0, v_dim = 0, elem_bytes = 2;
  bool latent = false;  // one cache whose rows' first v_dim elements are the values
  // A step graph's decode attention in elements of `elem_bytes`.
  static DecodeAttentionShape of(const llm::AttentionShape& a, int64_t elem_bytes);
};

struct DecodeAttentionPlan {
  DecodeAttentionShape shape;
  bool value_split = false;
  int64_t groups = 0;      // (sequence, KV head)
  int64_t row_blocks = 1;  // blocks a group's query rows are split over
  int64_t rows = 0;        // query rows of one block, and its 16-row MMA tiles
  int64_t mtiles = 1;
  int64_t warps = 4, key_tile = 64;
  int64_t splits = 1, tiles_per_split = 0;
  int64_t rest_tiles = 0, rest_keys = 0;  // whole tiles and keys of a partial tile left over
  int64_t merge = 1;
  int64_t chunk_rows = 0, chunks = 0;  // the value split's combine blocks: rows each, per group
  // Shared memory: the K/V stages (reused to merge the warps' and the splits' partials), the
  // value split's exchange (P and the rows' maxima), then Q.
  int64_t smem_stages = 0, smem_exchange = 0, smem_q = 0;
  int64_t registers = 128;  // per thread
  int64_t units() const { return groups * row_blocks; }
  int64_t blocks() const { return units() * splits; }
  int64_t smem_bytes() const { return smem_stages + smem_exchange + smem_q; }
  // A block's partial rows of one split in global memory: O (FP32) then (max, sum) per row.
  int64_t part_row_bytes() const { return rows * (shape.v_dim + 2) * 4; }
};

// The value split's combine block: `chunk_rows` rows of a group with one MMA row tile, the
// keys no split took in tiles of the plan's, `merge` splits' partial rows per pass; its shared
// memory as the plan's fields say.
DecodeAttentionPlan value_split_combine(const DecodeAttentionPlan& d);

// The kernel's compute side as the simulator runs it (the roofline's compiled plan adds its DRAM
// traffic): per key tile, the tensor cores' issue cycles for the block's MMAs and the shared-memory
// path's cycles for its fragment loads and exchanges (plus cp.async lines without TMA). Blocks
// alone on their SM run each phase's two in parallel and the phases one after another (S, then
// O; the key split's warps interleave them: one phase); blocks sharing an SM overlap everything.
struct DecodeAttentionEstimate {
  double cycles = 0;         // the busiest SM's, main kernel
  double tensor_cycles = 0;  // of which its tensor cores are busy
  double clock_ghz = 0;      // GpuConfig::loaded_clock_ghz at that tensor load
  // Cache bytes the resident blocks have in flight (one stage each while they compute on the
  // other): Little's law caps the DRAM rate at this per round trip.
  double in_flight_bytes = 0;
  double ms() const { return cycles / (clock_ghz * 1e6); }
};
DecodeAttentionEstimate estimate_decode_attention(const DecodeAttentionPlan& d,
                                                  const hw::GpuConfig& gpu, std::string_view dtype);

// Throws InputError naming the bytes when no layout fits a block of `gpu`.
DecodeAttentionPlan plan_decode_attention(const DecodeAttentionShape& a, const hw::GpuConfig& gpu);

}  // namespace ltc::tiling
