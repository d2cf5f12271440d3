// The LUT tensor core's arithmetic (docs/arithmetic.md#the-table, docs/hardware.md#tile): half
// tables, the offline weight transform, and the LMMA semantic function that RTL, compiler
// interpreter and simulator must reproduce bit for bit.
//
// Definitions (K = activations per table, 1..8; W = weight planes, 1..8):
//  * Pattern p of K weight bits, bit k for activation k. Full table T[p] = sum_k (2 p_k - 1) a_k.
//  * Table precompute (precompute_half_table): each activation is converted exactly to the table
//    dtype, then for the 2^(K-1) patterns with top bit p_{K-1} = 0 (indexed by the low K-1 bits)
//    T[p] = (((s0 a0) + s1 a1) + s2 a2) + ... with one rounded add per step in the table dtype,
//    k ascending (s_k = 2 p_k - 1). Integer tables are exact.
//  * Full table (precompute_full_table, the conventional design's in-tile table): the half table
//    plus T[p] = -T[~p] for top bit 1. Computing those sums directly would give the same values
//    (rounding is sign-symmetric) except the sign of an exact zero (x + (-x) = +0), so the
//    definition by negation keeps the table odd bit for bit and both designs bit-identical.
//  * Offline transform (transform_pattern): a pattern with top bit 1 has its low K-1 bits inverted,
//    so the lookup is T[p] = p'_{K-1} ? -H[p'_low] : H[p'_low] with no inversion in hardware.
//  * Table quantization (quantize_table): scale = fp32(max|T| / 127), entry = RNE(T / scale) in
//    int8 (the quotient taken in double); an all-zero table has scale 0 and zero entries.
//
// LMMA (lmma()): O[m,n] = C[m,n] + sum_{b<W} 2^b * T_m[p_b(n)], accumulated in this order:
//    acc = C[m,n]
//    for b = 0 .. W-1:                      (least significant plane first)
//      v   = lookup(H_m, p'_b(n))            (entry in the table dtype, negated by the top bit)
//      v   = widen(v) to the accumulator     (exact; validate() rejects lossy pairs)
//      v   = v * 2^b                         (int: shift, wraps in 32 bits;
//                                             float: exponent add, fp_scale_pow2: overflow -> inf)
//      acc = acc + v                         (int: wrapping add; float: fp_add, RNE)
//    O[m,n] = convert(acc -> out dtype)       (float: RNE; int32 -> int32 identity)
//  A GEMM with more than K activations chains LMMAs through C: planes first, then K groups in
//  ascending order (see gemm.h). Tables quantized to int8 give integer LMMAs (table int8, acc
//  int32).
#pragma once

#include "model/golden/dtype.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ltc::golden {

inline constexpr int kMaxK = 8;
inline constexpr int kMaxWBits = 8;

struct LmmaShape {
  int m = 2;
  int n = 64;
  int k = 4;
  int half_table_size() const { return 1 << (k - 1); }
  std::string name() const;  // "m2n64k4"
  bool operator==(const LmmaShape& o) const { return m == o.m && n == o.n && k == o.k; }
};

struct LmmaType {
  DType table = DType::kFp16;  // int8 (quantized), int16 (exact int8 tables), fp16, bf16, fp8*
  int wbits = 1;               // planes per instruction
  DType acc = DType::kFp32;    // int32, fp32, fp16
  DType out = DType::kFp32;    // acc dtype, or a narrower float
  std::string name() const;    // "fp16.w1.fp32.fp32"
};

// Throws InputError naming the parameter and its valid range: M, N >= 1, K in 1..8, W in 1..8,
// integer tables with int32 accumulators, float tables that widen exactly into a float accumulator.
void validate(const LmmaShape& shape, const LmmaType& type);

// ---- tables -----------------------------------------------------------------------------------
// acts: K raw activations in `act`; result: 2^(K-1) (half) or 2^K (full) entries in `table`.
std::vector<uint32_t> precompute_half_table(const uint32_t* acts, DType act, int k, DType table);
std::vector<uint32_t> precompute_full_table(const uint32_t* acts, DType act, int k, DType table);

// Negation in the table dtype (int: two's complement, wraps; float: sign flip).
uint32_t negate(DType t, uint32_t v);
// Entry for a transformed pattern p' from a half table.
uint32_t half_table_lookup(const uint32_t* half, DType t, int k, uint32_t transformed_pattern);
// The offline transform; it is an involution.
uint32_t transform_pattern(uint32_t pattern, int k);

struct QuantizedTable {
  std::vector<uint32_t> entries;  // int8 raw bits
  uint32_t scale_fp32 = 0;        // fp32 raw bits
};
QuantizedTable quantize_table(const std::vector<uint32_t>& table, DType t);

// ---- bit planes -------------------------------------------------------------------------------
// codes: n * k unsigned weight codes (row-major, one row per output column n), each < 2^wbits.
// Returns planes[b * n + col] = K-bit pattern of column col, plane b (bit kk = bit b of code kk).
std::vector<uint8_t> bit_planes(const uint8_t* codes, int n, int k, int wbits);
// Same, with transform_pattern applied: the layout the LUT tensor core reads.
std::vector<uint8_t> transformed_bit_planes(const uint8_t* codes, int n, int k, int wbits);

// ---- the instruction --------------------------------------------------------------------------
// half_tables[m * 2^(K-1) + j] (table dtype), planes[b * N + n] (transformed), c[m * N + n] (acc
// dtype). Returns O[m * N + n] in the out dtype.
std::vector<uint32_t> lmma(const LmmaShape& shape, const LmmaType& type,
                           const std::vector<uint32_t>& half_tables,
                           const std::vector<uint8_t>& planes, const std::vector<uint32_t>& c);

// The conventional LUT (lut-naive design): full 2^K tables built from activations inside the tile
// by precompute_full_table, indexed by the untransformed planes. Same accumulation as lmma().
// acts[m * K + kk] in `act`.
std::vector<uint32_t> lut_naive(const LmmaShape& shape, const LmmaType& type, DType act,
                                const std::vector<uint32_t>& acts,
                                const std::vector<uint8_t>& planes, const std::vector<uint32_t>& c);

}  // namespace ltc::golden
