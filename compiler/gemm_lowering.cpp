#include "compiler/gemm_lowering.h"

#include "compiler/program_builder.h"
#include "model/golden/error.h"

#include <algorithm>
#include <string>

namespace ltc::compiler {
namespace {

using golden::DType;
using traces::Instr;
using traces::Opcode;

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

Instr mem(Opcode op, uint32_t tensor, uint64_t bytes, const traces::Affine& addr) {
  Instr in;
  in.op = op;
  in.tensor = tensor;
  in.bytes = bytes;
  in.addr = addr;
  return in;
}

Instr barrier() {
  Instr in;
  in.op = Opcode::kBarrier;
  return in;
}

// Columns of activations one precompute warp turns into tables.
constexpr int64_t kPrecomputeCols = 128;
constexpr int64_t kPrecomputeWarps = 4;

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

std::vector<traces::Kernel> lower_lut_gemm(const GemmSpec& spec, const hw::GpuConfig& gpu, int core,
                                           tiling::TileChoice* tiles_out) {
  spec.validate();
  const traces::CoreSpec cs = lut_core_spec(gpu);
  const golden::LmmaShape ishape = cs.config.shape;
  const int64_t im = ishape.m, in_ = ishape.n, kg = ishape.k;
  // Multi-basis binary: `bases` 1-bit sign planes, each with its own (column-scaled) table.
  const bool multi = spec.weights.kind == llm::WeightFormatKind::kMultiBasisBinary;
  const int64_t B = multi ? spec.weights.bases : 1;
  const int wbits = multi ? 1 : spec.weights.planes();
  const int64_t group = multi ? spec.weights.group_size : spec.group_size;
  const int64_t G = group > 0 && group < spec.k ? group : spec.k;
  const bool grouped = G < spec.k;
  if (grouped && G % kg != 0) {
    throw InputError("--group: " + std::to_string(G) +
                     " is not a multiple of the tensor core's K = " + std::to_string(kg));
  }

  traces::LmmaOp op;
  op.shape = ishape;
  op.act = spec.act;
  op.quantized_table = spec.quantize_tables;
  op.wbits = wbits;
  op.acc = (golden::is_int(spec.act) || spec.quantize_tables) ? DType::kInt32 : DType::kFp32;
  op.out = op.acc;
  traces::validate(op, cs, "gemm " + spec.name);

  tiling::GemmProblem prob = tiling::lut_gemm_problem(gpu, spec.m, spec.n, spec.k, spec.act, wbits,
                                                      spec.weights.bits_per_weight() - wbits);
  tiling::TileChoice tc = tiling::choose_tiles(prob, gpu);
  // A K tile must not straddle a quantization group.
  if (grouped) {
    tc.block.k = std::min(tc.block.k, G);
    while (G % tc.block.k != 0) tc.block.k /= 2;
    tc.warp.k = tc.block.k;
  }
  if (tiles_out) *tiles_out = tc;
  const int64_t bm = tc.block.m, bn = tc.block.n, bk = tc.block.k;
  const int64_t wm = tc.warp.m, wn = tc.warp.n;

  const DType table = op.table();
  const int64_t entries = int64_t(1) << (kg - 1);
  const int64_t tb = golden::dtype_bits(table) / 8;
  const int64_t table_bytes = entries * tb + (spec.quantize_tables ? 4 : 0);  // + fp32 scale
  const int64_t lut_groups = ceil_div(spec.k, kg);
  const int64_t row_table_bytes = lut_groups * table_bytes;
  const int64_t seg_bytes = (in_ * kg + 7) / 8;  // packing.h segment
  const int64_t n_tiles = ceil_div(spec.n, in_);

  std::vector<traces::Kernel> kernels;
  if (spec.emit_precompute) {
    kernels.push_back(lower_precompute(spec.name + ".precompute", spec.m, spec.k, spec.act,
                                       spec.quantize_tables, gpu, multi ? int(B) : 0));
  }

  // ---- LUT GEMM kernel -----------------------------------------------------------------------
  traces::Kernel k;
  k.name = spec.name + ".lmma";
  k.grid_x = ceil_div(spec.n, bn);
  k.grid_y = ceil_div(spec.m, bm);
  k.warps_x = bn / wn;
  k.warps_y = bm / wm;
  k.smem_bytes = uint64_t(tc.smem_bytes_per_block);
  k.regs_per_thread = uint32_t(tc.registers_per_thread);
  k.tiles.core = core;
  k.tiles.block = {bm, bn, bk};
  k.tiles.warp = {wm, wn, bk};
  k.tiles.instr = {im, in_, kg};
  const int64_t salient = multi ? spec.weights.salient : 0;
  k.gemm = {traces::GemmPath::kLut, 1,      spec.m, spec.n, spec.k, G, wbits, spec.act,
            multi ? int(B) : 0,     salient};
  // INT: fp16 scale + fp16 zero point per (group, column); multi-basis: fp16 row scale per basis.
  const int64_t scale_bytes = multi ? 2 * B : 4;
  const int64_t n_groups = ceil_div(spec.k, G);
  const int64_t basis_tables = spec.m * row_table_bytes;                   // [basis][row][group]
  const int64_t basis_weights = n_tiles * lut_groups * wbits * seg_bytes;  // [basis][tile]...
  k.tensors = {{0, "tables", uint64_t(B * basis_tables)},
               {1, "weights", uint64_t(B * basis_weights)},
               {2, "scales", uint64_t(n_groups * spec.n * scale_bytes)},
               {3, "out", uint64_t(spec.m * spec.n * 2)}};
  // Salient columns: fp16 weights per (row, group, column) + fp16 column indices.
  const int64_t salient_row_bytes = n_groups * salient * 2;
  if (salient > 0) {
    k.tensors.push_back({4, "salient", uint64_t(spec.n * salient_row_bytes + salient_row_bytes)});
    k.tensors.push_back({5, "acts", uint64_t(spec.m * spec.k * golden::dtype_bits(spec.act) / 8)});
  }

  ProgramBuilder p;
  const int64_t tiles_per_group = grouped ? G / bk : ceil_div(spec.k, bk);
  const auto ig = p.loop(uint64_t(n_groups));
  {
    const auto it = p.loop(uint64_t(tiles_per_group));
    // k column of this K tile: g * G + t * bk (LUT group index = that / kg).
    const int64_t lg_per_tile = bk / kg;
    {
      const auto ij = p.loop(uint64_t(B));  // bases (multi-basis binary)
      // Table rows of the warp tile: [row][LUT group][entry].
      const auto ir = p.loop(uint64_t(wm));
      p.emit(mem(Opcode::kLdGlobalAsync, 0, uint64_t(lg_per_tile * table_bytes),
                 affine(0, {by(bm * row_table_bytes), wy(wm * row_table_bytes),
                            iv(ir, row_table_bytes), iv(ig, (G / kg) * table_bytes),
                            iv(it, lg_per_tile * table_bytes), iv(ij, basis_tables)})));
      p.end(ir);
      // Packed weight segments of the warp's N tiles: [n tile][LUT group][plane].
      const auto in_tile = p.loop(uint64_t(wn / in_));
      p.emit(mem(Opcode::kLdGlobalAsync, 1, uint64_t(lg_per_tile * wbits * seg_bytes),
                 affine(0, {bx((bn / in_) * lut_groups * wbits * seg_bytes),
                            wx((wn / in_) * lut_groups * wbits * seg_bytes),
                            iv(in_tile, lut_groups * wbits * seg_bytes),
                            iv(ig, (G / kg) * wbits * seg_bytes),
                            iv(it, lg_per_tile * wbits * seg_bytes), iv(ij, basis_weights)})));
      p.end(in_tile);
      p.end(ij);
    }
    p.emit(barrier());
    const auto iq = p.loop(uint64_t(lg_per_tile));
    {
      // Fragments of one LUT group: the warp's table rows and weight planes, per basis.
      const int64_t smem_tables = B * bm * lg_per_tile * table_bytes;
      const int64_t smem_basis_tables = bm * lg_per_tile * table_bytes;
      const int64_t smem_basis_weights = bn * lg_per_tile * wbits * seg_bytes / in_;
      for (int64_t j = 0; j < B; ++j) {
        p.emit(mem(Opcode::kLdShared, 0, uint64_t(wm * table_bytes),
                   affine(j * smem_basis_tables,
                          {wy(wm * lg_per_tile * table_bytes), iv(iq, table_bytes)})));
        p.emit(mem(
            Opcode::kLdShared, 0, uint64_t((wn / in_) * wbits * seg_bytes),
            affine(smem_tables + j * smem_basis_weights,
                   {wx((wn / in_) * lg_per_tile * wbits * seg_bytes), iv(iq, wbits * seg_bytes)})));
        const auto ia = p.loop(uint64_t(wm / im));
        const auto ib = p.loop(uint64_t(wn / in_));
        Instr l;
        l.op = Opcode::kLmma;
        l.lmma = op;
        l.m = affine(0, {by(bm), wy(wm), iv(ia, im)});
        l.n = affine(0, {bx(bn), wx(wn), iv(ib, in_)});
        l.k = affine(0, {iv(ig, G), iv(it, bk), iv(iq, kg)});
        l.basis = uint32_t(j);
        p.emit(l);
        p.end(ib);
        p.end(ia);
      }
    }
    p.end(iq);
    p.emit(barrier());
    p.end(it);
  }
  // Epilogue of this quantization group: scales and zero points of the warp's columns.
  p.emit(
      mem(Opcode::kLdGlobal, 2, uint64_t(wn * scale_bytes),
          affine(0, {bx(bn * scale_bytes), wx(wn * scale_bytes), iv(ig, spec.n * scale_bytes)})));
  for (int64_t j = 0; j < B; ++j) {
    Instr dq;
    dq.op = Opcode::kDequant;
    dq.m = affine(0, {by(bm), wy(wm)});
    dq.n = affine(0, {bx(bn), wx(wn)});
    dq.g = affine(0, {iv(ig, 1)});
    dq.rows = uint32_t(wm);
    dq.cols = uint32_t(wn);
    dq.basis = uint32_t(j);
    dq.row_scale = multi;
    p.emit(dq);
  }
  p.end(ig);
  if (salient > 0) {
    // The dense salient branch: each warp row's salient activations times its columns' weights.
    const auto irow = p.loop(uint64_t(wm));
    p.emit(mem(Opcode::kLdGlobal, 5, uint64_t(n_groups * salient * 2),
               affine(0, {by(bm * spec.k * 2), wy(wm * spec.k * 2), iv(irow, spec.k * 2)})));
    p.end(irow);
    p.emit(
        mem(Opcode::kLdGlobal, 4, uint64_t(wn * salient_row_bytes),
            affine(salient_row_bytes, {bx(bn * salient_row_bytes), wx(wn * salient_row_bytes)})));
    Instr alu;
    alu.op = Opcode::kAlu;
    alu.count = uint64_t(2 * wm * wn * n_groups * salient);
    p.emit(alu);
    Instr dq;
    dq.op = Opcode::kDequant;
    dq.m = affine(0, {by(bm), wy(wm)});
    dq.n = affine(0, {bx(bn), wx(wn)});
    dq.rows = uint32_t(wm);
    dq.cols = uint32_t(wn);
    dq.salient = true;
    p.emit(dq);
  }
  // fp16 outputs, one row segment per warp-tile row.
  const auto orow = p.loop(uint64_t(wm));
  p.emit(mem(Opcode::kStGlobal, 3, uint64_t(wn * 2),
             affine(0, {by(bm * spec.n * 2), wy(wm * spec.n * 2), iv(orow, spec.n * 2), bx(bn * 2),
                        wx(wn * 2)})));
  p.end(orow);
  k.program = p.take();
  kernels.push_back(std::move(k));
  return kernels;
}

traces::Kernel lower_precompute(const std::string& name, int64_t m, int64_t k_cols,
                                golden::DType act, bool quantize_tables, const hw::GpuConfig& gpu,
                                int bases) {
  const traces::CoreSpec cs = lut_core_spec(gpu);
  const int64_t kg = cs.config.shape.k;
  const DType table = quantize_tables ? DType::kInt8 : (golden::is_int(act) ? DType::kInt16 : act);
  const int64_t table_bytes =
      (int64_t(1) << (kg - 1)) * golden::dtype_bits(table) / 8 + (quantize_tables ? 4 : 0);
  const int64_t row_table_bytes = ceil_div(k_cols, kg) * table_bytes;
  const int64_t ab = golden::dtype_bits(act) / 8;
  traces::Kernel k;
  k.name = name;
  k.warps_x = kPrecomputeWarps;
  k.grid_x = ceil_div(k_cols, kPrecomputeWarps * kPrecomputeCols);
  k.grid_y = m;
  k.regs_per_thread = 32;
  k.tiles.core = -1;
  k.tiles.block = {1, 0, kPrecomputeWarps * kPrecomputeCols};
  k.tiles.warp = {1, 0, kPrecomputeCols};
  k.tiles.instr = {1, 0, kg};
  const int64_t B = std::max(bases, 1);
  k.tensors = {{0, "acts", uint64_t(m * k_cols * ab)},
               {1, "tables", uint64_t(B * m * row_table_bytes)}};
  if (bases > 0) k.tensors.push_back({2, "col_scales", uint64_t(B * k_cols * 2)});
  ProgramBuilder p;
  const int64_t bcols = kPrecomputeWarps * kPrecomputeCols;
  p.emit(mem(Opcode::kLdGlobal, 0, uint64_t(kPrecomputeCols * ab),
             affine(0, {by(k_cols * ab), bx(bcols * ab), wx(kPrecomputeCols * ab)})));
  const int64_t groups_per_warp = kPrecomputeCols / kg;
  for (int64_t j = 0; j < B; ++j) {
    if (bases > 0) {
      // Scale fusion: basis j's column scales multiply the activations before the table.
      p.emit(mem(Opcode::kLdGlobal, 2, uint64_t(kPrecomputeCols * 2),
                 affine(j * k_cols * 2, {bx(bcols * 2), wx(kPrecomputeCols * 2)})));
    }
    Instr pre;
    pre.op = Opcode::kPrecompute;
    pre.k_group = int(kg);
    pre.act = act;
    pre.table = golden::is_int(act) ? DType::kInt16 : act;
    pre.m = affine(0, {by(1)});
    pre.k = affine(0, {bx(bcols), wx(kPrecomputeCols)});
    pre.rows = 1;
    pre.cols = uint32_t(kPrecomputeCols);
    pre.basis = uint32_t(j);
    p.emit(pre);
    if (quantize_tables) {
      Instr q;
      q.op = Opcode::kQuantTable;
      q.count = uint64_t(groups_per_warp);
      p.emit(q);
    }
    p.emit(mem(Opcode::kStGlobal, 1, uint64_t(groups_per_warp * table_bytes),
               affine(j * m * row_table_bytes,
                      {by(row_table_bytes), bx(kPrecomputeWarps * groups_per_warp * table_bytes),
                       wx(groups_per_warp * table_bytes)})));
  }
  k.program = p.take();
  return k;
}

traces::Kernel lower_mma_gemm(const std::string& name, int64_t batch, int64_t m, int64_t n,
                              int64_t k, golden::DType a, golden::DType b, const hw::GpuConfig& gpu,
                              tiling::TileChoice* tiles_out, int weight_bits) {
  tiling::GemmProblem prob = tiling::mac_gemm_problem(gpu, m, n, k, a, b);
  if (weight_bits > 0) prob.w_bits = weight_bits;
  tiling::TileChoice tc = tiling::choose_tiles(prob, gpu);
  if (tiles_out) *tiles_out = tc;
  const bool int8 = a == DType::kInt8;
  traces::MmaOp op;
  op.shape = prob.instr;
  op.a = int8 ? DType::kInt8 : (a == DType::kBf16 ? DType::kBf16 : DType::kFp16);
  op.b = op.a;
  op.acc = int8 ? DType::kInt32 : DType::kFp32;
  op.out = op.acc;
  const int64_t bm = tc.block.m, bn = tc.block.n, bk = tc.block.k;
  const int64_t wm = tc.warp.m, wn = tc.warp.n;
  const int64_t eb = golden::dtype_bits(op.a) / 8;
  traces::Kernel kr;
  kr.name = name;
  kr.grid_x = ceil_div(n, bn);
  kr.grid_y = ceil_div(m, bm) * batch;
  kr.warps_x = bn / wn;
  kr.warps_y = bm / wm;
  kr.smem_bytes = uint64_t(tc.smem_bytes_per_block);
  kr.regs_per_thread = uint32_t(tc.registers_per_thread);
  kr.tiles.core = -1;
  kr.tiles.block = {bm, bn, bk};
  kr.tiles.warp = {wm, wn, bk};
  kr.tiles.instr = {op.shape.m, op.shape.n, op.shape.k};
  // Batched operands are stacked along M: block row by covers rows by*bm of the stacked A.
  const int64_t mp = ceil_div(m, bm) * bm;
  // Low-bit B (dequantize-then-MAC): packed codes are loaded, unpacked and scaled on the CUDA
  // cores into the MMA operand dtype.
  const int64_t b_row_bytes = weight_bits > 0 ? ceil_div(k * weight_bits, 8) : k * eb;
  const int64_t b_tile_bytes = weight_bits > 0 ? ceil_div(bk * weight_bits, 8) : bk * eb;
  kr.tensors = {{0, "a", uint64_t(batch * mp * k * eb)},
                {1, "b", uint64_t(batch * n * b_row_bytes)},
                {2, "out", uint64_t(batch * mp * n * 2)}};
  if (weight_bits > 0) kr.tensors.push_back({3, "scales", uint64_t(n * 4)});
  ProgramBuilder p;
  const auto it = p.loop(uint64_t(ceil_div(k, bk)));
  const auto ir = p.loop(uint64_t(wm));
  p.emit(mem(Opcode::kLdGlobalAsync, 0, uint64_t(bk * eb),
             affine(0, {by(bm * k * eb), wy(wm * k * eb), iv(ir, k * eb), iv(it, bk * eb)})));
  p.end(ir);
  const auto icol = p.loop(uint64_t(wn));
  p.emit(mem(weight_bits > 0 ? Opcode::kLdGlobal : Opcode::kLdGlobalAsync, 1,
             uint64_t(b_tile_bytes),
             affine(0, {bx(bn * b_row_bytes), wx(wn * b_row_bytes), iv(icol, b_row_bytes),
                        iv(it, b_tile_bytes)})));
  p.end(icol);
  if (weight_bits > 0) {
    // Unpack (shift, mask), convert to the operand dtype, subtract the zero point, scale; store
    // the dequantized tile to shared memory for the MMAs.
    Instr alu;
    alu.op = Opcode::kAlu;
    alu.count = uint64_t(4 * wn * bk);
    p.emit(alu);
    p.emit(mem(Opcode::kStShared, 0, uint64_t(wn * bk * eb), affine(0, {wx(wn * bk * eb)})));
  }
  Instr bar = barrier();
  p.emit(bar);
  const auto iq = p.loop(uint64_t(bk / op.shape.k));
  Instr lds = mem(Opcode::kLdShared, 0, uint64_t((wm + wn) * op.shape.k * eb),
                  affine(0, {wy(wm * bk * eb), wx(wn * bk * eb), iv(iq, op.shape.k * eb)}));
  p.emit(lds);
  const auto ia = p.loop(uint64_t(wm / op.shape.m));
  const auto ib = p.loop(uint64_t(wn / op.shape.n));
  Instr mm;
  mm.op = Opcode::kMma;
  mm.mma = op;
  mm.m = affine(0, {by(bm), wy(wm), iv(ia, op.shape.m)});
  mm.n = affine(0, {bx(bn), wx(wn), iv(ib, op.shape.n)});
  mm.k = affine(0, {iv(it, bk), iv(iq, op.shape.k)});
  p.emit(mm);
  p.end(ib);
  p.end(ia);
  p.end(iq);
  p.emit(bar);
  p.end(it);
  const auto orow = p.loop(uint64_t(wm));
  p.emit(mem(Opcode::kStGlobal, 2, uint64_t(wn * 2),
             affine(0, {by(bm * n * 2), wy(wm * n * 2), iv(orow, n * 2), bx(bn * 2), wx(wn * 2)})));
  p.end(orow);
  kr.program = p.take();
  return kr;
}

traces::Trace compile_gemm(const GemmSpec& spec, const hw::GpuConfig& gpu) {
  traces::Trace t;
  t.gpu = gpu.name;
  t.cores.push_back(lut_core_spec(gpu));
  t.kernels = lower_lut_gemm(spec, gpu, 0);
  traces::validate(t, "compile_gemm");
  return t;
}

}  // namespace ltc::compiler
