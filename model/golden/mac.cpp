#include "model/golden/mac.h"

#include "common/error.h"
#include "model/golden/fp.h"

#include <algorithm>
#include <cstddef>
#include <string>

namespace ltc::golden {

namespace {

void check_size(const char* what, size_t got, size_t want) {
  if (got != want) {
    throw InputError(std::string(what) + ": " + std::to_string(got) + " elements, expected " +
                     std::to_string(want));
  }
}

// Integer products must fit the accumulator (int8*int8 -> int32); products of float operands of
// at most 16 bits (the multiplier's formats) are rounded once to a float accumulator (exact when
// the significands fit: fp16/bf16/fp8 pairs -> fp32, fp8*fp8 -> fp16; rounded for fp16*fp16 ->
// fp16, the paper's MAC unit).
bool product_supported(DType a, DType w, DType acc) {
  if (is_int(acc)) return is_int(a) && is_int(w) && dtype_bits(a) + dtype_bits(w) <= 32;
  return !is_int(a) && !is_int(w) && dtype_bits(a) <= 16 && dtype_bits(w) <= 16;
}

}  // namespace

void validate(const LmmaShape& shape, const MacType& type) {
  constexpr int kMax = 1 << 20;
  if (shape.m < 1 || shape.n < 1 || shape.k < 1 || shape.m > kMax || shape.n > kMax ||
      shape.k > kMax) {
    throw InputError("MAC shape " + shape.name() + " is out of range (valid: 1..1048576 each)");
  }
  if (!product_supported(type.a, type.w, type.acc)) {
    throw InputError("MAC type " + std::string(dtype_name(type.a)) + " x " +
                     std::string(dtype_name(type.w)) + " -> " + std::string(dtype_name(type.acc)) +
                     " is not supported (integers into int32 with the product exact, e.g. int8 x "
                     "int8 -> int32; floats of at most 16 bits into a float accumulator, the "
                     "product rounded once to it)");
  }
  if (is_int(type.acc) ? type.out != type.acc : is_int(type.out)) {
    throw InputError("MAC output dtype " + std::string(dtype_name(type.out)) +
                     " is not valid for accumulator " + std::string(dtype_name(type.acc)));
  }
}

std::vector<uint32_t> mac_dot(const LmmaShape& shape, const MacType& type,
                              const std::vector<uint32_t>& a, const std::vector<uint32_t>& w,
                              const std::vector<uint32_t>& c) {
  validate(shape, type);
  check_size("mac A", a.size(), size_t(shape.m) * shape.k);
  check_size("mac W", w.size(), size_t(shape.n) * shape.k);
  check_size("mac C", c.size(), size_t(shape.m) * shape.n);
  std::vector<uint32_t> o(size_t(shape.m) * shape.n);
  for (int m = 0; m < shape.m; ++m) {
    for (int n = 0; n < shape.n; ++n) {
      uint32_t acc = c[size_t(m) * shape.n + n] & dtype_mask(type.acc);
      for (int k = 0; k < shape.k; ++k) {
        const uint32_t x = a[size_t(m) * shape.k + k];
        const uint32_t y = w[size_t(n) * shape.k + k];
        if (is_int(type.acc)) {
          const int64_t p = int_value(type.a, x) * int_value(type.w, y);
          acc = int_add(type.acc, acc, int_wrap(type.acc, p));
        } else {
          acc = fp_add(type.acc, acc, fp_mul(type.acc, type.a, x, type.w, y));
        }
      }
      o[size_t(m) * shape.n + n] = convert(type.out, type.acc, acc);
    }
  }
  return o;
}

std::vector<uint32_t> dequantize_codes(const std::vector<uint8_t>& codes, double scale, double zero,
                                       DType wdt) {
  std::vector<uint32_t> w(codes.size());
  for (size_t i = 0; i < codes.size(); ++i) w[i] = encode(wdt, scale * (codes[i] - zero));
  return w;
}

std::vector<uint32_t> mac_gemm(const MacType& type, int k_step, const std::vector<uint32_t>& a,
                               int m, const std::vector<uint32_t>& w, int n, int k,
                               const KSlices& slices) {
  if (k_step < 1) throw InputError("mac_gemm: K step " + std::to_string(k_step) + " must be >= 1");
  if (m < 0 || n < 0 || k < 1) {
    throw InputError("mac_gemm: M, N must be >= 0 and K >= 1 (M=" + std::to_string(m) +
                     " N=" + std::to_string(n) + " K=" + std::to_string(k) + ")");
  }
  validate(LmmaShape{1, 1, k_step}, type);
  validate(slices, k_step);
  check_size("mac_gemm A", a.size(), size_t(m) * size_t(k));
  check_size("mac_gemm W", w.size(), size_t(n) * size_t(k));
  const int64_t k_padded = (int64_t(k) + k_step - 1) / k_step * k_step;
  const uint32_t zero_a = encode(type.a, 0.0), zero_w = encode(type.w, 0.0);
  std::vector<uint32_t> o(size_t(m) * size_t(n));
  for (int r = 0; r < m; ++r) {
    for (int col = 0; col < n; ++col) {
      uint32_t acc = encode(type.acc, 0.0);
      for (int sl = 0; sl < slices.slices; ++sl) {
        uint32_t part = encode(type.acc, 0.0);
        for (int64_t kk = 0; kk < k_padded; ++kk) {
          if (slices.slice_of(kk) != sl) continue;
          const uint32_t x = kk < k ? a[size_t(r) * size_t(k) + size_t(kk)] : zero_a;
          const uint32_t y = kk < k ? w[size_t(col) * size_t(k) + size_t(kk)] : zero_w;
          if (is_int(type.acc)) {
            const int64_t p = int_value(type.a, x) * int_value(type.w, y);
            part = int_add(type.acc, part, int_wrap(type.acc, p));
          } else {
            part = fp_add(type.acc, part, fp_mul(type.acc, type.a, x, type.w, y));
          }
        }
        if (sl == 0) {
          acc = part;
        } else {
          acc = is_int(type.acc) ? int_add(type.acc, acc, part) : fp_add(type.acc, acc, part);
        }
      }
      o[size_t(r) * size_t(n) + size_t(col)] = convert(type.out, type.acc, acc);
    }
  }
  return o;
}

std::vector<uint32_t> dequantize_weights(const QuantizedWeights& w, DType wdt) {
  w.validate();
  std::vector<uint32_t> out;
  out.reserve(size_t(w.n) * size_t(w.k));
  for (int row = 0; row < w.n; ++row) {
    for (int g = 0; g < w.groups(); ++g) {
      const int c0 = g * w.group_size, c1 = std::min(w.k, c0 + w.group_size);
      const std::vector<uint8_t> codes(w.codes.begin() + ptrdiff_t(row) * w.k + c0,
                                       w.codes.begin() + ptrdiff_t(row) * w.k + c1);
      const std::vector<uint32_t> v = dequantize_codes(codes, w.scale(row, g), w.zero(row, g), wdt);
      out.insert(out.end(), v.begin(), v.end());
    }
  }
  return out;
}

std::vector<uint32_t> add_serial_dot(const LmmaShape& shape, const LmmaType& type,
                                     const std::vector<uint32_t>& a,
                                     const std::vector<uint8_t>& codes,
                                     const std::vector<uint32_t>& c) {
  validate(shape, type);
  check_size("add A", a.size(), size_t(shape.m) * shape.k);
  check_size("add codes", codes.size(), size_t(shape.n) * shape.k);
  check_size("add C", c.size(), size_t(shape.m) * shape.n);
  std::vector<uint32_t> o(size_t(shape.m) * shape.n);
  for (int m = 0; m < shape.m; ++m) {
    for (int n = 0; n < shape.n; ++n) {
      uint32_t acc = c[size_t(m) * shape.n + n] & dtype_mask(type.acc);
      for (int b = 0; b < type.wbits; ++b) {
        for (int k = 0; k < shape.k; ++k) {
          if (((codes[size_t(n) * shape.k + k] >> b) & 1u) == 0) continue;
          const uint32_t x = a[size_t(m) * shape.k + k];
          if (is_int(type.acc)) {
            const uint32_t v = int_shl(type.acc, int_wrap(type.acc, int_value(type.table, x)), b);
            acc = int_add(type.acc, acc, v);
          } else {
            acc =
                fp_add(type.acc, acc, fp_scale_pow2(type.acc, convert(type.acc, type.table, x), b));
          }
        }
      }
      o[size_t(m) * shape.n + n] = convert(type.out, type.acc, acc);
    }
  }
  return o;
}

}  // namespace ltc::golden
