#include "cli/report/numerics.h"

#include "common/error.h"
#include "model/golden/fp.h"
#include "model/golden/gemm.h"
#include "model/golden/lmma.h"
#include "model/llm/precision.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace ltc::report {

std::string NumericsOptions::command() const {
  return fmt::format(
      "ltc numerics --m {} --n {} --k {} --acts {} --weights {} --lut-k {}{} --seed {}", m, n, k,
      acts, weights, k_group, quantize_table ? " --quantize-tables" : "", seed);
}

NumericsResult run_numerics(const NumericsOptions& o) {
  using namespace golden;
  const DType act = parse_act_dtype(o.acts, "--acts");
  const llm::WeightFormat wf = llm::parse_weight_format(o.weights, "--weights");
  if (!wf.is_low_bit()) {
    throw InputError("--weights: '" + o.weights +
                     "' is not a low-bit format (the LUT path takes intN, ternary, binary or "
                     "binary:kb=..)");
  }
  if (o.m < 1 || o.n < 1 || o.k < 1 || o.m > 4096 || o.n > 65536 || o.k > 65536) {
    throw InputError("--m/--n/--k must be in 1..4096 / 1..65536 / 1..65536");
  }
  // The study holds W (n x k) and A (m x k) as doubles several times over: a few GB at most.
  constexpr double kMaxElements = double(1 << 26);
  if (double(o.n) * o.k > kMaxElements || double(o.m) * o.k > kMaxElements) {
    throw InputError("--m/--n/--k: M*K and N*K must each be <= 2^26 (got M*K = " +
                     std::to_string(int64_t(o.m) * o.k) +
                     ", N*K = " + std::to_string(int64_t(o.n) * o.k) + ")");
  }
  if (o.k_group < 1 || o.k_group > golden::kMaxK) {
    throw InputError("--lut-k: " + std::to_string(o.k_group) + " is out of range (valid: 1.." +
                     std::to_string(golden::kMaxK) + ")");
  }
  std::mt19937_64 rng(o.seed);
  std::normal_distribution<double> wdist(0.0, 0.02), adist(0.0, 1.0);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> real(size_t(o.n) * o.k);
  for (auto& v : real) v = wdist(rng);
  std::vector<uint32_t> a(size_t(o.m) * o.k);
  for (auto& v : a) {
    const double x = adist(rng) * (unit(rng) < 0.02 ? 20.0 : 1.0);  // LLM-like outlier channels
    v = is_int(act) ? encode(act, std::clamp(std::nearbyint(x * 32), -128.0, 127.0))
                    : encode(act, x);
  }
  const LutGemmConfig cfg = default_lut_gemm_config(act, o.k_group, o.quantize_table);
  std::vector<double> y, w_hat(real.size());
  NumericsResult s;
  if (wf.kind == llm::WeightFormatKind::kMultiBasisBinary) {
    const auto b = fit_multi_basis_binary(real, o.n, o.k, wf.bases,
                                          wf.group_size > 0 ? wf.group_size : 128, wf.salient);
    y = lut_gemm(cfg, a, o.m, b);
    for (int r = 0; r < o.n; ++r) {
      for (int c = 0; c < o.k; ++c) w_hat[size_t(r) * o.k + c] = b.dequant(r, c);
    }
  } else {
    WeightKind kind = WeightKind::kUInt;
    if (wf.kind == llm::WeightFormatKind::kTernary) kind = WeightKind::kTernary;
    if (wf.kind == llm::WeightFormatKind::kBinary) kind = WeightKind::kBinary;
    const auto q = quantize_weights(kind, wf.planes(), std::max(0, wf.group_size), real, o.n, o.k);
    y = lut_gemm(cfg, a, o.m, q);
    if (is_int(act) && !o.quantize_table) {
      const auto exact = grouped_reference(grouped_code_dots(act, a, o.m, q), q);
      s.grouped_exact = 0;
      for (size_t i = 0; i < y.size(); ++i) s.grouped_exact += y[i] == exact[i];
    }
    for (int r = 0; r < o.n; ++r) {
      for (int c = 0; c < o.k; ++c) w_hat[size_t(r) * o.k + c] = q.dequant(r, c);
    }
  }
  const auto ref = dequant_gemm(act, a, o.m, w_hat, o.n, o.k);
  double sum_sq = 0;
  for (int r = 0; r < o.m; ++r) {
    for (int c = 0; c < o.n; ++c) {
      double mag = 0;
      for (int kk = 0; kk < o.k; ++kk) {
        mag += std::fabs(decode(act, a[size_t(r) * o.k + kk]) * w_hat[size_t(c) * o.k + kk]);
      }
      const double err = std::fabs(y[size_t(r) * o.n + c] - ref[size_t(r) * o.n + c]);
      const double rel = mag > 0 ? err / mag : 0.0;
      s.max_abs = std::max(s.max_abs, err);
      s.max_rel = std::max(s.max_rel, rel);
      sum_sq += rel * rel;
      s.exact += err == 0.0;
      ++s.total;
    }
  }
  s.rms_rel = std::sqrt(sum_sq / s.total);
  return s;
}

}  // namespace ltc::report
