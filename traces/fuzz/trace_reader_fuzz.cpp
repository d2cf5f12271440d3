// libFuzzer target: any byte string given to the trace reader (text or binary) must either parse
// into a valid trace that writes back and re-reads identically, or throw InputError. No crash,
// hang or sanitizer report.
#include "common/error.h"
#include "traces/trace.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  try {
    const ltc::traces::Trace t = ltc::traces::read_trace(in, "fuzz");
    // A trace the reader accepted must round-trip through both forms.
    const ltc::traces::Trace a = ltc::traces::read_text(ltc::traces::write_text(t), "fuzz.text");
    const ltc::traces::Trace b = ltc::traces::read_binary(ltc::traces::write_binary(t), "fuzz.bin");
    if (!(a == t) || !(b == t)) std::abort();
  } catch (const ltc::InputError&) {
  }
  return 0;
}
