#include "compiler/interpreter.h"

#include "compiler/packing.h"
#include "model/golden/error.h"
#include "model/golden/fp.h"
#include "model/golden/gemm.h"
#include "model/golden/lmma.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>

namespace ltc::compiler {
namespace {

using golden::DType;
using traces::Instr;
using traces::Opcode;

class GemmMachine {
 public:
  GemmMachine(const traces::Trace& t, const GemmOperands& ops, bool upstream_tables)
      : t_(t), ops_(ops), upstream_tables_(upstream_tables) {
    const traces::Kernel* gk = nullptr;
    for (const auto& k : t.kernels) {
      if (k.gemm.m > 0) gk = &k;
    }
    if (!gk) throw InputError("interpreter: the trace has no LUT GEMM kernel (gemm record)");
    const traces::GemmRecord& g = gk->gemm;
    multi_ = g.bases > 0;
    const int64_t wn = multi_ ? ops.multi_basis.n : ops.weights.n;
    const int64_t wk = multi_ ? ops.multi_basis.k : ops.weights.k;
    const int64_t wgroup = multi_ ? ops.multi_basis.group : ops.weights.group_size;
    const int wbits = multi_ ? 1 : ops.weights.wbits;
    if (g.m != ops.m || g.n != wn || g.k != wk || g.wbits != wbits ||
        g.group != std::min<int64_t>(wgroup, wk) || g.act != ops.act ||
        (multi_ && (g.bases != ops.multi_basis.bases || g.salient != ops.multi_basis.salient))) {
      throw InputError("interpreter: trace computes M=" + std::to_string(g.m) +
                       " N=" + std::to_string(g.n) + " K=" + std::to_string(g.k) +
                       " W=" + std::to_string(g.wbits) + " group=" + std::to_string(g.group) +
                       " bases=" + std::to_string(g.bases) + ", operands differ");
    }
    if (ops.acts.size() != size_t(ops.m * wk)) throw InputError("interpreter: acts size");
    core_ = t.cores.at(size_t(gk->tiles.core)).config;
    kg_ = core_.shape.k;
    m_ = g.m;
    n_ = g.n;
    k_ = g.k;
    group_ = g.group;
    bases_ = multi_ ? g.bases : 1;
    salient_ = multi_ ? g.salient : 0;
    if (multi_) {
      // Each basis' sign planes packed as 1-bit codes (1 = +1).
      const auto& mb = ops.multi_basis;
      for (int j = 0; j < bases_; ++j) {
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
        packed_.push_back(pack_weights(signs, kg_, core_.shape.n));
      }
    } else {
      packed_.push_back(pack_weights(ops.weights, kg_, core_.shape.n));
    }
    lut_groups_ = (k_ + kg_ - 1) / kg_;
    tables_.resize(size_t(bases_ * m_ * lut_groups_));
    cells_ = size_t(m_ * n_);
    consumed_.assign(cells_, 0);
    since_flush_.assign(size_t(bases_) * cells_, 0);
    flushes_.assign(cells_, 0);
    owner_.assign(cells_, -1);
    y_.assign(cells_, 0.0);
  }

  std::vector<double> run(InterpretStats* stats) {
    for (const auto& k : t_.kernels) {
      ++stats_.kernels;
      for (int64_t by = 0; by < k.grid_y; ++by) {
        for (int64_t bx = 0; bx < k.grid_x; ++bx) {
          for (int64_t wy = 0; wy < k.warps_y; ++wy) {
            for (int64_t wx = 0; wx < k.warps_x; ++wx) {
              ++stats_.warps;
              const int64_t warp_id = ((by * k.grid_x + bx) * k.warps_y + wy) * k.warps_x + wx;
              traces::expand_warp(
                  k, bx, by, wx, wy, [&](const Instr& in, const traces::Affine::Point& p) {
                    ++stats_.instructions;
                    where_ = [&] {
                      return "kernel " + k.name + " block (" + std::to_string(bx) + "," +
                             std::to_string(by) + ") warp (" + std::to_string(wx) + "," +
                             std::to_string(wy) + "): " + in.str();
                    };
                    step(in, p, warp_id);
                  });
            }
          }
        }
      }
    }
    const int64_t groups = (k_ + group_ - 1) / group_;
    const int64_t want_flushes = groups * bases_ + (salient_ > 0 ? 1 : 0);
    for (int64_t r = 0; r < m_; ++r) {
      for (int64_t c = 0; c < n_; ++c) {
        const size_t i = size_t(r * n_ + c);
        if (consumed_[i] != k_ * bases_ || flushes_[i] != want_flushes) {
          throw std::runtime_error(
              "interpreter: output (" + std::to_string(r) + "," + std::to_string(c) +
              ") consumed " + std::to_string(consumed_[i]) + " of " + std::to_string(k_ * bases_) +
              " K elements (all bases) and had " + std::to_string(flushes_[i]) + " of " +
              std::to_string(want_flushes) + " epilogues");
        }
      }
    }
    if (stats) *stats = stats_;
    return y_;
  }

 private:
  [[noreturn]] void bad(const std::string& why) const {
    throw std::runtime_error("interpreter: " + where_() + ": " + why);
  }

  uint32_t act_at(int64_t r, int64_t c) const {
    return c < k_ ? ops_.acts[size_t(r * k_ + c)] & golden::dtype_mask(ops_.act)
                  : golden::encode(ops_.act, 0.0);
  }
  // The activation a basis' table is built from: scale fusion multiplies by the column scale;
  // salient columns are zero (they go through the dense branch).
  uint32_t table_act(int64_t r, int64_t c, int basis) const {
    if (!multi_ || c >= k_) return act_at(r, c);
    const auto& mb = ops_.multi_basis;
    if (mb.is_salient(int(c))) return golden::encode(ops_.act, 0.0);
    return golden::encode(ops_.act, golden::decode(ops_.act, act_at(r, c)) *
                                        mb.col_scales[size_t(basis) * mb.k + size_t(c)]);
  }

  void step(const Instr& in, const traces::Affine::Point& p, int64_t warp_id) {
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
      default:
        break;
    }
  }

  std::vector<uint32_t>& table(int basis, int64_t r, int64_t lg) {
    return tables_[size_t((basis * m_ + r) * lut_groups_ + lg)];
  }
  std::vector<uint32_t> build_table(int64_t r, int64_t c, int basis, DType table_dtype) const {
    std::vector<uint32_t> acts(static_cast<size_t>(kg_));
    for (int i = 0; i < kg_; ++i) acts[size_t(i)] = table_act(r, c + i, basis);
    return golden::precompute_half_table(acts.data(), ops_.act, kg_, table_dtype);
  }

  void precompute(const Instr& in, const traces::Affine::Point& p) {
    const int64_t r = in.m.eval(p), k0 = in.k.eval(p);
    if (in.k_group != kg_) bad("precompute K differs from the tensor core's");
    if (in.act != ops_.act) bad("precompute reads activations of another dtype");
    if (k0 % kg_ != 0) bad("precompute starts inside a LUT group");
    if (r < 0 || k0 < 0) bad("negative coordinates");
    if (int64_t(in.basis) >= bases_) bad("basis out of range");
    if (r >= m_) return;  // padding rows
    for (int64_t c = k0; c < std::min<int64_t>(k0 + in.cols, k_); c += kg_) {
      auto& slot = table(int(in.basis), r, c / kg_);
      if (!slot.empty()) {
        bad("table (" + std::to_string(r) + ", k " + std::to_string(c) + ") precomputed twice");
      }
      slot = build_table(r, c, int(in.basis), in.table);
      ++stats_.tables;
    }
  }

  void own(size_t cell, int64_t warp_id) {
    if (owner_[cell] < 0) owner_[cell] = warp_id;
    if (owner_[cell] != warp_id) bad("output element computed by two warps");
  }

  // The unquantized table dtype the precompute builds (quantization happens at use).
  static DType table_dtype(const traces::LmmaOp& op) {
    return golden::is_int(op.act) ? DType::kInt16 : op.act;
  }
  DType acc_dtype(const traces::LmmaOp& op) const {
    return op.quantized_table ? DType::kFp32 : op.acc;
  }
  uint32_t& acc_at(int basis, size_t cell) { return acc_[size_t(basis) * cells_ + cell]; }

  void lmma(const Instr& in, const traces::Affine::Point& p, int64_t warp_id) {
    ++stats_.lmmas;
    const traces::LmmaOp& op = in.lmma;
    const int64_t m0 = in.m.eval(p), n0 = in.n.eval(p), k0 = in.k.eval(p);
    const int basis = int(in.basis);
    if (m0 < 0 || n0 < 0 || k0 < 0) bad("negative coordinates");
    if (basis >= bases_) bad("basis out of range");
    if (k0 >= k_) return;  // predicated off: K padding of the last tile
    if (k0 % kg_ != 0) bad("lmma starts inside a LUT group");
    if (op.wbits != packed_[size_t(basis)].wbits) bad("lmma planes differ from the weights'");
    if (acc_.empty()) {
      acc_dtype_ = acc_dtype(op);
      acc_.assign(size_t(bases_) * cells_, golden::encode(acc_dtype_, 0.0));
    }
    const int64_t lg = k0 / kg_;
    const int in_n = op.shape.n;
    std::vector<uint8_t> planes(size_t(op.wbits * in_n), 0);
    for (int b = 0; b < op.wbits; ++b) {
      for (int j = 0; j < in_n; ++j) {
        if (n0 + j < n_) {
          planes[size_t(b * in_n + j)] = uint8_t(packed_[size_t(basis)].pattern(n0 + j, lg, b));
        }
      }
    }
    const golden::LmmaShape row_shape{1, in_n, op.shape.k};
    const int64_t real_k = std::min<int64_t>(kg_, k_ - k0);
    for (int64_t r = m0; r < std::min<int64_t>(m0 + op.shape.m, m_); ++r) {
      auto& half = table(basis, r, lg);
      if (half.empty() && upstream_tables_) {
        // Tables of a fused producer outside this trace: build them from the activations.
        half = build_table(r, k0, basis, table_dtype(op));
        ++stats_.tables;
      }
      if (half.empty()) {
        bad("reads table (" + std::to_string(r) + ", k " + std::to_string(k0) +
            ") before it was precomputed");
      }
      std::vector<uint32_t> c(size_t(in_n), golden::encode(acc_dtype_, 0.0));
      for (int j = 0; j < in_n && n0 + j < n_; ++j) {
        c[size_t(j)] = acc_at(basis, size_t(r * n_ + n0 + j));
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
      for (int j = 0; j < in_n && n0 + j < n_; ++j) {
        const size_t cell = size_t(r * n_ + n0 + j);
        own(cell, warp_id);
        acc_at(basis, cell) = o[size_t(j)];
        consumed_[cell] += real_k;
        since_flush_[size_t(basis) * cells_ + cell] += real_k;
      }
    }
  }

  void dequant(const Instr& in, const traces::Affine::Point& p, int64_t warp_id) {
    ++stats_.dequants;
    const int64_t m0 = in.m.eval(p), n0 = in.n.eval(p);
    const int64_t groups = (k_ + group_ - 1) / group_;
    const int basis = int(in.basis);
    if (basis >= bases_) bad("basis out of range");
    if (in.salient) {
      salient_branch(in, m0, n0, groups, warp_id);
      return;
    }
    if (in.row_scale != multi_)
      bad(multi_ ? "multi-basis dequant needs rowscale=1" : "rowscale on INT weights");
    const int64_t g = in.g.eval(p);
    if (g < 0 || g >= groups) bad("quantization group out of range");
    const int64_t c0 = g * group_, c1 = std::min(k_, c0 + group_);
    const double bias = multi_ ? 0.0 : 0.5 * (std::ldexp(1.0, ops_.weights.wbits) - 1.0);
    for (int64_t r = std::max<int64_t>(m0, 0); r < std::min<int64_t>(m0 + in.rows, m_); ++r) {
      double a_g = 0.0;
      if (!multi_) {
        for (int64_t c = c0; c < c1; ++c) a_g += golden::decode(ops_.act, act_at(r, c));
      }
      for (int64_t col = std::max<int64_t>(n0, 0); col < std::min<int64_t>(n0 + in.cols, n_);
           ++col) {
        const size_t cell = size_t(r * n_ + col);
        own(cell, warp_id);
        int64_t& since = since_flush_[size_t(basis) * cells_ + cell];
        if (since != c1 - c0) {
          bad("output (" + std::to_string(r) + "," + std::to_string(col) + ") dequantizes group " +
              std::to_string(g) + " after " + std::to_string(since) + " of " +
              std::to_string(c1 - c0) + " columns");
        }
        if (flushes_[cell] != g * bases_ + basis) bad("epilogues out of order (group, basis)");
        const double s = acc_.empty() ? 0.0 : golden::decode(acc_dtype_, acc_at(basis, cell));
        if (multi_) {
          const auto& mb = ops_.multi_basis;
          y_[cell] +=
              mb.row_scales[(size_t(basis) * mb.n + size_t(col)) * size_t(groups) + size_t(g)] * s;
        } else {
          const auto& w = ops_.weights;
          y_[cell] +=
              w.scale(int(col), int(g)) * ((0.5 * s + bias * a_g) - w.zero(int(col), int(g)) * a_g);
        }
        if (!acc_.empty()) acc_at(basis, cell) = golden::encode(acc_dtype_, 0.0);
        since = 0;
        ++flushes_[cell];
      }
    }
  }

  // FluxBin's dense branch, after every group of every basis: y += a_c * w_salient, groups
  // ascending, a repeated index (tiny last group) counted once — golden::lut_gemm's order.
  void salient_branch(const Instr& in, int64_t m0, int64_t n0, int64_t groups, int64_t warp_id) {
    if (!multi_ || salient_ == 0) bad("salient branch without salient columns");
    const auto& mb = ops_.multi_basis;
    for (int64_t r = std::max<int64_t>(m0, 0); r < std::min<int64_t>(m0 + in.rows, m_); ++r) {
      for (int64_t col = std::max<int64_t>(n0, 0); col < std::min<int64_t>(n0 + in.cols, n_);
           ++col) {
        const size_t cell = size_t(r * n_ + col);
        own(cell, warp_id);
        if (flushes_[cell] != groups * bases_) bad("salient branch before every group's epilogue");
        for (int64_t g = 0; g < groups; ++g) {
          const auto first = mb.salient_cols.begin() + g * mb.salient;
          for (int i = 0; i < mb.salient; ++i) {
            const int c = first[i];
            if (std::find(first, first + i, c) != first + i) continue;
            y_[cell] +=
                golden::decode(ops_.act, act_at(r, c)) *
                mb.salient_w[(size_t(col) * size_t(groups) + size_t(g)) * size_t(mb.salient) +
                             size_t(i)];
          }
        }
        ++flushes_[cell];
      }
    }
  }

  const traces::Trace& t_;
  const GemmOperands& ops_;
  bool upstream_tables_ = false;
  bool multi_ = false;
  hw::TensorCoreConfig core_;
  int kg_ = 4;
  int bases_ = 1;
  int64_t salient_ = 0;
  int64_t m_ = 0, n_ = 0, k_ = 0, group_ = 0, lut_groups_ = 0;
  size_t cells_ = 0;
  std::vector<PackedWeights> packed_;
  std::vector<std::vector<uint32_t>> tables_;
  std::vector<uint32_t> acc_;
  DType acc_dtype_ = DType::kInt32;
  std::vector<int64_t> consumed_, since_flush_, flushes_, owner_;
  std::vector<double> y_;
  InterpretStats stats_;
  std::function<std::string()> where_;
};

}  // namespace

std::vector<double> interpret_gemm(const traces::Trace& trace, const GemmOperands& ops,
                                   InterpretStats* stats, bool upstream_tables) {
  GemmMachine machine(trace, ops, upstream_tables);
  return machine.run(stats);
}

}  // namespace ltc::compiler

namespace ltc::compiler {

GemmOperands random_gemm_operands(const traces::GemmRecord& g, uint32_t seed) {
  if (g.m < 1) throw InputError("trace has no LUT GEMM kernel to run");
  std::mt19937 rng(seed);
  GemmOperands ops;
  ops.act = g.act;
  ops.m = g.m;
  ops.acts.resize(size_t(g.m * g.k));
  if (golden::is_int(g.act)) {
    std::uniform_int_distribution<int> d(-128, 127);
    for (auto& x : ops.acts) x = golden::encode(g.act, d(rng));
  } else {
    std::normal_distribution<double> d(0.0, 1.0);
    for (auto& x : ops.acts) x = golden::encode(g.act, d(rng));
  }
  std::normal_distribution<double> nd(0.0, 1.0);
  std::vector<double> w(size_t(g.n * g.k));
  for (auto& x : w) x = nd(rng);
  if (g.bases > 0) {
    ops.multi_basis = golden::fit_multi_basis_binary(w, int(g.n), int(g.k), g.bases, int(g.group),
                                                     int(g.salient));
    return ops;
  }
  const auto kind = g.wbits == 1 ? golden::WeightKind::kBinary : golden::WeightKind::kSInt;
  ops.weights = golden::quantize_weights(kind, g.wbits, int(g.group == g.k ? 0 : g.group), w,
                                         int(g.n), int(g.k));
  return ops;
}

GemmCheck check_gemm_trace(const traces::Trace& trace, uint32_t seed) {
  const traces::Kernel* gk = nullptr;
  int gemm_kernels = 0;
  bool precompute = false;
  for (const auto& k : trace.kernels) {
    if (k.gemm.m > 0) {
      gk = &k;
      ++gemm_kernels;
    }
    for (const auto& in : k.program) precompute = precompute || in.op == Opcode::kPrecompute;
  }
  if (!gk) throw InputError("trace has no LUT GEMM kernel (gemm record) to run");
  if (gemm_kernels > 1) {
    throw InputError("trace has " + std::to_string(gemm_kernels) +
                     " LUT GEMM kernels: check them one by one (check_trace_gemms)");
  }
  bool quantized = false;
  for (const auto& in : gk->program) {
    if (in.op == Opcode::kLmma) quantized = in.lmma.quantized_table;
  }
  const GemmOperands ops = random_gemm_operands(gk->gemm, seed);
  GemmCheck c;
  const std::vector<double> y = interpret_gemm(trace, ops, &c.stats, !precompute);
  const auto cfg = golden::default_lut_gemm_config(
      ops.act, trace.cores.at(size_t(gk->tiles.core)).config.shape.k, quantized);
  if (gk->gemm.bases > 0) {
    if (gk->gemm.n > 4096) {
      throw InputError("check: multi-basis GEMMs with N > 4096 are not checked (golden limit)");
    }
    const std::vector<double> ref = golden::lut_gemm(cfg, ops.acts, int(ops.m), ops.multi_basis);
    c.outputs = y.size();
    for (size_t i = 0; i < y.size(); ++i) {
      if (std::memcmp(&y[i], &ref[i], sizeof(double)) != 0) ++c.mismatches;
      c.max_abs_diff = std::max(c.max_abs_diff, std::abs(y[i] - ref[i]));
    }
    return c;
  }
  // golden::lut_gemm runs one LMMA over all N columns, which it caps: slice the output columns.
  constexpr int64_t kSlice = 4096;
  const auto& w = ops.weights;
  std::vector<double> ref(size_t(ops.m * w.n));
  for (int64_t n0 = 0; n0 < w.n; n0 += kSlice) {
    const int64_t n1 = std::min<int64_t>(w.n, n0 + kSlice);
    golden::QuantizedWeights part = w;
    part.n = int(n1 - n0);
    const size_t g = size_t(w.groups());
    part.codes.assign(w.codes.begin() + n0 * w.k, w.codes.begin() + n1 * w.k);
    part.scales.assign(w.scales.begin() + n0 * g, w.scales.begin() + n1 * g);
    part.zeros.assign(w.zeros.begin() + n0 * g, w.zeros.begin() + n1 * g);
    const std::vector<double> y_part = golden::lut_gemm(cfg, ops.acts, int(ops.m), part);
    for (int64_t r = 0; r < ops.m; ++r) {
      for (int64_t c2 = n0; c2 < n1; ++c2) {
        ref[size_t(r * w.n + c2)] = y_part[size_t(r * (n1 - n0) + (c2 - n0))];
      }
    }
  }
  c.outputs = y.size();
  for (size_t i = 0; i < y.size(); ++i) {
    if (std::memcmp(&y[i], &ref[i], sizeof(double)) != 0) ++c.mismatches;
    c.max_abs_diff = std::max(c.max_abs_diff, std::abs(y[i] - ref[i]));
  }
  return c;
}

std::vector<KernelCheck> check_trace_gemms(const traces::Trace& trace, uint32_t seed,
                                           double max_macs) {
  std::vector<KernelCheck> out;
  std::vector<traces::GemmRecord> seen;
  for (const auto& k : trace.kernels) {
    if (k.gemm.m <= 0) continue;
    if (std::find(seen.begin(), seen.end(), k.gemm) != seen.end()) continue;
    seen.push_back(k.gemm);
    KernelCheck kc;
    kc.kernel = k.name;
    if (double(k.gemm.m) * double(k.gemm.n) * double(k.gemm.k) > max_macs) {
      kc.skipped = true;
      out.push_back(kc);
      continue;
    }
    traces::Trace one;
    one.gpu = trace.gpu;
    one.cores = trace.cores;
    one.kernels = {k};
    kc.check = check_gemm_trace(one, seed);
    out.push_back(kc);
  }
  return out;
}

}  // namespace ltc::compiler
