// Format conversions and IEEE operations, checked exhaustively against computations that do not
// use the golden encoder: the compiler's _Float16, native float arithmetic, integer bit tricks and
// brute-force nearest-value search.
#include "common/error.h"
#include "model/golden/dtype.h"
#include "model/golden/fp.h"
#include "tests/golden/test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace ltc::golden {
namespace {

using test_support::seed_note;
using test_support::test_seed;

uint16_t half_bits(_Float16 h) {
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
_Float16 half_from_bits(uint16_t b) {
  _Float16 h;
  std::memcpy(&h, &b, 2);
  return h;
}
uint32_t float_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
float float_from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// Integer-only round-to-nearest-even truncation of the low `drop` bits of a wider IEEE pattern
// (float -> bf16 with drop 16, fp16 -> e5m2 with drop 8): the classic bit trick. NaN excluded.
uint32_t rne_truncate(uint32_t wide, int drop) {
  const uint32_t lsb = (wide >> drop) & 1u;
  return (wide + ((1u << (drop - 1)) - 1u) + lsb) >> drop;
}

// E4M3 by brute force: the finite code nearest to x (ties to even mantissa), saturating beyond 448.
uint32_t e4m3_reference(double x) {
  if (std::isnan(x) || std::isinf(x)) return 0x7f;
  const uint32_t sign = std::signbit(x) ? 0x80 : 0x00;
  const double a = std::fabs(x);
  uint32_t best = 0;
  double best_err = std::numeric_limits<double>::infinity();
  for (uint32_t c = 0; c < 0x7f; ++c) {  // 0x7f is NaN
    const uint32_t e = c >> 3, m = c & 7;
    const double v = e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, int(e) - 10);
    const double err = std::fabs(v - a);
    if (err < best_err || (err == best_err && (c & 1) == 0)) {
      best = c;
      best_err = err;
    }
  }
  return sign | best;
}

double e4m3_value_reference(uint32_t c) {
  const uint32_t e = (c >> 3) & 15, m = c & 7;
  if ((c & 0x7f) == 0x7f) return NAN;
  const double v = e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, int(e) - 10);
  return (c & 0x80) ? -v : v;
}

bool same_value(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

TEST(Fp16, DecodeMatchesCompilerHalfForAllPatterns) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const double ref = static_cast<double>(half_from_bits(static_cast<uint16_t>(b)));
    ASSERT_TRUE(same_value(decode(DType::kFp16, b), ref)) << "bits 0x" << std::hex << b;
  }
}

TEST(Fp16, EncodeMatchesCompilerHalfAtEveryValueAndMidpoint) {
  // Every finite value, and the exact midpoint to the next one plus/minus a tiny nudge: the cases
  // that decide ties-to-even and carry into the next binade.
  for (uint32_t b = 0; b < 0x7c00; ++b) {
    const double v = decode(DType::kFp16, b);
    const double next = decode(DType::kFp16, b + 1);  // 0x7c00 is +inf: midpoint is overflow
    const double mid = b + 1 == 0x7c00 ? 65520.0 : (v + next) / 2;
    for (double x : {v, mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e9)}) {
      for (double s : {1.0, -1.0}) {
        const uint16_t ref = half_bits(static_cast<_Float16>(s * x));
        ASSERT_EQ(encode(DType::kFp16, s * x), ref) << "x = " << s * x;
      }
    }
  }
  EXPECT_EQ(encode(DType::kFp16, 1e10), 0x7c00u);
  EXPECT_EQ(encode(DType::kFp16, -1e10), 0xfc00u);
  EXPECT_EQ(encode(DType::kFp16, NAN), fp_canonical_nan(DType::kFp16));
  EXPECT_EQ(encode(DType::kFp16, -0.0), 0x8000u);
  EXPECT_EQ(encode(DType::kFp16, std::ldexp(1.0, -25)), 0x0000u);  // tie to even: zero
  EXPECT_EQ(encode(DType::kFp16, std::ldexp(1.5, -25)), 0x0001u);
}

TEST(Bf16, DecodeIsTheTopHalfOfFloatForAllPatterns) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const double ref = static_cast<double>(float_from_bits(b << 16));
    ASSERT_TRUE(same_value(decode(DType::kBf16, b), ref)) << "bits 0x" << std::hex << b;
  }
}

TEST(Bf16, EncodeMatchesIntegerRoundingAtEveryValueAndMidpoint) {
  for (uint32_t b = 0; b < 0x7f80; ++b) {
    const float v = float_from_bits(b << 16);
    const float mid = float_from_bits((b << 16) | 0x8000);  // exact midpoint, representable
    for (float x : {v, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e38f)}) {
      for (float s : {1.0f, -1.0f}) {
        const float y = s * x;
        const uint32_t ref = rne_truncate(float_bits(y), 16);
        ASSERT_EQ(encode(DType::kBf16, y), ref) << "x = " << y;
      }
    }
  }
}

TEST(Fp8E5M2, DecodeAndEncodeMatchHalfPrecisionTruncation) {
  for (uint32_t b = 0; b < 256; ++b) {
    const double ref = static_cast<double>(half_from_bits(static_cast<uint16_t>(b << 8)));
    ASSERT_TRUE(same_value(decode(DType::kFp8E5M2, b), ref)) << "bits " << b;
  }
  // Every fp16 value that is not NaN, rounded to e5m2 by the integer trick.
  for (uint32_t h = 0; h < 65536; ++h) {
    const double x = static_cast<double>(half_from_bits(static_cast<uint16_t>(h)));
    if (std::isnan(x)) continue;
    const uint32_t ref = std::isinf(x) ? (h >> 8) : rne_truncate(h, 8);
    ASSERT_EQ(encode(DType::kFp8E5M2, x), ref) << "fp16 bits 0x" << std::hex << h;
  }
  EXPECT_EQ(encode(DType::kFp8E5M2, 1e6), 0x7cu);  // overflow to infinity
}

TEST(Fp8E4M3, DecodeAndEncodeMatchBruteForceAndSaturate) {
  for (uint32_t b = 0; b < 256; ++b) {
    ASSERT_TRUE(same_value(decode(DType::kFp8E4M3, b), e4m3_value_reference(b))) << "bits " << b;
  }
  // All fp16 values cover every e4m3 value, midpoint and the saturation region.
  for (uint32_t h = 0; h < 65536; ++h) {
    const double x = static_cast<double>(half_from_bits(static_cast<uint16_t>(h)));
    ASSERT_EQ(encode(DType::kFp8E4M3, x), e4m3_reference(x)) << "x = " << x;
  }
  EXPECT_EQ(fp_max_finite(DType::kFp8E4M3), 448.0);
  EXPECT_EQ(encode(DType::kFp8E4M3, 1e9), 0x7eu);       // saturates to +448
  EXPECT_EQ(encode(DType::kFp8E4M3, -1e9), 0xfeu);      // saturates to -448
  EXPECT_EQ(encode(DType::kFp8E4M3, INFINITY), 0x7fu);  // no infinity: NaN
}

TEST(Fp32, EncodeMatchesNativeFloatConversion) {
  const uint64_t seed = test_seed(11);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint64_t> bits;
  for (int i = 0; i < 2000000; ++i) {
    uint64_t u = bits(rng);
    double x;
    std::memcpy(&x, &u, 8);
    if (i % 2)
      x = std::ldexp(std::fmod(x, 1.0), (int(u % 320)) - 160);  // concentrate on fp32 range
    if (std::isnan(x)) continue;
    ASSERT_EQ(encode(DType::kFp32, x), float_bits(static_cast<float>(x)))
        << "x = " << x << ", " << seed_note(seed);
  }
}

TEST(Int8, EncodeRoundsToEvenAndSaturates) {
  EXPECT_EQ(encode(DType::kInt8, 2.5), 2u);
  EXPECT_EQ(encode(DType::kInt8, -2.5), encode(DType::kInt8, -2.0));
  EXPECT_EQ(encode(DType::kInt8, 300.0), 127u);
  EXPECT_EQ(encode(DType::kInt8, -300.0), 0x80u);
  for (int v = -128; v < 128; ++v) EXPECT_EQ(decode(DType::kInt8, encode(DType::kInt8, v)), v);
  EXPECT_EQ(int_add(DType::kInt32, 0x7fffffffu, 1u), 0x80000000u);  // wraps
  EXPECT_EQ(int_shl(DType::kInt32, int_wrap(DType::kInt32, -3), 4), int_wrap(DType::kInt32, -48));
  EXPECT_EQ(int_shl(DType::kInt32, 0x40000000u, 1), 0x80000000u);  // shifts wrap too
}

TEST(Fp16, AddMatchesCompilerHalfOnStructuredAndRandomPairs) {
  // Structured: every sign/exponent with mantissas at the edges (subnormals, max, inf, NaN).
  std::vector<uint32_t> set;
  for (uint32_t e = 0; e < 32; ++e) {
    for (uint32_t m : {0u, 1u, 2u, 0x1ffu, 0x200u, 0x201u, 0x3feu, 0x3ffu}) {
      set.push_back((e << 10) | m);
      set.push_back(0x8000u | (e << 10) | m);
    }
  }
  auto check = [](uint32_t a, uint32_t b) {
    const _Float16 r = half_from_bits(uint16_t(a)) + half_from_bits(uint16_t(b));
    uint32_t ref = half_bits(r);
    if (std::isnan(static_cast<double>(r))) ref = fp_canonical_nan(DType::kFp16);
    return fp_add(DType::kFp16, a, b) == ref;
  };
  for (uint32_t a : set) {
    for (uint32_t b : set) ASSERT_TRUE(check(a, b)) << std::hex << a << " + " << b;
  }
  const uint64_t seed = test_seed(12);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint32_t> bits(0, 0xffff);
  for (int i = 0; i < 3000000; ++i) {
    const uint32_t a = bits(rng), b = bits(rng);
    ASSERT_TRUE(check(a, b)) << std::hex << a << " + " << b << ", " << seed_note(seed);
  }
}

TEST(Fp32, AddMultiplyAndScaleMatchNativeFloat) {
  const uint64_t seed = test_seed(13);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint32_t> bits;
  std::uniform_int_distribution<int> shift(0, 40);
  for (int i = 0; i < 2000000; ++i) {
    uint32_t a = bits(rng), b = bits(rng);
    if (i % 3 == 0) b = (a & 0xff800000u) ^ (bits(rng) & 0x807fffffu);  // same binade: cancellation
    const float fa = float_from_bits(a), fb = float_from_bits(b);
    uint32_t ref = float_bits(fa + fb);
    if (std::isnan(fa + fb)) ref = fp_canonical_nan(DType::kFp32);
    ASSERT_EQ(fp_add(DType::kFp32, a, b), ref) << fa << " + " << fb << ", " << seed_note(seed);
    const int e = shift(rng);
    uint32_t sref = float_bits(std::ldexp(fa, e));
    if (std::isnan(fa)) sref = fp_canonical_nan(DType::kFp32);
    ASSERT_EQ(fp_scale_pow2(DType::kFp32, a, e), sref) << fa << " * 2^" << e;
  }
  // fp16 x fp16 -> fp32 products are exact: native float multiply of the widened halves.
  for (int i = 0; i < 1000000; ++i) {
    const uint32_t a = bits(rng) & 0xffff, b = bits(rng) & 0xffff;
    const float p = float(half_from_bits(uint16_t(a))) * float(half_from_bits(uint16_t(b)));
    uint32_t ref = std::isnan(p) ? fp_canonical_nan(DType::kFp32) : float_bits(p);
    ASSERT_EQ(fp_mul(DType::kFp32, DType::kFp16, a, DType::kFp16, b), ref) << seed_note(seed);
  }
}

TEST(Fp8, AddAllPairsMatchesIndependentRounding) {
  for (uint32_t a = 0; a < 256; ++a) {
    for (uint32_t b = 0; b < 256; ++b) {
      // E4M3: exact double sum (both operands have 4-bit significands), nearest by brute force.
      const double x = e4m3_value_reference(a), y = e4m3_value_reference(b);
      const double s = x + y;
      const uint32_t ref4 = std::isnan(s) ? 0x7fu : e4m3_reference(s);
      ASSERT_EQ(fp_add(DType::kFp8E4M3, a, b), ref4) << x << " + " << y;
      // E5M2: the fp16 sum is correctly rounded (11 >= 2*3 + 2), then the integer truncation.
      const _Float16 h = half_from_bits(uint16_t(a << 8)) + half_from_bits(uint16_t(b << 8));
      uint32_t ref5;
      if (std::isnan(static_cast<double>(h))) {
        ref5 = fp_canonical_nan(DType::kFp8E5M2);
      } else if (std::isinf(static_cast<double>(h))) {
        ref5 = half_bits(h) >> 8;
      } else {
        ref5 = rne_truncate(half_bits(h), 8);
      }
      ASSERT_EQ(fp_add(DType::kFp8E5M2, a, b), ref5) << std::hex << a << " + " << b;
    }
  }
}

TEST(Bf16, AddMatchesFloatAddThenIntegerRounding) {
  const uint64_t seed = test_seed(14);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint32_t> bits(0, 0xffff);
  for (int i = 0; i < 2000000; ++i) {
    const uint32_t a = bits(rng), b = i % 2 ? bits(rng) : ((a & 0xff80) ^ (bits(rng) & 0x807f));
    const float s = float_from_bits(a << 16) + float_from_bits(b << 16);  // 24 >= 2*8 + 2
    const uint32_t ref =
        std::isnan(s) ? fp_canonical_nan(DType::kBf16) : rne_truncate(float_bits(s), 16);
    ASSERT_EQ(fp_add(DType::kBf16, a, b), ref)
        << std::hex << a << " + " << b << ", " << seed_note(seed);
  }
}

TEST(FpRules, SignedZerosInfinitiesNanAndOverflow) {
  for (DType t : {DType::kFp16, DType::kBf16, DType::kFp8E4M3, DType::kFp8E5M2, DType::kFp32}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    const uint32_t pz = encode(t, 0.0), nz = encode(t, -0.0);
    const uint32_t one = encode(t, 1.0), mone = encode(t, -1.0);
    EXPECT_EQ(fp_add(t, one, mone), pz);  // exact cancellation gives +0
    EXPECT_EQ(fp_add(t, nz, nz), nz);
    EXPECT_EQ(fp_add(t, pz, nz), pz);
    EXPECT_EQ(fp_add(t, fp_canonical_nan(t), one), fp_canonical_nan(t));
    const uint32_t big = encode(t, fp_max_finite(t));
    if (fp_format(t).has_inf) {
      const uint32_t inf = encode(t, INFINITY), ninf = encode(t, -INFINITY);
      EXPECT_TRUE(fp_is_inf(t, fp_add(t, big, big)));  // overflow to infinity
      EXPECT_EQ(fp_add(t, inf, ninf), fp_canonical_nan(t));
      EXPECT_EQ(fp_add(t, inf, one), inf);
      EXPECT_TRUE(fp_is_inf(t, fp_scale_pow2(t, big, 1)));
    } else {
      EXPECT_EQ(fp_add(t, big, big), big);  // E4M3 saturates
      EXPECT_EQ(fp_scale_pow2(t, big, 3), big);
    }
    // Smallest subnormal survives addition (no flush to zero).
    const uint32_t tiny = 1u;
    EXPECT_EQ(decode(t, fp_add(t, tiny, tiny)), 2 * fp_min_subnormal(t));
    EXPECT_EQ(fp_neg(t, one), mone);
  }
}

TEST(DType, ParseNamesTheFlagAndValidValues) {
  EXPECT_EQ(parse_dtype("fp8e4m3"), DType::kFp8E4M3);
  EXPECT_EQ(parse_dtype("f16"), DType::kFp16);
  try {
    parse_dtype("fp12", "--act");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--act"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("fp8e5m2"), std::string::npos);
  }
  EXPECT_THROW(fp_format(DType::kInt8), InputError);
}

TEST(DType, ExactConversionsAreExact) {
  // converts_exactly(from, to) is claimed only when a round trip is the identity for every value.
  for (DType from : kAllDTypes) {
    for (DType to : kAllDTypes) {
      if (!converts_exactly(from, to) || dtype_bits(from) > 16) continue;
      for (uint32_t b = 0; b < (1u << dtype_bits(from)); ++b) {
        if (is_float(from) && fp_is_nan(from, b)) continue;
        if (is_float(from) && is_int(to)) continue;
        ASSERT_EQ(convert(from, to, convert(to, from, b)), b & dtype_mask(from))
            << dtype_name(from) << " -> " << dtype_name(to) << " bits " << b;
      }
    }
  }
}

}  // namespace
}  // namespace ltc::golden
