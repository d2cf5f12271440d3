// Number formats of a model step: the weight format (what `--weights` names) and its storage cost.
// Activations are a golden::DType (`--acts`, parsed with golden::parse_dtype).
#pragma once

#include "model/golden/dtype.h"

#include <string>
#include <string_view>

namespace ltc::llm {

enum class WeightFormatKind : uint8_t {
  kFloat,             // fp16, bf16, fp8e4m3: dense high-precision weights (MAC tensor core)
  kInt,               // intN, N in 1..8: N bit planes (signed codes, zero point 2^(N-1))
  kTernary,           // BitNet b1.58 {-1, 0, +1}: 2 planes
  kBinary,            // {-1, +1}: 1 plane
  kMultiBasisBinary,  // FluxBin: `bases` sign planes, each with its own table
};

struct WeightFormat {
  WeightFormatKind kind = WeightFormatKind::kFloat;
  golden::DType dtype = golden::DType::kFp16;  // kFloat only
  int bits = 16;                               // stored code bits per weight (planes for LUT)
  int group_size = 0;  // scale group (input columns); 0 = per output channel (scale cost ignored)
  int bases = 2;       // kMultiBasisBinary: K_b
  int salient = 0;     // kMultiBasisBinary: dense salient columns per group

  // The `--weights` spelling: "fp16", "int2", "int4:g=128", "ternary", "binary",
  // "binary:kb=2,g=128,s=8".
  std::string name() const;
  // True when the weights run through bit planes (LUT / ADD tensor cores, or dequant-then-MAC).
  bool is_low_bit() const { return kind != WeightFormatKind::kFloat; }
  // Bit planes one output needs (LMMA passes): N for intN, 2 ternary, 1 binary, bases for
  // multi-basis binary (each basis is a separate 1-plane LMMA on its own table); 0 for floats.
  int planes() const;
  // Storage including scales: intN with group g adds 16/g (fp16 scale); multi-basis binary costs
  // kb + 16 kb / g + (s ? (32 + 2 s) / g : 0), which gives FluxBin's 2.25 / 2.63 / 2.75 at g = 128.
  double bits_per_weight() const;
};

// Throws InputError naming `what` and the valid spellings.
WeightFormat parse_weight_format(std::string_view text, std::string_view what = "--weights");

// Bytes of one element of `t` (int8 -> 1, fp16 -> 2, fp32 -> 4, ...).
inline double dtype_bytes(golden::DType t) {
  return golden::dtype_bits(t) / 8.0;
}

}  // namespace ltc::llm
