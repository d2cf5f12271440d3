#include "model/golden/gemm.h"

#include "common/error.h"
#include "model/golden/fp.h"
#include "model/golden/lmma.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

namespace ltc::golden {

void check_gemm_extents(int64_t m, int64_t n, int64_t k) {
  for (auto [flag, v] : {std::pair{"--m", m}, std::pair{"--n", n}, std::pair{"--k", k}}) {
    if (v < 1 || v > kMaxGemmExtent) {
      throw InputError(std::string(flag) + ": " + std::to_string(v) +
                       " is out of range (valid: 1 .. " + std::to_string(kMaxGemmExtent) +
                       ", the 32-bit extent GEMM libraries take)");
    }
  }
}

LutGemmConfig default_lut_gemm_config(DType act, int k_group, bool quantize_table) {
  LutGemmConfig cfg;
  cfg.act = act;
  cfg.k_group = k_group;
  cfg.quantize_table = quantize_table;
  cfg.table = lut_table_dtype(act);
  cfg.acc = (is_int(act) && !quantize_table) ? DType::kInt32 : DType::kFp32;
  return cfg;
}

void validate(const LutGemmConfig& cfg) {
  if (cfg.act == DType::kInt16 || cfg.act == DType::kInt32 || cfg.act == DType::kFp32) {
    throw InputError("activation dtype " + std::string(dtype_name(cfg.act)) +
                     " is not supported (valid: int8, fp16, bf16, fp8e4m3, fp8e5m2)");
  }
  if (cfg.k_group < 1 || cfg.k_group > kMaxK) {
    throw InputError("K = " + std::to_string(cfg.k_group) + " is out of range (valid: 1..8)");
  }
  if (!converts_exactly(cfg.act, cfg.table)) {
    throw InputError("table dtype " + std::string(dtype_name(cfg.table)) +
                     " cannot hold activation dtype " + std::string(dtype_name(cfg.act)));
  }
  if (cfg.quantize_table && cfg.acc != DType::kFp32) {
    throw InputError("quantized tables accumulate across tables in fp32 (acc = fp32)");
  }
  if (!cfg.quantize_table)
    validate(LmmaShape{1, 1, cfg.k_group}, LmmaType{cfg.table, 1, cfg.acc, cfg.acc});
  validate(cfg.slices, cfg.k_group);
}


namespace {

// Transformed planes of every LUT group of one weight column range, zero-padded to K.
struct PlaneGroups {
  int k_group;
  std::vector<int> first_col;                // per LUT group
  std::vector<std::vector<uint8_t>> planes;  // per LUT group: W * N
};

// Two accumulators added as the hardware adds them: wrapping int32, or fp32 (round to nearest).
uint32_t add_acc(DType acc, uint32_t a, uint32_t b) {
  return is_int(acc) ? int_add(acc, a, b) : fp_add(acc, a, b);
}

// Runs the LMMA chain of one activation row over the LUT groups in [c0, c1): returns acc per
// column (raw bits in cfg.acc). `act_at(c)` gives the activation of column c (raw, cfg.act).
template <typename ActAt>
std::vector<uint32_t> chain(const LutGemmConfig& cfg, int n, int wbits, const PlaneGroups& pg,
                            size_t g_first, size_t g_last, ActAt act_at, int col_end, int slice) {
  const LmmaShape shape{1, n, cfg.k_group};
  std::vector<uint32_t> acc(n, encode(cfg.acc, 0.0));
  std::vector<uint32_t> acts(cfg.k_group);
  for (size_t lg = g_first; lg < g_last; ++lg) {
    if (cfg.slices.slice_of(pg.first_col[lg]) != slice) continue;
    for (int i = 0; i < cfg.k_group; ++i) {
      const int c = pg.first_col[lg] + i;
      acts[i] = c < col_end ? act_at(c) : encode(cfg.act, 0.0);  // pad to the group's end
    }
    std::vector<uint32_t> half =
        precompute_half_table(acts.data(), cfg.act, cfg.k_group, cfg.table);
    if (!cfg.quantize_table) {
      acc = lmma(shape, LmmaType{cfg.table, wbits, cfg.acc, cfg.acc}, half, pg.planes[lg], acc);
      continue;
    }
    const QuantizedTable qt = quantize_table(half, cfg.table);
    const std::vector<uint32_t> zero(n, 0u);
    const std::vector<uint32_t> ints =
        lmma(shape, LmmaType{DType::kInt8, wbits, DType::kInt32, DType::kInt32}, qt.entries,
             pg.planes[lg], zero);
    for (int col = 0; col < n; ++col) {
      const uint32_t as_fp = convert(DType::kFp32, DType::kInt32, ints[col]);
      const uint32_t scaled =
          fp_mul(DType::kFp32, DType::kFp32, as_fp, DType::kFp32, qt.scale_fp32);
      acc[col] = fp_add(DType::kFp32, acc[col], scaled);
    }
  }
  return acc;
}

// LUT groups aligned to each quantization group of `group_size` columns.
PlaneGroups make_plane_groups(int k_group, int group_size, int n, int k, int wbits,
                              const uint8_t* codes, std::vector<size_t>* group_start) {
  PlaneGroups pg{k_group, {}, {}};
  std::vector<uint8_t> tile(size_t(n) * k_group);
  for (int c0 = 0; c0 < k; c0 += group_size) {
    group_start->push_back(pg.first_col.size());
    const int c1 = std::min(k, c0 + group_size);
    for (int c = c0; c < c1; c += k_group) {
      for (int col = 0; col < n; ++col) {
        for (int i = 0; i < k_group; ++i) {
          tile[size_t(col) * k_group + i] = (c + i < c1) ? codes[size_t(col) * k + c + i] : 0;
        }
      }
      pg.first_col.push_back(c);
      pg.planes.push_back(transformed_bit_planes(tile.data(), n, k_group, wbits));
    }
  }
  group_start->push_back(pg.first_col.size());
  return pg;
}

void check_acts(const std::vector<uint32_t>& acts, int m, int k) {
  if (m < 1) throw InputError("M = " + std::to_string(m) + " must be >= 1");
  if (acts.size() != size_t(m) * k) {
    throw InputError("activations: " + std::to_string(acts.size()) +
                     " values, expected M x K = " + std::to_string(m) + " x " + std::to_string(k));
  }
}

}  // namespace

LutGemmPartials lut_gemm_partials(const LutGemmConfig& cfg, const std::vector<uint32_t>& acts,
                                  int m, const QuantizedWeights& w) {
  validate(cfg);
  w.validate();
  check_acts(acts, m, w.k);
  std::vector<size_t> group_start;
  // LUT groups restart at each quantization group, whose tail is zero-padded when G % K != 0.
  const PlaneGroups pg =
      make_plane_groups(cfg.k_group, w.group_size, w.n, w.k, w.wbits, w.codes.data(), &group_start);
  LutGemmPartials p;
  p.m = m;
  p.n = w.n;
  p.groups = w.groups();
  p.partial.assign(size_t(m) * w.n * p.groups, 0.0);
  p.act_sums.assign(size_t(m) * p.groups, 0.0);
  for (int r = 0; r < m; ++r) {
    auto act_at = [&](int c) { return acts[size_t(r) * w.k + c] & dtype_mask(cfg.act); };
    for (int g = 0; g < p.groups; ++g) {
      std::vector<uint32_t> acc;
      for (int sl = 0; sl < cfg.slices.slices; ++sl) {
        const std::vector<uint32_t> part =
            chain(cfg, w.n, w.wbits, pg, group_start[g], group_start[g + 1], act_at,
                  std::min(w.k, (g + 1) * w.group_size), sl);
        if (sl == 0) {
          acc = part;
          continue;
        }
        for (int col = 0; col < w.n; ++col) acc[col] = add_acc(cfg.acc, acc[col], part[col]);
      }
      for (int col = 0; col < w.n; ++col) {
        p.partial[(size_t(r) * w.n + col) * p.groups + g] = decode(cfg.acc, acc[col]);
      }
      double sum = 0.0;
      for (int c = g * w.group_size; c < std::min(w.k, (g + 1) * w.group_size); ++c) {
        sum += decode(cfg.act, act_at(c));
      }
      p.act_sums[size_t(r) * p.groups + g] = sum;
    }
  }
  return p;
}

std::vector<double> lut_gemm_epilogue(const LutGemmPartials& p, const QuantizedWeights& w) {
  const double bias = 0.5 * (std::ldexp(1.0, w.wbits) - 1.0);
  std::vector<double> y(size_t(p.m) * p.n, 0.0);
  for (int r = 0; r < p.m; ++r) {
    for (int col = 0; col < p.n; ++col) {
      double sum = 0.0;
      for (int g = 0; g < p.groups; ++g) {
        const double s = p.partial[(size_t(r) * p.n + col) * p.groups + g];
        const double a = p.act_sums[size_t(r) * p.groups + g];
        sum += w.scale(col, g) * ((0.5 * s + bias * a) - w.zero(col, g) * a);
      }
      y[size_t(r) * p.n + col] = sum;
    }
  }
  return y;
}

std::vector<double> lut_gemm(const LutGemmConfig& cfg, const std::vector<uint32_t>& acts, int m,
                             const QuantizedWeights& w) {
  return lut_gemm_epilogue(lut_gemm_partials(cfg, acts, m, w), w);
}

std::vector<double> lut_gemm(const LutGemmConfig& cfg, const std::vector<uint32_t>& acts, int m,
                             const MultiBasisBinaryWeights& w) {
  validate(cfg);
  if (cfg.slices.slices != 1) throw InputError("multi-basis binary GEMMs are not K-sliced");
  w.validate();
  check_acts(acts, m, w.k);
  const int ng = w.groups();
  // Per basis: sign planes (W = 1, code 1 means +1), LUT groups aligned to the row-scale groups.
  std::vector<PlaneGroups> pgs;
  std::vector<size_t> group_start;
  for (int j = 0; j < w.bases; ++j) {
    group_start.clear();
    pgs.push_back(make_plane_groups(cfg.k_group, w.group, w.n, w.k, 1,
                                    &w.signs[size_t(j) * w.n * w.k], &group_start));
  }
  std::vector<double> y(size_t(m) * w.n, 0.0);
  for (int r = 0; r < m; ++r) {
    std::vector<double> sum(w.n, 0.0);
    for (int g = 0; g < ng; ++g) {
      for (int j = 0; j < w.bases; ++j) {
        // Scale fusion: the column scale multiplies the activation before the table is built.
        auto act_at = [&](int c) {
          if (w.is_salient(c)) return encode(cfg.act, 0.0);
          return encode(cfg.act, decode(cfg.act, acts[size_t(r) * w.k + c]) *
                                     w.col_scales[size_t(j) * w.k + c]);
        };
        const std::vector<uint32_t> acc =
            chain(cfg, w.n, 1, pgs[j], group_start[g], group_start[g + 1], act_at,
                  std::min(w.k, (g + 1) * w.group), 0);
        for (int col = 0; col < w.n; ++col) {
          sum[col] += w.row_scales[(size_t(j) * w.n + col) * ng + g] * decode(cfg.acc, acc[col]);
        }
      }
    }
    for (int col = 0; col < w.n; ++col) {
      for (int g = 0; g < ng; ++g) {
        for (int i = 0; i < w.salient; ++i) {
          const int c = w.salient_cols[size_t(g) * w.salient + i];
          if (std::find(w.salient_cols.begin() + size_t(g) * w.salient,
                        w.salient_cols.begin() + size_t(g) * w.salient + i,
                        c) != w.salient_cols.begin() + size_t(g) * w.salient + i) {
            continue;  // a repeated index (tiny last group) counts once
          }
          sum[col] += decode(cfg.act, acts[size_t(r) * w.k + c]) *
                      w.salient_w[(size_t(col) * ng + g) * w.salient + i];
        }
      }
      y[size_t(r) * w.n + col] = sum[col];
    }
  }
  return y;
}

GroupedDotProducts grouped_code_dots(DType act, const std::vector<uint32_t>& acts, int m,
                                     const QuantizedWeights& w) {
  w.validate();
  check_acts(acts, m, w.k);
  GroupedDotProducts d;
  d.m = m;
  d.n = w.n;
  d.groups = w.groups();
  d.dot.assign(size_t(m) * w.n * d.groups, 0.0);
  d.act_sums.assign(size_t(m) * d.groups, 0.0);
  for (int r = 0; r < m; ++r) {
    for (int g = 0; g < d.groups; ++g) {
      const int c0 = g * w.group_size, c1 = std::min(w.k, c0 + w.group_size);
      double a_sum = 0.0;
      for (int c = c0; c < c1; ++c) a_sum += decode(act, acts[size_t(r) * w.k + c]);
      d.act_sums[size_t(r) * d.groups + g] = a_sum;
      for (int col = 0; col < w.n; ++col) {
        double dot = 0.0;
        for (int c = c0; c < c1; ++c) {
          dot += decode(act, acts[size_t(r) * w.k + c]) * w.codes[size_t(col) * w.k + c];
        }
        d.dot[(size_t(r) * w.n + col) * d.groups + g] = dot;
      }
    }
  }
  return d;
}

std::vector<double> grouped_reference(const GroupedDotProducts& d, const QuantizedWeights& w) {
  std::vector<double> y(size_t(d.m) * d.n, 0.0);
  for (int r = 0; r < d.m; ++r) {
    for (int col = 0; col < d.n; ++col) {
      double sum = 0.0;
      for (int g = 0; g < d.groups; ++g) {
        const double a = d.act_sums[size_t(r) * d.groups + g];
        sum +=
            w.scale(col, g) * (d.dot[(size_t(r) * d.n + col) * d.groups + g] - w.zero(col, g) * a);
      }
      y[size_t(r) * d.n + col] = sum;
    }
  }
  return y;
}

std::vector<double> dequant_gemm(DType act, const std::vector<uint32_t>& acts, int m,
                                 const std::vector<double>& w_hat, int n, int k) {
  check_acts(acts, m, k);
  if (w_hat.size() != size_t(n) * k) {
    throw InputError("dequant_gemm: " + std::to_string(w_hat.size()) + " weights, expected N x K");
  }
  std::vector<double> y(size_t(m) * n, 0.0);
  for (int r = 0; r < m; ++r) {
    for (int col = 0; col < n; ++col) {
      double sum = 0.0;
      for (int c = 0; c < k; ++c)
        sum += decode(act, acts[size_t(r) * k + c]) * w_hat[size_t(col) * k + c];
      y[size_t(r) * n + col] = sum;
    }
  }
  return y;
}

}  // namespace ltc::golden
