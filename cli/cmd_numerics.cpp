// `ltc numerics`: the LUT datapath's numerical error on one mpGEMM, against the dense
// dequantize-then-GEMM in double: what table precision, table quantization and K cost in accuracy.
#include "cli/command.h"
#include "model/golden/error.h"
#include "model/golden/fp.h"
#include "model/golden/gemm.h"
#include "model/llm/precision.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <random>

namespace ltc::cli {
namespace {

struct NumericsOptions {
  int m = 4, n = 256, k = 1024;
  std::string acts = "fp16";
  std::string weights = "int2:g=128";
  int k_group = 4;
  bool quantize_table = false;
  uint64_t seed = 1;
  bool json = false;
};

struct ErrorStats {
  double max_abs = 0, max_rel = 0, rms_rel = 0;
  long exact = 0, total = 0;
  long grouped_exact = -1;  // integer activations: outputs equal to the grouped integer reference
};

ErrorStats run(const NumericsOptions& o) {
  using namespace golden;
  const DType act = parse_dtype(o.acts, "--acts");
  const llm::WeightFormat wf = llm::parse_weight_format(o.weights, "--weights");
  if (!wf.is_low_bit()) {
    throw InputError("--weights: '" + o.weights +
                     "' is not a low-bit format (the LUT path needs "
                     "intN, ternary, binary or binary:kb=..)");
  }
  if (o.m < 1 || o.n < 1 || o.k < 1 || o.m > 4096 || o.n > 65536 || o.k > 65536) {
    throw InputError("--m/--n/--k must be in 1..4096 / 1..65536 / 1..65536");
  }
  std::mt19937_64 rng(o.seed);
  std::normal_distribution<double> wdist(0.0, 0.02), adist(0.0, 1.0);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> real(size_t(o.n) * o.k);
  for (auto& v : real) v = wdist(rng);
  std::vector<uint32_t> a(size_t(o.m) * o.k);
  for (auto& v : a) {
    double x = adist(rng) * (unit(rng) < 0.02 ? 20.0 : 1.0);  // LLM-like outlier channels
    v = is_int(act) ? encode(act, std::clamp(std::nearbyint(x * 32), -128.0, 127.0))
                    : encode(act, x);
  }
  LutGemmConfig cfg = default_lut_gemm_config(act, o.k_group, o.quantize_table);
  std::vector<double> y, w_hat(real.size());
  long grouped_exact = -1;
  const int group = wf.group_size > 0 ? wf.group_size : 0;
  if (wf.kind == llm::WeightFormatKind::kMultiBasisBinary) {
    const auto b = fit_multi_basis_binary(real, o.n, o.k, wf.bases,
                                          wf.group_size > 0 ? wf.group_size : 128, wf.salient);
    y = lut_gemm(cfg, a, o.m, b);
    for (int r = 0; r < o.n; ++r)
      for (int c = 0; c < o.k; ++c) w_hat[size_t(r) * o.k + c] = b.dequant(r, c);
  } else {
    WeightKind kind = WeightKind::kUInt;
    int bits = wf.planes();
    if (wf.kind == llm::WeightFormatKind::kTernary) kind = WeightKind::kTernary;
    if (wf.kind == llm::WeightFormatKind::kBinary) kind = WeightKind::kBinary;
    const auto q = quantize_weights(kind, bits, group, real, o.n, o.k);
    y = lut_gemm(cfg, a, o.m, q);
    if (is_int(act) && !o.quantize_table) {
      const auto exact = grouped_reference(grouped_code_dots(act, a, o.m, q), q);
      grouped_exact = 0;
      for (size_t i = 0; i < y.size(); ++i) grouped_exact += y[i] == exact[i];
    }
    for (int r = 0; r < o.n; ++r)
      for (int c = 0; c < o.k; ++c) w_hat[size_t(r) * o.k + c] = q.dequant(r, c);
  }
  const auto ref = dequant_gemm(act, a, o.m, w_hat, o.n, o.k);
  ErrorStats s;
  double sum_sq = 0;
  for (int r = 0; r < o.m; ++r) {
    for (int c = 0; c < o.n; ++c) {
      double mag = 0;
      for (int kk = 0; kk < o.k; ++kk)
        mag += std::fabs(decode(act, a[size_t(r) * o.k + kk]) * w_hat[size_t(c) * o.k + kk]);
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
  s.grouped_exact = grouped_exact;
  return s;
}

CommandRegistrar reg{
    90, [](CLI::App& app) {
      auto opts = std::make_shared<NumericsOptions>();
      CLI::App* sub = app.add_subcommand(
          "numerics", "LUT mpGEMM error vs the dense double reference for one shape and format");
      sub->add_option("--m", opts->m, "rows of activations (tokens)");
      sub->add_option("--n", opts->n, "output channels");
      sub->add_option("--k", opts->k, "input channels");
      sub->add_option("--acts", opts->acts, "activation dtype: int8, fp16, bf16, fp8e4m3, fp8e5m2");
      sub->add_option("--weights", opts->weights,
                      "int1..int8[:g=G], ternary, binary, binary:kb=,g=,s=");
      sub->add_option("--lut-k", opts->k_group, "activations per table (K of the LUT), 1..8");
      sub->add_flag("--quantize-table", opts->quantize_table,
                    "INT8 tables with one fp32 scale each");
      sub->add_option("--seed", opts->seed, "random seed for weights and activations");
      sub->add_flag("--json", opts->json, "print one JSON object");
      sub->callback([opts] {
        const ErrorStats s = run(*opts);
        const std::string cmd = fmt::format(
            "ltc numerics --m {} --n {} --k {} --acts {} --weights {} --lut-k {}{} --seed {}",
            opts->m, opts->n, opts->k, opts->acts, opts->weights, opts->k_group,
            opts->quantize_table ? " --quantize-table" : "", opts->seed);
        if (opts->json) {
          nlohmann::json j{{"max_abs_err", s.max_abs},
                           {"max_rel_err", s.max_rel},
                           {"rms_rel_err", s.rms_rel},
                           {"exact_outputs", s.exact},
                           {"outputs", s.total},
                           {"reference", "dequantize-then-GEMM in double"},
                           {"command", cmd}};
          if (s.grouped_exact >= 0) j["grouped_integer_exact_outputs"] = s.grouped_exact;
          fmt::print("{}\n", j.dump());
          return;
        }
        fmt::print(
            "{}\n  outputs {}, bit-exact {}, max |err| {:.3e}, max err/sum|a*w| {:.3e}, "
            "rms {:.3e}\n  reference: dequantize-then-GEMM in double (golden::dequant_gemm)\n",
            cmd, s.total, s.exact, s.max_abs, s.max_rel, s.rms_rel);
        if (s.grouped_exact >= 0) {
          fmt::print(
              "  integer activations: {} of {} outputs bit-identical to the grouped integer "
              "reference (golden::grouped_reference)\n",
              s.grouped_exact, s.total);
          if (s.grouped_exact != s.total) set_exit_code(kExitFailed);
        }
      });
    }};

}  // namespace
}  // namespace ltc::cli
