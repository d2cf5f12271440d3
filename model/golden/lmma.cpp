#include "model/golden/lmma.h"

#include "common/error.h"
#include "model/golden/fp.h"

#include <cmath>
#include <string>

namespace ltc::golden {

std::string LmmaShape::name() const {
  return "m" + std::to_string(m) + "n" + std::to_string(n) + "k" + std::to_string(k);
}

std::string LmmaType::name() const {
  return std::string(dtype_name(table)) + ".w" + std::to_string(wbits) + "." +
         std::string(dtype_name(acc)) + "." + std::string(dtype_name(out));
}

namespace {

void check_range(const char* what, int v, int lo, int hi) {
  if (v < lo || v > hi) {
    throw InputError(std::string(what) + " = " + std::to_string(v) + " is out of range (valid: " +
                     std::to_string(lo) + ".." + std::to_string(hi) + ")");
  }
}

void check_size(const char* what, size_t got, size_t want) {
  if (got != want) {
    throw InputError(std::string(what) + ": " + std::to_string(got) + " elements, expected " +
                     std::to_string(want));
  }
}

// Entry widened into the accumulator and scaled by 2^b: the bit-serial shift.
uint32_t widen_scale(const LmmaType& type, uint32_t v, int b) {
  if (is_int(type.acc)) {
    return int_shl(type.acc, int_wrap(type.acc, int_value(type.table, v)), b);
  }
  return fp_scale_pow2(type.acc, convert(type.acc, type.table, v), b);
}

uint32_t acc_add(DType acc, uint32_t a, uint32_t b) {
  return is_int(acc) ? int_add(acc, a, b) : fp_add(acc, a, b);
}

uint32_t table_sum(DType t, uint32_t a, uint32_t b) {
  return is_int(t) ? int_add(t, a, b) : fp_add(t, a, b);
}

}  // namespace

void validate(const LmmaShape& shape, const LmmaType& type) {
  check_range("M", shape.m, 1, 1 << 20);
  check_range("N", shape.n, 1, 1 << 20);
  check_range("K", shape.k, 1, kMaxK);
  check_range("W_BIT", type.wbits, 1, kMaxWBits);
  const std::string t = std::string(dtype_name(type.table));
  const std::string a = std::string(dtype_name(type.acc));
  if (type.table == DType::kInt32 || type.table == DType::kFp32) {
    throw InputError("table dtype " + t +
                     " is not a table format (valid: int8, int16, fp16, bf16, fp8e4m3, fp8e5m2)");
  }
  if (type.acc != DType::kInt32 && type.acc != DType::kFp32 && type.acc != DType::kFp16) {
    throw InputError("accumulator dtype " + a + " is not supported (valid: int32, fp32, fp16)");
  }
  if (is_int(type.table) != is_int(type.acc)) {
    throw InputError("table dtype " + t + " needs a " + (is_int(type.table) ? "int32" : "float") +
                     " accumulator, got " + a);
  }
  if (is_float(type.table) && !converts_exactly(type.table, type.acc)) {
    throw InputError("table dtype " + t + " does not widen exactly into accumulator " + a +
                     " (use fp32)");
  }
  if (is_int(type.acc) ? type.out != type.acc : is_int(type.out)) {
    throw InputError("output dtype " + std::string(dtype_name(type.out)) +
                     " is not valid for accumulator " + a +
                     " (int32 -> int32; float -> a float dtype)");
  }
}

std::vector<uint32_t> precompute_half_table(const uint32_t* acts, DType act, int k, DType table) {
  check_range("K", k, 1, kMaxK);
  if (!converts_exactly(act, table)) {
    throw InputError("activation dtype " + std::string(dtype_name(act)) +
                     " does not convert exactly to table dtype " + std::string(dtype_name(table)));
  }
  std::vector<uint32_t> a(k);
  for (int i = 0; i < k; ++i) a[i] = convert(table, act, acts[i]);
  std::vector<uint32_t> t(size_t{1} << (k - 1));
  for (uint32_t p = 0; p < t.size(); ++p) {
    uint32_t sum = (p & 1u) ? a[0] : negate(table, a[0]);
    for (int i = 1; i < k; ++i) {
      sum = table_sum(table, sum, ((p >> i) & 1u) ? a[i] : negate(table, a[i]));
    }
    t[p] = sum;
  }
  return t;
}

std::vector<uint32_t> precompute_full_table(const uint32_t* acts, DType act, int k, DType table) {
  std::vector<uint32_t> t = precompute_half_table(acts, act, k, table);
  const uint32_t half = static_cast<uint32_t>(t.size());
  t.resize(size_t{2} * half);
  for (uint32_t p = half; p < 2 * half; ++p) t[p] = negate(table, t[(~p) & (half - 1u)]);
  return t;
}

uint32_t negate(DType t, uint32_t v) {
  if (is_int(t)) return int_wrap(t, -int_value(t, v));
  return fp_neg(t, v);
}

uint32_t transform_pattern(uint32_t pattern, int k) {
  const uint32_t top = 1u << (k - 1);
  return (pattern & top) ? (pattern ^ (top - 1u)) : pattern;
}

uint32_t half_table_lookup(const uint32_t* half, DType t, int k, uint32_t transformed_pattern) {
  const uint32_t top = 1u << (k - 1);
  const uint32_t entry = half[transformed_pattern & (top - 1u)];
  return (transformed_pattern & top) ? negate(t, entry) : entry;
}

QuantizedTable quantize_table(const std::vector<uint32_t>& table, DType t) {
  double max_abs = 0.0;
  for (uint32_t v : table) {
    const double x = decode(t, v);
    if (!std::isfinite(x)) throw InputError("quantize_table: table holds a non-finite entry");
    max_abs = std::fmax(max_abs, std::fabs(x));
  }
  QuantizedTable q;
  q.scale_fp32 = encode(DType::kFp32, max_abs / 127.0);
  const double scale = decode(DType::kFp32, q.scale_fp32);
  q.entries.resize(table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    q.entries[i] = scale == 0.0 ? 0u : encode(DType::kInt8, decode(t, table[i]) / scale);
  }
  return q;
}

std::vector<uint8_t> bit_planes(const uint8_t* codes, int n, int k, int wbits) {
  check_range("K", k, 1, kMaxK);
  check_range("W_BIT", wbits, 1, kMaxWBits);
  std::vector<uint8_t> planes(size_t(wbits) * n);
  for (int b = 0; b < wbits; ++b) {
    for (int col = 0; col < n; ++col) {
      uint32_t p = 0;
      for (int kk = 0; kk < k; ++kk) {
        const uint8_t q = codes[size_t(col) * k + kk];
        if (wbits < 8 && (q >> wbits) != 0) {
          throw InputError("weight code " + std::to_string(q) + " at column " +
                           std::to_string(col) + ", k " + std::to_string(kk) +
                           " does not fit in W_BIT = " + std::to_string(wbits));
        }
        p |= ((q >> b) & 1u) << kk;
      }
      planes[size_t(b) * n + col] = static_cast<uint8_t>(p);
    }
  }
  return planes;
}

std::vector<uint8_t> transformed_bit_planes(const uint8_t* codes, int n, int k, int wbits) {
  std::vector<uint8_t> planes = bit_planes(codes, n, k, wbits);
  for (uint8_t& p : planes) p = static_cast<uint8_t>(transform_pattern(p, k));
  return planes;
}

namespace {

// Shared by lmma() and lut_naive(): `entry(m, b, col)` gives the signed table entry.
template <typename EntryFn>
std::vector<uint32_t> accumulate(const LmmaShape& shape, const LmmaType& type,
                                 const std::vector<uint32_t>& c, EntryFn entry) {
  std::vector<uint32_t> o(size_t(shape.m) * shape.n);
  for (int m = 0; m < shape.m; ++m) {
    for (int col = 0; col < shape.n; ++col) {
      uint32_t acc = c[size_t(m) * shape.n + col] & dtype_mask(type.acc);
      for (int b = 0; b < type.wbits; ++b) {
        acc = acc_add(type.acc, acc, widen_scale(type, entry(m, b, col), b));
      }
      o[size_t(m) * shape.n + col] = convert(type.out, type.acc, acc);
    }
  }
  return o;
}

}  // namespace

std::vector<uint32_t> lmma(const LmmaShape& shape, const LmmaType& type,
                           const std::vector<uint32_t>& half_tables,
                           const std::vector<uint8_t>& planes, const std::vector<uint32_t>& c) {
  validate(shape, type);
  const int h = shape.half_table_size();
  check_size("lmma half_tables", half_tables.size(), size_t(shape.m) * h);
  check_size("lmma planes", planes.size(), size_t(type.wbits) * shape.n);
  check_size("lmma C", c.size(), size_t(shape.m) * shape.n);
  return accumulate(shape, type, c, [&](int m, int b, int col) {
    const uint32_t p = planes[size_t(b) * shape.n + col] & ((1u << shape.k) - 1u);
    return half_table_lookup(&half_tables[size_t(m) * h], type.table, shape.k, p);
  });
}

std::vector<uint32_t> lut_naive(const LmmaShape& shape, const LmmaType& type, DType act,
                                const std::vector<uint32_t>& acts,
                                const std::vector<uint8_t>& planes,
                                const std::vector<uint32_t>& c) {
  validate(shape, type);
  check_size("lut_naive activations", acts.size(), size_t(shape.m) * shape.k);
  check_size("lut_naive planes", planes.size(), size_t(type.wbits) * shape.n);
  check_size("lut_naive C", c.size(), size_t(shape.m) * shape.n);
  std::vector<std::vector<uint32_t>> tables(shape.m);
  for (int m = 0; m < shape.m; ++m) {
    tables[m] = precompute_full_table(&acts[size_t(m) * shape.k], act, shape.k, type.table);
  }
  return accumulate(shape, type, c, [&](int m, int b, int col) {
    return tables[m][planes[size_t(b) * shape.n + col] & ((1u << shape.k) - 1u)];
  });
}

}  // namespace ltc::golden
