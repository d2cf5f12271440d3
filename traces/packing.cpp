#include "traces/packing.h"

#include "common/error.h"
#include "model/golden/lmma.h"

#include <string>

namespace ltc::traces {

uint32_t PackedWeights::pattern(int64_t col, int64_t lut_group, int plane) const {
  const int64_t tile = col / n_tile;
  const int64_t bit0 = segment_offset(tile, lut_group, plane) * 8 + (col % n_tile) * k_group;
  uint32_t p = 0;
  for (int i = 0; i < k_group; ++i) {
    const int64_t bit = bit0 + i;
    p |= uint32_t((bytes[size_t(bit / 8)] >> (bit % 8)) & 1u) << i;
  }
  return p;
}

PackedWeights pack_weights(const golden::QuantizedWeights& w, int k_group, int n_tile) {
  w.validate();
  if (k_group < 1 || k_group > golden::kMaxK) {
    throw InputError("pack_weights: K = " + std::to_string(k_group) + " (valid: 1..8)");
  }
  if (n_tile < 1) throw InputError("pack_weights: N tile must be >= 1");
  if (w.group_size != w.k && w.group_size % k_group != 0) {
    throw InputError("weights: quantization group " + std::to_string(w.group_size) +
                     " is not a multiple of the tensor core's K = " + std::to_string(k_group) +
                     " (LUT groups must not straddle two scales)");
  }
  PackedWeights p;
  p.n = w.n;
  p.k = w.k;
  p.wbits = w.wbits;
  p.k_group = k_group;
  p.n_tile = n_tile;
  p.n_tiles = (w.n + n_tile - 1) / n_tile;
  p.lut_groups = (w.k + k_group - 1) / k_group;
  p.bytes.assign(size_t(p.n_tiles * p.lut_groups * p.wbits * p.segment_bytes()), 0);
  for (int64_t col = 0; col < w.n; ++col) {
    for (int64_t lg = 0; lg < p.lut_groups; ++lg) {
      uint32_t code_bits[8] = {};
      uint8_t codes[golden::kMaxK] = {};
      for (int i = 0; i < k_group; ++i) {
        const int64_t c = lg * k_group + i;
        codes[i] = c < w.k ? w.codes[size_t(col * w.k + c)] : 0;
      }
      for (int b = 0; b < w.wbits; ++b) {
        uint32_t pat = 0;
        for (int i = 0; i < k_group; ++i) pat |= uint32_t((codes[i] >> b) & 1u) << i;
        code_bits[b] = golden::transform_pattern(pat, k_group);
        const int64_t bit0 = p.segment_offset(col / n_tile, lg, b) * 8 + (col % n_tile) * k_group;
        for (int i = 0; i < k_group; ++i) {
          if ((code_bits[b] >> i) & 1u) {
            p.bytes[size_t((bit0 + i) / 8)] |= uint8_t(1u << ((bit0 + i) % 8));
          }
        }
      }
    }
  }
  return p;
}

}  // namespace ltc::traces
