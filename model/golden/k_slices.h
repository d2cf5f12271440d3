// Sliced K: how a GEMM kernel splits one output's reduction between warps (CUTLASS's sliced-K,
// docs/arithmetic.md#sliced-k). K is cut into chunks of `chunk` columns; chunk j belongs to slice
// j mod `slices`. Each slice accumulates its own chunks from zero, K ascending, exactly as the
// unsliced GEMM accumulates all of K; the slices' partial results are then added in slice order
// (0, 1, ..., slices - 1). One slice is the unsliced GEMM, bit for bit.
#pragma once

#include "common/error.h"

#include <cstdint>
#include <string>

namespace ltc::golden {

struct KSlices {
  int64_t chunk = 0;  // K columns per chunk (> 0 when slices > 1)
  int slices = 1;
  int slice_of(int64_t col) const { return slices > 1 ? int((col / chunk) % slices) : 0; }
  bool operator==(const KSlices& o) const { return chunk == o.chunk && slices == o.slices; }
};

// Throws InputError unless slices >= 1 and, when slices > 1, chunk is a positive multiple of
// `step` (the instruction's K: a chunk never splits a LUT group or an mma's K).
inline void validate(const KSlices& s, int64_t step) {
  if (s.slices < 1 || (s.slices > 1 && (s.chunk < 1 || s.chunk % step != 0))) {
    throw InputError("K slices: " + std::to_string(s.slices) + " of " + std::to_string(s.chunk) +
                     " columns (valid: >= 1 slices; chunks a positive multiple of " +
                     std::to_string(step) + ")");
  }
}

}  // namespace ltc::golden
