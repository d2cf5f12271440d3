// Whole mpGEMMs through the LUT path against dense references: exact for integer activations
// (every weight format, W_BIT 1..8, K 1..8), and within a bound derived from the formats for
// floating-point activations, with and without table quantization.
#include "model/golden/gemm.h"
#include "common/error.h"
#include "model/golden/fp.h"
#include "model/golden/lmma.h"
#include "tests/golden/test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ltc::golden {
namespace {

using test_support::random_acts;
using test_support::random_codes;
using test_support::seed_note;
using test_support::test_seed;

// Weights whose every plane, within every LUT group of K columns, covers all 2^K patterns across
// the N = 2^K output columns; scales and zero points random per group.
QuantizedWeights exhaustive_weights(std::mt19937_64& rng, WeightKind kind, int wbits, int k_group,
                                    int lut_groups, int group_size) {
  QuantizedWeights w;
  w.kind = kind;
  w.wbits = wbits;
  w.n = 1 << k_group;
  w.k = k_group * lut_groups;
  w.group_size = group_size;
  w.codes.assign(size_t(w.n) * w.k, 0);
  for (int j = 0; j < w.n; ++j) {
    for (int lg = 0; lg < lut_groups; ++lg) {
      for (int b = 0; b < wbits; ++b) {
        const uint32_t p = (j + 3 * b + 7 * lg) % w.n;
        for (int kk = 0; kk < k_group; ++kk) {
          w.codes[size_t(j) * w.k + lg * k_group + kk] |= ((p >> kk) & 1) << b;
        }
      }
    }
  }
  std::uniform_real_distribution<double> scale(0.01, 2.0);
  std::uniform_int_distribution<int> zero(0, (1 << wbits) - 1);
  for (int i = 0; i < w.n * w.groups(); ++i) {
    w.scales.push_back(scale(rng));
    switch (kind) {
      case WeightKind::kUInt:
        w.zeros.push_back(zero(rng));
        break;
      case WeightKind::kSInt:
        w.zeros.push_back(std::ldexp(1.0, wbits - 1));
        break;
      case WeightKind::kBinary:
        w.zeros.push_back(0.5);
        break;
      case WeightKind::kTernary:
        w.zeros.push_back(1.0);
        break;
    }
  }
  return w;
}

void expect_integer_exact(const QuantizedWeights& w, int k_group, int m, std::mt19937_64& rng,
                          const std::string& note) {
  const auto acts = random_acts(rng, DType::kInt8, size_t(m) * w.k);
  const LutGemmConfig cfg = default_lut_gemm_config(DType::kInt8, k_group);
  const LutGemmPartials p = lut_gemm_partials(cfg, acts, m, w);
  const GroupedDotProducts d = grouped_code_dots(DType::kInt8, acts, m, w);
  const double planes = std::ldexp(1.0, w.wbits) - 1.0;
  for (int r = 0; r < m; ++r) {
    for (int col = 0; col < w.n; ++col) {
      for (int g = 0; g < w.groups(); ++g) {
        const size_t i = (size_t(r) * w.n + col) * w.groups() + g;
        // sum_b 2^b T[p_b] = 2 sum_k a_k q_k - (2^W - 1) sum_k a_k, exactly.
        ASSERT_EQ(p.partial[i] + planes * p.act_sums[size_t(r) * w.groups() + g], 2 * d.dot[i])
            << note << " row " << r << " col " << col << " group " << g;
      }
    }
  }
  ASSERT_EQ(lut_gemm_epilogue(p, w), grouped_reference(d, w)) << note;
}

TEST(LutGemmInt8, EqualsIntegerGemmForEveryFormatWidthAndK) {
  const uint64_t seed = test_seed(31);
  std::mt19937_64 rng(seed);
  int cases = 0;
  for (int k = 1; k <= kMaxK; ++k) {
    for (int w = 1; w <= kMaxWBits; ++w) {
      for (WeightKind kind : {WeightKind::kUInt, WeightKind::kSInt, WeightKind::kBinary}) {
        if ((kind == WeightKind::kSInt && w < 2) || (kind == WeightKind::kBinary && w != 1))
          continue;
        // Per channel, and per group of 2K columns (scales and zeros change inside the GEMM).
        for (int group : {3 * k, 2 * k}) {
          const auto wq = exhaustive_weights(rng, kind, w, k, 3, group);
          expect_integer_exact(wq, k, 2, rng,
                               std::string(weight_kind_name(kind)) + " W=" + std::to_string(w) +
                                   " K=" + std::to_string(k) + " G=" + std::to_string(group) +
                                   ", " + seed_note(seed));
          ++cases;
        }
      }
    }
  }
  std::printf("[ info ] %d exhaustive-pattern integer cases exact\n", cases);
}

TEST(LutGemmInt8, TernaryAndRandomLargeShapesAreExact) {
  const uint64_t seed = test_seed(32);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 0.02);
  struct Shape {
    int m, n, k, group, k_group;
  };
  for (const Shape s : {Shape{3, 70, 333, 64, 4}, Shape{2, 64, 512, 128, 4},
                        Shape{1, 33, 100, 0, 5}, Shape{4, 40, 256, 32, 8}, Shape{2, 17, 97, 0, 3},
                        Shape{2, 12, 60, 6, 4}, Shape{1, 9, 50, 10, 8}}) {  // G % K != 0
    std::vector<double> real(size_t(s.n) * s.k);
    for (auto& v : real) v = normal(rng);
    for (auto [kind, w] : {std::pair{WeightKind::kTernary, 2}, std::pair{WeightKind::kUInt, 4},
                           std::pair{WeightKind::kSInt, 3}, std::pair{WeightKind::kBinary, 1},
                           std::pair{WeightKind::kUInt, 8}}) {
      const auto wq = quantize_weights(kind, w, s.group, real, s.n, s.k);
      expect_integer_exact(wq, s.k_group, s.m, rng,
                           std::string(weight_kind_name(kind)) + " " + std::to_string(s.m) + "x" +
                               std::to_string(s.n) + "x" + std::to_string(s.k) + ", " +
                               seed_note(seed));
    }
  }
}

// ---- floating-point activations: the error bound
// --------------------------------------------------

double gamma(int n, double u) {
  return n * u / (1 - n * u);
}

// Bound on |lut_gemm - exact| for one output, derived from the formats (see gemm.h for the order):
//  table entry: K-1 rounded adds in the table dtype  -> gamma_{K-1}(u_t) sum|a| + (K-1) eta_t
//  unquantized: L*W rounded adds in the accumulator   -> gamma_{LW}(u_acc) sum 2^b |T^| + LW
//  eta_acc quantized:   entry q*scale vs T^ within scale/2; then fp32 multiply and add per table
//  epilogue:    times 1/2 |s_g| per group; plus 1e-12 of the magnitude for the double arithmetic
double error_bound(const LutGemmConfig& cfg, const std::vector<uint32_t>& acts, int r,
                   const QuantizedWeights& w, int col, double* magnitude) {
  const double ut = is_float(cfg.table) ? fp_unit_roundoff(cfg.table) : 0.0;
  const double et = is_float(cfg.table) ? fp_min_subnormal(cfg.table) / 2 : 0.0;
  const double ua = fp_unit_roundoff(cfg.acc), ea = fp_min_subnormal(cfg.acc) / 2;
  const int K = cfg.k_group;
  double total = 0.0, mag = 0.0;
  for (int g = 0; g < w.groups(); ++g) {
    const int c0 = g * w.group_size, c1 = std::min(w.k, c0 + w.group_size);
    double e_tables = 0.0, sum_terms = 0.0;
    int lut_groups = 0;
    for (int c = c0; c < c1; c += K, ++lut_groups) {
      double abs_sum = 0.0;
      for (int i = 0; i < K && c + i < c1; ++i)
        abs_sum += std::fabs(decode(cfg.act, acts[size_t(r) * w.k + c + i]));
      const double t_err = gamma(K - 1, ut) * abs_sum + (K - 1) * et;
      const double t_max = abs_sum * (1 + gamma(K - 1, ut)) + (K - 1) * et;  // >= max |T^|
      const double scale = cfg.quantize_table ? t_max / 127 * (1 + 1e-6) : 0.0;
      for (int b = 0; b < w.wbits; ++b) {
        e_tables += std::ldexp(t_err + scale / 2, b);
        sum_terms += std::ldexp(t_max + scale / 2, b);
      }
    }
    const int adds = cfg.quantize_table ? 2 * lut_groups : lut_groups * w.wbits;
    const double e_acc = gamma(adds, ua) * sum_terms + adds * ea;
    total += std::fabs(w.scale(col, g)) * 0.5 * (e_tables + e_acc);
    for (int c = c0; c < c1; ++c) {
      mag += std::fabs(decode(cfg.act, acts[size_t(r) * w.k + c]) * w.dequant(col, c));
    }
  }
  *magnitude = mag;
  return total + 1e-12 * mag;
}

struct FloatCase {
  DType act;
  bool quantize;
  int k_group;
};

TEST(LutGemmFloat, ErrorAgainstDoubleReferenceStaysWithinDerivedBound) {
  const uint64_t seed = test_seed(33);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 0.02);
  const int m = 3, n = 48, k = 256;
  std::vector<double> real(size_t(n) * k);
  for (auto& v : real) v = normal(rng);
  std::printf("[ info ] %-9s %-5s %-3s %-2s %12s %12s %10s\n", "act", "quant", "K", "W", "max|err|",
              "max rel err", "err/bound");
  for (const FloatCase fc :
       {FloatCase{DType::kFp16, false, 4}, FloatCase{DType::kFp16, true, 4},
        FloatCase{DType::kBf16, false, 4}, FloatCase{DType::kBf16, true, 4},
        FloatCase{DType::kFp8E4M3, false, 4}, FloatCase{DType::kFp8E5M2, false, 4},
        FloatCase{DType::kFp8E4M3, true, 4}, FloatCase{DType::kFp16, false, 8},
        FloatCase{DType::kFp16, true, 2}, FloatCase{DType::kInt8, true, 4}}) {
    for (int wbits : {1, 2, 4, 8}) {
      const auto wq = quantize_weights(wbits == 1 ? WeightKind::kBinary : WeightKind::kUInt, wbits,
                                       128, real, n, k);
      std::vector<double> w_hat(size_t(n) * k);
      for (int c = 0; c < n; ++c) {
        for (int kk = 0; kk < k; ++kk) w_hat[size_t(c) * k + kk] = wq.dequant(c, kk);
      }
      const auto acts = random_acts(rng, fc.act, size_t(m) * k, 0.5);
      const LutGemmConfig cfg = default_lut_gemm_config(fc.act, fc.k_group, fc.quantize);
      const auto y = lut_gemm(cfg, acts, m, wq);
      const auto ref = dequant_gemm(fc.act, acts, m, w_hat, n, k);
      double max_err = 0, max_rel = 0, max_ratio = 0;
      for (int r = 0; r < m; ++r) {
        for (int c = 0; c < n; ++c) {
          double mag = 0;
          const double bound = error_bound(cfg, acts, r, wq, c, &mag);
          const double err = std::fabs(y[size_t(r) * n + c] - ref[size_t(r) * n + c]);
          ASSERT_LE(err, bound) << dtype_name(fc.act) << " quant=" << fc.quantize << " W=" << wbits
                                << " row " << r << " col " << c << ", " << seed_note(seed);
          max_err = std::max(max_err, err);
          max_rel = std::max(max_rel, err / mag);
          max_ratio = std::max(max_ratio, err / bound);
        }
      }
      std::printf("[ info ] %-9s %-5s %-3d %-2d %12.3e %12.3e %10.3f\n",
                  std::string(dtype_name(fc.act)).c_str(), fc.quantize ? "yes" : "no", fc.k_group,
                  wbits, max_err, max_rel, max_ratio);
    }
  }
}

TEST(LutGemmFloat, MultiBasisBinaryMatchesItsDequantizedWeights) {
  const uint64_t seed = test_seed(34);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 0.02);
  const int m = 2, n = 24, k = 256;
  std::vector<double> real(size_t(n) * k);
  for (auto& v : real) v = normal(rng);
  for (int salient : {0, 8, 16}) {
    const auto b = fit_multi_basis_binary(real, n, k, 2, 128, salient);
    std::vector<double> w_hat(size_t(n) * k);
    double fit_err = 0, norm = 0;
    for (int r = 0; r < n; ++r) {
      for (int c = 0; c < k; ++c) {
        w_hat[size_t(r) * k + c] = b.dequant(r, c);
        fit_err += std::pow(w_hat[size_t(r) * k + c] - real[size_t(r) * k + c], 2);
        norm += std::pow(real[size_t(r) * k + c], 2);
      }
    }
    const auto acts = random_acts(rng, DType::kFp16, size_t(m) * k, 0.5);
    const LutGemmConfig cfg = default_lut_gemm_config(DType::kFp16, 4);
    const auto y = lut_gemm(cfg, acts, m, b);
    const auto ref = dequant_gemm(DType::kFp16, acts, m, w_hat, n, k);
    // Bound: scale fusion rounds a*alpha_c to fp16 (u16 each), the fp16 table adds, fp32 chain.
    const double u16 = fp_unit_roundoff(DType::kFp16), u32 = fp_unit_roundoff(DType::kFp32);
    double max_ratio = 0;
    for (int r = 0; r < m; ++r) {
      for (int c = 0; c < n; ++c) {
        double bound = 0;
        for (int j = 0; j < b.bases; ++j) {
          for (int g = 0; g < b.groups(); ++g) {
            double abs_sum = 0;
            for (int kk = g * b.group; kk < std::min(k, (g + 1) * b.group); ++kk) {
              if (b.is_salient(kk)) continue;
              abs_sum += std::fabs(decode(DType::kFp16, acts[size_t(r) * k + kk]) *
                                   b.col_scales[size_t(j) * k + kk]);
            }
            const int lut_groups = (b.group + 3) / 4;
            const double per = abs_sum * (u16 * (1 + 1e-9) + gamma(3, u16) * (1 + u16)) *
                                   (1 + gamma(lut_groups, u32)) +
                               gamma(lut_groups, u32) * abs_sum * 2 +
                               (3 * fp_min_subnormal(DType::kFp16) + 2 * k * 6e-8);
            bound += std::fabs(b.row_scales[(size_t(j) * n + c) * b.groups() + g]) * per;
          }
        }
        bound += 1e-12;
        const double err = std::fabs(y[size_t(r) * n + c] - ref[size_t(r) * n + c]);
        ASSERT_LE(err, bound) << "s=" << salient << " row " << r << " col " << c << ", "
                              << seed_note(seed);
        max_ratio = std::max(max_ratio, err / bound);
      }
    }
    std::printf(
        "[ info ] multi-basis binary kb=2 g=128 s=%d: %.3f bits/weight, fit rel. error %.3f, "
        "LUT err/bound %.3f\n",
        salient, b.bits_per_weight(), std::sqrt(fit_err / norm), max_ratio);
  }
}

TEST(LutGemm, BadInputThrowsTypedErrors) {
  QuantizedWeights w;
  w.n = 2;
  w.k = 4;
  w.wbits = 2;
  w.group_size = 4;
  w.codes.assign(8, 1);
  w.scales = {1.0, NAN};
  w.zeros = {0.0, 0.0};
  const std::vector<uint32_t> acts(4, 0);
  try {
    lut_gemm(default_lut_gemm_config(DType::kInt8), acts, 1, w);
    FAIL() << "NaN scale accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("scale of row 1, group 0 is NaN"), std::string::npos)
        << e.what();
  }
  w.scales = {1.0, 1.0};
  EXPECT_THROW(lut_gemm(default_lut_gemm_config(DType::kInt8), std::vector<uint32_t>(5, 0), 1, w),
               InputError);
  EXPECT_THROW(lut_gemm(default_lut_gemm_config(DType::kInt8, 0), acts, 1, w), InputError);
  EXPECT_THROW(lut_gemm(default_lut_gemm_config(DType::kInt8, 9), acts, 1, w), InputError);
  w.wbits = 9;
  EXPECT_THROW(lut_gemm(default_lut_gemm_config(DType::kInt8), acts, 1, w), InputError);
  const std::vector<double> real(8, 0.1);
  EXPECT_THROW(quantize_weights(WeightKind::kBinary, 2, 0, real, 2, 4), InputError);
  EXPECT_THROW(quantize_weights(WeightKind::kUInt, 0, 0, real, 2, 4), InputError);
  EXPECT_THROW(quantize_weights(WeightKind::kUInt, 4, 0, real, 3, 4), InputError);
}

}  // namespace
}  // namespace ltc::golden
