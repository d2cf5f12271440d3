#include "model/golden/weights.h"

#include "common/error.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace ltc::golden {

std::string_view weight_kind_name(WeightKind k) {
  switch (k) {
    case WeightKind::kUInt:
      return "uint";
    case WeightKind::kSInt:
      return "sint";
    case WeightKind::kBinary:
      return "binary";
    case WeightKind::kTernary:
      return "ternary";
  }
  return "?";
}

namespace {

void check_dims(int n, int k, size_t size) {
  if (n < 1 || k < 1) {
    throw InputError("weights: shape " + std::to_string(n) + " x " + std::to_string(k) +
                     " is empty (N and K must be >= 1)");
  }
  if (size != size_t(n) * k) {
    throw InputError("weights: " + std::to_string(size) + " values for shape " + std::to_string(n) +
                     " x " + std::to_string(k));
  }
}

void check_finite(const char* what, double v, int row, int group) {
  if (!std::isfinite(v)) {
    throw InputError(std::string("weights: ") + what + " of row " + std::to_string(row) +
                     ", group " + std::to_string(group) + " is " + (std::isnan(v) ? "NaN" : "inf") +
                     " (must be finite)");
  }
}

}  // namespace

double QuantizedWeights::dequant(int row, int col) const {
  const int g = col / group_size;
  return scale(row, g) * (codes[size_t(row) * k + col] - zero(row, g));
}

void QuantizedWeights::validate() const {
  if (wbits < 1 || wbits > 8) {
    throw InputError("weights: W_BIT = " + std::to_string(wbits) +
                     " is out of range (valid: 1..8)");
  }
  if (group_size < 1) {
    throw InputError("weights: group size " + std::to_string(group_size) + " must be >= 1");
  }
  check_dims(n, k, codes.size());
  const size_t ng = size_t(n) * groups();
  if (scales.size() != ng || zeros.size() != ng) {
    throw InputError("weights: " + std::to_string(scales.size()) + " scales and " +
                     std::to_string(zeros.size()) + " zero points, expected " + std::to_string(ng) +
                     " (N x groups)");
  }
  for (int r = 0; r < n; ++r) {
    for (int g = 0; g < groups(); ++g) {
      check_finite("scale", scale(r, g), r, g);
      check_finite("zero point", zero(r, g), r, g);
    }
  }
  for (size_t i = 0; i < codes.size(); ++i) {
    if (wbits < 8 && (codes[i] >> wbits) != 0) {
      throw InputError("weights: code " + std::to_string(codes[i]) + " at row " +
                       std::to_string(i / k) + ", column " + std::to_string(i % k) +
                       " does not fit in W_BIT = " + std::to_string(wbits));
    }
  }
}

QuantizedWeights quantize_weights(WeightKind kind, int wbits, int group_size,
                                  const std::vector<double>& w, int n, int k) {
  check_dims(n, k, w.size());
  for (size_t i = 0; i < w.size(); ++i) {
    if (!std::isfinite(w[i])) {
      throw InputError("weights: value at row " + std::to_string(i / k) + ", column " +
                       std::to_string(i % k) + " is not finite");
    }
  }
  const char* name = weight_kind_name(kind).data();
  if (wbits < 1 || wbits > 8) {
    throw InputError("weights: W_BIT = " + std::to_string(wbits) +
                     " is out of range (valid: 1..8)");
  }
  if (kind == WeightKind::kBinary && wbits != 1) {
    throw InputError(std::string(name) + " weights need W_BIT = 1, got " + std::to_string(wbits));
  }
  if (kind == WeightKind::kTernary && wbits != 2) {
    throw InputError(std::string(name) + " weights need W_BIT = 2, got " + std::to_string(wbits));
  }
  if (kind == WeightKind::kSInt && wbits < 2) {
    throw InputError("signed INTn weights need W_BIT >= 2 (use binary for 1 bit)");
  }
  if (group_size < 0) {
    throw InputError("weights: group size " + std::to_string(group_size) + " must be >= 0");
  }
  QuantizedWeights q;
  q.kind = kind;
  q.n = n;
  q.k = k;
  q.wbits = wbits;
  q.group_size = group_size == 0 ? k : std::min(group_size, k);
  q.codes.assign(size_t(n) * k, 0);
  q.scales.assign(size_t(n) * q.groups(), 1.0);
  q.zeros.assign(size_t(n) * q.groups(), 0.0);
  const double qmax = std::ldexp(1.0, wbits) - 1.0;
  for (int r = 0; r < n; ++r) {
    for (int g = 0; g < q.groups(); ++g) {
      const int c0 = g * q.group_size;
      const int c1 = std::min(k, c0 + q.group_size);
      double lo = 0, hi = 0, absmax = 0, absmean = 0;
      for (int c = c0; c < c1; ++c) {
        const double v = w[size_t(r) * k + c];
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        absmax = std::max(absmax, std::fabs(v));
        absmean += std::fabs(v);
      }
      absmean /= (c1 - c0);
      double s = 1.0, z = 0.0;
      switch (kind) {
        case WeightKind::kUInt:
          s = hi > lo ? (hi - lo) / qmax : 1.0;
          z = std::clamp(std::nearbyint(-lo / s), 0.0, qmax);
          break;
        case WeightKind::kSInt:
          s = absmax > 0 ? absmax / (std::ldexp(1.0, wbits - 1) - 1.0) : 1.0;
          z = std::ldexp(1.0, wbits - 1);
          break;
        case WeightKind::kBinary:
          s = 2.0 * (absmean > 0 ? absmean : 1.0);  // r = alpha * (2q - 1) = 2 alpha (q - 1/2)
          z = 0.5;
          break;
        case WeightKind::kTernary:
          s = absmean > 0 ? absmean : 1.0;  // BitNet b1.58 absmean
          z = 1.0;
          break;
      }
      const size_t gi = size_t(r) * q.groups() + g;
      q.scales[gi] = s;
      q.zeros[gi] = z;
      for (int c = c0; c < c1; ++c) {
        const double v = w[size_t(r) * k + c];
        double code;
        if (kind == WeightKind::kBinary) {
          code = v >= 0 ? 1.0 : 0.0;
        } else if (kind == WeightKind::kTernary) {
          code = std::clamp(std::nearbyint(v / s), -1.0, 1.0) + 1.0;
        } else {
          code = std::clamp(std::nearbyint(v / s) + z, 0.0, qmax);
        }
        q.codes[size_t(r) * k + c] = static_cast<uint8_t>(code);
      }
    }
  }
  return q;
}

// ---- multi-basis binary -------------------------------------------------------------------------

bool MultiBasisBinaryWeights::is_salient(int col) const {
  if (salient == 0) return false;
  const int g = col / group;
  const auto first = salient_cols.begin() + size_t(g) * salient;
  return std::find(first, first + salient, col) != first + salient;
}

double MultiBasisBinaryWeights::dequant(int row, int col) const {
  const int g = col / group;
  if (is_salient(col)) {
    const auto first = salient_cols.begin() + size_t(g) * salient;
    const int idx = static_cast<int>(std::find(first, first + salient, col) - first);
    return salient_w[(size_t(row) * groups() + g) * salient + idx];
  }
  double v = 0.0;
  for (int j = 0; j < bases; ++j) {
    const double sign = signs[(size_t(j) * n + row) * k + col] ? 1.0 : -1.0;
    v += row_scales[(size_t(j) * n + row) * groups() + g] * col_scales[size_t(j) * k + col] * sign;
  }
  return v;
}

double MultiBasisBinaryWeights::bits_per_weight() const {
  const double total = double(bases) * n * k                     // sign bits
                       + 16.0 * bases * n * groups()             // row scales
                       + 16.0 * bases * k                        // column scales
                       + 32.0 * double(n) * groups() * salient;  // salient value + index
  return total / (double(n) * k);
}

void MultiBasisBinaryWeights::validate() const {
  if (n < 1 || k < 1) throw InputError("multi-basis binary: empty shape");
  if (bases < 1 || bases > 8) {
    throw InputError("multi-basis binary: kb = " + std::to_string(bases) +
                     " is out of range (valid: 1..8)");
  }
  if (group < 1) throw InputError("multi-basis binary: g must be >= 1");
  if (salient < 0 || salient > group) {
    throw InputError("multi-basis binary: s = " + std::to_string(salient) +
                     " is out of range (valid: 0..g)");
  }
  if (signs.size() != size_t(bases) * n * k || row_scales.size() != size_t(bases) * n * groups() ||
      col_scales.size() != size_t(bases) * k || salient_cols.size() != size_t(groups()) * salient ||
      salient_w.size() != size_t(n) * groups() * salient) {
    throw InputError("multi-basis binary: array sizes do not match the shape");
  }
  for (double v : row_scales) {
    if (!std::isfinite(v)) throw InputError("multi-basis binary: a row scale is not finite");
  }
  for (double v : col_scales) {
    if (!std::isfinite(v)) throw InputError("multi-basis binary: a column scale is not finite");
  }
}

MultiBasisBinaryWeights fit_multi_basis_binary(const std::vector<double>& w, int n, int k,
                                               int bases, int group, int salient, int als_iters) {
  check_dims(n, k, w.size());
  MultiBasisBinaryWeights b;
  b.n = n;
  b.k = k;
  b.bases = bases;
  b.group = group;
  b.salient = salient;
  if (bases < 1 || bases > 8 || group < 1 || salient < 0 || salient > group) {
    b.signs.clear();
    b.validate();  // throws with the offending parameter
  }
  const int ng = b.groups();
  b.signs.assign(size_t(bases) * n * k, 0);
  b.row_scales.assign(size_t(bases) * n * ng, 0.0);
  b.col_scales.assign(size_t(bases) * k, 1.0);
  b.salient_cols.assign(size_t(ng) * salient, 0);
  b.salient_w.assign(size_t(n) * ng * salient, 0.0);

  // Salient columns: largest L2 norm within each group.
  std::vector<char> is_sal(k, 0);
  for (int g = 0; g < ng; ++g) {
    const int c0 = g * group, c1 = std::min(k, c0 + group);
    std::vector<int> cols(c1 - c0);
    std::iota(cols.begin(), cols.end(), c0);
    std::vector<double> norm(k, 0.0);
    for (int c = c0; c < c1; ++c) {
      for (int r = 0; r < n; ++r) norm[c] += w[size_t(r) * k + c] * w[size_t(r) * k + c];
    }
    std::stable_sort(cols.begin(), cols.end(), [&](int x, int y) { return norm[x] > norm[y]; });
    const int take = std::min<int>(salient, c1 - c0);
    for (int i = 0; i < salient; ++i) {
      const int col = i < take ? cols[i] : cols[take - 1];
      b.salient_cols[size_t(g) * salient + i] = col;
      is_sal[col] = 1;
      for (int r = 0; r < n; ++r)
        b.salient_w[(size_t(r) * ng + g) * salient + i] = w[size_t(r) * k + col];
    }
  }

  std::vector<double> residual(w);
  for (int c = 0; c < k; ++c) {
    if (!is_sal[c]) continue;
    for (int r = 0; r < n; ++r) residual[size_t(r) * k + c] = 0.0;
  }
  for (int j = 0; j < bases; ++j) {
    double* rs = &b.row_scales[size_t(j) * n * ng];
    double* cs = &b.col_scales[size_t(j) * k];
    uint8_t* sg = &b.signs[size_t(j) * n * k];
    for (size_t i = 0; i < size_t(n) * k; ++i) sg[i] = residual[i] >= 0 ? 1 : 0;
    auto sign = [&](int r, int c) { return sg[size_t(r) * k + c] ? 1.0 : -1.0; };
    // Alternating least squares for the rank-1 scale alpha_r * alpha_c on |residual|.
    for (int it = 0; it <= als_iters; ++it) {
      for (int r = 0; r < n; ++r) {
        for (int g = 0; g < ng; ++g) {
          double num = 0, den = 0;
          for (int c = g * group; c < std::min(k, (g + 1) * group); ++c) {
            if (is_sal[c]) continue;
            num += residual[size_t(r) * k + c] * sign(r, c) * cs[c];
            den += cs[c] * cs[c];
          }
          rs[size_t(r) * ng + g] = den > 0 ? num / den : 0.0;
        }
      }
      if (it == als_iters) break;
      for (int c = 0; c < k; ++c) {
        if (is_sal[c]) continue;
        double num = 0, den = 0;
        for (int r = 0; r < n; ++r) {
          const double a = rs[size_t(r) * ng + c / group];
          num += residual[size_t(r) * k + c] * sign(r, c) * a;
          den += a * a;
        }
        cs[c] = den > 0 ? num / den : 1.0;
      }
    }
    for (int r = 0; r < n; ++r) {
      for (int c = 0; c < k; ++c) {
        if (is_sal[c]) continue;
        residual[size_t(r) * k + c] -= rs[size_t(r) * ng + c / group] * cs[c] * sign(r, c);
      }
    }
  }
  for (int j = 0; j < bases; ++j) {
    for (int c = 0; c < k; ++c) {
      if (!is_sal[c]) continue;
      for (int r = 0; r < n; ++r) b.signs[(size_t(j) * n + r) * k + c] = 0;
    }
  }
  b.validate();
  return b;
}

}  // namespace ltc::golden
