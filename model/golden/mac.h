// Semantics of the baseline tensor cores (docs/hardware.md#baselines), for the RTL baselines and
// the PPA comparison.
#pragma once

#include "model/golden/dtype.h"
#include "model/golden/k_slices.h"
#include "model/golden/lmma.h"
#include "model/golden/weights.h"

#include <cstdint>
#include <vector>

namespace ltc::golden {

// MAC tensor core dot-product array: O[m,n] = C[m,n] + sum_k A[m,k] * W[n,k] with
//    acc = C; for k = 0..K-1: acc = acc + round_acc(A[m,k] * W[n,k]); O = convert(acc -> out).
// The product is rounded once (RNE) to the accumulator (fp_mul): for FP16xFP16->FP32, FP8xFP8->FP16
// and INT8xINT8->INT32 its significand fits and only the add rounds; FP16xFP16->FP16 (the paper's
// FP16-accumulating MAC unit) rounds the product too. Overflow gives infinity (E4M3 products into
// FP16 can overflow). Integer accumulation wraps in 32 bits.
struct MacType {
  DType a = DType::kFp16;
  DType w = DType::kFp16;
  DType acc = DType::kFp32;
  DType out = DType::kFp32;
};
void validate(const LmmaShape& shape, const MacType& type);
std::vector<uint32_t> mac_dot(const LmmaShape& shape, const MacType& type,
                              const std::vector<uint32_t>& a, const std::vector<uint32_t>& w,
                              const std::vector<uint32_t>& c);

// Dequantize-then-MAC (the MAC core's mpGEMM path): weight code q becomes
// w = encode(wdt, scale * (q - zero)) (one rounding, in double), then mac_dot.
std::vector<uint32_t> dequantize_codes(const std::vector<uint8_t>& codes, double scale, double zero,
                                       DType wdt);

// A whole GEMM on MAC tensor cores, as an MMA K loop runs it: O[m,n] = sum_k A[m,k] * W[n,k].
// For every output: acc = 0 in type.acc; for each chunk of `k_step` columns (the instruction's K:
// 16 for fp16/bf16, 32 for int8), ascending, the tail zero-padded: acc = mac_dot(chunk, C = acc)
// (products and adds as mac_dot defines them, k ascending); finally O = convert(type.out, acc).
// (A zero-padded term adds +0, which never changes acc: acc is never -0.) a: m x k, w: n x k raw
// values, row-major; returns m x n raw values in type.out. Throws InputError on bad sizes/types.
// K sliced (k_slices.h; chunks a multiple of k_step): one such acc per slice over its chunks,
// then acc = acc_0 + acc_1 + ... in slice order (fp_add / wrapping int add), then convert.
std::vector<uint32_t> mac_gemm(const MacType& type, int k_step, const std::vector<uint32_t>& a,
                               int m, const std::vector<uint32_t>& w, int n, int k,
                               const KSlices& slices = {});

// Dequantized weight matrix for dequantize-then-MAC: W[n,k] = dequantize_codes of code q[n,k]
// with the scale and zero point of (row n, group of k), in `wdt` (n x k raw values, row-major).
std::vector<uint32_t> dequantize_weights(const QuantizedWeights& w, DType wdt);

// ADD-based bit-serial core (Stripes-like), one add per set weight bit:
//    acc = C; for b = 0..W-1: for k = 0..K-1: if bit b of q[n,k]: acc = acc + widen(A[m,k]) * 2^b
// with the same widen / scale / add rules as lmma() (type.table is the activation dtype here).
std::vector<uint32_t> add_serial_dot(const LmmaShape& shape, const LmmaType& type,
                                     const std::vector<uint32_t>& a,
                                     const std::vector<uint8_t>& codes,
                                     const std::vector<uint32_t>& c);

}  // namespace ltc::golden
