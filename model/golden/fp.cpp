#include "model/golden/fp.h"

#include "common/error.h"

#include <cmath>
#include <string>

namespace ltc::golden {

const FpFormat& fp_format(DType t) {
  static const FpFormat kFp16{5, 10, true};
  static const FpFormat kBf16{8, 7, true};
  static const FpFormat kE4M3{4, 3, false};
  static const FpFormat kE5M2{5, 2, true};
  static const FpFormat kFp32{8, 23, true};
  switch (t) {
    case DType::kFp16:
      return kFp16;
    case DType::kBf16:
      return kBf16;
    case DType::kFp8E4M3:
      return kE4M3;
    case DType::kFp8E5M2:
      return kE5M2;
    case DType::kFp32:
      return kFp32;
    default:
      break;
  }
  throw InputError("fp_format: " + std::string(dtype_name(t)) + " is not a floating-point dtype");
}

uint32_t fp_canonical_nan(DType t) {
  const FpFormat& f = fp_format(t);
  const uint32_t exp_ones = ((1u << f.exp_bits) - 1u) << f.man_bits;
  if (!f.has_inf) return exp_ones | ((1u << f.man_bits) - 1u);  // E4M3: 0x7f
  return exp_ones | (1u << (f.man_bits - 1));                   // quiet bit set
}

bool fp_is_nan(DType t, uint32_t bits) {
  return std::isnan(decode(t, bits));
}
bool fp_is_inf(DType t, uint32_t bits) {
  return std::isinf(decode(t, bits));
}

double fp_max_finite(DType t) {
  const FpFormat& f = fp_format(t);
  const int max_biased = f.has_inf ? (1 << f.exp_bits) - 2 : (1 << f.exp_bits) - 1;
  const int frac_max = f.has_inf ? (1 << f.man_bits) - 1 : (1 << f.man_bits) - 2;
  return std::ldexp(static_cast<double>((1 << f.man_bits) + frac_max),
                    max_biased - f.bias() - f.man_bits);
}

double fp_min_subnormal(DType t) {
  const FpFormat& f = fp_format(t);
  return std::ldexp(1.0, 1 - f.bias() - f.man_bits);
}

double fp_unit_roundoff(DType t) {
  return std::ldexp(1.0, -(fp_format(t).man_bits + 1));
}

uint32_t fp_neg(DType t, uint32_t a) {
  if (fp_is_nan(t, a)) return fp_canonical_nan(t);
  return (a ^ (1u << (dtype_bits(t) - 1))) & dtype_mask(t);
}

uint32_t fp_add(DType t, uint32_t a, uint32_t b) {
  const double x = decode(t, a);
  const double y = decode(t, b);
  if (std::isnan(x) || std::isnan(y)) return fp_canonical_nan(t);
  if (std::isinf(x) && std::isinf(y) && std::signbit(x) != std::signbit(y)) {
    return fp_canonical_nan(t);
  }
  return encode(t, x + y);
}

uint32_t fp_mul(DType out, DType ta, uint32_t a, DType tb, uint32_t b) {
  const double x = decode(ta, a);
  const double y = decode(tb, b);
  if (std::isnan(x) || std::isnan(y)) return fp_canonical_nan(out);
  if ((std::isinf(x) && y == 0.0) || (std::isinf(y) && x == 0.0)) return fp_canonical_nan(out);
  return encode(out, x * y);  // exact in double for operands of <= 26 significand bits
}

uint32_t fp_scale_pow2(DType t, uint32_t a, int e) {
  const double x = decode(t, a);
  if (std::isnan(x)) return fp_canonical_nan(t);
  return encode(t, std::ldexp(x, e));
}

uint32_t convert(DType to, DType from, uint32_t bits) {
  const double x = decode(from, bits);
  if (std::isnan(x)) return is_float(to) ? fp_canonical_nan(to) : 0u;
  return encode(to, x);
}

bool converts_exactly(DType from, DType to) {
  if (from == to) return true;
  if (is_int(from) && is_int(to)) return dtype_bits(from) <= dtype_bits(to);
  if (is_int(from)) {  // intN -> float needs N-1 significand bits and the range 2^(N-1)
    const FpFormat& f = fp_format(to);
    return f.man_bits + 1 >= dtype_bits(from) - 1 &&
           fp_max_finite(to) >= std::ldexp(1.0, dtype_bits(from) - 1);
  }
  if (is_int(to)) return false;
  const FpFormat& a = fp_format(from);
  const FpFormat& b = fp_format(to);
  // Every finite value (incl. subnormals) must fit: precision, top and bottom of the range.
  const bool precision = b.man_bits >= a.man_bits;
  const bool top = fp_max_finite(to) >= fp_max_finite(from);
  const bool bottom = fp_min_subnormal(to) <= fp_min_subnormal(from);
  return precision && top && bottom;
}

int64_t int_value(DType t, uint32_t bits) {
  const int w = dtype_bits(t);
  const uint64_t v = bits & dtype_mask(t);
  const uint64_t sign = uint64_t{1} << (w - 1);
  return static_cast<int64_t>(v ^ sign) - static_cast<int64_t>(sign);
}

uint32_t int_wrap(DType t, int64_t value) {
  return static_cast<uint32_t>(static_cast<uint64_t>(value)) & dtype_mask(t);
}

uint32_t int_add(DType t, uint32_t a, uint32_t b) {
  return int_wrap(t, int_value(t, a) + int_value(t, b));
}

uint32_t int_shl(DType t, uint32_t a, int b) {
  return int_wrap(t, static_cast<int64_t>(static_cast<uint64_t>(int_value(t, a)) << b));
}

}  // namespace ltc::golden
