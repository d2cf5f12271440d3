// Shared by the sim tests: one GEMM compiled for a GPU by the compiler, as `ltc compile gemm`.
#pragma once

#include "compiler/gemm_lowering.h"
#include "model/llm/precision.h"

#include <cstdint>
#include <optional>
#include <string>

namespace ltc::test_support {

inline traces::Trace compiled_gemm(const hw::GpuConfig& gpu, int64_t m, int64_t n, int64_t k,
                                   const std::string& weights, golden::DType act, int64_t group = 0,
                                   std::optional<traces::GemmPath> path = std::nullopt) {
  compiler::GemmSpec s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.weights = llm::parse_weight_format(weights);
  s.act = act;
  s.group_size = group;
  s.path = path;
  return compiler::compile_gemm(s, gpu);
}

}  // namespace ltc::test_support
