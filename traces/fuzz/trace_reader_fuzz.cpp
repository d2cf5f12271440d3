// libFuzzer target: any byte string given to the trace reader (text or binary) must either parse
// into a valid trace that writes back and re-reads identically, or throw InputError. No crash,
// hang or sanitizer report. A binary input is read as given (a mutation is almost always refused
// by the checksum) and again with its checksum made right, so the parser behind it is fuzzed too.
#include "common/error.h"
#include "traces/trace.h"
#include "traces/trace_detail.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

void read_and_round_trip(std::string_view in) {
  try {
    const ltc::traces::Trace t = ltc::traces::read_trace(in, "fuzz");
    // A trace the reader accepted must round-trip through both forms.
    const ltc::traces::Trace a = ltc::traces::read_text(ltc::traces::write_text(t), "fuzz.text");
    const ltc::traces::Trace b = ltc::traces::read_binary(ltc::traces::write_binary(t), "fuzz.bin");
    if (!(a == t) || !(b == t)) std::abort();
  } catch (const ltc::InputError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  read_and_round_trip(in);
  if (size > 4 && in.substr(0, 4) == "LTCT") {
    std::string sealed(in);
    ltc::traces::detail::seal_binary(sealed);
    read_and_round_trip(sealed);
  }
  return 0;
}
