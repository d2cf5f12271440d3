#include "traces/functional.h"

#include "common/error.h"
#include "common/int_math.h"
#include "model/golden/fp.h"
#include "model/golden/gemm.h"
#include "model/golden/lmma.h"
#include "model/golden/mac.h"
#include "traces/warp_stream.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>

namespace ltc::traces {

using golden::DType;

golden::DType mma_acc_dtype(golden::DType act) {
  return golden::is_int(act) ? DType::kInt32 : DType::kFp32;
}

golden::DType mma_out_dtype(golden::DType act) {
  // The compiler's MMA kernels store 2-byte outputs: fp16 for every float activation dtype.
  return golden::is_int(act) ? DType::kInt32 : DType::kFp16;
}

namespace {

bool has_precompute(const Kernel& k) {
  for (const auto& in : k.program) {
    if (in.op == Opcode::kPrecompute) return true;
  }
  return false;
}

std::string shape_note(const GemmRecord& g) {
  return std::string(g.path == GemmPath::kMma ? "MMA" : "LUT") +
         " batch=" + std::to_string(g.batch) + " M=" + std::to_string(g.m) +
         " N=" + std::to_string(g.n) + " K=" + std::to_string(g.k) +
         " W=" + std::to_string(g.wbits) + " group=" + std::to_string(g.group) +
         " bases=" + std::to_string(g.bases) + " act=" + std::string(golden::dtype_name(g.act));
}

// The kernels without a GemmRecord right before GEMM kernel `gk` that precompute its tables
// (functional.h): none for an MMA GEMM; for a batch, only precomputes over the same batch.
size_t first_kernel_of(const Trace& t, size_t gk) {
  const GemmRecord& g = t.kernels[gk].gemm;
  if (g.path == GemmPath::kMma) return gk;
  size_t first = gk;
  while (first > 0 && t.kernels[first - 1].gemm.m <= 0 && has_precompute(t.kernels[first - 1]) &&
         (g.batch == 1 || t.kernels[first - 1].grid_z == g.batch)) {
    --first;
  }
  return first;
}

// What the golden reference needs beyond the record: the core's (LUT) or the mma's K, and
// whether the lmmas quantize their tables.
struct ReferenceParams {
  int k_group = 0;
  bool quantized_tables = false;
  golden::KSlices slices;
};
ReferenceParams reference_params(const Trace& t, const Kernel& gk) {
  ReferenceParams r;
  r.slices = kernel_k_slices(gk);
  for (const auto& in : gk.program) {
    if (in.op == Opcode::kLmma) r.quantized_tables = in.lmma.quantized_table;
    if (in.op == Opcode::kMma && r.k_group == 0) r.k_group = in.mma.shape.k;
  }
  if (gk.gemm.path == GemmPath::kLut) {
    if (gk.tiles.core < 0 || size_t(gk.tiles.core) >= t.cores.size()) {
      throw InputError("LUT GEMM kernel " + gk.name + " names no tensor core");
    }
    r.k_group = t.cores[size_t(gk.tiles.core)].config.shape.k;
  } else if (r.k_group == 0) {
    r.k_group = golden::is_int(gk.gemm.act) ? 32 : 16;
  }
  return r;
}

double gemm_macs(const GemmRecord& g) {
  return double(std::max<int64_t>(g.batch, 1)) * double(g.m) * double(g.n) * double(g.k);
}

}  // namespace

struct GemmExecutor::State {
  State(const Trace& trace, size_t gemm_kernel, GemmOperands operands, bool upstream)
      : t(trace), gk(gemm_kernel), ops(std::move(operands)), upstream_tables(upstream) {
    if (gk >= t.kernels.size() || t.kernels[gk].gemm.m <= 0) {
      throw InputError("interpreter: kernel " + std::to_string(gk) +
                       " of the trace is not a GEMM kernel (no gemm record)");
    }
    const Kernel& kernel = t.kernels[gk];
    g = kernel.gemm;
    first = first_kernel_of(t, gk);
    mma = g.path == GemmPath::kMma;
    slicing = kernel_k_slices(kernel);
    nslices = slicing.slices;
    if (mma) {
      init_mma(kernel);
    } else {
      init_lut(kernel);
    }
    cells = size_t(rows * n);
    consumed.assign(cells, 0);
    flushes.assign(cells, 0);
    owner.assign(size_t(nslices) * cells, -1);
    epilogue_owner.assign(cells, -1);
    y.assign(cells, 0.0);
    if (mma) acc.assign(size_t(nslices) * cells, golden::encode(acc_dtype, 0.0));
    if (!mma) since_flush.assign(size_t(bases * nslices) * cells, 0);
  }

  [[noreturn]] void operands_differ() const {
    throw InputError("interpreter: trace computes " + shape_note(g) + ", operands differ");
  }

  void init_lut(const Kernel& kernel) {
    multi = g.bases > 0;
    const int64_t wn = multi ? ops.multi_basis.n : ops.weights.n;
    const int64_t wk = multi ? ops.multi_basis.k : ops.weights.k;
    const int64_t wgroup = multi ? ops.multi_basis.group : ops.weights.group_size;
    const int wbits = multi ? 1 : ops.weights.wbits;
    if (g.batch < 1) throw InputError("interpreter: LUT GEMM batch must be >= 1");
    if (multi && g.batch != 1) {
      throw InputError("interpreter: a multi-basis binary GEMM has batch 1 (" + shape_note(g) +
                       ")");
    }
    if (g.m != ops.m || ops.batch != g.batch || g.batch * g.n != wn || g.k != wk ||
        g.wbits != wbits || g.group != std::min<int64_t>(wgroup, wk) || g.act != ops.act ||
        (multi && (g.bases != ops.multi_basis.bases || g.salient != ops.multi_basis.salient))) {
      operands_differ();
    }
    if (ops.acts.size() != size_t(g.batch * ops.m * wk)) {
      throw InputError("interpreter: acts size");
    }
    if (kernel.tiles.core < 0 || size_t(kernel.tiles.core) >= t.cores.size()) {
      throw InputError("interpreter: LUT GEMM kernel " + kernel.name + " names no tensor core");
    }
    core = t.cores[size_t(kernel.tiles.core)].config;
    kg = core.shape.k;
    // A batch's GEMMs stack along M as the MMA path's do; their weights are the batch*N rows of
    // the weight matrix, GEMM b's columns from row b * N.
    rows = g.batch * g.m;
    n = g.n;
    const int64_t block_m = kernel.tiles.block[0] > 0 ? kernel.tiles.block[0] : g.m;
    mp = ceil_div(g.m, block_m) * block_m;
    k = g.k;
    group = g.group;
    bases = multi ? g.bases : 1;
    salient = multi ? g.salient : 0;
    if (multi) {
      // Each basis' sign planes packed as 1-bit codes (1 = +1).
      const auto& mb = ops.multi_basis;
      for (int j = 0; j < bases; ++j) {
        golden::QuantizedWeights signs;
        signs.kind = golden::WeightKind::kUInt;
        signs.n = mb.n;
        signs.k = mb.k;
        signs.wbits = 1;
        signs.group_size = mb.k;
        signs.codes.assign(mb.signs.begin() + int64_t(j) * mb.n * mb.k,
                           mb.signs.begin() + int64_t(j + 1) * mb.n * mb.k);
        signs.scales.assign(size_t(mb.n), 1.0);
        signs.zeros.assign(size_t(mb.n), 0.0);
        packed.push_back(pack_weights(signs, kg, core.shape.n));
      }
    } else {
      packed.push_back(pack_weights(ops.weights, kg, core.shape.n));
    }
    lut_groups = ceil_div(k, kg);
    tables.resize(size_t(bases * rows * lut_groups));
    if (multi && kernel_k_slices(kernel).slices > 1)
      throw InputError("interpreter: multi-basis binary GEMM kernel " + kernel.name +
                       " slices K (it takes one slice)");
  }

  void init_mma(const Kernel& kernel) {
    if (g.batch < 1) throw InputError("interpreter: MMA GEMM batch must be >= 1");
    if (g.bases != 0) throw InputError("interpreter: multi-basis weights need the LUT path");
    const int64_t bn = g.batch * g.n;
    if (g.m != ops.m || g.batch != ops.batch || g.act != ops.act) operands_differ();
    if (ops.acts.size() != size_t(g.batch * g.m * g.k)) throw InputError("interpreter: acts size");
    if (g.wbits == 0) {
      if (ops.b.size() != size_t(bn * g.k)) operands_differ();
      b_vals = ops.b;
      for (auto& v : b_vals) v &= golden::dtype_mask(g.act);
    } else {
      const auto& w = ops.weights;
      if (w.n != bn || w.k != g.k || w.wbits != g.wbits ||
          (g.group > 0 && w.group_size != std::min(g.group, g.k))) {
        operands_differ();
      }
      // Dequantize-then-MAC: the CUDA cores turn codes into act-dtype weights before the MMAs.
      b_vals = golden::dequantize_weights(w, g.act);
    }
    rows = g.batch * g.m;
    n = g.n;
    k = g.k;
    const int64_t block_m = kernel.tiles.block[0] > 0 ? kernel.tiles.block[0] : g.m;
    mp = ceil_div(g.m, block_m) * block_m;
    acc_dtype = mma_acc_dtype(g.act);
  }

  std::string where(const Instr& in, const Affine::Point& p) const {
    const std::string name = cur < t.kernels.size() ? t.kernels[cur].name : "?";
    return "kernel " + name + " block (" + std::to_string(p.bx) + "," + std::to_string(p.by) +
           (p.bz > 0 ? "," + std::to_string(p.bz) : std::string()) + ") warp (" +
           std::to_string(p.wx) + "," + std::to_string(p.wy) + "): " + in.str();
  }
  [[noreturn]] void bad(const Instr& in, const Affine::Point& p, const std::string& why) const {
    throw std::runtime_error("interpreter: " + where(in, p) + ": " + why);
  }

  // The GEMM row (batch b's row i is b * m + i) of trace row r of the stacked, per-batch padded
  // M (functional.h), or -1 for a padding row.
  int64_t gemm_row(int64_t r) const {
    if (r < 0 || r % mp >= g.m || r / mp >= g.batch) return -1;
    return (r / mp) * g.m + r % mp;
  }
  // The batch of an instruction's trace rows [m0, m0 + count): every real row in one batch
  // (-1: all padding).
  int64_t batch_of(const Instr& in, const Affine::Point& p, int64_t m0, int64_t count) const {
    int64_t batch = -1;
    for (int64_t r = m0; r < m0 + count; ++r) {
      if (gemm_row(r) < 0) continue;
      if (batch >= 0 && r / mp != batch) bad(in, p, "tile spans two batches");
      batch = r / mp;
    }
    return batch;
  }

  // ---- LUT path -------------------------------------------------------------------------------
  uint32_t act_at(int64_t r, int64_t c) const {
    return c < k ? ops.acts[size_t(r * k + c)] & golden::dtype_mask(ops.act)
                 : golden::encode(ops.act, 0.0);
  }
  // The activation a basis' table is built from: scale fusion multiplies by the column scale;
  // salient columns are zero (they go through the dense branch).
  uint32_t table_act(int64_t r, int64_t c, int basis) const {
    if (!multi || c >= k) return act_at(r, c);
    const auto& mb = ops.multi_basis;
    if (mb.is_salient(int(c))) return golden::encode(ops.act, 0.0);
    return golden::encode(ops.act, golden::decode(ops.act, act_at(r, c)) *
                                       mb.col_scales[size_t(basis) * mb.k + size_t(c)]);
  }
  std::vector<uint32_t>& table(int basis, int64_t r, int64_t lg) {
    return tables[size_t((basis * rows + r) * lut_groups + lg)];
  }
  std::vector<uint32_t> build_table(int64_t r, int64_t c, int basis, DType table_dtype) const {
    std::vector<uint32_t> a(static_cast<size_t>(kg));
    for (int i = 0; i < kg; ++i) a[size_t(i)] = table_act(r, c + i, basis);
    return golden::precompute_half_table(a.data(), ops.act, kg, table_dtype);
  }

  void precompute(const Instr& in, const Affine::Point& p) {
    if (mma) bad(in, p, "table precompute in an MMA GEMM");
    const int64_t r = in.m.eval(p), k0 = in.k.eval(p);
    if (in.k_group != kg) bad(in, p, "precompute K differs from the tensor core's");
    if (in.act != ops.act) bad(in, p, "precompute reads activations of another dtype");
    if (k0 % kg != 0) bad(in, p, "precompute starts inside a LUT group");
    if (r < 0 || k0 < 0) bad(in, p, "negative coordinates");
    if (int64_t(in.basis) >= bases) bad(in, p, "basis out of range");
    const int64_t row = gemm_row(r);
    if (row < 0) return;  // padding rows
    for (int64_t c = k0; c < std::min<int64_t>(k0 + in.cols, k); c += kg) {
      auto& slot = table(int(in.basis), row, c / kg);
      if (!slot.empty()) {
        bad(in, p,
            "table (" + std::to_string(r) + ", k " + std::to_string(c) + ") precomputed twice");
      }
      slot = build_table(row, c, int(in.basis), in.table);
      ++stats.tables;
    }
  }

  // The K slice of a tensor-core instruction at reduction origin k0, which must be its warp's:
  // a sliced kernel's warps along y are its slices (trace.h, "Sliced K").
  int slice_at(const Instr& in, const Affine::Point& p, int64_t k0) const {
    const int sl = slicing.slice_of(k0);
    if (sl != warp_slice(p))
      bad(in, p,
          "K slice " + std::to_string(sl) + " in warp row " + std::to_string(p.wy) +
              " (the slice it computes)");
    return sl;
  }
  int warp_slice(const Affine::Point& p) const { return nslices > 1 ? int(p.wy) : 0; }
  void own(const Instr& in, const Affine::Point& p, int sl, size_t cell, int64_t warp_id) {
    int64_t& o = owner[size_t(sl) * cells + cell];
    if (o < 0) o = warp_id;
    if (o != warp_id) bad(in, p, "output element computed by two warps in one K slice");
  }
  // The epilogue of an output (dequant, salient branch): one warp, whichever slice it is.
  void own_epilogue(const Instr& in, const Affine::Point& p, size_t cell, int64_t warp_id) {
    int64_t& o = epilogue_owner[cell];
    if (o < 0) o = warp_id;
    if (o != warp_id) bad(in, p, "output element's epilogue run by two warps");
  }
  void in_gemm_kernel(const Instr& in, const Affine::Point& p) const {
    if (cur != gk) bad(in, p, "computes outputs outside the GEMM kernel");
  }

  // The unquantized table dtype the precompute builds (quantization happens at use).
  static DType table_dtype(const LmmaOp& op) { return golden::lut_table_dtype(op.act); }
  uint32_t& acc_at(int basis, int sl, size_t cell) {
    return acc[size_t(basis * nslices + sl) * cells + cell];
  }
  int64_t& since_at(int basis, int sl, size_t cell) {
    return since_flush[size_t(basis * nslices + sl) * cells + cell];
  }

  // The table row r of the lmma's K group reads (built from the activations when a fused producer
  // outside the trace makes it).
  const std::vector<uint32_t>& read_table(const Instr& in, const Affine::Point& p, int64_t r,
                                          int64_t k0) {
    auto& half = table(int(in.basis), r, k0 / kg);
    if (half.empty() && upstream_tables) {
      // Tables of a fused producer outside this trace: build them from the activations.
      half = build_table(r, k0, int(in.basis), table_dtype(in.lmma));
      ++stats.tables;
    }
    if (half.empty()) {
      bad(in, p,
          "reads table (" + std::to_string(r) + ", k " + std::to_string(k0) +
              ") before it was precomputed");
    }
    return half;
  }

  // The whole instruction on the LmmaUnit: every row's table (q8: quantized, the int8 LMMA from
  // zero, then acc += fp32(i) * scale as below), its columns' planes, the accumulators.
  void lmma_on_unit(const Instr& in, const Affine::Point& p, int64_t warp_id,
                    const std::vector<uint8_t>& planes, int64_t m0, int64_t n0, int64_t k0,
                    int64_t real_k, int sl) {
    const LmmaOp& op = in.lmma;
    const int basis = int(in.basis);
    const int half_size = op.shape.half_table_size();
    const int in_n = op.shape.n;
    LmmaInstance l;
    l.shape = op.shape;
    l.type = op.quantized_table
                 ? golden::LmmaType{DType::kInt8, op.wbits, DType::kInt32, DType::kInt32}
                 : op.lmma_type();
    l.act = ops.act;
    l.planes = planes;
    l.half_tables.assign(size_t(op.shape.m) * size_t(half_size), 0u);
    l.acts.assign(size_t(op.shape.m) * size_t(kg), golden::encode(ops.act, 0.0));
    l.c.assign(size_t(op.shape.m) * size_t(in_n), golden::encode(l.type.acc, 0.0));
    std::vector<uint32_t> scales(size_t(op.shape.m), 0u);
    for (int i = 0; i < op.shape.m; ++i) {
      const int64_t r = gemm_row(m0 + i);
      if (r < 0) continue;
      const auto& half = read_table(in, p, r, k0);
      std::vector<uint32_t> entries = half;
      if (op.quantized_table) {
        const golden::QuantizedTable qt = golden::quantize_table(half, table_dtype(op));
        entries = qt.entries;
        scales[size_t(i)] = qt.scale_fp32;
      }
      std::copy(entries.begin(), entries.end(), l.half_tables.begin() + ptrdiff_t(i) * half_size);
      for (int kk = 0; kk < kg; ++kk) l.acts[size_t(i * kg + kk)] = table_act(r, k0 + kk, basis);
      if (op.quantized_table) continue;  // the int8 LMMA starts from zero
      for (int j = 0; j < in_n && n0 + j < n; ++j) {
        l.c[size_t(i) * size_t(in_n) + size_t(j)] = acc_at(basis, sl, size_t(r * n + n0 + j));
      }
    }
    const std::vector<uint32_t> o = unit->lmma(l);
    if (o.size() != l.c.size()) bad(in, p, "the LMMA unit returned the wrong number of outputs");
    for (int i = 0; i < op.shape.m; ++i) {
      const int64_t r = gemm_row(m0 + i);
      if (r < 0) continue;
      for (int j = 0; j < in_n && n0 + j < n; ++j) {
        const size_t cell = size_t(r * n + n0 + j);
        uint32_t v = o[size_t(i) * size_t(in_n) + size_t(j)];
        if (op.quantized_table) {
          const uint32_t f = golden::convert(DType::kFp32, DType::kInt32, v);
          const uint32_t s =
              golden::fp_mul(DType::kFp32, DType::kFp32, f, DType::kFp32, scales[size_t(i)]);
          v = golden::fp_add(DType::kFp32, acc_at(basis, sl, cell), s);
        }
        own(in, p, sl, cell, warp_id);
        acc_at(basis, sl, cell) = v;
        consumed[cell] += real_k;
        since_at(basis, sl, cell) += real_k;
      }
    }
  }

  void lmma(const Instr& in, const Affine::Point& p, int64_t warp_id) {
    ++stats.lmmas;
    if (mma) bad(in, p, "lmma in an MMA GEMM");
    in_gemm_kernel(in, p);
    const LmmaOp& op = in.lmma;
    const int64_t m0 = in.m.eval(p), n0 = in.n.eval(p), k0 = in.k.eval(p);
    const int basis = int(in.basis);
    if (m0 < 0 || n0 < 0 || k0 < 0) bad(in, p, "negative coordinates");
    if (basis >= bases) bad(in, p, "basis out of range");
    if (op.shape.k != kg || op.shape.m < 1 || op.shape.n < 1 || op.shape.m % core.shape.m != 0 ||
        op.shape.n % core.shape.n != 0) {
      bad(in, p,
          "lmma shape " + op.shape.name() + " is not a multiple of the tensor core tile " +
              core.shape.name() + " (M, N multiples, K equal)");
    }
    if (k0 >= k) return;  // predicated off: K padding of the last tile
    if (k0 % kg != 0) bad(in, p, "lmma starts inside a LUT group");
    if (op.wbits != packed[size_t(basis)].wbits) bad(in, p, "lmma planes differ from the weights'");
    if (acc.empty()) {
      acc_dtype = op.quantized_table ? DType::kFp32 : op.acc;
      acc.assign(size_t(bases * nslices) * cells, golden::encode(acc_dtype, 0.0));
    }
    const int sl = slice_at(in, p, k0);
    // A multi-tile lmma is the core-tile LMMAs on its sub-blocks; every output element's chain
    // (planes LSB first over this K group) depends only on its row's table, its column's planes
    // and its accumulator, so it runs here one row at a time over the instruction's columns.
    const int64_t lg = k0 / kg;
    const int in_n = op.shape.n;
    const int64_t batch = batch_of(in, p, m0, op.shape.m);
    if (batch < 0) return;  // every row is padding
    std::vector<uint8_t> planes(size_t(op.wbits * in_n), 0);
    for (int b = 0; b < op.wbits; ++b) {
      for (int j = 0; j < in_n; ++j) {
        if (n0 + j < n) {
          planes[size_t(b * in_n + j)] =
              uint8_t(packed[size_t(basis)].pattern(batch * n + n0 + j, lg, b));
        }
      }
    }
    const golden::LmmaShape row_shape{1, in_n, op.shape.k};
    const int64_t real_k = std::min<int64_t>(kg, k - k0);
    if (unit) {
      lmma_on_unit(in, p, warp_id, planes, m0, n0, k0, real_k, sl);
      return;
    }
    for (int64_t i = 0; i < op.shape.m; ++i) {
      const int64_t r = gemm_row(m0 + i);
      if (r < 0) continue;
      const auto& half = read_table(in, p, r, k0);
      std::vector<uint32_t> c(size_t(in_n), golden::encode(acc_dtype, 0.0));
      for (int j = 0; j < in_n && n0 + j < n; ++j) {
        c[size_t(j)] = acc_at(basis, sl, size_t(r * n + n0 + j));
      }
      std::vector<uint32_t> o;
      if (!op.quantized_table) {
        o = golden::lmma(row_shape, op.lmma_type(), half, planes, c);
      } else {
        // int8 table, int32 LMMA from zero, then acc += fp32(i) * scale (golden/gemm.h).
        const golden::QuantizedTable qt = golden::quantize_table(half, table_dtype(op));
        const std::vector<uint32_t> zero(size_t(in_n), 0u);
        const auto ints =
            golden::lmma(row_shape, {DType::kInt8, op.wbits, DType::kInt32, DType::kInt32},
                         qt.entries, planes, zero);
        o.resize(size_t(in_n));
        for (int j = 0; j < in_n; ++j) {
          const uint32_t f = golden::convert(DType::kFp32, DType::kInt32, ints[size_t(j)]);
          const uint32_t s =
              golden::fp_mul(DType::kFp32, DType::kFp32, f, DType::kFp32, qt.scale_fp32);
          o[size_t(j)] = golden::fp_add(DType::kFp32, c[size_t(j)], s);
        }
      }
      for (int j = 0; j < in_n && n0 + j < n; ++j) {
        const size_t cell = size_t(r * n + n0 + j);
        own(in, p, sl, cell, warp_id);
        acc_at(basis, sl, cell) = o[size_t(j)];
        consumed[cell] += real_k;
        since_at(basis, sl, cell) += real_k;
      }
    }
  }

  void dequant(const Instr& in, const Affine::Point& p, int64_t warp_id) {
    ++stats.dequants;
    if (mma) bad(in, p, "dequant epilogue in an MMA GEMM");
    in_gemm_kernel(in, p);
    const int64_t m0 = in.m.eval(p), n0 = in.n.eval(p);
    const int64_t groups = ceil_div(k, group);
    const int basis = int(in.basis);
    if (basis >= bases) bad(in, p, "basis out of range");
    if (in.salient) {
      salient_branch(in, p, m0, n0, groups, warp_id);
      return;
    }
    if (in.row_scale != multi)
      bad(in, p, multi ? "multi-basis dequant needs rowscale=1" : "rowscale on INT weights");
    const int64_t gi = in.g.eval(p);
    if (gi < 0 || gi >= groups) bad(in, p, "quantization group out of range");
    const int64_t c0 = gi * group, c1 = std::min(k, c0 + group);
    const double bias = multi ? 0.0 : 0.5 * (std::ldexp(1.0, ops.weights.wbits) - 1.0);
    // Each slice's columns of the group: its accumulators must have consumed them all.
    std::vector<int64_t> slice_cols(size_t(nslices), 0);
    for (int64_t c = c0; c < c1; c += kg) {
      slice_cols[size_t(slicing.slice_of(c))] += std::min<int64_t>(kg, c1 - c);
    }
    for (int64_t tr = std::max<int64_t>(m0, 0); tr < m0 + in.rows; ++tr) {
      const int64_t r = gemm_row(tr);
      if (r < 0) continue;
      const int64_t wrow0 = (tr / mp) * n;  // the batch's first weight row
      double a_g = 0.0;
      if (!multi) {
        for (int64_t c = c0; c < c1; ++c) a_g += golden::decode(ops.act, act_at(r, c));
      }
      for (int64_t col = std::max<int64_t>(n0, 0); col < std::min<int64_t>(n0 + in.cols, n);
           ++col) {
        const size_t cell = size_t(r * n + col);
        own_epilogue(in, p, cell, warp_id);
        for (int sl = 0; sl < nslices; ++sl) {
          int64_t& since = since_at(basis, sl, cell);
          if (since != slice_cols[size_t(sl)]) {
            bad(in, p,
                "output (" + std::to_string(r) + "," + std::to_string(col) +
                    ") dequantizes group " + std::to_string(gi) + " after " +
                    std::to_string(since) + " of " + std::to_string(slice_cols[size_t(sl)]) +
                    " columns of K slice " + std::to_string(sl));
          }
          since = 0;
        }
        if (flushes[cell] != gi * bases + basis)
          bad(in, p, "epilogues out of order (group, basis)");
        // The slices' accumulators added in slice order (golden/gemm.h), then reset.
        double s = 0.0;
        if (!acc.empty()) {
          uint32_t total = acc_at(basis, 0, cell);
          for (int sl = 1; sl < nslices; ++sl) {
            total = golden::is_int(acc_dtype)
                        ? golden::int_add(acc_dtype, total, acc_at(basis, sl, cell))
                        : golden::fp_add(acc_dtype, total, acc_at(basis, sl, cell));
          }
          s = golden::decode(acc_dtype, total);
          for (int sl = 0; sl < nslices; ++sl) {
            acc_at(basis, sl, cell) = golden::encode(acc_dtype, 0.0);
          }
        }
        if (multi) {
          const auto& mb = ops.multi_basis;
          y[cell] +=
              mb.row_scales[(size_t(basis) * mb.n + size_t(col)) * size_t(groups) + size_t(gi)] * s;
        } else {
          const auto& w = ops.weights;
          const int wrow = int(wrow0 + col);
          y[cell] +=
              w.scale(wrow, int(gi)) * ((0.5 * s + bias * a_g) - w.zero(wrow, int(gi)) * a_g);
        }
        ++flushes[cell];
      }
    }
  }

  // FluxBin's dense branch, after every group of every basis: y += a_c * w_salient, groups
  // ascending, a repeated index (tiny last group) counted once — golden::lut_gemm's order.
  void salient_branch(const Instr& in, const Affine::Point& p, int64_t m0, int64_t n0,
                      int64_t groups, int64_t warp_id) {
    if (!multi || salient == 0) bad(in, p, "salient branch without salient columns");
    const auto& mb = ops.multi_basis;
    for (int64_t tr = std::max<int64_t>(m0, 0); tr < m0 + in.rows; ++tr) {
      const int64_t r = gemm_row(tr);
      if (r < 0) continue;
      for (int64_t col = std::max<int64_t>(n0, 0); col < std::min<int64_t>(n0 + in.cols, n);
           ++col) {
        const size_t cell = size_t(r * n + col);
        own_epilogue(in, p, cell, warp_id);
        if (flushes[cell] != groups * bases) {
          bad(in, p, "salient branch before every group's epilogue");
        }
        for (int64_t gi = 0; gi < groups; ++gi) {
          const auto first_col = mb.salient_cols.begin() + gi * mb.salient;
          for (int i = 0; i < mb.salient; ++i) {
            const int c = first_col[i];
            if (std::find(first_col, first_col + i, c) != first_col + i) continue;
            y[cell] +=
                golden::decode(ops.act, act_at(r, c)) *
                mb.salient_w[(size_t(col) * size_t(groups) + size_t(gi)) * size_t(mb.salient) +
                             size_t(i)];
          }
        }
        ++flushes[cell];
      }
    }
  }

  // ---- MMA path -------------------------------------------------------------------------------
  void mma_op(const Instr& in, const Affine::Point& p, int64_t warp_id) {
    ++stats.mmas;
    if (!mma) bad(in, p, "mma in a LUT GEMM");
    in_gemm_kernel(in, p);
    const MmaOp& op = in.mma;
    const golden::LmmaShape& sh = op.shape;
    const int64_t m0 = in.m.eval(p), n0 = in.n.eval(p), k0 = in.k.eval(p);
    if (m0 < 0 || n0 < 0 || k0 < 0) bad(in, p, "negative coordinates");
    if (sh.m < 1 || sh.n < 1 || sh.k < 1) bad(in, p, "empty mma shape");
    if (!golden::converts_exactly(ops.act, op.a) || !golden::converts_exactly(ops.act, op.b)) {
      bad(in, p,
          "mma operands " + std::string(golden::dtype_name(op.a)) + " x " +
              std::string(golden::dtype_name(op.b)) + " cannot hold the GEMM's " +
              std::string(golden::dtype_name(ops.act)) + " values exactly");
    }
    if (op.acc != acc_dtype) {
      bad(in, p,
          "mma accumulates in " + std::string(golden::dtype_name(op.acc)) + ", the GEMM in " +
              std::string(golden::dtype_name(acc_dtype)));
    }
    if (k0 >= k) return;  // predicated off: K padding of the last tile
    if (k0 % sh.k != 0) bad(in, p, "mma starts inside an instruction K chunk");
    const int64_t real_k = std::min<int64_t>(sh.k, k - k0);
    const int sl = slice_at(in, p, k0);
    uint32_t* slice_acc = &acc[size_t(sl) * cells];
    // Rows of the stacked, per-batch padded M; the tile must stay inside one batch.
    int64_t batch = -1;
    for (int64_t i = 0; i < sh.m; ++i) {
      const int64_t r = m0 + i, b = r / mp;
      if (r % mp >= g.m || b >= g.batch) continue;
      if (batch >= 0 && b != batch) bad(in, p, "mma tile spans two batches");
      batch = b;
    }
    if (batch < 0) return;  // every row is padding
    const uint32_t za = golden::encode(op.a, 0.0), zb = golden::encode(op.b, 0.0);
    std::vector<uint32_t> a(size_t(sh.m) * sh.k, za), w(size_t(sh.n) * sh.k, zb);
    std::vector<uint32_t> c(size_t(sh.m) * sh.n, golden::encode(acc_dtype, 0.0));
    auto cell_of = [&](int64_t i, int64_t j) -> int64_t {
      const int64_t r = m0 + i, col = n0 + j;
      if (r % mp >= g.m || r / mp >= g.batch || col >= n) return -1;
      return ((r / mp) * g.m + r % mp) * n + col;
    };
    for (int64_t i = 0; i < sh.m; ++i) {
      const int64_t r = m0 + i;
      if (r % mp >= g.m || r / mp >= g.batch) continue;
      const int64_t arow = (r / mp) * g.m + r % mp;
      for (int64_t j = 0; j < real_k; ++j) {
        a[size_t(i * sh.k + j)] = golden::convert(op.a, ops.act, act_at_mma(arow, k0 + j));
      }
    }
    for (int64_t j = 0; j < sh.n; ++j) {
      if (n0 + j >= n) continue;
      const int64_t brow = batch * n + n0 + j;
      for (int64_t kk = 0; kk < real_k; ++kk) {
        w[size_t(j * sh.k + kk)] =
            golden::convert(op.b, ops.act, b_vals[size_t(brow * k + k0 + kk)]);
      }
    }
    for (int64_t i = 0; i < sh.m; ++i) {
      for (int64_t j = 0; j < sh.n; ++j) {
        const int64_t cell = cell_of(i, j);
        if (cell >= 0) c[size_t(i * sh.n + j)] = slice_acc[cell];
      }
    }
    const std::vector<uint32_t> o =
        golden::mac_dot(sh, golden::MacType{op.a, op.b, acc_dtype, acc_dtype}, a, w, c);
    for (int64_t i = 0; i < sh.m; ++i) {
      for (int64_t j = 0; j < sh.n; ++j) {
        const int64_t cell = cell_of(i, j);
        if (cell < 0) continue;
        own(in, p, sl, size_t(cell), warp_id);
        slice_acc[cell] = o[size_t(i * sh.n + j)];
        consumed[size_t(cell)] += real_k;
      }
    }
  }
  uint32_t act_at_mma(int64_t row, int64_t c) const {
    return ops.acts[size_t(row * k + c)] & golden::dtype_mask(ops.act);
  }

  void step(const Instr& in, const Affine::Point& p, int64_t warp_id) {
    ++stats.instructions;
    switch (in.op) {
      case Opcode::kPrecompute:
        precompute(in, p);
        break;
      case Opcode::kLmma:
        lmma(in, p, warp_id);
        break;
      case Opcode::kDequant:
        dequant(in, p, warp_id);
        break;
      case Opcode::kMma:
        mma_op(in, p, warp_id);
        break;
      default:
        break;
    }
  }

  std::vector<double> result() const {
    const int64_t groups = mma ? 0 : ceil_div(k, group);
    const int64_t want_flushes = mma ? 0 : groups * bases + (salient > 0 ? 1 : 0);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t col = 0; col < n; ++col) {
        const size_t i = size_t(r * n + col);
        if (consumed[i] != k * bases || flushes[i] != want_flushes) {
          throw std::runtime_error(
              "interpreter: output (" + std::to_string(r) + "," + std::to_string(col) +
              ") consumed " + std::to_string(consumed[i]) + " of " + std::to_string(k * bases) +
              " K elements (all bases) and had " + std::to_string(flushes[i]) + " of " +
              std::to_string(want_flushes) + " epilogues");
        }
      }
    }
    if (!mma) return y;
    // The slices' accumulators added in slice order (golden/mac.h), then converted.
    std::vector<double> o(cells);
    const DType out = mma_out_dtype(g.act);
    for (size_t i = 0; i < cells; ++i) {
      uint32_t sum = acc[i];
      for (int sl = 1; sl < nslices; ++sl) {
        const uint32_t part = acc[size_t(sl) * cells + i];
        sum = golden::is_int(acc_dtype) ? golden::int_add(acc_dtype, sum, part)
                                        : golden::fp_add(acc_dtype, sum, part);
      }
      o[i] = golden::decode(out, golden::convert(out, acc_dtype, sum));
    }
    return o;
  }

  const Trace& t;
  size_t gk = 0, first = 0, cur = 0;
  GemmOperands ops;
  bool upstream_tables = false;
  GemmRecord g;
  bool mma = false, multi = false;
  hw::TensorCoreConfig core;
  int kg = 4;
  int bases = 1;
  int64_t salient = 0;
  int64_t rows = 0, n = 0, k = 0, group = 0, lut_groups = 0, mp = 1;
  size_t cells = 0;
  golden::KSlices slicing;  // the kernel's sliced K (kernel_k_slices)
  int nslices = 1;
  std::vector<PackedWeights> packed;
  std::vector<std::vector<uint32_t>> tables;
  std::vector<uint32_t> acc;
  DType acc_dtype = DType::kInt32;
  std::vector<uint32_t> b_vals;
  // consumed, flushes, epilogue_owner: per output; owner per (slice, output); acc and
  // since_flush per (basis, slice, output).
  std::vector<int64_t> consumed, since_flush, flushes, owner, epilogue_owner;
  std::vector<double> y;
  ExecStats stats;
  LmmaUnit* unit = nullptr;
};

GemmExecutor::GemmExecutor(const Trace& trace, size_t gemm_kernel, GemmOperands ops,
                           bool upstream_tables)
    : s_(std::make_unique<State>(trace, gemm_kernel, std::move(ops), upstream_tables)) {
  s_->cur = s_->first;
}
GemmExecutor::~GemmExecutor() = default;
GemmExecutor::GemmExecutor(GemmExecutor&&) noexcept = default;
GemmExecutor& GemmExecutor::operator=(GemmExecutor&&) noexcept = default;

size_t GemmExecutor::first_kernel() const {
  return s_->first;
}
size_t GemmExecutor::gemm_kernel() const {
  return s_->gk;
}
void GemmExecutor::begin_kernel(size_t kernel) {
  if (!covers(kernel)) {
    throw std::runtime_error("interpreter: kernel " + std::to_string(kernel) +
                             " does not belong to GEMM kernel " + s_->t.kernels[s_->gk].name);
  }
  s_->cur = kernel;
  ++s_->stats.kernels;
}
void GemmExecutor::step(const Instr& in, const Affine::Point& p, int64_t warp_id) {
  s_->step(in, p, warp_id);
}
std::vector<double> GemmExecutor::result() const {
  return s_->result();
}
const ExecStats& GemmExecutor::stats() const {
  return s_->stats;
}
ExecStats& GemmExecutor::stats() {
  return s_->stats;
}
void GemmExecutor::set_lmma_unit(LmmaUnit* unit) {
  s_->unit = unit;
}

std::vector<size_t> gemm_kernels(const Trace& trace) {
  std::vector<size_t> out;
  for (size_t i = 0; i < trace.kernels.size(); ++i) {
    if (trace.kernels[i].gemm.m > 0) out.push_back(i);
  }
  return out;
}

std::vector<double> execute_gemm(const Trace& trace, size_t gemm_kernel, const GemmOperands& ops,
                                 ExecStats* stats, bool upstream_tables) {
  GemmExecutor ex(trace, gemm_kernel, ops, upstream_tables);
  for (size_t ki = ex.first_kernel(); ki <= ex.gemm_kernel(); ++ki) {
    const Kernel& k = trace.kernels[ki];
    ex.begin_kernel(ki);
    // A block's warps meet at every bar (a sliced-K kernel's slices exchange partial sums
    // through shared memory): each warp runs up to its next bar, warp by warp, then the next
    // phase, as far as the block's program reaches.
    std::vector<WarpStream> warps;
    // Blocks in launch order: row = bz * grid_y + by.
    for (int64_t row = 0; row < k.grid_y * k.grid_z; ++row) {
      const int64_t by = row % k.grid_y, bz = row / k.grid_y;
      for (int64_t bx = 0; bx < k.grid_x; ++bx) {
        warps.clear();
        for (int64_t wy = 0; wy < k.warps_y; ++wy) {
          for (int64_t wx = 0; wx < k.warps_x; ++wx) {
            ++ex.stats().warps;
            warps.emplace_back(&k.program, bx, by, wx, wy, bz);
          }
        }
        const int64_t first_id = (row * k.grid_x + bx) * k.warps_per_block();
        for (bool running = true; running;) {
          running = false;
          for (size_t w = 0; w < warps.size(); ++w) {
            while (const Instr* in = warps[w].next()) {
              ex.step(*in, warps[w].point(), first_id + int64_t(w));
              if (in->op == Opcode::kBarrier) {
                running = true;
                break;
              }
            }
          }
        }
      }
    }
  }
  std::vector<double> y = ex.result();
  if (stats) *stats = ex.stats();
  return y;
}

GemmOperands random_gemm_operands(const GemmRecord& g, uint32_t seed) {
  if (g.m < 1) throw InputError("trace has no GEMM kernel (gemm record) to run");
  const bool mma = g.path == GemmPath::kMma;
  const int64_t batch = std::max<int64_t>(g.batch, 1);
  std::mt19937 rng(seed);
  auto random_values = [&](std::vector<uint32_t>& v) {
    if (golden::is_int(g.act)) {
      std::uniform_int_distribution<int> d(-128, 127);
      for (auto& x : v) x = golden::encode(g.act, d(rng));
    } else {
      std::normal_distribution<double> d(0.0, 1.0);
      for (auto& x : v) x = golden::encode(g.act, d(rng));
    }
  };
  GemmOperands ops;
  ops.act = g.act;
  ops.m = g.m;
  ops.batch = batch;
  ops.acts.resize(size_t(batch * g.m * g.k));
  random_values(ops.acts);
  if (mma && g.wbits == 0) {
    ops.b.resize(size_t(batch * g.n * g.k));
    random_values(ops.b);
    return ops;
  }
  std::normal_distribution<double> nd(0.0, 1.0);
  std::vector<double> w(size_t(batch * g.n * g.k));
  for (auto& x : w) x = nd(rng);
  if (!mma && g.bases > 0) {
    ops.multi_basis = golden::fit_multi_basis_binary(w, int(g.n), int(g.k), g.bases, int(g.group),
                                                     int(g.salient));
    return ops;
  }
  const int group = int(g.group <= 0 || g.group >= g.k ? 0 : g.group);
  if (mma) {
    // Unsigned codes with min-max scales and integer zero points; the scales as the fp16 values
    // the kernel's scale tensor holds.
    ops.weights = golden::quantize_weights(golden::WeightKind::kUInt, g.wbits, group, w,
                                           int(batch * g.n), int(g.k));
    for (auto& s : ops.weights.scales) {
      s = golden::decode(DType::kFp16, golden::encode(DType::kFp16, s));
    }
    return ops;
  }
  const auto kind = g.wbits == 1 ? golden::WeightKind::kBinary : golden::WeightKind::kSInt;
  ops.weights = golden::quantize_weights(kind, g.wbits, group, w, int(batch * g.n), int(g.k));
  return ops;
}

std::vector<double> reference_gemm(const GemmRecord& g, const GemmOperands& ops, int k_group,
                                   bool quantized_tables, const golden::KSlices& slices) {
  if (g.path == GemmPath::kMma) {
    const DType acc = mma_acc_dtype(ops.act), out = mma_out_dtype(ops.act);
    const std::vector<uint32_t> b =
        g.wbits == 0 ? ops.b : golden::dequantize_weights(ops.weights, ops.act);
    const size_t a_slice = size_t(g.m * g.k), b_slice = size_t(g.n * g.k);
    std::vector<double> y;
    y.reserve(size_t(ops.batch * g.m * g.n));
    for (int64_t bi = 0; bi < ops.batch; ++bi) {
      const std::vector<uint32_t> a(ops.acts.begin() + ptrdiff_t(bi * a_slice),
                                    ops.acts.begin() + ptrdiff_t((bi + 1) * a_slice));
      const std::vector<uint32_t> w(b.begin() + ptrdiff_t(bi * b_slice),
                                    b.begin() + ptrdiff_t((bi + 1) * b_slice));
      const std::vector<uint32_t> o =
          golden::mac_gemm(golden::MacType{ops.act, ops.act, acc, out}, k_group, a, int(g.m), w,
                           int(g.n), int(g.k), slices);
      for (uint32_t v : o) y.push_back(golden::decode(out, v));
    }
    return y;
  }
  auto cfg = golden::default_lut_gemm_config(ops.act, k_group, quantized_tables);
  cfg.slices = slices;
  if (g.bases > 0) {
    if (g.n > 4096) {
      throw InputError("check: multi-basis GEMMs with N > 4096 are not checked (golden limit)");
    }
    return golden::lut_gemm(cfg, ops.acts, int(ops.m), ops.multi_basis);
  }
  // golden::lut_gemm runs one LMMA over all N columns, which it caps: slice the output columns.
  // A batch's GEMMs one at a time: GEMM b's rows of A and its N weight rows from row b * N.
  constexpr int64_t kSlice = 4096;
  const auto& w = ops.weights;
  const int64_t n = w.n / ops.batch;
  const size_t gs = size_t(w.groups());
  std::vector<double> ref(size_t(ops.batch * ops.m * n));
  for (int64_t bi = 0; bi < ops.batch; ++bi) {
    const std::vector<uint32_t> a(ops.acts.begin() + ptrdiff_t(bi * ops.m * w.k),
                                  ops.acts.begin() + ptrdiff_t((bi + 1) * ops.m * w.k));
    for (int64_t n0 = 0; n0 < n; n0 += kSlice) {
      const int64_t n1 = std::min<int64_t>(n, n0 + kSlice), w0 = bi * n + n0, w1 = bi * n + n1;
      golden::QuantizedWeights part = w;
      part.n = int(n1 - n0);
      part.codes.assign(w.codes.begin() + w0 * w.k, w.codes.begin() + w1 * w.k);
      part.scales.assign(w.scales.begin() + ptrdiff_t(w0 * gs),
                         w.scales.begin() + ptrdiff_t(w1 * gs));
      part.zeros.assign(w.zeros.begin() + ptrdiff_t(w0 * gs), w.zeros.begin() + ptrdiff_t(w1 * gs));
      const std::vector<double> y_part = golden::lut_gemm(cfg, a, int(ops.m), part);
      for (int64_t r = 0; r < ops.m; ++r) {
        for (int64_t c = n0; c < n1; ++c) {
          ref[size_t((bi * ops.m + r) * n + c)] = y_part[size_t(r * (n1 - n0) + (c - n0))];
        }
      }
    }
  }
  return ref;
}

GemmCheck compare_gemm(const std::vector<double>& y, const std::vector<double>& ref) {
  if (y.size() != ref.size()) {
    throw std::runtime_error("check: " + std::to_string(y.size()) + " outputs, reference has " +
                             std::to_string(ref.size()));
  }
  GemmCheck c;
  c.outputs = y.size();
  for (size_t i = 0; i < y.size(); ++i) {
    if (std::memcmp(&y[i], &ref[i], sizeof(double)) != 0) ++c.mismatches;
    const double d = std::abs(y[i] - ref[i]);
    if (d > c.max_abs_diff) c.max_abs_diff = d;
  }
  return c;
}

GemmCheck check_gemm_trace(const Trace& trace, uint32_t seed) {
  const std::vector<size_t> gemms = gemm_kernels(trace);
  if (gemms.empty()) throw InputError("trace has no GEMM kernel (gemm record) to run");
  if (gemms.size() > 1) {
    throw InputError("trace has " + std::to_string(gemms.size()) +
                     " GEMM kernels: check them one by one (check_trace_gemms)");
  }
  bool precompute = false;
  for (const auto& k : trace.kernels) precompute = precompute || has_precompute(k);
  const Kernel& gk = trace.kernels[gemms[0]];
  const ReferenceParams rp = reference_params(trace, gk);
  const GemmOperands ops = random_gemm_operands(gk.gemm, seed);
  ExecStats stats;
  const std::vector<double> y = execute_gemm(trace, gemms[0], ops, &stats, !precompute);
  GemmCheck c =
      compare_gemm(y, reference_gemm(gk.gemm, ops, rp.k_group, rp.quantized_tables, rp.slices));
  c.stats = stats;
  return c;
}

std::vector<KernelCheck> check_trace_gemms(const Trace& trace, uint32_t seed, double max_macs,
                                           const GemmProgress& progress) {
  std::vector<const Kernel*> distinct;
  std::vector<GemmRecord> seen;
  for (const auto& k : trace.kernels) {
    if (k.gemm.m <= 0) continue;
    if (std::find(seen.begin(), seen.end(), k.gemm) != seen.end()) continue;
    seen.push_back(k.gemm);
    distinct.push_back(&k);
  }
  std::vector<KernelCheck> out;
  for (const Kernel* k : distinct) {
    KernelCheck kc;
    kc.kernel = k->name;
    if (gemm_macs(k->gemm) > max_macs) {
      kc.skipped = true;
    } else {
      Trace one;
      one.gpu = trace.gpu;
      one.cores = trace.cores;
      one.kernels = {*k};
      kc.check = check_gemm_trace(one, seed);
    }
    out.push_back(kc);
    if (progress) progress(out.back(), out.size() - 1, distinct.size());
  }
  return out;
}

TraceExecutor::TraceExecutor(const Trace& trace, uint32_t seed, double max_macs)
    : trace_(trace), seed_(seed), max_macs_(max_macs) {}
TraceExecutor::~TraceExecutor() = default;

void TraceExecutor::begin_kernel(size_t kernel) {
  if (active_ && !active_->covers(kernel)) close();
  if (!active_) {
    size_t gk = kernel;
    while (gk < trace_.kernels.size() && trace_.kernels[gk].gemm.m <= 0) ++gk;
    if (gk == trace_.kernels.size() || first_kernel_of(trace_, gk) > kernel) return;
    const Kernel& k = trace_.kernels[gk];
    if (gemm_macs(k.gemm) > max_macs_) {
      if (kernel == gk) checks_.push_back({k.name, true, {}});
      return;
    }
    active_ops_ = random_gemm_operands(k.gemm, seed_);
    // Tables the GEMM reads with no precompute kernel before it come from a fused producer; so
    // do they when its precompute kernels did not run (the GEMM kernel simulated alone).
    const bool upstream = first_kernel_of(trace_, gk) == gk || kernel == gk;
    active_ = std::make_unique<GemmExecutor>(trace_, gk, active_ops_, upstream);
    active_->set_lmma_unit(unit_);
  }
  active_->begin_kernel(kernel);
}

void TraceExecutor::close() {
  if (!active_) return;
  const Kernel& k = trace_.kernels[active_->gemm_kernel()];
  const std::vector<double> y = active_->result();
  const ReferenceParams rp = reference_params(trace_, k);
  KernelCheck kc;
  kc.kernel = k.name;
  kc.check = compare_gemm(
      y, reference_gemm(k.gemm, active_ops_, rp.k_group, rp.quantized_tables, rp.slices));
  kc.check.stats = active_->stats();
  checks_.push_back(kc);
  active_.reset();
}

std::vector<KernelCheck> TraceExecutor::finish() {
  close();
  return std::move(checks_);
}

}  // namespace ltc::traces
