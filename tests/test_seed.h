// One rule for every random test: its seed comes through test_seed(), LTC_SEED=N replaces it
// (README: "Random tests print their seed; LTC_SEED=N replays them"), and a failure prints
// seed_note() so the run can be replayed.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>

namespace ltc::test_support {

// `fallback`, or LTC_SEED when it is set.
inline uint64_t test_seed(uint64_t fallback) {
  if (const char* s = std::getenv("LTC_SEED")) return std::strtoull(s, nullptr, 10);
  return fallback;
}

inline std::string seed_note(uint64_t seed) {
  return "seed " + std::to_string(seed) + " (replay with LTC_SEED=" + std::to_string(seed) + ")";
}

}  // namespace ltc::test_support
