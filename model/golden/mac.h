// Semantics of the baseline tensor cores (SPEC §3), for the RTL baselines and the PPA comparison.
#pragma once

#include "model/golden/dtype.h"
#include "model/golden/lmma.h"

#include <cstdint>
#include <vector>

namespace ltc::golden {

// MAC tensor core dot-product array: O[m,n] = C[m,n] + sum_k A[m,k] * W[n,k] with
//    acc = C; for k = 0..K-1: acc = acc + round_acc(A[m,k] * W[n,k]); O = convert(acc -> out).
// The product is rounded once to the accumulator (fp_mul); its significand always fits, so for
// FP16xFP16->FP32 and INT8xINT8->INT32 it is exact and only the add rounds; overflow gives
// infinity (E4M3 products into FP16 can overflow). Integer accumulation wraps in 32 bits.
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

// ADD-based bit-serial core (Stripes-like), one add per set weight bit:
//    acc = C; for b = 0..W-1: for k = 0..K-1: if bit b of q[n,k]: acc = acc + widen(A[m,k]) * 2^b
// with the same widen / scale / add rules as lmma() (type.table is the activation dtype here).
std::vector<uint32_t> add_serial_dot(const LmmaShape& shape, const LmmaType& type,
                                     const std::vector<uint32_t>& a,
                                     const std::vector<uint8_t>& codes,
                                     const std::vector<uint32_t>& c);

}  // namespace ltc::golden
