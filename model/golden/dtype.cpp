#include "model/golden/dtype.h"

#include "common/error.h"
#include "model/golden/fp.h"

#include <cmath>
#include <string>

namespace ltc::golden {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kInt8:
      return "int8";
    case DType::kInt16:
      return "int16";
    case DType::kInt32:
      return "int32";
    case DType::kFp16:
      return "fp16";
    case DType::kBf16:
      return "bf16";
    case DType::kFp8E4M3:
      return "fp8e4m3";
    case DType::kFp8E5M2:
      return "fp8e5m2";
    case DType::kFp32:
      return "fp32";
  }
  return "?";
}

DType parse_dtype(std::string_view name, std::string_view what) {
  for (DType t : kAllDTypes) {
    if (dtype_name(t) == name) return t;
  }
  struct Alias {
    std::string_view name;
    DType t;
  };
  static constexpr Alias kAliases[] = {
      {"i8", DType::kInt8},      {"i16", DType::kInt16},   {"i32", DType::kInt32},
      {"f16", DType::kFp16},     {"f32", DType::kFp32},    {"e4m3", DType::kFp8E4M3},
      {"e5m2", DType::kFp8E5M2}, {"fp8", DType::kFp8E4M3}, {"half", DType::kFp16},
      {"float", DType::kFp32},
  };
  for (const auto& a : kAliases) {
    if (a.name == name) return a.t;
  }
  throw InputError(std::string(what) + ": unknown dtype '" + std::string(name) +
                   "' (valid: int8, int16, int32, fp16, bf16, fp8e4m3, fp8e5m2, fp32)");
}

DType parse_act_dtype(std::string_view name, std::string_view what) {
  std::string valid;
  for (DType t : kActDTypes) valid += (valid.empty() ? "" : ", ") + std::string(dtype_name(t));
  try {
    const DType t = parse_dtype(name, what);
    for (DType a : kActDTypes) {
      if (a == t) return t;
    }
  } catch (const InputError&) {
  }
  throw InputError(std::string(what) + ": '" + std::string(name) +
                   "' is not an activation dtype (valid: " + valid + ")");
}

int dtype_bits(DType t) {
  switch (t) {
    case DType::kInt8:
    case DType::kFp8E4M3:
    case DType::kFp8E5M2:
      return 8;
    case DType::kInt16:
    case DType::kFp16:
    case DType::kBf16:
      return 16;
    case DType::kInt32:
    case DType::kFp32:
      return 32;
  }
  return 0;
}

bool is_float(DType t) {
  return t != DType::kInt8 && t != DType::kInt16 && t != DType::kInt32;
}

namespace {

uint32_t encode_float(DType t, double x) {
  const FpFormat& f = fp_format(t);
  const uint32_t sign = std::signbit(x) ? 1u : 0u;
  const uint32_t sign_bit = sign << (f.bits() - 1);
  if (std::isnan(x)) return fp_canonical_nan(t);
  const int emax = f.has_inf ? (1 << f.exp_bits) - 2 - f.bias() : (1 << f.exp_bits) - 1 - f.bias();
  const uint32_t inf_bits = ((1u << f.exp_bits) - 1u) << f.man_bits;
  // E4M3 saturates finite overflow to its largest finite value S.1111.110.
  const uint32_t overflow_bits =
      f.has_inf ? (sign_bit | inf_bits) : (sign_bit | inf_bits | ((1u << f.man_bits) - 2u));
  if (std::isinf(x)) return f.has_inf ? (sign_bit | inf_bits) : fp_canonical_nan(t);
  const double a = std::fabs(x);
  if (a == 0.0) return sign_bit;
  int e2 = 0;
  std::frexp(a, &e2);  // a = m * 2^e2, m in [0.5, 1)
  const int exp_unbiased = e2 - 1;
  if (exp_unbiased > emax + 1) return overflow_bits;
  const int emin = 1 - f.bias();
  // Quantum (weight of the last significand bit) at this binade, or the subnormal quantum.
  int q = (exp_unbiased < emin ? emin : exp_unbiased) - f.man_bits;
  const double scaled = std::ldexp(a, -q);  // exact: a power-of-two scaling
  double r = std::nearbyint(scaled);        // default rounding mode: to nearest, ties to even
  uint64_t mant = static_cast<uint64_t>(r);
  const uint64_t hidden = uint64_t{1} << f.man_bits;
  if (mant >= (hidden << 1)) {  // rounding carried into the next binade
    mant >>= 1;
    ++q;
  }
  if (mant < hidden) {  // subnormal (or rounded to zero)
    return sign_bit | static_cast<uint32_t>(mant);
  }
  const int biased = q + f.man_bits + f.bias();
  const uint32_t frac = static_cast<uint32_t>(mant - hidden);
  const int max_biased = f.has_inf ? (1 << f.exp_bits) - 2 : (1 << f.exp_bits) - 1;
  if (biased > max_biased) return overflow_bits;
  if (!f.has_inf && biased == max_biased && frac == (1u << f.man_bits) - 1u) return overflow_bits;
  return sign_bit | (static_cast<uint32_t>(biased) << f.man_bits) | frac;
}

double decode_float(DType t, uint32_t bits) {
  const FpFormat& f = fp_format(t);
  bits &= dtype_mask(t);
  const bool neg = (bits >> (f.bits() - 1)) & 1u;
  const uint32_t exp = (bits >> f.man_bits) & ((1u << f.exp_bits) - 1u);
  const uint32_t frac = bits & ((1u << f.man_bits) - 1u);
  const uint32_t exp_all_ones = (1u << f.exp_bits) - 1u;
  double v;
  if (f.has_inf && exp == exp_all_ones) {
    v = frac == 0 ? INFINITY : NAN;
  } else if (!f.has_inf && exp == exp_all_ones && frac == (1u << f.man_bits) - 1u) {
    v = NAN;
  } else if (exp == 0) {
    v = std::ldexp(static_cast<double>(frac), 1 - f.bias() - f.man_bits);
  } else {
    v = std::ldexp(static_cast<double>(frac | (1u << f.man_bits)),
                   static_cast<int>(exp) - f.bias() - f.man_bits);
  }
  if (std::isnan(v)) return v;
  return neg ? -v : v;
}

}  // namespace

uint32_t encode(DType t, double x) {
  if (is_float(t)) return encode_float(t, x);
  if (std::isnan(x)) return 0;
  const int bits = dtype_bits(t);
  const double lo = -std::ldexp(1.0, bits - 1);
  const double hi = std::ldexp(1.0, bits - 1) - 1;
  double r = std::nearbyint(x);
  if (r < lo) r = lo;
  if (r > hi) r = hi;
  return static_cast<uint32_t>(static_cast<int64_t>(r)) & dtype_mask(t);
}

double decode(DType t, uint32_t bits) {
  if (is_float(t)) return decode_float(t, bits);
  return static_cast<double>(int_value(t, bits));
}

}  // namespace ltc::golden
