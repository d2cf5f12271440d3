// Functional interpreter of LUT mpGEMM traces: runs every warp's expanded instruction stream
// with the golden model's LMMA semantics on real data, and checks the schedule while doing so:
// each table is precomputed once before an LMMA reads it, each output element belongs to one
// warp, each K element is consumed exactly once per output, each quantization group is
// dequantized once after all its columns. The result must equal golden::lut_gemm (bit for bit:
// same operations in the same order), and golden::grouped_reference for integer activations.
#pragma once

#include "model/golden/dtype.h"
#include "model/golden/weights.h"
#include "traces/trace.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ltc::compiler {

struct GemmOperands {
  golden::DType act = golden::DType::kInt8;
  int64_t m = 0;
  std::vector<uint32_t> acts;                   // m x K raw activations, row-major
  golden::QuantizedWeights weights;             // INT formats (gemm record bases == 0)
  golden::MultiBasisBinaryWeights multi_basis;  // FluxBin (bases > 0)
};

struct InterpretStats {
  uint64_t kernels = 0, warps = 0, instructions = 0;
  uint64_t lmmas = 0, tables = 0, dequants = 0;
};

// Runs the trace's kernels in order. Throws InputError when the trace does not describe a GEMM of
// these operands, std::runtime_error naming kernel, block, warp and instruction when the
// schedule breaks one of the rules above. Returns Y (m x n, row-major).
// `upstream_tables`: tables the trace reads without precomputing them come from a producer
// outside it (a fused norm in a model trace) and are built from the activations on demand.
std::vector<double> interpret_gemm(const traces::Trace& trace, const GemmOperands& ops,
                                   InterpretStats* stats = nullptr, bool upstream_tables = false);

}  // namespace ltc::compiler

namespace ltc::compiler {

// Random operands for the GEMM a trace computes (its gemm record): activations uniform over
// int8 or N(0,1) rounded to the float dtype, weights N(0,1) quantized (binary for 1 bit, signed
// INTn otherwise) with the record's group size.
GemmOperands random_gemm_operands(const traces::GemmRecord& g, uint32_t seed);

struct GemmCheck {
  uint64_t outputs = 0;
  uint64_t mismatches = 0;  // outputs whose bits differ from golden::lut_gemm
  double max_abs_diff = 0;
  InterpretStats stats;
};
// Interprets a trace with one LUT GEMM kernel on random_gemm_operands(seed) and compares with
// golden::lut_gemm (tables from the trace's precompute, or upstream if it has none).
GemmCheck check_gemm_trace(const traces::Trace& trace, uint32_t seed);

// Every distinct LUT GEMM kernel of a (model) trace checked on its own, with upstream tables;
// kernels of more than `max_macs` M*N*K are skipped.
struct KernelCheck {
  std::string kernel;
  bool skipped = false;
  GemmCheck check;
};
std::vector<KernelCheck> check_trace_gemms(const traces::Trace& trace, uint32_t seed,
                                           double max_macs = 5e7);

}  // namespace ltc::compiler
