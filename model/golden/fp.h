// IEEE-style binary floating point on raw bits: the operations the RTL adders and multipliers
// implement, defined once here. All results round to nearest, ties to even, keep subnormals, and
// follow the overflow rule of dtype.h (E4M3 saturates to +-448, the other formats go to infinity).
// NaN results are the canonical NaN. x + (-x) is +0; (-0) + (-0) is -0.
//
// Each operation computes the exact result in double and rounds it once to the format: products of
// two formats of at most 24 significand bits are exact in double, and for sums double rounding is
// innocuous because 53 >= 2p + 2 for every p <= 24 (Figueroa, 1995). Tests check these functions
// against an integer-only implementation written separately.
#pragma once

#include "model/golden/dtype.h"

#include <cstdint>

namespace ltc::golden {

struct FpFormat {
  int exp_bits;
  int man_bits;  // stored fraction bits; precision p = man_bits + 1
  bool has_inf;  // false for E4M3 (OCP): exponent field all ones is a normal binade but S.1111.111
                 // is NaN
  int bias() const { return (1 << (exp_bits - 1)) - 1; }
  int bits() const { return 1 + exp_bits + man_bits; }
};

// Throws InputError for integer dtypes.
const FpFormat& fp_format(DType t);

uint32_t fp_canonical_nan(DType t);
bool fp_is_nan(DType t, uint32_t bits);
bool fp_is_inf(DType t, uint32_t bits);
// Largest finite value of the format (65504 for FP16, 448 for E4M3, 57344 for E5M2, ...).
double fp_max_finite(DType t);
// Smallest positive subnormal, 2^(1 - bias - man_bits).
double fp_min_subnormal(DType t);
// Unit roundoff 2^-p.
double fp_unit_roundoff(DType t);

// Sign flip (what the LUT unit's conditional negation does). Canonical NaN stays canonical.
uint32_t fp_neg(DType t, uint32_t a);
uint32_t fp_add(DType t, uint32_t a, uint32_t b);
// a (format ta) times b (format tb), rounded once to format `out`.
uint32_t fp_mul(DType out, DType ta, uint32_t a, DType tb, uint32_t b);
// a * 2^e rounded to the format: for e >= 0 exact unless it overflows (infinity, or 448 for E4M3);
// for e < 0 it may round into the subnormals. This is the bit-serial "exponent add".
uint32_t fp_scale_pow2(DType t, uint32_t a, int e);
// Conversion between any two dtypes (float or integer) with one rounding (dtype.h rules).
uint32_t convert(DType to, DType from, uint32_t bits);
// True when every value of `from` is exactly representable in `to`.
bool converts_exactly(DType from, DType to);

// Integers: two's complement arithmetic that wraps in the type's width, as the RTL does.
int64_t int_value(DType t, uint32_t bits);          // sign-extended
uint32_t int_wrap(DType t, int64_t value);          // low bits
uint32_t int_add(DType t, uint32_t a, uint32_t b);  // wraps
uint32_t int_shl(DType t, uint32_t a, int b);       // wraps

}  // namespace ltc::golden
