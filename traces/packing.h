// Weight packing: the offline reinterpretation (golden::transform_pattern) and the bit-plane
// layout as actual bytes, so the simulator, the compiler's interpreter and a future real kernel
// read the same layout. It lives in traces/ because the layout is part of the compiler <->
// simulator contract (the compiler's load addresses point into it).
//
// Layout (little-endian bit streams):
//   for each n tile of `n_tile` output columns (the LMMA's N; the last tile zero-padded)
//     for each LUT group of `k_group` input columns (aligned to quantization groups; the K tail
//     zero-padded)
//       for each plane b = 0 .. wbits-1 (least significant first)
//         n_tile transformed patterns of k_group bits, column ascending, LSB first
// One (tile, group, plane) segment is ceil(n_tile * k_group / 8) bytes; segment_offset() gives
// where it starts, which is what the compiler's load addresses use.
#pragma once

#include "model/golden/weights.h"

#include <cstdint>
#include <vector>

namespace ltc::traces {

struct PackedWeights {
  int64_t n = 0, k = 0;
  int wbits = 1;
  int k_group = 4;
  int n_tile = 64;
  int64_t n_tiles = 0;     // ceil(n / n_tile)
  int64_t lut_groups = 0;  // ceil(k / k_group)
  std::vector<uint8_t> bytes;

  int64_t segment_bytes() const { return (int64_t(n_tile) * k_group + 7) / 8; }
  int64_t segment_offset(int64_t tile, int64_t lut_group, int plane) const {
    return ((tile * lut_groups + lut_group) * wbits + plane) * segment_bytes();
  }
  // The transformed k_group-bit pattern of output column `col`, LUT group `lut_group`, plane.
  uint32_t pattern(int64_t col, int64_t lut_group, int plane) const;
};

// Throws InputError when the quantization group is not a multiple of k_group (LUT groups could
// not align to it) or the shapes are out of range.
PackedWeights pack_weights(const golden::QuantizedWeights& w, int k_group, int n_tile);

}  // namespace ltc::traces
