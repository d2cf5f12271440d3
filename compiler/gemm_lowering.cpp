#include "compiler/gemm_lowering.h"

#include "common/error.h"
#include "common/int_math.h"
#include "compiler/program_builder.h"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>

namespace ltc::compiler {
namespace {

using golden::DType;
using traces::Instr;
using traces::Opcode;

// LUT groups (tables) one precompute warp builds per row, and warps per precompute block.
constexpr int64_t kPrecomputeGroups = 32;
constexpr int64_t kPrecomputeWarps = 4;
// Register buffer of the LUT epilogue's scales (the K steps double buffer in 1 and 2).
constexpr uint32_t kScaleFragBuffer = 3;
// Bytes one warp's fragment lds moves at most when it gathers several K steps (8 per thread).
constexpr int64_t kFragmentLoadBytes = 256;

// Pipeline depth actually used: at least 2, at most one more than the K tiles of a quantization
// group (the loads then never run past the group's last tile before the peeled iterations).
int pipeline_stages(int stages, int64_t tiles_per_group) {
  return int(std::max<int64_t>(2, std::min<int64_t>(std::max(stages, 2), tiles_per_group + 1)));
}

// The K loop of a GEMM kernel as a CUTLASS multistage cp.async pipeline (gemm_lowering.h): K
// tiles t = 0 .. groups * tiles_per_group - 1, a quantization-group epilogue after each
// tiles_per_group tiles. `load(t)` emits the ldgsts of K tile t, `compute(t)` its fragments and
// tensor-core instructions; t is an affine of the loop counters.
struct KPipeline {
  int64_t groups = 1, tiles_per_group = 1;
  int stages = 2;  // pipeline_stages()
  // Producer / consumer (Hopper warp-specialized TMA kernels): a stage is refilled as soon as
  // every warp has released it, and a warp waits for the arrival of the tile it computes, not
  // for the block: S tiles in flight instead of S - 1 (sim/README.md, "The machine": producer /
  // consumer).
  bool producer_consumer = false;
  std::function<void(const traces::Affine& tile)> load;
  std::function<void(const traces::Affine& tile)> compute;
  std::function<void(const traces::Affine& group)> group_end;
  // Cross-tile fragment prefetch (CUTLASS's multistage mainloop), where a tile is `steps` K
  // steps (even) of `step_frags` and `step_ops` and nothing else: tile t + 1's wait, barrier and
  // first fragments come before tile t's last step's instructions, so the tensor core has a step
  // of work while they fly. 0: `compute` whole tiles.
  int64_t steps = 0;
  std::function<void(const traces::Affine&tile, const traces::Affine&step, uint32_t buf)>
      step_frags, step_ops;
};

// Tile t's K steps with register double buffering (as emit_k_steps), the first step's fragments
// already loaded (buffer 1); with `next`, tile t + 1's wait, barrier and first fragments come
// before the last step's instructions.
void emit_prefetched_steps(ProgramBuilder& p, const KPipeline& k, const traces::Affine& t,
                           bool next) {
  const int64_t pairs = k.steps / 2 - 1;
  if (pairs > 0) {
    const auto ip = p.loop(uint64_t(pairs));
    k.step_frags(t, affine(1, {iv(ip, 2)}), 2);
    k.step_ops(t, affine(0, {iv(ip, 2)}), 1);
    k.step_frags(t, affine(2, {iv(ip, 2)}), 1);
    k.step_ops(t, affine(1, {iv(ip, 2)}), 2);
    p.end(ip);
  }
  k.step_frags(t, constant(k.steps - 1), 2);
  k.step_ops(t, constant(k.steps - 2), 1);
  if (next) {
    p.emit(wait_groups(uint64_t(k.stages - 2)));
    p.emit(barrier());
    k.step_frags(plus(t, constant(1)), constant(0), 1);
  }
  k.step_ops(t, constant(k.steps - 1), 2);
}

void emit_pipeline(ProgramBuilder& p, const KPipeline& k) {
  const int64_t S = k.stages, tpg = k.tiles_per_group;
  const bool prefetch = k.steps > 0;
  if (prefetch && (k.steps % 2 != 0 || k.producer_consumer)) {
    throw std::logic_error(
        "emit_pipeline: fragment prefetch needs an even step count, no producer");
  }
  const auto prologue = p.loop(uint64_t(S - 1));
  k.load(affine(0, {iv(prologue, 1)}));
  p.emit(commit());
  p.end(prologue);
  if (prefetch) {
    // Tile 0 lands, its first fragments load; each tile then waits for the next at its last step.
    p.emit(wait_groups(uint64_t(S - 2)));
    p.emit(barrier());
    k.step_frags(constant(0), constant(0), 1);
  }
  // As CUTLASS's multistage mainloop: once tile t has landed and every warp has passed the
  // barrier (so the stage of tile t-1 is free), start loading tile t+S-1 into that stage, then
  // compute tile t while the copies fly.
  //
  // Producer / consumer: the barrier only says that every warp is done with tile t-1 (the
  // consumers' release of its stage, on which the producer waits); tile t+S-1 is loaded into
  // that stage at once, then each warp waits for tile t alone (S - 1 later groups may fly).
  //
  // Fragment prefetch: the wait and barrier for tile t came at tile t-1's last step (every warp
  // has then loaded all of tile t-1's fragments, so its stage is free).
  auto iteration = [&](const traces::Affine& t, bool load, bool next = true) {
    if (!prefetch) {
      if (!k.producer_consumer) p.emit(wait_groups(uint64_t(S - 2)));
      p.emit(barrier());
    }
    if (load) k.load(plus(t, constant(S - 1)));
    p.emit(commit());  // empty in the peeled iterations
    if (k.producer_consumer) p.emit(wait_groups(uint64_t(S - 1)));
    if (prefetch) {
      emit_prefetched_steps(p, k, t, next);
    } else {
      k.compute(t);
    }
  };
  if (k.groups > 1) {
    const auto ig = p.loop(uint64_t(k.groups - 1));
    const auto it = p.loop(uint64_t(tpg));
    iteration(affine(0, {iv(ig, tpg), iv(it, 1)}), true);
    p.end(it);
    k.group_end(affine(0, {iv(ig, 1)}));
    p.end(ig);
  }
  // The last group: tiles with a load S-1 ahead, then S-1 peeled tiles without.
  const int64_t first = (k.groups - 1) * tpg, with_load = tpg - (S - 1);
  if (with_load > 0) {
    const auto it = p.loop(uint64_t(with_load));
    iteration(affine(first, {iv(it, 1)}), true);
    p.end(it);
  }
  // The last tile has no next one to prefetch: peeled from the drain.
  const int64_t drained = prefetch ? S - 2 : S - 1;
  if (drained > 0) {
    const auto drain = p.loop(uint64_t(drained));
    iteration(affine(first + with_load, {iv(drain, 1)}), false);
    p.end(drain);
  }
  if (prefetch) iteration(constant(first + with_load + drained), false, false);
  k.group_end(constant(k.groups - 1));
}

// A block's slice of a row-major global tensor staged by ldgsts: `rows` rows of `row_bytes`
// bytes, `row_stride` apart, starting at `origin`. The block's warps share it as
// tiling::slice_copy says (the estimate's count of the copies): whole rows, an equal part of
// every row, or each warp its own warp tile's `own_rows` rows (from row `own_first`).
struct BlockSlice {
  uint32_t tensor = 0;
  traces::Affine origin;
  int64_t rows = 0, row_stride = 0, row_bytes = 0;
  int64_t own_rows = 0;
  traces::Affine own_first;  // in rows
};

void load_block_slice(ProgramBuilder& p, const BlockSlice& s, int64_t warps_x, int64_t warps_y) {
  const int64_t W = warps_x * warps_y;
  const tiling::SliceCopy copy = tiling::slice_copy(s.rows, s.row_bytes, W, s.own_rows);
  if (copy.own_rows) {
    const auto ir = p.loop(uint64_t(s.own_rows));
    p.emit(mem(
        Opcode::kLdGlobalAsync, s.tensor, uint64_t(s.row_bytes),
        plus(plus(s.origin, times(s.own_first, s.row_stride)), affine(0, {iv(ir, s.row_stride)}))));
    p.end(ir);
  } else if (copy.bytes_per_copy == s.row_bytes) {
    const int64_t per = copy.copies_per_warp;
    const auto ir = p.loop(uint64_t(per));
    p.emit(mem(Opcode::kLdGlobalAsync, s.tensor, uint64_t(s.row_bytes),
               plus(s.origin, affine(0, {wy(warps_x * per * s.row_stride), wx(per * s.row_stride),
                                         iv(ir, s.row_stride)}))));
    p.end(ir);
  } else {
    const int64_t part = copy.bytes_per_copy;
    const auto ir = p.loop(uint64_t(s.rows));
    p.emit(mem(Opcode::kLdGlobalAsync, s.tensor, uint64_t(part),
               plus(s.origin, affine(0, {wy(warps_x * part), wx(part), iv(ir, s.row_stride)}))));
    p.end(ir);
  }
}

// The block's output tile leaving the kernel as fp16, one warp tile per warp; `origin` is the
// warp tile's first byte in out (row-major, `row_bytes` per row). Sliced K (slices > 1, the
// block's warps along y): the slices add their accumulators through shared memory (from
// `smem_base`), each slice one share of the tile (rows when they divide, else columns), and run
// that share's epilogue and stores.
struct OutputTile {
  uint32_t tensor = 0;
  int64_t wm = 0, wn = 0, warps_x = 1;
  int slices = 1;
  traces::Affine origin;
  int64_t row_bytes = 0;
  int64_t smem_base = 0;
  bool by_rows() const { return wm % slices == 0; }
  int64_t share_rows() const { return slices > 1 && by_rows() ? wm / slices : wm; }
  int64_t share_cols() const { return slices > 1 && !by_rows() ? wn / slices : wn; }
  // Where warp wy's share starts, in rows and columns of the warp tile.
  traces::Affine share_row() const {
    return affine(0, {wy(slices > 1 && by_rows() ? share_rows() : 0)});
  }
  traces::Affine share_col() const {
    return affine(0, {wy(slices > 1 && !by_rows() ? share_cols() : 0)});
  }
};

// Shared memory the slices' fp32 accumulator tiles take.
int64_t slice_reduction_smem(const OutputTile& o) {
  return o.slices > 1 ? o.slices * o.warps_x * o.wm * o.wn * 4 : 0;
}

// Sliced K: every slice stores its accumulator tile (after a barrier: the stage it overlaps may
// still be read), then adds up its share over all slices in slice order (CUDA cores).
void emit_slice_reduction(ProgramBuilder& p, const OutputTile& o) {
  if (o.slices <= 1) return;
  const int64_t P = o.slices, tile = o.wm * o.wn * 4;
  const int64_t rows = o.share_rows(), cols = o.share_cols();
  p.emit(barrier());
  p.emit(mem(Opcode::kStShared, 0, uint64_t(tile), affine(o.smem_base, {wx(P * tile), wy(tile)})));
  p.emit(barrier());
  const auto is = p.loop(uint64_t(P));
  const auto ir = p.loop(uint64_t(rows));
  p.emit(mem(Opcode::kLdShared, 0, uint64_t(cols * 4),
             plus(plus(times(o.share_row(), o.wn * 4), times(o.share_col(), 4)),
                  affine(o.smem_base, {wx(P * tile), iv(is, tile), iv(ir, o.wn * 4)}))));
  p.end(ir);
  p.end(is);
  p.emit(count_op(Opcode::kAlu, uint64_t((P - 1) * rows * cols)));
}

// fp16 stores of the warp's share of the tile (the whole tile unless sliced).
void emit_output_store(ProgramBuilder& p, const OutputTile& o) {
  const auto orow = p.loop(uint64_t(o.share_rows()));
  p.emit(mem(Opcode::kStGlobal, o.tensor, uint64_t(o.share_cols() * 2),
             plus(plus(o.origin, plus(times(o.share_row(), o.row_bytes), times(o.share_col(), 2))),
                  affine(0, {iv(orow, o.row_bytes)}))));
  p.end(orow);
}

}  // namespace

void GemmSpec::validate() const {
  if (m < 1 || n < 1 || k < 1) {
    throw InputError("gemm: --m, --n, --k must be >= 1 (got " + std::to_string(m) + ", " +
                     std::to_string(n) + ", " + std::to_string(k) + ")");
  }
  if (!weights.is_low_bit()) {
    throw InputError("--weights: " + weights.name() +
                     " is not a low-bit format; LUT mpGEMMs take int1..int8, ternary, binary");
  }
  if (act == DType::kInt16 || act == DType::kInt32 || act == DType::kFp32) {
    throw InputError("--acts: " + std::string(golden::dtype_name(act)) +
                     " (valid: int8, fp16, bf16, fp8e4m3, fp8e5m2)");
  }
  if (group_size < 0) throw InputError("group size must be >= 0");
  if (batch < 1) throw InputError("gemm: batch must be >= 1 (got " + std::to_string(batch) + ")");
  if (batch > 1 && weights.kind == llm::WeightFormatKind::kMultiBasisBinary) {
    throw InputError("--weights: " + weights.name() +
                     " (multi-basis binary) runs one GEMM per kernel, not a batch (valid: "
                     "int1..int8, ternary, binary)");
  }
}

traces::CoreSpec lut_core_spec(const hw::GpuConfig& gpu) {
  if (!gpu.has_lut_tensor()) {
    throw InputError("--gpu: '" + gpu.name +
                     "' has no LUT tensor core (valid: a GPU with a lut_tensor section, e.g. "
                     "a100-lut4x, a100-lut8x)");
  }
  traces::CoreSpec c;
  c.config = gpu.lut_tensor->core;
  for (const auto& a : gpu.lut_tensor->acts) c.acts.push_back(golden::parse_dtype(a, "gpu acts"));
  return c;
}

int64_t precompute_table_groups(int64_t k_cols, int64_t k_group) {
  const int64_t groups = ceil_div(k_cols, k_group);
  const int64_t warps = std::min(kPrecomputeWarps, ceil_div(groups, kPrecomputeGroups));
  return ceil_div(groups, warps * kPrecomputeGroups) * warps * kPrecomputeGroups;
}

namespace {

// Everything one LUT GEMM's kernel is laid out by: the tiles, the LMMA, the operand sizes, the
// padded extents, the global tensors and one shared-memory stage (plan_lut_gemm).
struct LutGemmPlan {
  tiling::TileChoice tc;
  traces::LmmaOp op;
  bool multi = false;  // multi-basis binary: `B` 1-bit sign planes, each with its own table
  int64_t B = 1;
  int wbits = 1;
  int64_t G = 0;           // quantization group along K (K when ungrouped)
  int64_t cn = 0, kg = 0;  // the tensor core's N and K
  int64_t bm = 0, bn = 0, bk = 0, wm = 0, wn = 0, im = 0, in_ = 0;
  int P = 1;  // K slices (tiling::TileChoice::k_slices): warps along y, each lg_per_warp groups
  int64_t table_bytes = 0, seg_bytes = 0;
  int64_t tiles_per_group = 0, n_groups = 0, lg_per_tile = 0, lg_per_warp = 0;
  // One K step's fragments per warp: its table rows, its weight planes (one basis); and the K
  // steps whose fragments one lds gathers.
  int64_t step_table_bytes = 0, step_plane_bytes = 0, steps_per_load = 1;
  int64_t grid_x = 0, grid_y = 0, Mp = 0, Np = 0, LGt = 0;  // padded (traces/trace.h "Padding")
  // A batch (GemmSpec::batch): Z GEMMs, GEMM bz's operands at bz times one GEMM's bytes; z is 1
  // when batched, else 0 (a single GEMM's trace has no bz term and needs no grid z).
  int64_t Z = 1, z = 0, z_weights = 0;
  int64_t row_table_bytes = 0, w_row_bytes = 0, n_core_tiles = 0;
  int64_t smem_basis_tables = 0, smem_basis_weights = 0, smem_tables = 0, stage_bytes = 0;
  int S = 2;  // pipeline stages
  int64_t scale_bytes = 0, basis_tables = 0, basis_weights = 0;
  int64_t salient = 0, salient_row_bytes = 0, act_row_bytes = 0;
};

// The block's output tile (out [Mp][Np] fp16) and the shared memory the kernel takes: its
// pipeline stages, or the slices' partial tiles if larger.
OutputTile lut_output(const LutGemmPlan& l) {
  OutputTile o;
  o.tensor = 3;
  o.wm = l.wm;
  o.wn = l.wn;
  o.warps_x = l.bn / l.wn;
  o.slices = l.P;
  o.origin = affine(0, {by(l.bm * l.Np * 2), bz(l.z * l.Mp * l.Np * 2),
                        wy(l.P > 1 ? 0 : l.wm * l.Np * 2), bx(l.bn * 2), wx(l.wn * 2)});
  o.row_bytes = l.Np * 2;
  // With several groups the slices add up while later K tiles land in the stages: their own
  // buffer after the stages; with one, after the main loop, in the drained stages.
  o.smem_base = l.n_groups > 1 ? l.S * l.stage_bytes : 0;
  return o;
}
int64_t lut_smem_bytes(const LutGemmPlan& l) {
  const OutputTile o = lut_output(l);
  return std::max(l.S * l.stage_bytes, o.smem_base + slice_reduction_smem(o));
}

// The tile choice (a K tile never straddles a quantization group), the LMMA and every size the
// kernel needs; InputError for a group that is not a multiple of the core's K or stages that do
// not fit in shared memory.
LutGemmPlan plan_lut_gemm(const GemmSpec& spec, const hw::GpuConfig& gpu, int max_slices = 0) {
  const traces::CoreSpec cs = lut_core_spec(gpu);
  LutGemmPlan l;
  l.cn = cs.config.shape.n;
  l.kg = cs.config.shape.k;
  l.multi = spec.weights.kind == llm::WeightFormatKind::kMultiBasisBinary;
  l.B = l.multi ? spec.weights.bases : 1;
  l.wbits = l.multi ? 1 : spec.weights.planes();
  const int64_t group = l.multi ? spec.weights.group_size : spec.group_size;
  l.G = group > 0 && group < spec.k ? group : spec.k;
  const bool grouped = l.G < spec.k;
  if (grouped && l.G % l.kg != 0) {
    throw InputError("--group: " + std::to_string(l.G) +
                     " is not a multiple of the tensor core's K = " + std::to_string(l.kg));
  }

  tiling::GemmProblem prob =
      tiling::lut_gemm_problem(gpu, spec.m, spec.n, spec.k, spec.act, l.wbits,
                               spec.weights.bits_per_weight() - l.wbits, spec.quantize_tables);
  prob.batch = spec.batch;
  l.Z = spec.batch;
  l.z = spec.batch > 1 ? 1 : 0;
  tiling::TileChoice& tc = l.tc;
  tc = tiling::require_tiles(prob, gpu);
  if (grouped) {
    tc.block.k = std::min(tc.block.k, l.G);
    while (l.G % tc.block.k != 0) tc.block.k /= 2;
  }
  // Multi-basis binary runs unsliced; a K tile shortened to its group keeps whole LUT groups
  // per slice.
  if (l.multi) tc.k_slices = 1;
  if (max_slices > 0) tc.k_slices = std::min(tc.k_slices, max_slices);
  while (tc.k_slices > 1 && tc.block.k % (int64_t(tc.k_slices) * l.kg) != 0) tc.k_slices /= 2;
  if (tc.k_slices > 1 && tc.warp.n % tc.k_slices != 0 && tc.warp.m % tc.k_slices != 0) {
    tc.k_slices = 1;
  }
  tc.warp.k = tc.block.k / tc.k_slices;
  tc.warps_per_block = int((tc.block.m / tc.warp.m) * (tc.block.n / tc.warp.n)) * tc.k_slices;
  l.P = tc.k_slices;
  l.bm = tc.block.m, l.bn = tc.block.n, l.bk = tc.block.k;
  l.wm = tc.warp.m, l.wn = tc.warp.n;

  traces::LmmaOp& op = l.op;
  op.shape = tc.instr;  // a x b core tiles (tiling::choose_lmma_shape)
  op.act = spec.act;
  op.quantized_table = spec.quantize_tables;
  op.wbits = l.wbits;
  op.acc = (golden::is_int(spec.act) || spec.quantize_tables) ? DType::kInt32 : DType::kFp32;
  op.out = op.acc;
  traces::validate(op, cs, "gemm " + spec.name);
  l.im = op.shape.m, l.in_ = op.shape.n;

  const int64_t entries = int64_t(1) << (l.kg - 1);
  l.table_bytes = entries * (golden::dtype_bits(op.table()) / 8) +
                  (spec.quantize_tables ? 4 : 0);  // + fp32 scale
  l.seg_bytes = (l.cn * l.kg + 7) / 8;             // packing.h segment: one plane of a core tile
  l.tiles_per_group = grouped ? l.G / l.bk : ceil_div(spec.k, l.bk);
  l.n_groups = ceil_div(spec.k, l.G);
  l.lg_per_tile = l.bk / l.kg;
  l.lg_per_warp = l.lg_per_tile / l.P;
  // One lds per operand moves the fragments of as many K steps as fit in 8 bytes per thread
  // (256 bytes per warp, what the larger warp tiles load per step), a power of two dividing the
  // stage's steps: a GEMV's warp tile would otherwise load 1-2 bytes per thread per instruction.
  l.step_table_bytes = l.wm * l.table_bytes;
  l.step_plane_bytes = (l.wn / l.cn) * l.wbits * l.seg_bytes;
  const int64_t step_bytes = std::max(l.step_table_bytes, l.step_plane_bytes);
  while (l.lg_per_warp % (2 * l.steps_per_load) == 0 &&
         2 * l.steps_per_load * step_bytes <= kFragmentLoadBytes) {
    l.steps_per_load *= 2;
  }

  l.grid_x = ceil_div(spec.n, l.bn), l.grid_y = ceil_div(spec.m, l.bm);
  l.Mp = l.grid_y * l.bm, l.Np = l.grid_x * l.bn;
  l.LGt = std::max(l.n_groups * l.tiles_per_group * l.lg_per_tile,
                   precompute_table_groups(spec.k, l.kg));
  l.row_table_bytes = l.LGt * l.table_bytes;
  l.w_row_bytes = l.LGt * l.wbits * l.seg_bytes;  // one core tile of N: all LUT groups
  l.n_core_tiles = l.Np / l.cn;

  // Shared memory of one stage: [basis][LUT group of the tile][block row][table] tables, then
  // [basis][LUT group][core tile of N][plane][segment] weights.
  l.smem_basis_tables = l.lg_per_tile * l.bm * l.table_bytes;
  l.smem_basis_weights = l.lg_per_tile * (l.bn / l.cn) * l.wbits * l.seg_bytes;
  l.smem_tables = l.B * l.smem_basis_tables;
  l.stage_bytes = l.smem_tables + l.B * l.smem_basis_weights;
  tc.stages = pipeline_stages(spec.stages > 0 ? spec.stages : tc.stages, l.tiles_per_group);
  l.S = tc.stages;
  if (double(lut_smem_bytes(l)) > gpu.shared_memory_kb_per_block * 1024.0) {
    // Groups keep the slices' buffer beside the stages (lut_output): fewer slices may fit.
    if (l.P > 1) return plan_lut_gemm(spec, gpu, l.P / 2);
    throw InputError("gemm " + spec.name + ": " + std::to_string(l.S) + " stages of " +
                     std::to_string(l.stage_bytes) + " B exceed the " +
                     std::to_string(gpu.shared_memory_kb_per_block) +
                     " KB of shared memory per block of '" + gpu.name + "' (use fewer stages)");
  }
  tc.stage_bytes = double(l.stage_bytes);
  tc.smem_bytes_per_block = double(lut_smem_bytes(l));

  // INT: fp16 scale + fp16 zero point per (group, column); multi-basis: fp16 row scale per basis.
  l.scale_bytes = l.multi ? 2 * l.B : 4;
  l.basis_tables = l.Z * l.Mp * l.row_table_bytes;  // [basis][GEMM][row][LUT group]
  l.z_weights = l.n_core_tiles * l.w_row_bytes;     // [core tile][LUT group][plane]
  l.basis_weights = l.Z * l.z_weights;              // [basis][GEMM][...]
  // Salient columns: fp16 column indices, then fp16 weights per (column, group, salient column);
  // the gathered activations come from acts [row][max(K, gathered)].
  l.salient = l.multi ? spec.weights.salient : 0;
  l.salient_row_bytes = l.n_groups * l.salient * 2;
  l.act_row_bytes = std::max(spec.k * 2, l.salient_row_bytes);
  return l;
}

// The LMMA kernel without its program: grid, warps, resources, tiles, gemm record, tensors.
traces::Kernel lut_gemm_kernel(const GemmSpec& spec, const LutGemmPlan& l, int core) {
  traces::Kernel k;
  k.name = spec.name + ".lmma";
  k.grid_x = l.grid_x;
  k.grid_y = l.grid_y;
  k.grid_z = l.Z;
  k.warps_x = l.bn / l.wn;
  k.warps_y = l.bm / l.wm * l.P;
  k.smem_bytes = uint64_t(lut_smem_bytes(l));
  k.regs_per_thread = uint32_t(l.tc.registers_per_thread);
  k.tiles.core = core;
  k.tiles.block = {l.bm, l.bn, l.bk};
  k.tiles.warp = {l.wm, l.wn, l.bk / l.P};
  k.tiles.instr = {l.im, l.in_, l.kg};
  k.gemm = {traces::GemmPath::kLut, l.Z,      spec.m, spec.n, spec.k, l.G, l.wbits, spec.act,
            l.multi ? int(l.B) : 0, l.salient};
  k.tensors = {{0, "tables", uint64_t(l.B * l.basis_tables)},
               {1, "weights", uint64_t(l.B * l.basis_weights)},
               {2, "scales", uint64_t(l.Z * l.n_groups * l.Np * l.scale_bytes)},
               {3, "out", uint64_t(l.Z * l.Mp * l.Np * 2)}};
  if (l.salient > 0) {
    k.tensors.push_back({4, "salient", uint64_t((l.Np + 1) * l.salient_row_bytes)});
    k.tensors.push_back({5, "acts", uint64_t(l.Mp * l.act_row_bytes)});
  }
  return k;
}

// ldgsts of K tile t: every basis's table rows of the block, then its weight planes.
void emit_lut_tile_loads(ProgramBuilder& p, const LutGemmPlan& l, const traces::Kernel& k,
                         const traces::Affine& t) {
  const auto ij = p.loop(uint64_t(l.B));  // bases (multi-basis binary)
  BlockSlice tables;
  tables.tensor = 0;
  tables.origin = plus(times(t, l.lg_per_tile * l.table_bytes),
                       affine(0, {by(l.bm * l.row_table_bytes), bz(l.z * l.Mp * l.row_table_bytes),
                                  iv(ij, l.basis_tables)}));
  tables.rows = l.bm;
  tables.row_stride = l.row_table_bytes;
  tables.row_bytes = l.lg_per_tile * l.table_bytes;
  tables.own_rows = l.wm;
  tables.own_first = affine(0, {wy(l.P > 1 ? 0 : l.wm)});  // sliced: wy is the K slice
  load_block_slice(p, tables, k.warps_x, k.warps_y);
  BlockSlice weights;
  weights.tensor = 1;
  weights.origin = plus(times(t, l.lg_per_tile * l.wbits * l.seg_bytes),
                        affine(0, {bx((l.bn / l.cn) * l.w_row_bytes), bz(l.z * l.z_weights),
                                   iv(ij, l.basis_weights)}));
  weights.rows = l.bn / l.cn;
  weights.row_stride = l.w_row_bytes;
  weights.row_bytes = l.lg_per_tile * l.wbits * l.seg_bytes;
  weights.own_rows = l.wn / l.cn;
  weights.own_first = affine(0, {wx(l.wn / l.cn)});
  load_block_slice(p, weights, k.warps_x, k.warps_y);
  p.end(ij);
}

// Step q's fragments of a LUT K tile (the warp's table rows and weight planes of every basis for
// `u` consecutive steps, LutGemmPlan::steps_per_load) into register buffer `buf`. Within a stage
// each warp's fragments of consecutive steps lie together ([group][warp][step]), so one lds reads
// them contiguously.
void emit_lut_frags(ProgramBuilder& p, const LutGemmPlan& l, const traces::Affine& q,
                    uint32_t buf) {
  const int64_t u = l.steps_per_load;
  const int64_t tbytes = l.step_table_bytes, pbytes = l.step_plane_bytes;
  // Sliced K: warp row wy computes LUT groups [wy * lg_per_warp, + lg_per_warp) of the tile.
  const bool sliced = l.P > 1;
  const int64_t group_planes = (l.bn / l.cn) * l.wbits * l.seg_bytes;
  for (int64_t j = 0; j < l.B; ++j) {
    Instr tables =
        mem(Opcode::kLdShared, 0, uint64_t(u * tbytes),
            plus(times(q, u * l.bm * l.table_bytes),
                 affine(j * l.smem_basis_tables,
                        {wy(sliced ? l.lg_per_warp * l.bm * l.table_bytes : u * tbytes)})));
    tables.frag = buf;
    p.emit(tables);
    Instr planes =
        mem(Opcode::kLdShared, 0, uint64_t(u * pbytes),
            plus(times(q, u * group_planes),
                 affine(l.smem_tables + j * l.smem_basis_weights,
                        {wx(u * pbytes), wy(sliced ? l.lg_per_warp * group_planes : 0)})));
    planes.frag = buf;
    p.emit(planes);
  }
}

// Step q's LMMAs of K tile t from register buffer `buf`.
void emit_lut_ops(ProgramBuilder& p, const LutGemmPlan& l, const traces::Affine& t,
                  const traces::Affine& q, uint32_t buf) {
  const int64_t u = l.steps_per_load;
  const bool sliced = l.P > 1;
  const auto iu = p.loop(uint64_t(u));
  for (int64_t j = 0; j < l.B; ++j) {
    const auto ia = p.loop(uint64_t(l.wm / l.im));
    const auto ib = p.loop(uint64_t(l.wn / l.in_));
    Instr lmma;
    lmma.op = Opcode::kLmma;
    lmma.lmma = l.op;
    lmma.m = affine(0, {by(l.bm), bz(l.z * l.Mp), wy(sliced ? 0 : l.wm), iv(ia, l.im)});
    lmma.n = affine(0, {bx(l.bn), wx(l.wn), iv(ib, l.in_)});
    lmma.k = plus(
        times(t, l.bk),
        plus(times(q, u * l.kg), affine(0, {iv(iu, l.kg), wy(sliced ? l.lg_per_warp * l.kg : 0)})));
    lmma.basis = uint32_t(j);
    lmma.frag = buf;
    p.emit(lmma);
    p.end(ib);
    p.end(ia);
  }
  p.end(iu);
}

// K tile t's LUT groups, register double buffered (emit_k_steps over the groups of `u` steps).
void emit_lut_tile_compute(ProgramBuilder& p, const LutGemmPlan& l, const traces::Affine& t) {
  emit_k_steps(
      p, l.lg_per_warp / l.steps_per_load,
      [&](const traces::Affine& q, uint32_t buf) { emit_lut_frags(p, l, q, buf); },
      [&](const traces::Affine& q, uint32_t buf) { emit_lut_ops(p, l, t, q, buf); });
}

// Epilogue of quantization group g: scales and zero points of the warp's columns, then a dequant
// per basis.
// The scales of group g (fragment buffer kScaleFragBuffer, which no lmma waits for).
void emit_lut_scale_load(ProgramBuilder& p, const LutGemmPlan& l, const traces::Affine& g) {
  Instr ld =
      mem(Opcode::kLdGlobal, 2, uint64_t(l.wn * l.scale_bytes),
          plus(times(g, l.Np * l.scale_bytes),
               affine(0, {bx(l.bn * l.scale_bytes), bz(l.z * l.n_groups * l.Np * l.scale_bytes),
                          wx(l.wn * l.scale_bytes)})));
  ld.frag = kScaleFragBuffer;
  p.emit(ld);
}

// One group: its scales load before the main loop, so their DRAM round trip overlaps it; with
// several, each group's at its end.
// Sliced K: the slices first add their accumulators, then each dequantizes its share.
void emit_lut_group_end(ProgramBuilder& p, const LutGemmPlan& l, const traces::Affine& g) {
  if (l.n_groups > 1) emit_lut_scale_load(p, l, g);
  const OutputTile o = lut_output(l);
  emit_slice_reduction(p, o);
  for (int64_t j = 0; j < l.B; ++j) {
    Instr dq;
    dq.op = Opcode::kDequant;
    dq.m = plus(o.share_row(), affine(0, {by(l.bm), bz(l.z * l.Mp), wy(l.P > 1 ? 0 : l.wm)}));
    dq.n = plus(o.share_col(), affine(0, {bx(l.bn), wx(l.wn)}));
    dq.g = g;
    dq.rows = uint32_t(o.share_rows());
    dq.cols = uint32_t(o.share_cols());
    dq.basis = uint32_t(j);
    dq.row_scale = l.multi;
    p.emit(dq);
  }
}

// The dense salient branch: each warp row's salient activations times its columns' weights.
void emit_salient_branch(ProgramBuilder& p, const LutGemmPlan& l) {
  const auto irow = p.loop(uint64_t(l.wm));
  p.emit(mem(Opcode::kLdGlobal, 5, uint64_t(l.salient_row_bytes),
             affine(0, {by(l.bm * l.act_row_bytes), wy(l.wm * l.act_row_bytes),
                        iv(irow, l.act_row_bytes)})));
  p.end(irow);
  p.emit(mem(Opcode::kLdGlobal, 4, uint64_t(l.wn * l.salient_row_bytes),
             affine(l.salient_row_bytes,
                    {bx(l.bn * l.salient_row_bytes), wx(l.wn * l.salient_row_bytes)})));
  p.emit(count_op(Opcode::kAlu, uint64_t(2 * l.wm * l.wn * l.n_groups * l.salient)));
  Instr dq;
  dq.op = Opcode::kDequant;
  dq.m = affine(0, {by(l.bm), wy(l.wm)});
  dq.n = affine(0, {bx(l.bn), wx(l.wn)});
  dq.rows = uint32_t(l.wm);
  dq.cols = uint32_t(l.wn);
  dq.salient = true;
  p.emit(dq);
}

}  // namespace

std::vector<traces::Kernel> lower_lut_gemm(const GemmSpec& spec, const hw::GpuConfig& gpu, int core,
                                           tiling::TileChoice* tiles_out) {
  spec.validate();
  const LutGemmPlan l = plan_lut_gemm(spec, gpu);
  std::vector<traces::Kernel> kernels;
  if (spec.emit_precompute) {
    kernels.push_back(lower_precompute(spec.name + ".precompute", spec.m, spec.k, spec.act,
                                       spec.quantize_tables, gpu, l.multi ? int(l.B) : 0, l.Mp,
                                       l.LGt, l.Z));
  }
  if (tiles_out) *tiles_out = l.tc;

  traces::Kernel k = lut_gemm_kernel(spec, l, core);
  ProgramBuilder p;
  KPipeline kp;
  kp.groups = l.n_groups;
  kp.tiles_per_group = l.tiles_per_group;
  kp.stages = l.S;
  kp.load = [&](const traces::Affine& t) { emit_lut_tile_loads(p, l, k, t); };
  kp.compute = [&](const traces::Affine& t) { emit_lut_tile_compute(p, l, t); };
  if (const int64_t steps = l.lg_per_warp / l.steps_per_load; steps >= 2 && steps % 2 == 0) {
    kp.steps = steps;
    kp.step_frags = [&](const traces::Affine&, const traces::Affine& q, uint32_t buf) {
      emit_lut_frags(p, l, q, buf);
    };
    kp.step_ops = [&](const traces::Affine& t, const traces::Affine& q, uint32_t buf) {
      emit_lut_ops(p, l, t, q, buf);
    };
  }
  kp.group_end = [&](const traces::Affine& g) { emit_lut_group_end(p, l, g); };
  if (l.n_groups == 1) emit_lut_scale_load(p, l, constant(0));
  emit_pipeline(p, kp);
  if (l.salient > 0) emit_salient_branch(p, l);
  emit_output_store(p, lut_output(l));  // fp16 outputs into out [Mp][Np]
  k.program = p.take();
  kernels.push_back(std::move(k));
  return kernels;
}

traces::Kernel lower_precompute(const std::string& name, int64_t m, int64_t k_cols,
                                golden::DType act, bool quantize_tables, const hw::GpuConfig& gpu,
                                int bases, int64_t table_rows, int64_t table_groups,
                                int64_t batch) {
  const traces::CoreSpec cs = lut_core_spec(gpu);
  const int64_t kg = cs.config.shape.k;
  const DType table = golden::lut_table_dtype(act, quantize_tables);
  const int64_t table_bytes =
      (int64_t(1) << (kg - 1)) * golden::dtype_bits(table) / 8 + (quantize_tables ? 4 : 0);
  // Each warp builds kPrecomputeGroups tables of one row; small K takes fewer warps per block.
  const int64_t groups = ceil_div(k_cols, kg);
  const int64_t warps = std::min(kPrecomputeWarps, ceil_div(groups, kPrecomputeGroups));
  const int64_t warp_cols = kPrecomputeGroups * kg, bcols = warps * warp_cols;
  const int64_t padded_groups = precompute_table_groups(k_cols, kg);
  const int64_t kp = padded_groups * kg;  // padded activation columns
  const int64_t rows_t = std::max(table_rows, m);
  const int64_t groups_t = std::max(table_groups, padded_groups);
  const int64_t row_table_bytes = groups_t * table_bytes;
  const int64_t ab = golden::dtype_bits(act) / 8;
  traces::Kernel k;
  k.name = name;
  k.warps_x = warps;
  k.grid_x = padded_groups / (warps * kPrecomputeGroups);
  k.grid_y = m;
  k.grid_z = batch;
  const int64_t z = batch > 1 ? 1 : 0;  // GEMM bz's rows start at row bz * rows_t
  k.regs_per_thread = 32;
  k.tiles.core = -1;
  k.tiles.block = {1, 0, bcols};
  k.tiles.warp = {1, 0, warp_cols};
  k.tiles.instr = {1, 0, kg};
  const int64_t B = std::max(bases, 1);
  const int64_t act_rows = batch > 1 ? batch * rows_t : m;
  k.tensors = {{0, "acts", uint64_t(act_rows * kp * ab)},
               {1, "tables", uint64_t(B * batch * rows_t * row_table_bytes)}};
  if (bases > 0) k.tensors.push_back({2, "col_scales", uint64_t(B * kp * 2)});
  ProgramBuilder p;
  p.emit(
      mem(Opcode::kLdGlobal, 0, uint64_t(warp_cols * ab),
          affine(0, {by(kp * ab), bz(z * rows_t * kp * ab), bx(bcols * ab), wx(warp_cols * ab)})));
  for (int64_t j = 0; j < B; ++j) {
    if (bases > 0) {
      // Scale fusion: basis j's column scales multiply the activations before the table.
      p.emit(mem(Opcode::kLdGlobal, 2, uint64_t(warp_cols * 2),
                 affine(j * kp * 2, {bx(bcols * 2), wx(warp_cols * 2)})));
    }
    Instr pre;
    pre.op = Opcode::kPrecompute;
    pre.k_group = int(kg);
    pre.act = act;
    pre.table = golden::lut_table_dtype(act);
    pre.m = affine(0, {by(1), bz(z * rows_t)});
    pre.k = affine(0, {bx(bcols), wx(warp_cols)});
    pre.rows = 1;
    pre.cols = uint32_t(warp_cols);
    pre.basis = uint32_t(j);
    p.emit(pre);
    if (quantize_tables) p.emit(count_op(Opcode::kQuantTable, uint64_t(kPrecomputeGroups)));
    p.emit(mem(Opcode::kStGlobal, 1, uint64_t(kPrecomputeGroups * table_bytes),
               affine(j * batch * rows_t * row_table_bytes,
                      {by(row_table_bytes), bz(z * rows_t * row_table_bytes),
                       bx(warps * kPrecomputeGroups * table_bytes),
                       wx(kPrecomputeGroups * table_bytes)})));
  }
  k.program = p.take();
  return k;
}

traces::Kernel lower_mma_gemm(const std::string& name, int64_t batch, int64_t m, int64_t n,
                              int64_t k, golden::DType a, golden::DType b, const hw::GpuConfig& gpu,
                              tiling::TileChoice* tiles_out, int weight_bits, int stages) {
  const bool int8 = a == DType::kInt8;
  const bool fp8 = a == DType::kFp8E4M3 || a == DType::kFp8E5M2;
  traces::MmaOp op;
  op.a = int8 || fp8 || a == DType::kBf16 ? a : DType::kFp16;
  op.b = weight_bits > 0 ? op.a : b;
  op.acc = int8 ? DType::kInt32 : DType::kFp32;
  op.out = op.acc;
  tiling::GemmProblem prob = tiling::mma_kernel_problem(gpu, m, n, k, a, b, weight_bits);
  prob.batch = batch;
  tiling::TileChoice tc = tiling::require_tiles(prob, gpu);
  op.shape = prob.instr;
  traces::validate(op, "gemm " + name);
  const int64_t bm = tc.block.m, bn = tc.block.n, bk = tc.block.k;
  const int64_t wm = tc.warp.m, wn = tc.warp.n;
  const int64_t ik = op.shape.k;
  // Sliced K (tiling.h): warp row wy computes K steps [wy * steps, + steps) of each K tile.
  const int P = tc.k_slices;
  const int64_t slice_steps = bk / ik / P;
  const int64_t eb = golden::dtype_bits(op.a) / 8;
  const int64_t k_tiles = ceil_div(k, bk);
  // Codes used as the MMA operand directly (int8 x int8 codes), else dequantized per K tile
  // (the tiling's shared memory holds the dequantized tile: tiling::mac_mpgemm_problem).
  const bool dequant = prob.dequant_bits > 0;
  const int64_t grid_x = ceil_div(n, bn), m_blocks = ceil_div(m, bm);
  // tiling::dequantizes_in_registers: each warp dequantizes its B fragment right after loading
  // its codes (its MMAs follow a K step later in program order, so they need no register
  // dependency on it); else the block dequantizes each K tile into shared memory.
  const bool register_dequant = dequant && tiling::dequantizes_in_registers(prob);
  const int64_t Mp = m_blocks * bm, Np = grid_x * bn, Kp = k_tiles * bk;
  // A batch of GEMMs (a grouped GEMM's groups: MoE experts, attention heads) is the grid's z:
  // block (bx, by, bz) computes tile (by, bx) of GEMM bz, so every (group, M tile, N tile) is a
  // block of its own, and the blocks of one group, adjacent in launch order, read its weight
  // tiles together (from L2 after the first).
  // Low-bit B (dequantize-then-MAC): packed codes, unpacked and scaled on the CUDA cores.
  const int64_t b_row_bytes = weight_bits > 0 ? Kp * weight_bits / 8 : Kp * eb;
  const int64_t b_tile_bytes = weight_bits > 0 ? bk * weight_bits / 8 : bk * eb;
  // Shared memory of one stage: A [K step][block row][ik], B [K step][block column][ik] (or the
  // block's codes), so each warp's fragment of one K step is contiguous; + one dequantized B.
  const int64_t smem_a = bm * bk * eb, smem_b = bn * b_tile_bytes;
  const int64_t smem_dq = dequant && !register_dequant ? bn * bk * eb : 0;
  const int64_t stage_bytes = smem_a + smem_b;
  tc.stages = pipeline_stages(stages > 0 ? stages : tc.stages, k_tiles);
  const int S = tc.stages;
  if (double(S * stage_bytes + smem_dq) > gpu.shared_memory_kb_per_block * 1024.0) {
    const int64_t fit = (int64_t(gpu.shared_memory_kb_per_block * 1024.0) - smem_dq) / stage_bytes;
    throw InputError("gemm " + name + ": --stages " + std::to_string(S) + " needs " +
                     std::to_string(S * stage_bytes + smem_dq) +
                     " B of shared memory per block, more than the " +
                     std::to_string(int64_t(gpu.shared_memory_kb_per_block * 1024.0)) + " B of '" +
                     gpu.name + "' (this tile fits at most " + std::to_string(fit) + " stages)");
  }
  OutputTile out;
  out.tensor = 2;
  out.wm = wm;
  out.wn = wn;
  out.warps_x = bn / wn;
  out.slices = P;
  // GEMM bz's A, B, scales, output offsets and its first row of the stacked M (no bz term for
  // a single GEMM, whose trace then needs no grid z).
  const int64_t z = batch > 1 ? 1 : 0;
  const traces::Affine group_a = affine(0, {bz(z * Mp * Kp * eb)}),
                       group_b = affine(0, {bz(z * Np * b_row_bytes)}),
                       group_s = affine(0, {bz(z * Np * 4)}), group_m = affine(0, {bz(z * Mp)});
  out.origin = affine(0, {by(bm * Np * 2), bz(z * Mp * Np * 2), wy(P > 1 ? 0 : wm * Np * 2),
                          bx(bn * 2), wx(wn * 2)});
  out.row_bytes = Np * 2;
  const int64_t smem_bytes = std::max(S * stage_bytes + smem_dq, slice_reduction_smem(out));
  tc.stage_bytes = double(stage_bytes);
  tc.smem_bytes_per_block = double(smem_bytes);
  if (tiles_out) *tiles_out = tc;

  traces::Kernel kr;
  kr.name = name;
  kr.grid_x = grid_x;
  kr.grid_y = m_blocks;
  kr.grid_z = batch;
  kr.warps_x = bn / wn;
  kr.warps_y = bm / wm * P;
  kr.smem_bytes = uint64_t(smem_bytes);
  kr.regs_per_thread = uint32_t(tc.registers_per_thread);
  // Warpgroup (wgmma) kernels and skinny kernels on a GPU with thread-block clusters run
  // clusters of blocks along N that share the block row's A tile (TMA multicast: read from L2
  // once per cluster), as CUTLASS's sm90 kernels do (tiling::mma_cluster).
  kr.cluster_x = tiling::mma_cluster(prob, gpu, grid_x);
  kr.tiles.core = -1;
  kr.tiles.block = {bm, bn, bk};
  kr.tiles.warp = {wm, wn, bk / P};
  kr.tiles.instr = {op.shape.m, op.shape.n, op.shape.k};
  // Batched operands are stacked, each GEMM's padded to whole tiles: A [batch][Mp][Kp],
  // B [batch][Np][Kp], out [batch][Mp][Np].
  kr.tensors = {{0, "a", uint64_t(batch * Mp * Kp * eb)},
                {1, "b", uint64_t(batch * Np * b_row_bytes)},
                {2, "out", uint64_t(batch * Mp * Np * 2)}};
  if (weight_bits > 0) kr.tensors.push_back({3, "scales", uint64_t(batch * Np * 4)});
  const int64_t W = kr.warps_x * kr.warps_y;
  const int64_t warpgroup = prob.warpgroup;  // > 1: the tiling made warps_y == warpgroup
  if (warpgroup > 1 && kr.warps_y != warpgroup) {
    throw std::logic_error("gemm " + name + ": warpgroup tile without one warp per sub-partition");
  }
  const int64_t chunk = bn * bk / W;  // codes each warp dequantizes per K tile
  if (dequant && !register_dequant && (bn * bk) % W != 0) {
    throw InputError("gemm " + name + ": block tile does not split over its warps");
  }

  ProgramBuilder p;
  if (weight_bits > 0) {
    // Per-channel fp16 scale and zero point of the block's columns.
    p.emit(mem(Opcode::kLdGlobal, 3, uint64_t(bn * 4), plus(affine(0, {bx(bn * 4)}), group_s)));
  }
  KPipeline kp;
  kp.groups = 1;
  kp.tiles_per_group = k_tiles;
  kp.stages = S;
  kp.producer_consumer = warpgroup > 1 && gpu.sm.tma;
  kp.load = [&](const traces::Affine& t) {
    BlockSlice as;
    as.tensor = 0;
    as.origin = plus(plus(times(t, bk * eb), affine(0, {by(bm * Kp * eb)})), group_a);
    // A GEMM shorter than one block tile loads only its M rows; the rest of the stage stays
    // zero, as CUTLASS's predicated copies leave it (no traffic for padding rows).
    as.rows = m_blocks == 1 ? m : bm;
    as.row_stride = Kp * eb;
    as.row_bytes = bk * eb;
    as.own_rows = std::min(wm, as.rows);
    as.own_first = affine(0, {wy(P > 1 ? 0 : wm)});  // sliced: wy is the K slice
    load_block_slice(p, as, kr.warps_x, kr.warps_y);
    BlockSlice bs;
    bs.tensor = 1;
    bs.origin = plus(plus(times(t, b_tile_bytes), affine(0, {bx(bn * b_row_bytes)})), group_b);
    bs.rows = bn;
    bs.row_stride = b_row_bytes;
    bs.row_bytes = b_tile_bytes;
    bs.own_rows = wn;
    bs.own_first = affine(0, {wx(wn)});
    load_block_slice(p, bs, kr.warps_x, kr.warps_y);
  };
  const int64_t b_src = dequant ? S * stage_bytes : smem_a;  // B fragments: dequantized or staged
  auto frags = [&](const traces::Affine& q, uint32_t buf) {
    Instr a = mem(Opcode::kLdShared, 0, uint64_t(wm * ik * eb),
                  plus(times(q, bm * ik * eb),
                       affine(0, {wy(P > 1 ? slice_steps * bm * ik * eb : wm * ik * eb)})));
    a.frag = buf;
    p.emit(a);
    // A warpgroup MMA (one warp per sub-partition along M) reads B once for the group: each
    // warp's tensor core fetches its quarter (tiling.h, hw::SmConfig::mma_warpgroup).
    if (register_dequant) {
      // The warp's codes of this K step ([K step][block column][codes] in the stage), then
      // their dequantize on the CUDA cores.
      const int64_t codes = wn * ik * weight_bits / 8;
      Instr b =
          mem(Opcode::kLdShared, 0, uint64_t(codes),
              plus(times(q, bn * ik * weight_bits / 8),
                   affine(smem_a,
                          {wx(codes), wy(P > 1 ? slice_steps * bn * ik * weight_bits / 8 : 0)})));
      b.frag = buf;
      p.emit(b);
      Instr ops = count_op(Opcode::kAlu, uint64_t(tiling::kDequantOpsPerCode * wn * ik));
      ops.int_ops = uint64_t(tiling::kDequantIntOpsPerCode * wn * ik);
      p.emit(ops);
      return;
    }
    const int64_t b_frag = wn * ik * eb / warpgroup;
    Instr b = mem(Opcode::kLdShared, 0, uint64_t(b_frag),
                  plus(times(q, bn * ik * eb),
                       affine(b_src, {wx(wn * ik * eb), wy(P > 1 ? slice_steps * bn * ik * eb
                                                           : warpgroup > 1 ? b_frag
                                                                           : 0)})));
    b.frag = buf;
    p.emit(b);
  };
  auto ops = [&](const traces::Affine& t, const traces::Affine& q, uint32_t buf) {
    const auto ia = p.loop(uint64_t(wm / op.shape.m));
    const auto ib = p.loop(uint64_t(wn / op.shape.n));
    Instr mm;
    mm.op = Opcode::kMma;
    mm.mma = op;
    mm.m = plus(affine(0, {by(bm), wy(P > 1 ? 0 : wm), iv(ia, op.shape.m)}), group_m);
    mm.n = affine(0, {bx(bn), wx(wn), iv(ib, op.shape.n)});
    mm.k = plus(times(t, bk), plus(times(q, ik), affine(0, {wy(P > 1 ? bk / P : 0)})));
    mm.frag = buf;
    p.emit(mm);
    p.end(ib);
    p.end(ia);
  };
  kp.compute = [&](const traces::Affine& t) {
    if (dequant && !register_dequant) {
      // This warp's share of the block's codes: unpack (shift, mask), convert, subtract the zero
      // point, scale; store to the dequantized buffer, then wait for every warp's share.
      p.emit(mem(
          Opcode::kLdShared, 0, uint64_t(chunk * weight_bits / 8),
          affine(smem_a, {wy(kr.warps_x * chunk * weight_bits / 8), wx(chunk * weight_bits / 8)})));
      Instr ops = count_op(Opcode::kAlu, uint64_t(tiling::kDequantOpsPerCode * chunk));
      ops.int_ops = uint64_t(tiling::kDequantIntOpsPerCode * chunk);
      p.emit(ops);
      p.emit(mem(Opcode::kStShared, 0, uint64_t(chunk * eb),
                 affine(S * stage_bytes, {wy(kr.warps_x * chunk * eb), wx(chunk * eb)})));
      p.emit(barrier());
    }
    emit_k_steps(p, slice_steps, frags,
                 [&](const traces::Affine& q, uint32_t buf) { ops(t, q, buf); });
  };
  // Fragment prefetch across tiles where a tile is its K steps alone (no shared-memory
  // dequantize pass between tiles).
  if (!kp.producer_consumer && !(dequant && !register_dequant) && slice_steps >= 2 &&
      slice_steps % 2 == 0) {
    kp.steps = slice_steps;
    kp.step_frags = [&](const traces::Affine&, const traces::Affine& q, uint32_t buf) {
      frags(q, buf);
    };
    kp.step_ops = ops;
  }
  kp.group_end = [&](const traces::Affine&) {
    // Integer codes run unscaled: the per-channel scale and zero-point term come here.
    if (weight_bits > 0 && !dequant) p.emit(count_op(Opcode::kAlu, uint64_t(2 * wm * wn)));
  };
  emit_pipeline(p, kp);
  emit_slice_reduction(p, out);
  emit_output_store(p, out);
  kr.program = p.take();
  return kr;
}

traces::GemmPath gemm_path(const GemmSpec& spec, const hw::GpuConfig& gpu) {
  if (spec.path) return *spec.path;
  return gpu.has_lut_tensor() && spec.weights.is_low_bit() ? traces::GemmPath::kLut
                                                           : traces::GemmPath::kMma;
}

namespace {

// The (act, weight) pairs of the GPU's MAC tensor cores that an mma instruction runs.
std::string mac_pairs(const hw::GpuConfig& gpu) {
  std::string s;
  for (const auto& r : gpu.mac_tensor) {
    if (r.weight == "int4") continue;  // no int4 mma in the ISA
    s += (s.empty() ? "" : ", ") + r.act + " x " + r.weight;
  }
  return s;
}

traces::Kernel lower_mac_gemm(const GemmSpec& spec, const hw::GpuConfig& gpu) {
  if (spec.m < 1 || spec.n < 1 || spec.k < 1) {
    throw InputError("gemm: --m, --n, --k must be >= 1 (got " + std::to_string(spec.m) + ", " +
                     std::to_string(spec.n) + ", " + std::to_string(spec.k) + ")");
  }
  const llm::WeightFormat& w = spec.weights;
  if (w.kind == llm::WeightFormatKind::kMultiBasisBinary) {
    throw InputError("--weights: " + w.name() +
                     " runs on LUT tensor cores only (--path mac takes fp16, bf16, fp8e4m3, "
                     "fp8e5m2, int1..int8, ternary, binary)");
  }
  const DType a = spec.act;
  const std::string an(golden::dtype_name(a));
  traces::GemmRecord rec;
  rec.path = traces::GemmPath::kMma;
  rec.m = spec.m;
  rec.n = spec.n;
  rec.k = spec.k;
  rec.group = spec.k;
  rec.act = a;
  DType b = a;
  if (w.is_low_bit()) {
    if (spec.group_size > 0 && spec.group_size < spec.k) {
      throw InputError("--group: the mac path dequantizes per output channel (valid: 0)");
    }
    rec.wbits = w.planes();
    // Codes are dequantized into the activation dtype, which the MAC cores must take.
    if (gpu.mac_tops(an, an) <= 0) {
      throw InputError("--acts: the MAC tensor cores of '" + gpu.name + "' do not take " + an +
                       " x " + an + " (valid: " + mac_pairs(gpu) + ")");
    }
  } else {
    b = w.dtype;
    const std::string bn(golden::dtype_name(b));
    // The gemm record carries one operand dtype for A and B.
    if (b != a) {
      throw InputError("--weights: a dense mac GEMM takes weights of the activation dtype " + an +
                       " (valid: --weights " + an + "), got " + bn);
    }
    bool mma_ok = true;
    try {
      traces::MmaOp op;
      op.a = a;
      op.b = b;
      op.acc = a == DType::kInt8 ? DType::kInt32 : DType::kFp32;
      op.shape = {16, 8, golden::dtype_bits(a) == 8 ? 32 : 16};
      traces::validate(op, "mma");
    } catch (const InputError&) {
      mma_ok = false;
    }
    if (!mma_ok || gpu.mac_tops(an, bn) <= 0) {
      throw InputError("--weights/--acts: the MAC tensor cores of '" + gpu.name + "' do not take " +
                       an + " x " + bn + " (valid: " + mac_pairs(gpu) + ")");
    }
  }
  traces::Kernel kr = lower_mma_gemm(spec.name, 1, spec.m, spec.n, spec.k, a, b, gpu, nullptr,
                                     rec.wbits, spec.stages);
  kr.gemm = rec;
  return kr;
}

}  // namespace

void check_kernels_fit(const traces::Trace& t, const hw::GpuConfig& gpu) {
  for (const traces::Kernel& k : t.kernels) {
    const std::string error = hw::block_limits_error(
        gpu, k.warps_per_block(), int64_t(k.regs_per_thread), int64_t(k.smem_bytes));
    if (!error.empty()) {
      throw InputError("kernel " + k.name + " on '" + gpu.name + "': " + error);
    }
  }
}

traces::Trace compile_gemm(const GemmSpec& spec, const hw::GpuConfig& gpu) {
  if (spec.stages == 1 || spec.stages < 0) {
    throw InputError("--stages: " + std::to_string(spec.stages) +
                     " (valid: 0 = the tiling's, >= 2)");
  }
  traces::Trace t;
  t.gpu = gpu.name;
  if (gemm_path(spec, gpu) == traces::GemmPath::kLut) {
    t.cores.push_back(lut_core_spec(gpu));
    t.kernels = lower_lut_gemm(spec, gpu, 0);
  } else {
    t.kernels = {lower_mac_gemm(spec, gpu)};
  }
  t.version = t.minimum_version();
  traces::validate(t, "compile_gemm");
  check_kernels_fit(t, gpu);
  return t;
}

}  // namespace ltc::compiler
