// Published end-to-end figures of the LUT Tensor Core paper (docs/published-figures.md) that the
// roofline is compared with: one copy, read by the reproduction tests and by the report.
#pragma once

#include "model/llm/graph.h"

#include <cstdint>

namespace ltc::roofline::paper {

// Table I: one decoder layer on A100 with LUT mpGEMM (W_INT2 A_FP16): the kernels alone
// ("Welder"), with table precompute unfused, and with it fused into the preceding operator (ms).
struct TableIRow {
  const char* model;
  llm::Phase phase;
  int64_t batch, length;  // prefill: BS1 SEQ length; decode: BS batch SEQ1
  double base_ms, unfused_ms, fused_ms;
};
inline constexpr TableIRow kTableI[] = {
    {"opt-175b", llm::Phase::kPrefill, 1, 2048, 32.38, 38.77, 33.63},
    {"opt-175b", llm::Phase::kDecode, 1024, 1, 14.99, 17.43, 15.50},
    {"bloom-176b", llm::Phase::kPrefill, 1, 4096, 107.11, 129.85, 108.38},
    {"bloom-176b", llm::Phase::kDecode, 1024, 1, 20.99, 26.05, 21.31},
    {"llama2-70b", llm::Phase::kPrefill, 1, 4096, 34.68, 37.60, 35.65},
    {"llama2-70b", llm::Phase::kDecode, 1024, 1, 11.45, 15.21, 11.75},
};

}  // namespace ltc::roofline::paper
