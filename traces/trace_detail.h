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
// The binary form's own version, the u16 after the magic (traces/trace.h): 5 is the first with a
// checksum; files with 2 .. 4 there carried the trace version instead and no checksum.
inline constexpr int kBinaryFormat = 5;
// Bytes of the CRC-32 at the end of the binary form.
inline constexpr size_t kChecksumBytes = 4;

// Writes the CRC-32 of everything before the last kChecksumBytes into them (little-endian): what
// write_binary ends with; tests and the fuzzer use it to reach the parser with edited bytes.
void seal_binary(std::string& bin);

// The trace versions this build reads, kMinTraceVersion .. kTraceVersion, as "2 .. 5".
std::string supported_versions();
// "trace version N is not supported (this reader: 2 .. 5)" unless N is one of them.
void check_trace_version(int version, const std::string& where);

// "loop count must be >= 1": the one rule for a loop's trips, in every form.
void check_loop_count(int64_t count, const std::string& where);

}  // namespace ltc::traces::detail
