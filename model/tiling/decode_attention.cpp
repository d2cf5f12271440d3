#include "model/tiling/decode_attention.h"

#include "common/error.h"
#include "common/int_math.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace ltc::tiling {
namespace {

constexpr int64_t kFp32 = 4;
constexpr int64_t kKeySplitWarps = 4;    // each warp a quarter of every key tile
constexpr int64_t kKeyTile = 64;         // keys per tile
constexpr int64_t kValueSplitRows = 64;  // FlashMLA's block of 64 heads
constexpr int64_t kOutRegisters = 128;   // a value-split thread's O
constexpr int64_t kOtherRegisters = 64;  // its S tile, fragments, addresses
constexpr int64_t kKeySplitRegisters = 128;

// The key-split block for `rows` rows: warps and key tiles halve until the stages and Q fit.
DecodeAttentionPlan key_split(const DecodeAttentionShape& a, int64_t rows, int64_t smem_limit) {
  DecodeAttentionPlan d;
  d.rows = rows;
  d.mtiles = ceil_div(rows, 16);
  d.warps = kKeySplitWarps;
  d.key_tile = kKeyTile;
  d.registers = kKeySplitRegisters;
  const int64_t row = a.head_dim * a.elem_bytes;
  const int64_t kv_row = row + (a.latent ? 0 : a.v_dim * a.elem_bytes);
  d.smem_q = rows * row;
  auto stages = [&] {
    return std::max(2 * d.key_tile * kv_row, d.warps * d.mtiles * 16 * (a.v_dim + 2) * kFp32);
  };
  while (d.warps > 1 && stages() + d.smem_q > smem_limit) {
    d.warps /= 2;
    d.key_tile /= 2;
  }
  d.smem_stages = stages();
  return d;
}

// The value split's P (half precision) and the rows' maxima (one per warp).
int64_t exchange_bytes(const DecodeAttentionPlan& d, const DecodeAttentionShape& a) {
  return 16 * d.mtiles * (d.key_tile * a.elem_bytes + d.warps * kFp32);
}

// The value-split block for `rows` rows: warps enough for O's registers, key tiles of 64 keys or
// fewer (at least 8 per warp, one n8 MMA column) until the stages, P, the maxima and Q fit.
std::optional<DecodeAttentionPlan> value_split(const DecodeAttentionShape& a, int64_t rows,
                                               int64_t smem_limit) {
  if (rows > kValueSplitRows) return std::nullopt;
  DecodeAttentionPlan d;
  d.value_split = true;
  d.rows = rows;
  d.mtiles = ceil_div(rows, 16);
  const int64_t padded = 16 * d.mtiles;
  d.warps = kKeySplitWarps;
  while (padded * a.v_dim > kOutRegisters * 32 * d.warps) d.warps *= 2;
  if (a.v_dim % (8 * d.warps) != 0) return std::nullopt;
  d.registers = padded * a.v_dim / (32 * d.warps) + kOtherRegisters;
  const int64_t row = a.head_dim * a.elem_bytes;
  d.smem_q = padded * row;  // the MMAs read whole row tiles
  for (d.key_tile = kKeyTile; d.key_tile >= 8 * d.warps; d.key_tile /= 2) {
    d.smem_stages = 2 * d.key_tile * row;
    d.smem_exchange = exchange_bytes(d, a);
    if (d.smem_bytes() <= smem_limit) return d;
  }
  return std::nullopt;
}

}  // namespace

DecodeAttentionShape DecodeAttentionShape::of(const llm::AttentionShape& a, int64_t elem_bytes) {
  DecodeAttentionShape s;
  s.batch = a.batch;
  s.heads = a.heads;
  s.kv_heads = a.kv_heads;
  s.q_len = a.q_len;
  s.kv_len = a.kv_len;
  s.head_dim = a.head_dim;
  s.v_dim = a.v_dim();
  s.elem_bytes = elem_bytes;
  s.latent = a.latent;
  return s;
}

DecodeAttentionPlan value_split_combine(const DecodeAttentionPlan& d) {
  DecodeAttentionPlan c = d;
  c.rows = d.chunk_rows;
  c.mtiles = 1;
  c.row_blocks = d.chunks;
  c.smem_q = 16 * d.shape.head_dim * d.shape.elem_bytes;
  c.smem_exchange = exchange_bytes(c, d.shape);
  c.smem_stages = std::max(d.smem_stages, d.splits > 1 ? d.merge * c.part_row_bytes() : 0);
  return c;
}

DecodeAttentionPlan plan_decode_attention(const DecodeAttentionShape& a, const hw::GpuConfig& gpu) {
  const int64_t smem_limit = int64_t(gpu.shared_memory_kb_per_block) * 1024;
  const int64_t group_rows = (a.heads / a.kv_heads) * a.q_len;
  const int64_t groups = a.batch * a.kv_heads;
  // The fewest row blocks (dividing the group's rows) whose block fits the SM.
  std::optional<DecodeAttentionPlan> plan;
  int64_t smallest = 0;  // the shared memory of the one-block layout, for the error
  // (The key split's combine merges a block's partial rows of every split as one run: its rows
  // are the group's.)
  for (int64_t r = 1; r <= (a.latent ? group_rows : 1) && !plan; ++r) {
    if (group_rows % r != 0) continue;
    std::optional<DecodeAttentionPlan> d =
        a.latent ? value_split(a, group_rows / r, smem_limit)
                 : std::optional<DecodeAttentionPlan>(key_split(a, group_rows / r, smem_limit));
    if (r == 1 && !a.latent) smallest = d->smem_bytes();
    if (d && hw::block_limits_error(gpu, d->warps, d->registers, d->smem_bytes()).empty()) {
      d->row_blocks = r;
      plan = d;
    }
  }
  if (!plan) {
    auto n = [](int64_t v) { return std::to_string(v); };
    throw InputError("decode attention: no block of " + gpu.name + " holds " +
                     (a.latent ? "even one query row" : n(group_rows) + " query rows") +
                     " of a KV group (" + n(a.heads) + " heads over " + n(a.kv_heads) +
                     " KV heads, " + n(a.q_len) + " new tokens, rows of " + n(a.head_dim) +
                     " elements" +
                     (smallest ? ": " + n(smallest) + " bytes of shared memory" : "") +
                     "); the GPU has " + n(gpu.shared_memory_kb_per_block) + " KiB per block");
  }
  DecodeAttentionPlan d = *plan;
  d.shape = a;
  d.groups = groups;
  const int64_t units = d.units(), sms = gpu.sms;
  const int64_t full = a.kv_len / d.key_tile;
  // Split-KV fills the GPU where the units do not, keeping at least 256 keys per split; then the
  // nearest count up to twice that which divides the whole tiles best (fewest left for the
  // combine kernel).
  const int64_t want =
      units >= sms ? 1
                   : std::max<int64_t>(1, std::min(ceil_div(sms, units), ceil_div(a.kv_len, 256)));
  d.splits = 1;
  if (full > 0) {
    int64_t best = -1;
    for (int64_t s = std::min(want, full); s <= std::min(2 * want, full); ++s) {
      if (best < 0 || full % s < best) {
        best = full % s;
        d.splits = s;
      }
    }
    d.tiles_per_split = full / d.splits;
  }
  const int64_t rest = a.kv_len - d.splits * d.tiles_per_split * d.key_tile;
  d.rest_tiles = rest / d.key_tile;
  d.rest_keys = rest % d.key_tile;
  if (d.splits == 1) {  // the only block takes every whole tile
    d.tiles_per_split += d.rest_tiles;
    d.rest_tiles = 0;
  }
  // The combine merges every split's partials at once where they fit beside Q, else in passes
  // through the stage buffers.
  if (!d.value_split) {
    const int64_t part_row = std::max<int64_t>(d.part_row_bytes(), 1);
    d.merge = std::max<int64_t>(
        1, std::min(d.splits, std::max(smem_limit - d.smem_q, d.smem_stages) / part_row));
    if (d.splits > 1) d.smem_stages = std::max(d.smem_stages, d.merge * part_row);
  }
  if (d.value_split) {
    // The combine per chunk of rows dividing the group's, at most 16 (one MMA row tile): where
    // it attends to keys no split took, the most (fewest padded rows); else the most that still
    // give every SM a block.
    const bool keys_left = d.rest_tiles > 0 || d.rest_keys > 0;
    d.chunk_rows = 0;
    for (int64_t c = std::min<int64_t>(16, group_rows); c >= 1 && d.chunk_rows == 0; --c) {
      if (group_rows % c == 0 && (keys_left || groups * (group_rows / c) >= sms || c == 1)) {
        d.chunk_rows = c;
      }
    }
    d.chunks = group_rows / d.chunk_rows;
    DecodeAttentionPlan c = value_split_combine(d);
    const int64_t chunk_part = std::max<int64_t>(c.part_row_bytes(), 1);
    d.merge = std::max<int64_t>(
        1, std::min(d.splits, (smem_limit - c.smem_q - c.smem_exchange) / chunk_part));
    c = value_split_combine(d);
    const std::string limits = hw::block_limits_error(gpu, c.warps, c.registers, c.smem_bytes());
    if (!limits.empty()) {
      throw InputError("decode attention: the split-KV combine's block of " +
                       std::to_string(c.rows) + " rows: " + limits);
    }
  }
  return d;
}

DecodeAttentionEstimate estimate_decode_attention(const DecodeAttentionPlan& d,
                                                  const hw::GpuConfig& gpu,
                                                  std::string_view dtype) {
  const DecodeAttentionShape& a = d.shape;
  const double eb = double(a.elem_bytes), kt = double(d.key_tile), hd = double(a.head_dim);
  const double v = double(a.v_dim), rows = 16.0 * double(d.mtiles), w = double(d.warps);
  // A block's MMAs per key tile: S over head_dim, O over v_dim (m16n8k16).
  const double s_mmas = double(d.mtiles) * (kt / 8) * (hd / 16);
  const double o_mmas = double(d.mtiles) * (v / 8) * (kt / 16);
  // Shared-memory bytes per key tile. Key split: each warp its keys' K and V rows. Value split:
  // K once, Q and P (A operands) once per warpgroup, V once, the maxima and P traded.
  const double group = double(std::min<int64_t>(std::max(gpu.sm.mma_warpgroup, 1), d.warps));
  double s_bytes = kt * hd * eb, o_bytes = kt * v * eb;
  if (d.value_split) {
    s_bytes += w / group * rows * hd * eb;
    o_bytes += w / group * rows * kt * eb + w * rows * kFp32 * (1 + w) + rows * kt * eb;
  }
  // cp.async lines through the load/store path without TMA.
  const double kv_row = hd * eb + (a.latent ? 0 : v * eb);
  if (!gpu.sm.tma) s_bytes += kt * kv_row / 128 * gpu.sm.lsu_bytes_per_cycle;
  const hw::TensorOpTiming mma = gpu.mma_timing({16, 8, 16}, dtype, dtype);
  const hw::BlockOccupancy occ = hw::block_occupancy(gpu, d.warps, d.registers, d.smem_bytes());
  // Blocks per SM: as many as fit, as many as there are.
  const double b = std::clamp(std::ceil(double(d.blocks()) / double(gpu.sms)), 1.0,
                              double(std::max(1, occ.blocks_per_sm)));
  // Tensor cores the block's warps reach (one per sub-partition's share).
  const double subs = double(std::max(gpu.sub_partitions_per_sm, 1));
  const double cores = double(gpu.tensor_cores_per_sm) * std::min(1.0, b * w / subs);
  auto tensor = [&](double mmas) { return b * mmas * double(mma.issue_cycles) / cores; };
  auto lsu = [&](double bytes) { return b * bytes / double(gpu.sm.lsu_bytes_per_cycle); };
  const double t_s = tensor(s_mmas), t_o = tensor(o_mmas);
  const double l_s = lsu(s_bytes), l_o = lsu(o_bytes);
  // The softmax on the FP32 lanes and the SFU, a warp's in order (the exp waits for its inputs):
  // per warp and tile, as the compiler emits it (the key split per row tile).
  double alu = 0, sfu = 0;
  if (d.value_split) {
    const double wk = kt / w, cols = v / w;
    alu = rows * w + rows * wk * 3 + rows * cols;
    sfu = rows * wk;
  } else {
    alu = double(d.mtiles) * (16 * (kt / w) * 4 + 16 * v);
    sfu = double(d.mtiles) * 16 * (kt / w);
  }
  const double softmax =
      b * w *
      (alu / double(gpu.fp32_lanes_per_sm()) + sfu / double(std::max(gpu.sm.sfu_ops_per_cycle, 1)));
  // A block alone on its SM drains its tensor pipe and refills its fragments at each barrier
  // (two per tile, two more for the value split's exchange).
  const double barriers = d.value_split ? 4 : 2;
  const double drain = barriers * double(gpu.sm.mma_latency_cycles + gpu.sm.smem_latency_cycles);
  double round = 0;  // b blocks' key tile each
  if (b > 1) {
    round = std::max({t_s + t_o, l_s + l_o, softmax});
  } else if (d.value_split) {
    round = std::max(t_s, l_s) + softmax + std::max(t_o, l_o) + drain;
  } else {
    round = std::max(t_s + t_o, l_s + l_o) + softmax + drain;
  }
  const double tiles = double(d.tiles_per_split) + (d.splits == 1 && d.rest_keys > 0 ? 1 : 0);
  const double waves = std::ceil(double(d.blocks()) / (double(gpu.sms) * b));
  DecodeAttentionEstimate e;
  e.cycles = waves * tiles * round;
  e.tensor_cycles = waves * tiles * (t_s + t_o);
  e.clock_ghz = gpu.loaded_clock_ghz(round > 0 ? (t_s + t_o) / round : 0);
  e.in_flight_bytes =
      double(std::min<int64_t>(d.blocks(), int64_t(gpu.sms) * occ.blocks_per_sm)) * kt * kv_row;
  return e;
}

}  // namespace ltc::tiling
