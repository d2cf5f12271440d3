#include "rtl/rtl_verify.h"

#include "common/error.h"
#include "model/golden/fp.h"
#include "model/golden/lmma.h"
#include "model/golden/mac.h"
#include "rtl/rtl_design.h"

#include <chrono>
#include <cmath>

namespace ltc::rtl {

using golden::DType;
using hw::TensorCoreDesign;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

uint32_t random_value(DType t, std::mt19937_64& rng, bool specials) {
  const uint32_t mask = golden::dtype_mask(t);
  const uint32_t bits = static_cast<uint32_t>(rng()) & mask;
  if (golden::is_int(t)) return bits;
  const golden::FpFormat& f = golden::fp_format(t);
  const uint32_t sign = bits & (1u << (f.bits() - 1));
  const uint32_t man = bits & ((1u << f.man_bits) - 1u);
  const uint32_t exp_max = (1u << f.exp_bits) - 1u;
  const uint32_t r = static_cast<uint32_t>(rng() % 100);
  if (specials && r < 20) {
    switch (r % 10) {
      case 0:
        return sign;  // +-0
      case 1:
        return sign | man;  // subnormal (or zero)
      case 2:
        return sign | 1u;  // smallest subnormal
      case 3:
        return sign | (golden::encode(t, golden::fp_max_finite(t)) & ~sign);  // max finite
      case 4:
        return f.has_inf ? (sign | (exp_max << f.man_bits)) : (sign | 0x7e);  // inf / 448
      case 5:
        return bits | (exp_max << f.man_bits) | 1u;  // NaN (E4M3: maybe 480 -> NaN)
      case 6:
        return sign | (1u << f.man_bits) | man;  // smallest normals
      default:
        return bits;  // any pattern
    }
  }
  // Moderate magnitudes: exponents within +-6 of 1.0 so that sums cancel and round often.
  const int bias = f.bias();
  int e = bias + static_cast<int>(rng() % 13) - 6;
  e = std::max(1, std::min(e, static_cast<int>(exp_max) - (f.has_inf ? 1 : 0)));
  uint32_t v = sign | (uint32_t(e) << f.man_bits) | man;
  if (!f.has_inf && (v & 0x7f) == 0x7f) v &= ~1u;  // keep E4M3 finite here
  return v;
}

LmmaOperands random_operands(const hw::TensorCoreConfig& c, std::mt19937_64& rng, bool specials) {
  const int m = c.shape.m, n = c.shape.n, k = c.shape.k;
  LmmaOperands ops;
  ops.c.resize(size_t(m) * n);
  for (auto& v : ops.c) v = random_value(c.acc, rng, specials);
  if (c.mac_dequant()) {
    ops.a.resize(size_t(m) * k);
    for (auto& v : ops.a) v = random_value(c.act, rng, specials);
    ops.codes.resize(size_t(n) * k);
    for (auto& q : ops.codes) q = static_cast<uint8_t>(rng() % (1u << c.wbits));
    for (int col = 0; col < n; ++col) {
      ops.scales.push_back(random_value(DType::kFp16, rng, specials));
      ops.zeros.push_back(static_cast<uint8_t>(rng() % (1u << c.wbits)));
    }
    return ops;
  }
  if (c.design == TensorCoreDesign::kMac) {
    ops.a.resize(size_t(m) * k);
    ops.w.resize(size_t(n) * k);
    for (auto& v : ops.a) v = random_value(c.act, rng, specials);
    for (auto& v : ops.w) v = random_value(c.weight, rng, specials);
    return ops;
  }
  ops.codes.resize(size_t(n) * k);
  for (auto& q : ops.codes) q = static_cast<uint8_t>(rng() % (1u << c.wbits));
  if (c.design != TensorCoreDesign::kLut) {
    ops.a.resize(size_t(m) * k);
    for (auto& v : ops.a) v = random_value(c.act, rng, specials);
    return ops;
  }
  const int h = c.shape.half_table_size();
  const bool raw = (rng() % 4 == 0) || !golden::converts_exactly(c.act, c.table);
  for (int row = 0; row < m; ++row) {
    if (raw) {
      for (int j = 0; j < h; ++j) ops.a.push_back(random_value(c.table, rng, specials));
    } else {
      std::vector<uint32_t> acts(k);
      for (auto& v : acts) v = random_value(c.act, rng, specials);
      const auto half = golden::precompute_half_table(acts.data(), c.act, k, c.table);
      ops.a.insert(ops.a.end(), half.begin(), half.end());
    }
  }
  return ops;
}

TileLmma tile_lmma(const hw::TensorCoreConfig& c, const LmmaOperands& ops) {
  const int n = c.shape.n, k = c.shape.k;
  TileLmma t;
  t.c = ops.c;
  if (c.mac_dequant()) {
    // in_w_i bit by bit: codes (element n*K+k), FP16 scales, zero points; codes and zero points
    // are as wide as the model's WBits.
    const int wb = harness_config(c).wbits;
    std::vector<uint32_t> bits;
    bits.reserve(w_element_count(c));
    auto put = [&](uint32_t v, int width) {
      for (int i = 0; i < width; ++i) bits.push_back((v >> i) & 1u);
    };
    for (uint8_t q : ops.codes) put(q, wb);
    for (uint32_t s : ops.scales) put(s, 16);
    for (uint8_t z : ops.zeros) put(z, wb);
    t.a_beats = {ops.a};
    t.w_beats = {std::move(bits)};
    return t;
  }
  if (c.design == TensorCoreDesign::kMac) {
    t.a_beats = {ops.a};
    t.w_beats = {ops.w};
    return t;
  }
  const std::vector<uint8_t> planes =
      c.design == TensorCoreDesign::kLut
          ? golden::transformed_bit_planes(ops.codes.data(), n, k, c.wbits)
          : golden::bit_planes(ops.codes.data(), n, k, c.wbits);
  for (int b = 0; b < c.wbits; ++b) {
    std::vector<uint32_t> bits(size_t(n) * k);
    for (int col = 0; col < n; ++col) {
      for (int kk = 0; kk < k; ++kk)
        bits[size_t(col) * k + kk] = (planes[size_t(b) * n + col] >> kk) & 1u;
    }
    t.a_beats.push_back(ops.a);
    t.w_beats.push_back(std::move(bits));
  }
  return t;
}

std::vector<uint32_t> dequantized_weights(const hw::TensorCoreConfig& c, const LmmaOperands& ops) {
  const int n = c.shape.n, k = c.shape.k;
  if (ops.codes.size() != size_t(n) * k || ops.scales.size() != size_t(n) ||
      ops.zeros.size() != size_t(n)) {
    throw InputError("dequantized_weights: want N*K codes and N scales and zero points");
  }
  std::vector<uint32_t> w;
  w.reserve(size_t(n) * k);
  for (int col = 0; col < n; ++col) {
    const std::vector<uint8_t> codes(ops.codes.begin() + ptrdiff_t(col) * k,
                                     ops.codes.begin() + ptrdiff_t(col + 1) * k);
    const auto wc = golden::dequantize_codes(codes, golden::decode(DType::kFp16, ops.scales[col]),
                                             ops.zeros[col], c.act);
    w.insert(w.end(), wc.begin(), wc.end());
  }
  return w;
}

std::vector<uint32_t> golden_output(const hw::TensorCoreConfig& c, const LmmaOperands& ops) {
  if (c.mac_dequant()) {
    return golden::mac_dot(c.shape, c.mac_type(), ops.a, dequantized_weights(c, ops), ops.c);
  }
  switch (c.design) {
    case TensorCoreDesign::kLut: {
      const auto planes =
          golden::transformed_bit_planes(ops.codes.data(), c.shape.n, c.shape.k, c.wbits);
      return golden::lmma(c.shape, c.lmma_type(), ops.a, planes, ops.c);
    }
    case TensorCoreDesign::kLutNaive: {
      const auto planes = golden::bit_planes(ops.codes.data(), c.shape.n, c.shape.k, c.wbits);
      return golden::lut_naive(c.shape, c.lmma_type(), c.act, ops.a, planes, ops.c);
    }
    case TensorCoreDesign::kAdd:
      return golden::add_serial_dot(c.shape, c.lmma_type(), ops.a, ops.codes, ops.c);
    case TensorCoreDesign::kMac:
      return golden::mac_dot(c.shape, c.mac_type(), ops.a, ops.w, ops.c);
  }
  return {};
}

VerifyReport verify(const hw::TensorCoreConfig& config, const VerifyOptions& opt) {
  if (opt.vectors < 1) throw InputError("--vectors: must be at least 1");
  rtl_design(config);  // validates the design point before any build
  VerifyReport rep;
  rep.config_id = config.id();
  rep.vectors = opt.vectors;
  HarnessOptions ho = opt.harness;
  ho.trace = ho.trace || !opt.vcd.empty();
  auto t0 = std::chrono::steady_clock::now();
  rep.harness = build_harness(config, ho);
  rep.build_seconds = seconds_since(t0);

  std::mt19937_64 rng(opt.seed);
  std::vector<TileLmma> lmmas;
  std::vector<std::vector<uint32_t>> want;
  for (int i = 0; i < opt.vectors; ++i) {
    const LmmaOperands ops = random_operands(config, rng, opt.specials);
    lmmas.push_back(tile_lmma(config, ops));
    want.push_back(golden_output(config, ops));
  }
  StallOptions stalls;
  stalls.seed = static_cast<uint32_t>(opt.seed * 2654435761u + 1);
  stalls.in_stall_pct = opt.in_stall_pct;
  stalls.out_stall_pct = opt.out_stall_pct;
  stalls.vcd = opt.vcd;
  t0 = std::chrono::steady_clock::now();
  const TileRun run = run_tile(rep.harness, config, lmmas, stalls);
  rep.run_seconds = seconds_since(t0);
  rep.cycles = run.cycles;
  const size_t mn = size_t(config.shape.m) * config.shape.n;
  for (size_t i = 0; i < want.size(); ++i) {
    rep.elements += mn;
    if (i >= run.outputs.size()) {
      rep.mismatches += mn;
      continue;
    }
    for (size_t e = 0; e < mn; ++e) {
      if (run.outputs[i][e] == want[i][e]) continue;
      ++rep.mismatches;
      if (rep.first_mismatches.size() < 10) {
        rep.first_mismatches.push_back({int(i), int(e / config.shape.n), int(e % config.shape.n),
                                        run.outputs[i][e], want[i][e]});
      }
    }
  }
  return rep;
}

}  // namespace ltc::rtl
