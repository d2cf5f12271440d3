// Number formats of activations, tables, weights and accumulators. A value is carried as its raw
// bit pattern in the low bits of a uint32_t (two's complement for integers), so the golden model,
// the RTL testbenches and the simulator exchange exactly the bits the hardware sees.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ltc::golden {

enum class DType : uint8_t { kInt8, kInt16, kInt32, kFp16, kBf16, kFp8E4M3, kFp8E5M2, kFp32 };

inline constexpr DType kAllDTypes[] = {DType::kInt8,    DType::kInt16, DType::kInt32,
                                       DType::kFp16,    DType::kBf16,  DType::kFp8E4M3,
                                       DType::kFp8E5M2, DType::kFp32};

// "int8", "int16", "int32", "fp16", "bf16", "fp8e4m3", "fp8e5m2", "fp32".
std::string_view dtype_name(DType t);
// Accepts the names above (and "f16", "f32", "i8", "e4m3", "e5m2"); throws InputError naming
// `what` (e.g. "--act") and the valid names otherwise.
DType parse_dtype(std::string_view name, std::string_view what = "dtype");
// An activation dtype (kActDTypes: int8, fp16, bf16, fp8e4m3, fp8e5m2, or an alias of these):
// the --acts / --act flags, which no tensor core takes int16, int32 or fp32 for.
DType parse_act_dtype(std::string_view name, std::string_view what);
inline constexpr DType kActDTypes[] = {DType::kInt8, DType::kFp16, DType::kBf16, DType::kFp8E4M3,
                                       DType::kFp8E5M2};

int dtype_bits(DType t);
bool is_float(DType t);
inline bool is_int(DType t) {
  return !is_float(t);
}
// The entry dtype of a LUT table built from `act` activations (docs/arithmetic.md#table-precision):
// int8 when the tables are quantized; else int16 for integer activations (a sum of K <= 8 int8
// values is exact in int16), else the activation's own type. Every layer asks this one function.
inline DType lut_table_dtype(DType act, bool quantized = false) {
  if (quantized) return DType::kInt8;
  return is_int(act) ? DType::kInt16 : act;
}
inline uint32_t dtype_mask(DType t) {
  return dtype_bits(t) == 32 ? 0xffffffffu : ((1u << dtype_bits(t)) - 1u);
}

// Value <-> bits for every dtype.
//  Floats: encode rounds to nearest, ties to even, with gradual underflow (no flush to zero).
//   Overflow: FP32/FP16/BF16/E5M2 round to +-infinity; E4M3 (OCP, no infinities) saturates
//   finite overflow to +-448, and maps +-infinity and NaN to NaN. Every NaN result is the
//   canonical positive quiet NaN of the format (fp_canonical_nan).
//  Integers: encode rounds to nearest even and saturates to the type's range; NaN encodes 0.
uint32_t encode(DType t, double x);
// Exact for every dtype (all fit in a double).
double decode(DType t, uint32_t bits);

}  // namespace ltc::golden
