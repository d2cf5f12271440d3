// Shared helpers of the RTL tests: one cached model per configuration, golden comparison with the
// seed in every failure message.
#pragma once

#include "model/hw/tensor_core.h"
#include "rtl/rtl_runner.h"
#include "rtl/rtl_verify.h"
#include "tests/test_seed.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace ltc::rtl::test {

inline hw::TensorCoreConfig config(hw::TensorCoreDesign d, int m, int n, int k, golden::DType act,
                                   int wbits) {
  return hw::TensorCoreConfig::make(d, golden::LmmaShape{m, n, k}, act, wbits);
}

inline std::string harness(const hw::TensorCoreConfig& c, bool trace = false) {
  HarnessOptions o;
  o.cache_dir = LTC_RTL_TEST_CACHE;
  o.trace = trace;
  return build_harness(c, o);
}

// 20% stalls on each side of the handshake, from `seed` (LTC_SEED replays, as test_seed).
inline StallOptions stalls(uint64_t seed) {
  StallOptions s;
  s.seed = uint32_t(ltc::test_support::test_seed(seed));
  s.in_stall_pct = 20;
  s.out_stall_pct = 20;
  return s;
}

// Runs `ops` (one LMMA each, with the config's wbits) through the model and expects the golden
// outputs bit for bit; returns the run.
inline TileRun expect_matches_golden(const hw::TensorCoreConfig& c,
                                     const std::vector<LmmaOperands>& ops, uint64_t seed,
                                     const StallOptions& stalls = {}) {
  std::vector<TileLmma> lmmas;
  for (const auto& o : ops) lmmas.push_back(tile_lmma(c, o));
  const TileRun run = run_tile(harness(c), c, lmmas, stalls);
  seed = ltc::test_support::test_seed(seed);  // the seed random_ops used
  EXPECT_EQ(run.outputs.size(), ops.size()) << c.id() << " " << ltc::test_support::seed_note(seed);
  int reported = 0;
  for (size_t i = 0; i < ops.size() && i < run.outputs.size(); ++i) {
    const auto want = golden_output(c, ops[i]);
    for (size_t e = 0; e < want.size(); ++e) {
      if (run.outputs[i][e] != want[e] && reported++ < 5) {
        ADD_FAILURE() << c.id() << " " << ltc::test_support::seed_note(seed) << " lmma " << i
                      << " element " << e << ": rtl 0x" << std::hex << run.outputs[i][e]
                      << ", golden 0x" << want[e];
      }
    }
  }
  EXPECT_EQ(reported, 0) << c.id() << " " << ltc::test_support::seed_note(seed);
  return run;
}

inline std::vector<LmmaOperands> random_ops(const hw::TensorCoreConfig& c, int count, uint64_t seed,
                                            bool specials = true) {
  std::mt19937_64 rng(ltc::test_support::test_seed(seed));  // LTC_SEED replays
  std::vector<LmmaOperands> ops;
  for (int i = 0; i < count; ++i) ops.push_back(random_operands(c, rng, specials));
  return ops;
}

// Weight codes such that, over the returned LMMAs, every column sees every K-bit pattern in
// every plane b < wbits (patterns rotate with the column, the LMMA and the plane).
inline std::vector<LmmaOperands> exhaustive_pattern_ops(const hw::TensorCoreConfig& c,
                                                        uint64_t seed) {
  const int n = c.shape.n, k = c.shape.k, patterns = 1 << k;
  const int count = (patterns + n - 1) / n;
  std::vector<LmmaOperands> ops = random_ops(c, count, seed);
  for (int j = 0; j < count; ++j) {
    for (int col = 0; col < n; ++col) {
      for (int kk = 0; kk < k; ++kk) {
        uint8_t code = 0;
        for (int b = 0; b < c.wbits; ++b) {
          const int p = (col + j * n + 5 * b) % patterns;
          code |= static_cast<uint8_t>(((p >> kk) & 1) << b);
        }
        ops[j].codes[size_t(col) * k + kk] = code;
      }
    }
  }
  return ops;
}

}  // namespace ltc::rtl::test
