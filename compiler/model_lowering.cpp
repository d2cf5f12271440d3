#include "compiler/model_lowering.h"

#include "common/error.h"
#include "common/int_math.h"
#include "compiler/gemm_lowering.h"
#include "compiler/program_builder.h"
#include "model/tiling/decode_attention.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <string>
#include <tuple>

namespace ltc::compiler {
namespace {

using golden::DType;
using llm::Op;
using llm::OpKind;
using traces::Affine;
using traces::Instr;
using traces::Opcode;

void emit_alu(ProgramBuilder& p, double ops) {
  if (ops >= 0.5) p.emit(count_op(Opcode::kAlu, uint64_t(ops + 0.5)));
}
void emit_sfu(ProgramBuilder& p, double ops) {
  if (ops >= 0.5) p.emit(count_op(Opcode::kSfu, uint64_t(ops + 0.5)));
}
Instr mma_at(const Affine& m, const Affine& n, const Affine& k) {
  Instr in;
  in.op = Opcode::kMma;
  in.m = m;
  in.n = n;
  in.k = k;
  return in;
}

// Largest w <= limit (a power of two) that divides n.
int64_t divisor_warps(int64_t n, int64_t limit) {
  int64_t w = 1;
  while (w * 2 <= limit && n % (w * 2) == 0) w *= 2;
  return w;
}

constexpr int64_t kWarpThreads = 32;
constexpr int64_t kVectorBytes = 16;  // one 128-bit access per thread: 512 B per warp instruction

// ---- CUDA-core row kernels -------------------------------------------------------------------
//
// One block per row (a token), `warps` warps sweeping the row with 16-byte vectors per thread:
// iteration i of warp w moves the 512 bytes at (i * warps + w) * 512, and the bytes after the
// last whole iteration are split evenly over the warps (a peeled tail). Every byte of the row is
// moved by exactly one warp.
struct RowSweep {
  int64_t vec = kVectorBytes;
  int64_t warps = 1;
  int64_t iters = 0;       // whole iterations of 32 * vec bytes per warp
  int64_t tail_bytes = 0;  // per warp, after the loop
  int64_t chunk() const { return kWarpThreads * vec; }
};

RowSweep plan_sweep(int64_t row_bytes, int64_t elem_bytes, int64_t max_warps) {
  RowSweep s;
  s.vec = row_bytes % kVectorBytes == 0 ? kVectorBytes : elem_bytes;
  const int64_t units = row_bytes / s.vec;
  // As many warps as divide the vectors evenly and still get a whole warp access each.
  s.warps = divisor_warps(units, std::max<int64_t>(1, std::min(max_warps, units / kWarpThreads)));
  const int64_t per_warp = units / s.warps;
  s.iters = per_warp / kWarpThreads;
  s.tail_bytes = (per_warp % kWarpThreads) * s.vec;
  return s;
}

// Calls body(bytes, offset within the row) for every access of the loop and the tail.
void each_access(ProgramBuilder& p, const RowSweep& s,
                 const std::function<void(int64_t, const Affine&)>& body) {
  if (s.iters > 0) {
    const auto it = p.loop(uint64_t(s.iters));
    body(s.chunk(), affine(0, {wx(s.chunk()), iv(it, s.warps * s.chunk())}));
    p.end(it);
  }
  if (s.tail_bytes > 0)
    body(s.tail_bytes, affine(s.iters * s.warps * s.chunk(), {wx(s.tail_bytes)}));
}

// load() for every access, then use() for each: a warp has all its loads in flight before it
// consumes the first (the row stays in registers, as unrolled row kernels keep it), so a sweep
// waits one memory latency, not one per access.
void sweep(ProgramBuilder& p, const RowSweep& s,
           const std::function<void(int64_t, const Affine&)>& load,
           const std::function<void(int64_t, const Affine&)>& use) {
  each_access(p, s, load);
  each_access(p, s, use);
}

// Tables a fused producer emits: the consumer's precompute parameters.
struct FusedTables {
  bool on = false;
  DType act = DType::kInt8;
  int k_group = 4;
  DType table = DType::kInt16;
  int64_t table_bytes = 0;  // per table
  int bases = 0;            // multi-basis binary: one table set per basis
};

struct RowKernelSpec {
  std::string name;
  int64_t rows = 0, cols = 0, elem_bytes = 2;
  std::vector<std::string> inputs;  // tensors read row by row ([rows][cols] each)
  int64_t input_rows = 0;           // rows of each input tensor (0: rows; the embedding table)
  int norm_params = 0;  // > 0: a norm; weight vectors of `cols` (RMSNorm 1, LayerNorm 2)
  double alu_per_elem = 0, sfu_per_elem = 0;
  FusedTables fused;
  int64_t copies = 1;  // output rows per input row (MoE dispatch: a token's row to its k experts)
};

// A norm (statistics pass over registers, block reduction, normalise pass) or an elementwise
// op; stores the row, or with fusion builds the next mpGEMM's tables from it and stores those.
traces::Kernel row_kernel(const RowKernelSpec& r) {
  const int64_t row_bytes = r.cols * r.elem_bytes;
  const RowSweep s = plan_sweep(row_bytes, r.elem_bytes, 4);
  traces::Kernel k;
  k.name = r.name;
  k.grid_y = r.rows;
  k.warps_x = s.warps;
  k.regs_per_thread = 32 + uint32_t(std::min<int64_t>(row_bytes / (s.warps * 128), 96));
  if (r.norm_params > 0) k.smem_bytes = uint64_t(8 * s.warps);  // one partial sum per warp
  k.tiles.core = -1;
  k.tiles.block = {1, r.cols, 0};
  k.tiles.warp = {1, r.cols / s.warps, 0};
  const int64_t in_rows = r.input_rows > 0 ? r.input_rows : r.rows;
  uint32_t id = 0;
  for (const auto& name : r.inputs)
    k.tensors.push_back({id++, name, uint64_t(in_rows * row_bytes)});
  const uint32_t weight_id = id;
  if (r.norm_params > 0) {
    k.tensors.push_back({id++, "weight", uint64_t(r.norm_params * row_bytes)});
  }
  const uint32_t out_id = id;
  const int bases = std::max(r.fused.bases, 1);
  const int64_t row_tables = ceil_div(r.cols, r.fused.k_group) * r.fused.table_bytes;
  const int64_t out_rows = r.rows * r.copies;
  k.tensors.push_back(
      {out_id, r.fused.on ? "tables" : "out",
       uint64_t(r.fused.on ? bases * out_rows * row_tables : out_rows * row_bytes)});

  ProgramBuilder p;
  auto load_inputs = [&](int64_t bytes, const Affine& off) {
    for (uint32_t t = 0; t < r.inputs.size(); ++t) {
      p.emit(mem(Opcode::kLdGlobal, t, uint64_t(bytes), plus(off, affine(0, {by(row_bytes)}))));
    }
  };
  auto store = [&](int64_t bytes, const Affine& off) {
    const int64_t elems = bytes / r.elem_bytes;
    if (!r.fused.on) {
      for (int64_t c = 0; c < r.copies; ++c) {
        p.emit(mem(Opcode::kStGlobal, out_id, uint64_t(bytes),
                   plus(off, affine(c * row_bytes, {by(r.copies * row_bytes)}))));
      }
      return;
    }
    // Tables of these elements: one per k_group activations, [basis][row][table][entry].
    const int64_t per_table = r.elem_bytes * r.fused.k_group;
    for (int j = 0; j < bases; ++j) {
      Instr pre;
      pre.op = Opcode::kPrecompute;
      pre.k_group = r.fused.k_group;
      pre.act = r.fused.act;
      pre.table = r.fused.table;
      pre.m = affine(0, {by(1)});
      pre.k = times(off, 1);
      for (auto& c : pre.k.coef) c /= r.elem_bytes;
      pre.k.base /= r.elem_bytes;
      pre.rows = 1;
      pre.cols = uint32_t(elems);
      pre.basis = uint32_t(j);
      p.emit(pre);
      Affine t = off;  // bytes of activations -> bytes of tables
      for (auto& c : t.coef) c = c / per_table * r.fused.table_bytes;
      t.base = t.base / per_table * r.fused.table_bytes;
      for (int64_t c = 0; c < r.copies; ++c) {
        p.emit(mem(Opcode::kStGlobal, out_id,
                   uint64_t(ceil_div(elems, r.fused.k_group) * r.fused.table_bytes),
                   plus(t, affine((j * out_rows + c) * row_tables, {by(r.copies * row_tables)}))));
      }
    }
  };
  if (r.norm_params > 0) {
    // Pass 1: the row and the weight vector(s) into registers (the weights do not wait for the
    // statistics), sum of squares (and sum for LayerNorm).
    const double stat_ops = r.norm_params > 1 ? 3 : 2;
    sweep(
        p, s,
        [&](int64_t bytes, const Affine& off) {
          load_inputs(bytes, off);
          for (int w = 0; w < r.norm_params; ++w) {
            p.emit(mem(Opcode::kLdGlobal, weight_id, uint64_t(bytes),
                       plus(off, constant(w * row_bytes))));
          }
        },
        [&](int64_t bytes, const Affine&) {
          emit_alu(p, stat_ops * double(bytes / r.elem_bytes));
        });
    // Block reduction: warp shuffles, one partial per warp through shared memory.
    emit_alu(p, 5 * kWarpThreads);
    p.emit(mem(Opcode::kStShared, 0, 8, affine(0, {wx(8)})));
    p.emit(barrier());
    p.emit(mem(Opcode::kLdShared, 0, uint64_t(8 * s.warps), affine(0, {})));
    emit_sfu(p, kWarpThreads);  // rsqrt
    // Pass 2: scale by the statistics and the weights, from registers.
    each_access(p, s, [&](int64_t bytes, const Affine& off) {
      emit_alu(p, std::max(0.0, r.alu_per_elem - stat_ops) * double(bytes / r.elem_bytes));
      store(bytes, off);
    });
  } else {
    sweep(p, s, load_inputs, [&](int64_t bytes, const Affine& off) {
      emit_alu(p, r.alu_per_elem * double(bytes / r.elem_bytes));
      emit_sfu(p, r.sfu_per_elem * double(bytes / r.elem_bytes));
      store(bytes, off);
    });
  }
  k.program = p.take();
  return k;
}

// ---- Attention layouts ------------------------------------------------------------------------
//
// Tensors are head-major so that a block's slice of Q, O, K and V is one contiguous range:
//   q, k cache [seq][(kv) head][slots][head_dim]     head = kv head * group + g (GQA)
//   out, v cache [seq][(kv) head][slots][v_dim]
// v_dim is head_dim except in latent attention (MLA): queries and keys of kv_lora + rope, values
// of kv_lora (prefill: nope + rope and v_head_dim). A latent cache (MLA decode) holds one row per
// token that is both K and V: a value row is the first v_dim elements of its key row.
// Decode: one q slot, cache slots = L + 1 (the new token at slot L). Prefill: the S tokens padded
// to whole tiles (S_pad = T * tile); q slots in pair order (slots 2p, 2p+1 hold query tiles p and
// T-1-p, "zigzag"), so that one block's two query tiles are adjacent; cache slots in token order.
struct AttentionLayout {
  int64_t batch = 1, heads = 1, kv_heads = 1, group = 1, head_dim = 0, elem_bytes = 2;
  int64_t v_dim = 0;
  bool latent = false;  // one cache: V rows are the K rows' first v_dim elements
  int64_t q_slots = 1, cache_slots = 1;
  bool prefill = false;
  int64_t tile = 64, tiles = 1;  // prefill: query tile = key tile rows, T
  // A prefill longer than its sliding window (banded): each query tile sees `window_tiles` + 1
  // key tiles (from r - window_tiles, the first masked in part), the first `head_tiles` query
  // tiles (window_tiles rounded up to even) the causal triangle; q slots in token order.
  int64_t window_tiles = 0, head_tiles = 0;
  int64_t row_bytes() const { return head_dim * elem_bytes; }  // q, K
  int64_t v_row_bytes() const { return v_dim * elem_bytes; }   // V, out
  bool banded() const { return window_tiles > 0; }
  bool paired() const { return tiles > 1 && !banded(); }
  int64_t pairs() const { return paired() ? tiles / 2 : 1; }
};

// Prefill tile: the largest of 128, 64, 32, 16 rows padding S least with an even tile count (or
// one tile), 64 preferred; pairs need T even. Padding keys beyond S are masked.
AttentionLayout attention_layout(const llm::AttentionShape& a, int64_t elem_bytes) {
  AttentionLayout l;
  l.batch = a.batch;
  l.heads = a.heads;
  l.kv_heads = a.kv_heads;
  l.group = a.heads / a.kv_heads;
  l.head_dim = a.head_dim;
  l.v_dim = a.v_dim();
  l.latent = a.latent;
  l.elem_bytes = elem_bytes;
  l.prefill = a.causal;
  if (!a.causal) {
    l.q_slots = a.q_len;
    l.cache_slots = a.kv_len;
    return l;
  }
  if (a.banded()) {
    l.tile = llm::AttentionShape::kBandTile;
    l.tiles = ceil_div(a.q_len, l.tile);
    l.window_tiles = a.band_window_tiles();  // key tiles before a query tile's own
    l.head_tiles = a.band_head_tiles();
    l.q_slots = l.cache_slots = l.tiles * l.tile;
    return l;
  }
  // (A window that ends within the causal head: every tile causal, as below.)
  int64_t best_pad = -1;
  for (int64_t tile : {64, 128, 32, 16}) {
    int64_t t = ceil_div(a.q_len, tile);
    if (t > 1 && t % 2 == 1) ++t;  // odd: one masked tile of padding
    const int64_t pad = t * tile - a.q_len;
    if (best_pad < 0 || pad < best_pad) {
      best_pad = pad;
      l.tile = tile;
      l.tiles = t;
    }
  }
  l.q_slots = l.cache_slots = l.tiles * l.tile;
  return l;
}

// ---- RoPE (+ K-cache write) -------------------------------------------------------------------
//
// Rotates q and k of each new token, one head segment (head_dim elements) per warp access, and
// writes q in the attention layout and k straight into the K cache (the fused rope + cache-append
// kernels of TensorRT-LLM / FlashInfer): the graph's rope bytes (read q, k; write q, k) exactly,
// and the K half of the attention op's cache append is this kernel's k store. Decode: one block
// per sequence; prefill: one block per (row i of a tile, query-tile pair p), looping over the
// sequences and over the pair's two tokens p * tile + i and (T-1-p) * tile + i.
traces::Kernel rope_kernel(const std::string& name, const AttentionLayout& l, int64_t q_dim,
                           int64_t kv_dim, int64_t context, double alu_per_elem) {
  const int64_t row = l.row_bytes();
  const int64_t warps = divisor_warps(std::gcd(l.heads, l.kv_heads), 4);
  const int64_t in_tokens = l.prefill ? l.q_slots : 1;  // rows per sequence of q_in / k_in
  traces::Kernel k;
  k.name = name;
  k.warps_x = warps;
  k.regs_per_thread = 32;
  k.tiles.core = -1;
  k.tensors = {{0, "q_in", uint64_t(l.batch * in_tokens * q_dim * l.elem_bytes)},
               {1, "k_in", uint64_t(l.batch * in_tokens * kv_dim * l.elem_bytes)},
               {2, "q", uint64_t(l.batch * l.heads * l.q_slots * row)},
               {3, "k_cache", uint64_t(l.batch * l.kv_heads * l.cache_slots * row)}};
  ProgramBuilder p;
  // token: row of q_in / k_in within the sequence; slot: q slot; pos: cache slot.
  struct Token {
    Affine token, slot, pos;
  };
  std::vector<Token> tokens;
  ProgramBuilder::Var b{};
  Affine seq;  // the sequence index
  if (!l.prefill) {
    k.grid_x = l.batch;
    seq = affine(0, {bx(1)});
    tokens.push_back({constant(0), constant(0), constant(context)});
  } else {
    k.grid_x = l.tile;
    k.grid_y = l.pairs();
    b = p.loop(uint64_t(l.batch));
    seq = affine(0, {iv(b, 1)});
    if (l.banded()) {  // token order: one block per (row i of a tile, tile)
      k.grid_y = l.tiles;
      const Affine t = affine(0, {bx(1), by(l.tile)});
      tokens.push_back({t, t, t});
    } else if (!l.paired()) {
      tokens.push_back({affine(0, {bx(1)}), affine(0, {bx(1)}), affine(0, {bx(1)})});
    } else {
      const Affine t0 = affine(0, {bx(1), by(l.tile)});
      const Affine t1 = affine((l.tiles - 1) * l.tile, {bx(1), by(-l.tile)});
      tokens.push_back({t0, affine(0, {bx(1), by(2 * l.tile)}), t0});
      tokens.push_back({t1, affine(l.tile, {bx(1), by(2 * l.tile)}), t1});
    }
  }
  // Each token's q and k heads are all loaded before the first is rotated (one memory latency
  // per token, as the row kernels' sweeps).
  for (const Token& t : tokens) {
    for (int phase = 0; phase < 2; ++phase) {
      for (int part = 0; part < 2; ++part) {
        const int64_t heads = part == 0 ? l.heads : l.kv_heads;
        const int64_t dim = part == 0 ? q_dim : kv_dim;
        const int64_t slots = part == 0 ? l.q_slots : l.cache_slots;
        const auto h = p.loop(uint64_t(heads / warps));
        const Affine head = affine(0, {wx(1), iv(h, warps)});
        // in: [seq][token][dim]; out: [seq][head][slot][head_dim]
        if (phase == 0) {
          const Affine src = plus(
              plus(times(seq, in_tokens * dim * l.elem_bytes), times(t.token, dim * l.elem_bytes)),
              times(head, row));
          p.emit(mem(Opcode::kLdGlobal, uint32_t(part), uint64_t(row), src));
        } else {
          const Affine dst = plus(plus(times(seq, heads * slots * row), times(head, slots * row)),
                                  times(part == 0 ? t.slot : t.pos, row));
          emit_alu(p, alu_per_elem * double(l.head_dim));
          p.emit(mem(Opcode::kStGlobal, uint32_t(2 + part), uint64_t(row), dst));
        }
        p.end(h);
      }
    }
  }
  p.end(b);
  k.program = p.take();
  return k;
}

// ---- KV-cache append ----------------------------------------------------------------------------
//
// Copies the step's new V rows (and K rows for models without RoPE, whose rope kernel would
// otherwise write them) into the cache: one block per (new token, sequence), one head segment per
// warp access. With RoPE its bytes (read v, write v) equal the graph's append bytes of K and V.
// A latent layout (MLA) copies each token's one latent row; the graph books its write only.
traces::Kernel kv_append_kernel(const std::string& name, const AttentionLayout& l, int64_t kv_dim,
                                int64_t new_tokens, int64_t first_slot, bool with_k) {
  const int64_t row = l.row_bytes();
  const int64_t warps = divisor_warps(l.kv_heads, 4);
  traces::Kernel k;
  k.name = name;
  k.grid_x = new_tokens;
  k.grid_y = l.batch;
  k.warps_x = warps;
  k.regs_per_thread = 24;
  k.tiles.core = -1;
  const uint64_t in_bytes = uint64_t(l.batch * new_tokens * kv_dim * l.elem_bytes);
  const uint64_t cache_bytes = uint64_t(l.batch * l.kv_heads * l.cache_slots * row);
  ProgramBuilder p;
  // Every head segment of the warp is loaded before the first is stored (one memory latency).
  std::vector<const char*> parts = {l.latent ? "latent" : "v"};
  if (with_k) parts.push_back("k");
  for (uint32_t id = 0; id < 2 * parts.size(); id += 2) {
    k.tensors.push_back({id, std::string(parts[id / 2]) + "_in", in_bytes});
    k.tensors.push_back({id + 1, std::string(parts[id / 2]) + "_cache", cache_bytes});
  }
  for (int phase = 0; phase < 2; ++phase) {
    const auto h = p.loop(uint64_t(l.kv_heads / warps));
    const Affine head = affine(0, {wx(1), iv(h, warps)});
    for (uint32_t id = 0; id < 2 * parts.size(); id += 2) {
      if (phase == 0) {
        p.emit(
            mem(Opcode::kLdGlobal, id, uint64_t(row),
                plus(affine(0, {by(new_tokens * kv_dim * l.elem_bytes), bx(kv_dim * l.elem_bytes)}),
                     times(head, row))));
      } else {
        p.emit(mem(Opcode::kStGlobal, id + 1, uint64_t(row),
                   plus(affine(first_slot * row, {by(l.kv_heads * l.cache_slots * row), bx(row)}),
                        times(head, l.cache_slots * row))));
      }
    }
    p.end(h);
  }
  k.program = p.take();
  return k;
}

// ---- Attention --------------------------------------------------------------------------------

// A sequence of K/V tiles through a two-stage cp.async pipeline (FlashAttention-2): segment s
// runs `trips` tiles; `load(s, j)` emits the ldgsts of its tile j (j an affine of the loop
// counter, or a constant), `compute(s, j)` the math on it, `done(s)` the segment's epilogue.
// Tile j+1 (the next segment's first tile after a segment's last) is issued before tile j is
// waited for; the last iteration of each segment is peeled so the loads never run past it.
struct KvSegment {
  int64_t trips = 1;
  std::function<void(const Affine&j)> load, compute;
  std::function<void()> done;
};

void emit_kv_pipeline(ProgramBuilder& p, const std::vector<KvSegment>& segs,
                      const std::function<void()>& load_q, const std::function<void()>& use_q,
                      bool q_shares_stages = false) {
  if (q_shares_stages) {
    // Q's buffer is the K/V stages' (FlashAttention-2's Share_Q_K_smem): every warp takes its Q
    // rows into registers, and only after the barrier that follows may the first K/V tile land.
    load_q();
    p.emit(commit());
    p.emit(wait_groups(0));
    p.emit(barrier());
    use_q();
    p.emit(barrier());
    segs[0].load(constant(0));
    p.emit(commit());
  } else {
    // Q in its own group ahead of the first K/V tile; waiting for all but the newest group lands
    // Q.
    if (load_q) {
      load_q();
      p.emit(commit());
    }
    segs[0].load(constant(0));
    p.emit(commit());
    if (load_q) {
      p.emit(wait_groups(1));
      p.emit(barrier());
      if (use_q) use_q();
    }
  }
  for (size_t s = 0; s < segs.size(); ++s) {
    const KvSegment& g = segs[s];
    auto step = [&](const Affine& j, const std::function<void()>& prefetch) {
      if (prefetch) {
        prefetch();
        p.emit(commit());
        p.emit(wait_groups(1));
      } else {
        p.emit(wait_groups(0));
      }
      p.emit(barrier());
      g.compute(j);
      p.emit(barrier());  // the stage is refilled next iteration
    };
    if (g.trips > 1) {
      const auto j = p.loop(uint64_t(g.trips - 1));
      step(affine(0, {iv(j, 1)}), [&] { g.load(affine(1, {iv(j, 1)})); });
      p.end(j);
    }
    std::function<void()> next;
    if (s + 1 < segs.size()) next = [&] { segs[s + 1].load(constant(0)); };
    step(constant(g.trips - 1), next);
    if (g.done) g.done();
  }
}

// Math of one warp on one K/V tile: S = Q K^T over `keys` keys for `mtiles` 16-row tiles, online
// softmax, O += P V. `k_smem` / `v_smem` are the shared-memory offsets of the warp's keys, V rows
// `v_stride` bytes apart (a latent tile's values are its key rows); `key0` the tile's first key
// (mma coordinates).
void emit_tile_math(ProgramBuilder& p, int64_t mtiles, int64_t keys, int64_t head_dim,
                    int64_t v_dim, int64_t v_stride, int64_t elem_bytes, const Affine& row0,
                    const Affine& key0, int64_t k_smem, int64_t v_smem) {
  const auto mi = p.loop(uint64_t(mtiles));
  const Affine m = plus(row0, affine(0, {iv(mi, 16)}));
  {
    const auto ik = p.loop(uint64_t(head_dim / 16));
    p.emit(mem(Opcode::kLdShared, 0, uint64_t(keys * 16 * elem_bytes),
               affine(k_smem, {iv(ik, keys * 16 * elem_bytes)})));
    const auto in = p.loop(uint64_t(keys / 8));
    p.emit(mma_at(m, plus(key0, affine(0, {iv(in, 8)})), affine(0, {iv(ik, 16)})));
    p.end(in);
    p.end(ik);
  }
  // Online softmax: row max, exp, row sum, rescale of the running output.
  emit_alu(p, 16.0 * keys * 4 + 16.0 * v_dim);
  emit_sfu(p, 16.0 * keys);
  {
    const auto ik = p.loop(uint64_t(keys / 16));
    p.emit(mem(Opcode::kLdShared, 0, uint64_t(16 * v_dim * elem_bytes),
               affine(v_smem, {iv(ik, 16 * v_stride)})));
    const auto in = p.loop(uint64_t(v_dim / 8));
    p.emit(mma_at(m, affine(0, {iv(in, 8)}), plus(key0, affine(0, {iv(ik, 16)}))));
    p.end(in);
    p.end(ik);
  }
  p.end(mi);
}

constexpr int64_t kFp32 = 4;

// Split-KV decode (flash-decoding): the plan (blocks, warps, key tiles, splits, shared memory) is
// tiling::plan_decode_attention's, which the roofline's compiled plan costs.
using DecodePlan = tiling::DecodeAttentionPlan;

DecodePlan plan_decode(const llm::AttentionShape& a, const AttentionLayout& l,
                       const hw::GpuConfig& gpu) {
  return tiling::plan_decode_attention(tiling::DecodeAttentionShape::of(a, l.elem_bytes), gpu);
}

// A decode kernel's grid: one row block of one (sequence, KV head) group per split. A group's
// row blocks are adjacent in launch order (x) so that they read its cache from L2 together; with
// one row block x is the split.
struct DecodeGrid {
  const DecodePlan& d;
  int64_t x(int64_t splits) const { return d.row_blocks > 1 ? d.row_blocks : splits; }
  int64_t z(int64_t splits) const { return d.row_blocks > 1 ? splits : 1; }
  // The block's unit (group y, row block x) times `s`, and its split times `s`.
  Affine unit(int64_t s) const {
    return d.row_blocks > 1 ? affine(0, {by(d.row_blocks * s), bx(s)}) : affine(0, {by(s)});
  }
  Affine group(int64_t s) const { return affine(0, {by(s)}); }
  Affine split(int64_t s) const {
    return d.row_blocks > 1 ? affine(0, {bz(s)}) : affine(0, {bx(s)});
  }
};

struct DecodeTensors {
  uint32_t q = 0, k = 1, v = 2, out = 3, partials = 4;
};

// Value-split math on one latent tile (tiling/decode_attention.h): warp w computes S for every row
// over its key_tile / warps keys, the block trades the rows' maxima, each warp stores its P, and
// every warp accumulates O for its v_dim / warps columns over all the tile's keys. `key` is the
// tile's first key (mma coordinates); the stage holds the tile's latent rows at 0, P and the
// maxima sit at `exchange`, Q at `q_smem`. Q and P are A operands every warp shares: a warpgroup
// MMA (hw::SmConfig::mma_warpgroup) reads them once for the group, each warp a part.
void emit_value_split_math(ProgramBuilder& p, const AttentionLayout& l, const DecodePlan& d,
                           int warpgroup, const Affine& key, int64_t exchange, int64_t q_smem) {
  const int64_t w = d.warps, wk = d.key_tile / w, cols = l.v_dim / w, eb = l.elem_bytes;
  const int64_t padded = 16 * d.mtiles, row = l.row_bytes();
  const int64_t a_frag = 16 * 16 * eb / std::min<int64_t>(warpgroup, w);
  const Affine warp_key = plus(key, affine(0, {wx(wk)}));
  // S over the head's 16-column steps, fragments double-buffered (emit_k_steps): per step the
  // warp's keys, each row tile's Q, then the MMAs (the row tiles' sums are independent chains).
  emit_k_steps(
      p, l.head_dim / 16,
      [&](const Affine& q, uint32_t buf) {
        Instr kf = mem(Opcode::kLdShared, 0, uint64_t(wk * 16 * eb),
                       plus(affine(0, {wx(wk * row)}), times(q, 16 * eb)));
        kf.frag = buf;
        p.emit(kf);
        const auto mi = p.loop(uint64_t(d.mtiles));
        Instr qf = mem(Opcode::kLdShared, 0, uint64_t(a_frag),
                       plus(affine(q_smem, {iv(mi, 16 * row), wx(a_frag)}), times(q, 16 * eb)));
        qf.frag = buf;
        p.emit(qf);
        p.end(mi);
      },
      [&](const Affine& q, uint32_t buf) {
        const auto mi = p.loop(uint64_t(d.mtiles));
        const auto in = p.loop(uint64_t(wk / 8));
        Instr mma =
            mma_at(affine(0, {iv(mi, 16)}), plus(warp_key, affine(0, {iv(in, 8)})), times(q, 16));
        mma.frag = buf;
        p.emit(mma);
        p.end(in);
        p.end(mi);
      });
  // The rows' maxima over the warp's keys, traded: every warp needs the tile's.
  const int64_t maxima = exchange + padded * d.key_tile * eb;
  emit_alu(p, double(padded * wk));
  p.emit(mem(Opcode::kStShared, 0, uint64_t(padded * kFp32), affine(maxima, {wx(padded * kFp32)})));
  p.emit(barrier());
  p.emit(mem(Opcode::kLdShared, 0, uint64_t(padded * w * kFp32), constant(maxima)));
  // exp, the row sums over the warp's keys, P to half precision; the running O rescaled.
  emit_alu(p, double(padded * w + padded * wk * 3 + padded * cols));
  emit_sfu(p, double(padded * wk));
  p.emit(mem(Opcode::kStShared, 0, uint64_t(padded * wk * eb),
             affine(exchange, {wx(padded * wk * eb)})));
  p.emit(barrier());
  // O over the tile's 16-key steps, double-buffered: the warp's V columns and each row tile's P,
  // then the MMAs.
  emit_k_steps(
      p, d.key_tile / 16,
      [&](const Affine& q, uint32_t buf) {
        Instr vf = mem(Opcode::kLdShared, 0, uint64_t(16 * cols * eb),
                       plus(affine(0, {wx(cols * eb)}), times(q, 16 * row)));
        vf.frag = buf;
        p.emit(vf);
        const auto mi = p.loop(uint64_t(d.mtiles));
        Instr pf = mem(Opcode::kLdShared, 0, uint64_t(a_frag),
                       plus(affine(exchange, {iv(mi, 16 * d.key_tile * eb), wx(a_frag)}),
                            times(q, 16 * 16 * eb)));
        pf.frag = buf;
        p.emit(pf);
        p.end(mi);
      },
      [&](const Affine& q, uint32_t buf) {
        const auto mi = p.loop(uint64_t(d.mtiles));
        const auto in = p.loop(uint64_t(cols / 8));
        Instr mma = mma_at(affine(0, {iv(mi, 16)}), affine(0, {wx(cols), iv(in, 8)}),
                           plus(key, times(q, 16)));
        mma.frag = buf;
        p.emit(mma);
        p.end(in);
        p.end(mi);
      });
}

// The K/V tiles of a unit from `first_key` on: `tiles` whole tiles then `tail` keys, pipelined.
// Each warp stages a 1/warps share of every tile; in the key split it computes on its keys.
void emit_decode_keys(ProgramBuilder& p, const AttentionLayout& l, const DecodePlan& d,
                      int warpgroup, const Affine& group_cache, const Affine& first_key,
                      int64_t tiles, int64_t tail, const std::function<void()>& load_q,
                      const std::function<void()>& use_q) {
  const int64_t row = l.row_bytes(), v_row = l.v_row_bytes(), w = d.warps, kt = d.key_tile;
  auto load = [&p, &l, &group_cache, w](const Affine& key, int64_t keys) {
    // K rows, then V rows (a latent cache's tile is both).
    for (uint32_t t : {1u, 2u}) {
      if (t == 2 && l.latent) break;
      const int64_t r = t == 1 ? l.row_bytes() : l.v_row_bytes(), share = keys * r / w;
      p.emit(mem(Opcode::kLdGlobalAsync, t, uint64_t(share),
                 plus(plus(times(group_cache, r), times(key, r)), affine(0, {wx(share)}))));
    }
  };
  auto math = [&p, &l, &d, warpgroup, row, v_row, w, kt](const Affine& key) {
    if (d.value_split) {
      emit_value_split_math(p, l, d, warpgroup, key, d.smem_stages,
                            d.smem_stages + d.smem_exchange);
      return;
    }
    emit_tile_math(p, d.mtiles, kt / w, l.head_dim, l.v_dim, l.latent ? row : v_row, l.elem_bytes,
                   constant(0), plus(key, affine(0, {wx(kt / w)})), 0, l.latent ? 0 : kt * row);
  };
  std::vector<KvSegment> segs;
  if (tiles > 0) {
    KvSegment g;
    g.trips = tiles;
    g.load = [=](const Affine& j) { load(plus(first_key, times(j, kt)), kt); };
    g.compute = [=](const Affine& j) { math(plus(first_key, times(j, kt))); };
    segs.push_back(g);
  }
  if (tail > 0) {
    const Affine key = plus(first_key, constant(tiles * kt));
    KvSegment g;
    g.trips = 1;
    g.load = [=](const Affine&) { load(key, tail); };
    g.compute = [=](const Affine&) { math(key); };  // keys past the tail are masked
    segs.push_back(g);
  }
  if (!segs.empty()) emit_kv_pipeline(p, segs, load_q, use_q);
}

// The block's rows merged: the key split's warps each hold (max, sum, O) for every row, merged
// through shared memory; the value split's warps hold their own O columns and trade only the
// rows' sums over their keys.
void emit_block_merge(ProgramBuilder& p, const AttentionLayout& l, const DecodePlan& d) {
  const int64_t padded = d.mtiles * 16;
  if (d.value_split) {
    p.emit(mem(Opcode::kStShared, 0, uint64_t(padded * kFp32), affine(0, {wx(padded * kFp32)})));
    p.emit(barrier());
    p.emit(mem(Opcode::kLdShared, 0, uint64_t(padded * d.warps * kFp32), constant(0)));
    emit_alu(p, double(padded * d.warps));
    return;
  }
  const int64_t part = padded * (l.v_dim + 2) * kFp32;
  p.emit(mem(Opcode::kStShared, 0, uint64_t(part), affine(0, {wx(part)})));
  p.emit(barrier());
  p.emit(mem(Opcode::kLdShared, 0, uint64_t(part), affine(0, {wx(part / d.warps)})));
  emit_alu(p, 3.0 * d.rows * (l.v_dim + 2));
  emit_sfu(p, double(d.warps * d.rows));
}

std::vector<traces::Kernel> decode_attention(const std::string& name, const AttentionLayout& l,
                                             const DecodePlan& d, int warpgroup) {
  const int64_t row = l.row_bytes(), v_row = l.v_row_bytes(), w = d.warps, kt = d.key_tile;
  const int64_t q_bytes = l.batch * l.heads * l.q_slots * row;
  const int64_t out_bytes = l.batch * l.heads * l.q_slots * v_row;
  const int64_t cache_bytes = l.batch * l.kv_heads * l.cache_slots * row;
  const int64_t v_cache_bytes = l.batch * l.kv_heads * l.cache_slots * v_row;
  // The partial rows of a group's split (tiling/decode_attention.h: [group][split][rows]).
  const int64_t group_part = d.row_blocks * d.part_row_bytes();
  const DecodeTensors t;
  // A kernel of plan `b` (the main kernel's, or the value split's combine): its grid, K/V stages,
  // then the exchange, then Q; the warps' partials (and the combine's split partials) are merged
  // in the stage buffers after the last tile.
  auto base = [&](const std::string& kname, const DecodePlan& b, int64_t splits) {
    const DecodeGrid grid{b};
    traces::Kernel k;
    k.name = kname;
    k.grid_x = grid.x(splits);
    k.grid_y = b.groups;
    k.grid_z = grid.z(splits);
    k.warps_x = w;
    k.regs_per_thread = uint32_t(b.registers);
    k.smem_bytes = uint64_t(b.smem_bytes());
    k.tiles.core = -1;
    k.tiles.block = {b.mtiles * 16, kt, l.head_dim};
    k.tiles.warp = b.value_split ? std::array<int64_t, 3>{b.mtiles * 16, l.v_dim / w, l.head_dim}
                                 : std::array<int64_t, 3>{b.mtiles * 16, kt / w, l.head_dim};
    k.tiles.instr = {16, 8, 16};
    k.tensors = {{t.q, "q", uint64_t(q_bytes)},
                 {t.k, l.latent ? "latent_cache" : "k_cache", uint64_t(cache_bytes)}};
    if (!l.latent) k.tensors.push_back({t.v, "v_cache", uint64_t(v_cache_bytes)});
    k.tensors.push_back({t.out, "out", uint64_t(out_bytes)});
    if (d.splits > 1) {
      k.tensors.push_back({t.partials, "partials", uint64_t(d.groups * d.splits * group_part)});
    }
    return k;
  };
  // Q of the block's rows staged once per block (each warp needs all rows), in the first cp.async
  // group.
  auto load_q = [&](ProgramBuilder& p, const DecodePlan& b) {
    const int64_t unit_q = b.rows * row;
    p.emit(mem(Opcode::kLdGlobalAsync, t.q, uint64_t(unit_q / w),
               plus(DecodeGrid{b}.unit(unit_q), affine(0, {wx(unit_q / w)}))));
  };
  auto use_q = [&](ProgramBuilder& p, const DecodePlan& b) {
    if (b.value_split) return;  // read from shared memory by each S step
    p.emit(mem(Opcode::kLdShared, 0, uint64_t(b.rows * row),
               constant(b.smem_stages + b.smem_exchange)));
  };
  auto store_out = [&](ProgramBuilder& p, const DecodePlan& b) {
    const int64_t unit_o = b.rows * v_row;
    emit_alu(p, double(b.rows * l.v_dim) / w);  // O / sum
    p.emit(mem(Opcode::kStGlobal, t.out, uint64_t(unit_o / w),
               plus(DecodeGrid{b}.unit(unit_o), affine(0, {wx(unit_o / w)}))));
  };
  // The block's rows of a group's split `split` (times group_part) in the partials.
  auto partials_at = [&](const DecodePlan& b, const Affine& split) {
    const DecodeGrid grid{b};
    Affine a = plus(grid.group(d.splits * group_part), times(split, group_part));
    if (b.row_blocks > 1) a = plus(a, affine(0, {bx(b.part_row_bytes())}));
    return a;
  };
  const DecodeGrid grid{d};
  const Affine group_cache = grid.group(l.cache_slots);
  std::vector<traces::Kernel> out;
  {
    traces::Kernel k = base(name, d, d.splits);
    ProgramBuilder p;
    const bool tail_here = d.splits == 1;
    emit_decode_keys(
        p, l, d, warpgroup, group_cache, times(grid.split(1), d.tiles_per_split * kt),
        d.tiles_per_split, tail_here ? d.rest_keys : 0, [&] { load_q(p, d); },
        [&] { use_q(p, d); });
    emit_block_merge(p, l, d);
    if (d.splits == 1) {
      store_out(p, d);
    } else {
      const int64_t part = d.part_row_bytes();
      p.emit(mem(Opcode::kStGlobal, t.partials, uint64_t(part / w),
                 plus(partials_at(d, grid.split(1)), affine(0, {wx(part / w)}))));
    }
    k.program = p.take();
    out.push_back(std::move(k));
  }
  if (d.splits > 1) {
    // Combine: the keys no split took, then the splits' partial rows merged (rescaled by
    // exp(max_s - max)) and O written; the value split's per chunk of a group's rows.
    const DecodePlan c = d.value_split ? tiling::value_split_combine(d) : d;
    traces::Kernel k = base(name + ".combine", c, 1);
    ProgramBuilder p;
    emit_decode_keys(
        p, l, c, warpgroup, group_cache, constant(d.splits * d.tiles_per_split * kt), d.rest_tiles,
        d.rest_keys, [&] { load_q(p, c); }, [&] { use_q(p, c); });
    if (d.rest_tiles > 0 || d.rest_keys > 0) emit_block_merge(p, l, c);
    // The splits' partials in passes of `merge` (the last pass takes the rest): one run where a
    // block's rows are its group's, else one per split.
    const int64_t part = c.part_row_bytes();
    auto merge = [&](int64_t splits, const Affine& first) {
      const int64_t parts = splits * part;
      if (c.row_blocks == 1) {
        p.emit(mem(Opcode::kLdGlobalAsync, t.partials, uint64_t(parts / w),
                   plus(partials_at(c, first), affine(0, {wx(parts / w)}))));
      } else {
        const auto i = p.loop(uint64_t(splits));
        p.emit(mem(
            Opcode::kLdGlobalAsync, t.partials, uint64_t(part / w),
            plus(partials_at(c, plus(first, affine(0, {iv(i, 1)}))), affine(0, {wx(part / w)}))));
        p.end(i);
      }
      p.emit(commit());
      p.emit(wait_groups(0));
      p.emit(barrier());
      p.emit(mem(Opcode::kLdShared, 0, uint64_t(parts / w), affine(0, {wx(parts / w)})));
      emit_alu(p, 3.0 * splits * c.rows * (l.v_dim + 2) / w);
      emit_sfu(p, double(splits * c.rows) / w);
    };
    const int64_t passes = ceil_div(d.splits, c.merge);
    if (passes > 1) {
      const auto i = p.loop(uint64_t(passes - 1));
      merge(c.merge, affine(0, {iv(i, c.merge)}));
      p.emit(barrier());  // the buffer is refilled next pass
      p.end(i);
    }
    merge(d.splits - (passes - 1) * c.merge, constant((passes - 1) * c.merge));
    store_out(p, c);
    k.program = p.take();
    out.push_back(std::move(k));
  }
  return out;
}

// A prefill attention kernel's launch: (KV head, sequence) blocks of tile/16 warps holding
// `slots` query tiles and two K/V stages (in one buffer when `q_shares_stages`); tensors q,
// k_cache, v_cache, out.
constexpr uint32_t kPrefillRegisters = 255;
traces::Kernel prefill_kernel(const std::string& name, const AttentionLayout& l, int64_t grid_x,
                              int64_t slots, bool q_shares_stages = false) {
  const int64_t row = l.row_bytes(), v_row = l.v_row_bytes(), tile = l.tile;
  const int64_t q_bytes = slots * tile * row, stage_bytes = 2 * tile * (row + v_row);
  traces::Kernel k;
  k.name = name;
  k.grid_x = grid_x;
  k.grid_y = l.batch * l.kv_heads;
  k.warps_y = tile / 16;
  k.regs_per_thread = kPrefillRegisters;
  k.smem_bytes = uint64_t(q_shares_stages ? std::max(q_bytes, stage_bytes) : q_bytes + stage_bytes);
  k.tiles.core = -1;
  k.tiles.block = {tile, tile, l.head_dim};
  k.tiles.warp = {16, tile, l.head_dim};
  k.tiles.instr = {16, 8, 16};
  k.tensors = {{0, "q", uint64_t(l.batch * l.heads * l.q_slots * row)},
               {1, "k_cache", uint64_t(l.batch * l.kv_heads * l.cache_slots * row)},
               {2, "v_cache", uint64_t(l.batch * l.kv_heads * l.cache_slots * v_row)},
               {3, "out", uint64_t(l.batch * l.heads * l.q_slots * v_row)}};
  return k;
}

// Causal prefill (FlashAttention-2 forward): blocks of tile/16 warps, 16 query rows each; K/V
// tiles of `tile` keys double-buffered with cp.async. Causality skips the key tiles above the
// diagonal: query tile r needs key tiles 0..r (the diagonal one masked inside). Trip counts are
// constants in a trace, so the triangle is load-balanced by pairing: a block takes query tiles p
// and T-1-p (zigzag q slots 2p, 2p+1), which together need exactly T+1 key tiles. It runs them as
// two segments with constant trips: the long row T-1-p over key tiles 0 .. T/2-1, then the short
// row p over key tiles T/2-1 .. T-1. So every block runs T+1 tiles (the exact triangle count, and
// every MMA the real kernel issues), every key tile of the head is read, and q / O move exactly
// once; only which of the head's key tiles stand in for which row's is not the real kernel's
// (row p's real tiles are 0..p, row T-1-p's 0..T-1-p). Grid: (group x T/2 pairs, seq x KV head),
// so GQA heads of a KV group share its K/V through L2. One tile (T = 1): no pairing.
// Q's shared memory holds the K/V stages once every warp has Q in registers (FlashAttention-2's
// Share_Q_K_smem) where that keeps more blocks on an SM (A100, head dim 128: one 96 KB block
// (4 warps) an SM apart, two of 64 KB shared), at the cost of Q's load before the first K/V
// tile's instead of beside it.
traces::Kernel prefill_attention(const std::string& name, const AttentionLayout& l,
                                 const hw::GpuConfig& gpu) {
  const int64_t row = l.row_bytes(), v_row = l.v_row_bytes(), tile = l.tile, warps = tile / 16;
  const int64_t slots = l.paired() ? 2 : 1;
  const int64_t tile_bytes = tile * row, v_tile_bytes = tile * v_row;
  auto resident = [&](bool share) {
    const traces::Kernel k = prefill_kernel(name, l, 1, slots, share);
    return hw::block_occupancy(gpu, warps, k.regs_per_thread, int64_t(k.smem_bytes)).blocks_per_sm;
  };
  const bool share = resident(true) > resident(false);
  traces::Kernel k = prefill_kernel(name, l, l.group * l.pairs(), slots, share);
  ProgramBuilder p;
  // Slot s of this block: q (out) bytes and its first query row (mma m, per head).
  const Affine block_q = affine(0, {by(l.group * l.q_slots * row), bx(slots * tile_bytes)});
  const Affine block_o = affine(0, {by(l.group * l.q_slots * v_row), bx(slots * v_tile_bytes)});
  auto slot_row = [&](int64_t s) { return affine(s * tile, {bx(slots * tile), wy(16)}); };
  const int64_t stage_k = share ? 0 : slots * tile_bytes, stage_v = stage_k + tile_bytes;
  auto load_kv = [&](const Affine& key_tile) {
    for (uint32_t t : {1u, 2u}) {
      const int64_t r = t == 1 ? row : v_row, share = tile * r / warps;
      p.emit(mem(Opcode::kLdGlobalAsync, t, uint64_t(share),
                 plus(affine(0, {by(l.cache_slots * r), wy(share)}), times(key_tile, tile * r))));
    }
  };
  auto segment = [&](int64_t s, int64_t trips, const Affine& first_key_tile) {
    KvSegment g;
    g.trips = trips;
    g.load = [&, first_key_tile](const Affine& j) { load_kv(plus(first_key_tile, j)); };
    g.compute = [&, s, first_key_tile](const Affine& j) {
      emit_tile_math(p, 1, tile, l.head_dim, l.v_dim, v_row, l.elem_bytes, slot_row(s),
                     times(plus(first_key_tile, j), tile), stage_k, stage_v);
    };
    g.done = [&, s] {
      emit_alu(p, 16.0 * l.v_dim);  // O / row sum
      p.emit(mem(Opcode::kStGlobal, 3, uint64_t(16 * v_row),
                 plus(block_o, affine(s * v_tile_bytes, {wy(16 * v_row)}))));
    };
    return g;
  };
  std::vector<KvSegment> segs;
  if (l.paired()) {
    segs.push_back(segment(1, l.tiles / 2, constant(0)));
    segs.push_back(segment(0, l.tiles / 2 + 1, constant(l.tiles / 2 - 1)));
  } else {
    segs.push_back(segment(0, 1, constant(0)));
  }
  emit_kv_pipeline(
      p, segs,
      [&] {
        p.emit(mem(Opcode::kLdGlobalAsync, 0, uint64_t(slots * tile_bytes / warps),
                   plus(block_q, affine(0, {wy(slots * tile_bytes / warps)}))));
      },
      [&] {  // each warp keeps its 16 rows of every slot in registers
        for (int64_t s = 0; s < slots; ++s) {
          p.emit(mem(Opcode::kLdShared, 0, uint64_t(16 * row),
                     affine(s * tile_bytes, {wy(16 * row)})));
        }
      },
      share);
  k.program = p.take();
  return k;
}

// Banded prefill (a prompt longer than the sliding window): query tile r attends over key tiles
// r - window_tiles .. r (the first masked in part), so every tile past the first head_tiles runs
// the same window_tiles + 1 key tiles: the band kernel, one block per query tile. The first
// head_tiles query tiles are the causal triangle, paired as prefill_attention pairs them (tiles p
// and head_tiles - 1 - p, head_tiles + 1 key tiles a block): the ".head" kernel. Q slots are in
// token order; a block takes one KV head and runs its group's query heads one after another.
std::vector<traces::Kernel> banded_prefill_attention(const std::string& name,
                                                     const AttentionLayout& l) {
  const int64_t row = l.row_bytes(), v_row = l.v_row_bytes(), tile = l.tile, warps = tile / 16;
  const int64_t tile_bytes = tile * row, v_tile_bytes = tile * v_row;
  const int64_t wt = l.window_tiles, head = l.head_tiles;
  struct Row {
    Affine slot;        // query tile (token order)
    Affine first_tile;  // its first key tile
    int64_t trips;
  };
  auto kernel = [&](const std::string& kname, int64_t grid_x, const std::vector<Row>& rows) {
    const int64_t slots = int64_t(rows.size());
    traces::Kernel k = prefill_kernel(kname, l, grid_x, slots);
    ProgramBuilder p;
    const auto g = p.loop(uint64_t(l.group));
    const Affine head_q = affine(0, {by(l.group * l.q_slots * row), iv(g, l.q_slots * row)});
    const Affine head_o = affine(0, {by(l.group * l.q_slots * v_row), iv(g, l.q_slots * v_row)});
    const int64_t stage_k = slots * tile_bytes, stage_v = stage_k + tile_bytes;
    std::vector<KvSegment> segs;
    for (int64_t s = 0; s < slots; ++s) {
      const Row r = rows[size_t(s)];
      KvSegment seg;
      seg.trips = r.trips;
      seg.load = [&p, &l, r, row, v_row, tile, warps](const Affine& j) {
        for (uint32_t t : {1u, 2u}) {
          const int64_t b = t == 1 ? row : v_row, share = tile * b / warps;
          p.emit(mem(Opcode::kLdGlobalAsync, t, uint64_t(share),
                     plus(affine(0, {by(l.cache_slots * b), wy(share)}),
                          times(plus(r.first_tile, j), tile * b))));
        }
      };
      seg.compute = [&p, &l, r, tile, v_row, stage_k, stage_v](const Affine& j) {
        emit_tile_math(p, 1, tile, l.head_dim, l.v_dim, v_row, l.elem_bytes,
                       plus(times(r.slot, tile), affine(0, {wy(16)})),
                       times(plus(r.first_tile, j), tile), stage_k, stage_v);
      };
      seg.done = [&p, &l, r, head_o, v_row, v_tile_bytes] {
        emit_alu(p, 16.0 * l.v_dim);  // O / row sum
        p.emit(mem(Opcode::kStGlobal, 3, uint64_t(16 * v_row),
                   plus(plus(head_o, times(r.slot, v_tile_bytes)), affine(0, {wy(16 * v_row)}))));
      };
      segs.push_back(seg);
    }
    emit_kv_pipeline(
        p, segs,
        [&] {
          for (const Row& r : rows) {
            p.emit(mem(Opcode::kLdGlobalAsync, 0, uint64_t(tile_bytes / warps),
                       plus(plus(head_q, times(r.slot, tile_bytes)),
                            affine(0, {wy(tile_bytes / warps)}))));
          }
        },
        [&] {  // each warp keeps its 16 rows of every slot in registers
          for (int64_t s = 0; s < slots; ++s) {
            p.emit(mem(Opcode::kLdShared, 0, uint64_t(16 * row),
                       affine(s * tile_bytes, {wy(16 * row)})));
          }
        });
    p.end(g);
    k.program = p.take();
    return k;
  };
  std::vector<traces::Kernel> out;
  // The band: tile head + i over key tiles head + i - wt .. head + i.
  out.push_back(
      kernel(name, l.tiles - head, {{affine(head, {bx(1)}), affine(head - wt, {bx(1)}), wt + 1}}));
  // The triangle: the long tile head - 1 - p over key tiles 0 .. head/2 - 1, the short tile p over
  // head/2 - 1 .. head - 1 (head + 1 tiles in all, as each pair's two rows need).
  out.push_back(kernel(name + ".head", head / 2,
                       {{affine(head - 1, {bx(-1)}), constant(0), head / 2},
                        {affine(0, {bx(1)}), constant(head / 2 - 1), head / 2 + 1}}));
  return out;
}

class ModelLowerer {
 public:
  ModelLowerer(const llm::StepGraph& g, const hw::GpuConfig& gpu, const ModelLoweringOptions& o)
      : g_(g), gpu_(gpu), o_(o) {
    lut_ = g.step.precompute != llm::PrecomputeMode::kNone;
    elem_bytes_ = golden::dtype_bits(g.step.hidden) / 8;
    use_layer(g.layer);
  }

  traces::Trace run() {
    traces::Trace t;
    t.gpu = gpu_.name;
    if (lut_) t.cores.push_back(lut_core_spec(gpu_));
    for (const Op& op : g_.embedding) lower(t, "embedding", op, g_.embedding);
    for (int64_t l = 0; l < g_.all_layers(); ++l) {
      const std::vector<Op>& ops = g_.ops_of_layer(l);
      use_layer(ops);
      for (const Op& op : ops) lower(t, "L" + std::to_string(l), op, ops);
    }
    for (const Op& op : g_.head) lower(t, "head", op, g_.head);
    return t;
  }

 private:
  // The attention layout of a layer's kind (sliding-window layers cache fewer keys).
  void use_layer(const std::vector<Op>& ops) {
    rope_ = false;
    for (const Op& op : ops) {
      if (op.kind == OpKind::kAttention) {
        attention_ = op.attention;
        layout_ = attention_layout(op.attention, elem_bytes_);
      }
      if (op.kind == OpKind::kRope) rope_ = true;
    }
  }

  int multi_bases() const {
    return g_.step.weights.kind == llm::WeightFormatKind::kMultiBasisBinary ? g_.step.weights.bases
                                                                            : 0;
  }

  // The precompute op fused into `producer`, if any.
  const Op* fused_precompute(const std::string& producer, const std::vector<Op>& ops) const {
    for (const Op& op : ops) {
      if (op.kind == OpKind::kTablePrecompute && op.fused_into == producer) return &op;
    }
    return nullptr;
  }

  FusedTables tables_for(const Op* pre) const {
    FusedTables f;
    if (!pre) return f;
    f.on = true;
    f.act = g_.step.acts;
    f.k_group = gpu_.lut_tensor->core.shape.k;
    f.table = golden::lut_table_dtype(f.act);
    const DType stored = golden::lut_table_dtype(f.act, o_.quantize_tables);
    f.table_bytes = (int64_t(1) << (f.k_group - 1)) * golden::dtype_bits(stored) / 8 +
                    (o_.quantize_tables ? 4 : 0);
    f.bases = multi_bases();
    return f;
  }

  void lower(traces::Trace& t, const std::string& prefix, const Op& op,
             const std::vector<Op>& ops) {
    const std::string name = prefix + "." + op.name;
    const int64_t rows = g_.step.rows();
    const llm::ModelConfig& m = g_.model;
    RowKernelSpec r;
    r.name = name;
    r.elem_bytes = elem_bytes_;
    r.fused = tables_for(fused_precompute(op.name, ops));
    switch (op.kind) {
      case OpKind::kEmbedding:
        // Token rows gathered from the table (+ the learned position rows), one block per token.
        r.rows = rows;
        r.cols = m.hidden;
        r.inputs = {"table"};
        if (m.position == llm::PositionKind::kLearned) r.inputs.push_back("positions");
        r.input_rows = std::max(m.vocab, rows);
        r.alu_per_elem = op.flops / double(op.elements);
        t.kernels.push_back(row_kernel(r));
        break;
      case OpKind::kNorm:
        // Its width from its weight vectors (the hidden size, or MLA's latent and query ranks).
        r.norm_params = m.norm == llm::NormKind::kLayerNorm ? 2 : 1;
        r.cols = int64_t(op.weight_bytes) / (r.norm_params * elem_bytes_);
        r.rows = op.elements / r.cols;
        r.inputs = {"in"};
        r.alu_per_elem = op.flops / double(op.elements);
        t.kernels.push_back(row_kernel(r));
        break;
      case OpKind::kResidual:
      case OpKind::kActivation: {
        r.rows = rows;
        r.cols = op.elements / rows;
        const bool gated = op.kind == OpKind::kActivation && m.ffn == llm::FfnKind::kGated;
        r.inputs = op.kind == OpKind::kResidual ? std::vector<std::string>{"in", "residual"}
                   : gated                      ? std::vector<std::string>{"gate", "up"}
                                                : std::vector<std::string>{"in"};
        const double per = op.flops / double(op.elements);
        r.sfu_per_elem = op.kind == OpKind::kActivation ? 1.0 : 0.0;  // exp / tanh / erf
        r.alu_per_elem = per - r.sfu_per_elem;
        t.kernels.push_back(row_kernel(r));
        break;
      }
      case OpKind::kRouting: {
        // router_topk: a row of expert scores per token; moe_dispatch: token rows gathered into
        // expert order (pairs rows out of `rows`), writing the experts' tables when fused;
        // moe_combine: per token, its top-k expert rows (+ the shared expert's) weighted and
        // summed.
        const int64_t k = m.moe.top_k;
        r.alu_per_elem = op.elements > 0 ? op.flops / double(op.elements) : 0.0;
        if (op.name == "router_topk") {
          r.rows = rows;
          r.cols = m.moe.experts;
          r.inputs = {"logits"};
          r.sfu_per_elem = 1.0;  // exp (softmax) or the sigmoid
          r.alu_per_elem = std::max(0.0, r.alu_per_elem - 1.0);
        } else if (op.name == "moe_dispatch") {
          r.rows = rows;  // a token's row, stored for each of its k experts
          r.copies = k;
          r.cols = m.hidden;
          r.inputs = {"in"};
        } else {
          r.rows = rows;
          r.cols = m.hidden;
          for (int64_t e = 0; e < k; ++e) r.inputs.push_back("expert" + std::to_string(e));
          if (m.moe.shared_intermediate > 0) r.inputs.push_back("shared");
        }
        t.kernels.push_back(row_kernel(r));
        break;
      }
      case OpKind::kRope:
        if (m.is_mla()) {
          // Latent attention rotates only the rope parts (every head's query part and the one
          // shared key part) of each token's row: an elementwise row kernel.
          r.rows = rows;
          r.cols = op.elements / rows;
          r.inputs = {"in"};
          r.alu_per_elem = op.flops / double(op.elements);
          t.kernels.push_back(row_kernel(r));
          break;
        }
        // k goes to the cache slot after the cached keys (a sliding window's rolling buffer
        // keeps kv_len slots).
        t.kernels.push_back(rope_kernel(name, layout_, m.q_dim(), m.kv_dim(),
                                        attention_.kv_len - attention_.q_len,
                                        op.flops / double(op.elements)));
        break;
      case OpKind::kTablePrecompute:
        if (!op.fused_into.empty()) break;  // done by its producer
        if (const Op* gemm = table_reader(op.name, ops); gemm && batched_lut(*gemm)) {
          // A grouped GEMM's tables: one precompute over every expert's rows, each expert's a
          // slice of the stacked activations padded to its lmma kernel's tile (the precompute
          // lower_lut_gemm pairs with that kernel).
          GemmSpec s = lut_spec(*gemm, ops);
          s.emit_precompute = true;
          traces::Kernel k = cached_lut(s).front();
          k.name = name;
          t.kernels.push_back(std::move(k));
          break;
        }
        {
          const int64_t cols = op.read_bytes > 0 ? int64_t(op.read_bytes / elem_bytes_ / rows) : 0;
          t.kernels.push_back(lower_precompute(name, rows, cols, g_.step.acts, o_.quantize_tables,
                                               gpu_, multi_bases()));
        }
        break;
      case OpKind::kLinear: {
        // One GEMM per launch group (llm::Op::launch_with: QKV, gate+up), named after its first
        // op, its members' N concatenated; the members emit nothing.
        if (!op.launch_with.empty()) break;
        if (op.low_bit && lut_) {
          GemmSpec s = lut_spec(op, ops);
          s.name = name;
          if (batched_lut(op) || op.gemm.batch == 1) {
            // A grouped (MoE expert) GEMM as one batched LUT mpGEMM, the experts its grid z.
            append(t, cached_lut(s));
          } else {
            // Multi-basis binary runs one GEMM per kernel: one per active expert, ".e<i>".
            s.batch = 1;
            for (int64_t e = 0; e < op.gemm.batch; ++e) {
              s.name = name + ".e" + std::to_string(e);
              append(t, cached_lut(s));
            }
          }
        } else {
          const int64_t n = launch_n(op, ops);
          // Dense, or dequantize-then-MAC for low-bit weights on a GPU without LUT cores; a
          // grouped GEMM as one batched kernel.
          const tiling::LinearMma mma =
              tiling::linear_mma(op.low_bit, g_.step.acts, g_.step.weights.bits_per_weight());
          t.kernels.push_back(
              cached_mma(name, op.gemm.batch, op.gemm.m, n, op.gemm.k, mma.a, mma.weight_bits));
        }
        break;
      }
      case OpKind::kAttention: {
        const auto& a = op.attention;
        if (m.is_mla()) {
          // The new tokens' latent rows (normalized latent + rotated RoPE key) into the latent
          // cache; prefill attends over the keys and values kv_b_proj up-projected.
          AttentionLayout lat = layout_;
          lat.kv_heads = 1;
          lat.head_dim = lat.v_dim = m.mla.kv_lora_rank + m.mla.qk_rope_dim;
          lat.latent = true;
          lat.cache_slots = a.kv_len;
          t.kernels.push_back(kv_append_kernel(name + ".kv_append", lat, lat.head_dim, a.q_len,
                                               a.kv_len - a.q_len, false));
        } else {
          // The step's new K / V rows into the cache (K already there when RoPE wrote it).
          t.kernels.push_back(kv_append_kernel(name + ".kv_append", layout_, m.kv_dim(), a.q_len,
                                               a.kv_len - a.q_len, !rope_));
        }
        if (a.causal) {
          if (layout_.banded()) {
            append(t, banded_prefill_attention(name, layout_));
          } else {
            t.kernels.push_back(prefill_attention(name, layout_, gpu_));
          }
        } else {
          append(t, decode_attention(name, layout_, plan_decode(a, layout_, gpu_),
                                     gpu_.sm.mma_warpgroup));
        }
        break;
      }
    }
  }

  void append(traces::Trace& t, std::vector<traces::Kernel> ks) {
    for (auto& k : ks) t.kernels.push_back(std::move(k));
  }

  // A launch group's N: its first op's and its members' concatenated.
  static int64_t launch_n(const Op& op, const std::vector<Op>& ops) {
    int64_t n = op.gemm.n;
    for (const Op& o : ops) {
      if (o.kind == OpKind::kLinear && o.launch_with == op.name) n += o.gemm.n;
    }
    return n;
  }
  // The LUT mpGEMM of a low-bit linear op's launch group (tables from elsewhere).
  GemmSpec lut_spec(const Op& op, const std::vector<Op>& ops) const {
    GemmSpec s;
    s.batch = op.gemm.batch;
    s.m = op.gemm.m;
    s.n = launch_n(op, ops);
    s.k = op.gemm.k;
    s.weights = g_.step.weights;
    s.act = g_.step.acts;
    s.group_size = o_.group_size;
    s.quantize_tables = o_.quantize_tables;
    s.emit_precompute = false;
    return s;
  }
  // A grouped GEMM that runs as one batched LUT kernel (every weight format but multi-basis
  // binary, GemmSpec::batch).
  bool batched_lut(const Op& op) const {
    return lut_ && op.low_bit && op.gemm.batch > 1 && multi_bases() == 0;
  }
  // The launch group's first linear op that reads the tables of precompute `pre`.
  static const Op* table_reader(const std::string& pre, const std::vector<Op>& ops) {
    for (const Op& o : ops) {
      if (o.kind == OpKind::kLinear && o.table_from == pre && o.launch_with.empty()) return &o;
    }
    return nullptr;
  }

  // Tile choice is the expensive part; every layer repeats the same shapes.
  std::vector<traces::Kernel> cached_lut(const GemmSpec& s) {
    const auto key = std::make_tuple(s.m, s.n, s.k, s.batch * 2 + (s.emit_precompute ? 1 : 0));
    auto it = lut_cache_.find(key);
    if (it == lut_cache_.end()) it = lut_cache_.emplace(key, lower_lut_gemm(s, gpu_, 0)).first;
    std::vector<traces::Kernel> ks = it->second;
    for (auto& k : ks) k.name = s.name + k.name.substr(k.name.find_last_of('.'));
    return ks;
  }
  traces::Kernel cached_mma(const std::string& name, int64_t batch, int64_t m, int64_t n, int64_t k,
                            DType a, int weight_bits) {
    const auto key = std::make_tuple(m, n, k, int(a) * 16 + weight_bits + int(batch) * 4096);
    auto it = mma_cache_.find(key);
    if (it == mma_cache_.end()) {
      it = mma_cache_
               .emplace(key, lower_mma_gemm(name, batch, m, n, k, a, a, gpu_, nullptr, weight_bits))
               .first;
    }
    traces::Kernel kr = it->second;
    kr.name = name;
    // What it computes, as compile_gemm records it (gemm_lowering.cpp): the simulator's
    // --functional check and its linear-layer totals (gemm_time_ms) see every GEMM.
    kr.gemm.path = traces::GemmPath::kMma;
    kr.gemm.batch = batch;
    kr.gemm.m = m;
    kr.gemm.n = n;
    kr.gemm.k = k;
    kr.gemm.group = k;
    kr.gemm.wbits = weight_bits;
    kr.gemm.act = a;
    return kr;
  }

  const llm::StepGraph& g_;
  const hw::GpuConfig& gpu_;
  const ModelLoweringOptions& o_;
  bool lut_ = false;
  bool rope_ = false;
  int64_t elem_bytes_ = 2;
  llm::AttentionShape attention_;
  AttentionLayout layout_;
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, std::vector<traces::Kernel>> lut_cache_;
  std::map<std::tuple<int64_t, int64_t, int64_t, int>, traces::Kernel> mma_cache_;
};

}  // namespace

traces::Trace compile_model(const llm::ModelConfig& model, llm::StepConfig step,
                            const hw::GpuConfig& gpu, const ModelLoweringOptions& options) {
  const bool lut = gpu.has_lut_tensor() && step.weights.is_low_bit();
  step.precompute = !lut ? llm::PrecomputeMode::kNone
                         : (options.fuse_precompute ? llm::PrecomputeMode::kFused
                                                    : llm::PrecomputeMode::kSeparate);
  if (lut) step.lut_k = gpu.lut_tensor->core.shape.k;
  step.quantize_tables = options.quantize_tables;
  step.kernels = llm::KernelPlan::kCompiled;  // the kernels this lowering emits
  const llm::StepGraph g = llm::build_step_graph(model, step);
  traces::Trace t = ModelLowerer(g, gpu, options).run();
  t.version = t.minimum_version();
  traces::validate(t, "compile_model");
  check_kernels_fit(t, gpu);
  return t;
}

std::string kernel_graph_op(const std::string& kernel) {
  const auto dot = kernel.find('.');
  if (dot == std::string::npos) return kernel;
  const std::string rest = kernel.substr(dot + 1);
  return rest.substr(0, rest.find('.'));
}

TraceSummary summarize(const traces::Trace& t) {
  TraceSummary s;
  s.kernels = t.kernels.size();
  for (const auto& k : t.kernels) {
    s.static_instructions += k.program.size();
    const uint64_t warps = uint64_t(k.blocks()) * uint64_t(k.warps_per_block());
    s.warp_instructions += traces::expanded_length(k.program) * warps;
    // LMMA / MMA counts of one warp (loop multipliers), times the warps.
    uint64_t mult[traces::kMaxLoopDepth + 1] = {1, 1, 1, 1, 1, 1, 1};
    int depth = 0;
    for (const auto& in : k.program) {
      if (in.op == Opcode::kLoop) {
        mult[depth + 1] = mult[depth] * in.count;
        ++depth;
      } else if (in.op == Opcode::kEndLoop) {
        --depth;
      } else if (in.op == Opcode::kLmma) {
        s.lmmas += mult[depth] * warps;
      } else if (in.op == Opcode::kMma) {
        s.mmas += mult[depth] * warps;
      }
    }
  }
  return s;
}

}  // namespace ltc::compiler
