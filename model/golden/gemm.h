// Whole mpGEMMs through the LUT path, and the dense references they are checked against.
// Y[M,N] = A[M,K] * W_hat[N,K]^T with W_hat = dequantized weights.
//
// LUT path (lut_gemm_partials), for every row m, output column n and quantization group g:
//    per K slice p (k_slices.h; one unless the kernel slices K): acc_p = 0 (acc dtype)
//    for each LUT group of K consecutive columns in g and p (ascending; the tail zero-padded):
//      H = precompute_half_table(activations of the group)          (lmma.h rules)
//      unquantized: acc = lmma(H, planes, C = acc)                   (planes first, then groups)
//      quantized:   (Q, scale) = quantize_table(H); i = lmma(Q, planes, C = 0) in int32;
//                   acc = fp_add(acc, fp_mul(fp32(i) * scale))       (acc is fp32 then)
//    S[m,n,g] = decode(acc_0 + acc_1 + ...), the slices added in slice order in the acc dtype
//    (wrapping int32 adds: exact, so integer activations do not see the slicing)
// Epilogue (lut_gemm_epilogue), in double, g ascending, with A_g = sum_{k in g} a_k (k ascending):
//    Y[m,n] = sum_g s_g * ((0.5 * S + 0.5 * (2^W - 1) * A_g) - z_g * A_g)
// using sum_k a_k q_k = 1/2 sum_b 2^b T[p_b] + 1/2 (2^W - 1) sum_k a_k
// (docs/arithmetic.md#symmetric-reinterpretation).
#pragma once

#include "model/golden/dtype.h"
#include "model/golden/k_slices.h"
#include "model/golden/weights.h"

#include <cstdint>
#include <vector>

namespace ltc::golden {

struct LutGemmConfig {
  DType act = DType::kFp16;
  int k_group = 4;              // K of the LUT tensor core, 1..8
  bool quantize_table = false;  // int8 tables with one fp32 scale per table
  DType table = DType::kFp16;   // unquantized entry dtype
  DType acc = DType::kFp32;
  KSlices slices;  // chunk a multiple of k_group
};
// fp acts: table = act, acc = fp32; int8 acts: table = int16 (exact), acc = int32. With
// quantize_table the accumulator across tables is fp32.
LutGemmConfig default_lut_gemm_config(DType act, int k_group = 4, bool quantize_table = false);
void validate(const LutGemmConfig& cfg);

struct LutGemmPartials {
  int m = 0, n = 0, groups = 0;
  std::vector<double> partial;   // m * n * groups: S[m,n,g]
  std::vector<double> act_sums;  // m * groups: A_g
};

// acts: m * K raw values in cfg.act. Throws InputError on mismatched sizes.
LutGemmPartials lut_gemm_partials(const LutGemmConfig& cfg, const std::vector<uint32_t>& acts,
                                  int m, const QuantizedWeights& w);
std::vector<double> lut_gemm_epilogue(const LutGemmPartials& p, const QuantizedWeights& w);
std::vector<double> lut_gemm(const LutGemmConfig& cfg, const std::vector<uint32_t>& acts, int m,
                             const QuantizedWeights& w);

// Multi-basis binary through the LUT path: per basis j a W = 1 LMMA chain on tables of
// encode(act, a_c * alpha_c[j][c]), row scale per group, plus the dense salient branch in double.
std::vector<double> lut_gemm(const LutGemmConfig& cfg, const std::vector<uint32_t>& acts, int m,
                             const MultiBasisBinaryWeights& w);

// Integer-exact reference in the grouped form: D[m,n,g] = sum_{k in g} a_k q_k in double, and
//    Y[m,n] = sum_g s_g * (D - z_g * A_g), g ascending: bit-identical to lut_gemm for integer
// activations because every partial is an exact integer.
struct GroupedDotProducts {
  int m = 0, n = 0, groups = 0;
  std::vector<double> dot;       // m * n * groups
  std::vector<double> act_sums;  // m * groups
};
GroupedDotProducts grouped_code_dots(DType act, const std::vector<uint32_t>& acts, int m,
                                     const QuantizedWeights& w);
std::vector<double> grouped_reference(const GroupedDotProducts& d, const QuantizedWeights& w);

// Dequantize-then-GEMM in double: Y[m,n] = sum_k a_k * w_hat[n,k], k ascending.
std::vector<double> dequant_gemm(DType act, const std::vector<uint32_t>& acts, int m,
                                 const std::vector<double>& w_hat, int n, int k);

// The largest GEMM extent: cuBLAS and CUTLASS take M, N and K as 32-bit ints, and every size
// product the models form (M*N*K in doubles, tile counts in int64) stays exact below it.
inline constexpr int64_t kMaxGemmExtent = 2147483647;
// Throws InputError naming --m, --n or --k when an extent is < 1 or above kMaxGemmExtent.
void check_gemm_extents(int64_t m, int64_t n, int64_t k);

}  // namespace ltc::golden
