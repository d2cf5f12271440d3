// Integer helpers shared by every layer.
#pragma once

#include <cstdint>

namespace ltc {

// a / b rounded up, for a >= 0 and b > 0: tiles, waves, groups.
constexpr int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace ltc
