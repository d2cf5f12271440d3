// What the trace readers, writers and validation share (not part of the traces/ interface).
#pragma once

#include "common/error.h"

#include <array>
#include <cstdint>
#include <string>

namespace ltc::traces::detail {

// Bad input at `where` (file:line, kernel, instruction): InputError "where: why".
[[noreturn]] inline void fail(const std::string& where, const std::string& why) {
  throw InputError(where + ": " + why);
}

// "a,b,c", as the text form writes tile shapes.
inline std::string triple(const std::array<int64_t, 3>& t) {
  return std::to_string(t[0]) + "," + std::to_string(t[1]) + "," + std::to_string(t[2]);
}

// The first bytes of the binary form.
inline constexpr char kBinaryMagic[4] = {'L', 'T', 'C', 'T'};

}  // namespace ltc::traces::detail
