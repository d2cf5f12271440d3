// Shared helpers for the golden tests: seeded random operands with the seed in failure output.
#pragma once

#include "model/golden/dtype.h"
#include "model/golden/fp.h"
#include "tests/test_seed.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace ltc::golden::test_support {

using ltc::test_support::seed_note;  // tests/test_seed.h: LTC_SEED replays every random test
using ltc::test_support::test_seed;

// LLM-like activations: mostly N(0,1) with a few large outliers, encoded into `t`; finite only.
inline std::vector<uint32_t> random_acts(std::mt19937_64& rng, DType t, size_t count,
                                         double scale = 1.0) {
  std::normal_distribution<double> normal(0.0, scale);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<int> int8(-128, 127);
  std::vector<uint32_t> v(count);
  for (auto& x : v) {
    if (is_int(t)) {
      x = encode(t, int8(rng));
      continue;
    }
    double val = normal(rng);
    if (unit(rng) < 0.02) val *= 20.0;  // outlier channels
    if (t == DType::kFp8E4M3 || t == DType::kFp8E5M2) val = std::max(-200.0, std::min(200.0, val));
    x = encode(t, val);
  }
  return v;
}

inline std::vector<uint8_t> random_codes(std::mt19937_64& rng, size_t count, int wbits) {
  std::uniform_int_distribution<int> d(0, (1 << wbits) - 1);
  std::vector<uint8_t> v(count);
  for (auto& x : v) x = static_cast<uint8_t>(d(rng));
  return v;
}

}  // namespace ltc::golden::test_support
