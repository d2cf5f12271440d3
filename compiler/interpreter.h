// The compiler's functional interpreter of the GEMM traces it emits: runs every warp's expanded
// instruction stream in program order, warp by warp, through the trace instructions' functional
// semantics (traces/functional.h, shared with the cycle-level simulator), and checks the
// schedule while doing so: each table is precomputed once before an LMMA reads it, each output
// element belongs to one warp, each K element is consumed exactly once per output, each
// quantization group is dequantized once after all its columns. The result must equal
// golden::lut_gemm (LUT) or golden::mac_gemm (MMA) bit for bit, and golden::grouped_reference for
// integer activations through LUTs.
#pragma once

#include "traces/functional.h"
#include "traces/trace.h"

#include <cstdint>
#include <vector>

namespace ltc::compiler {

using traces::GemmOperands;
using InterpretStats = traces::ExecStats;

// Runs the trace's last GEMM kernel (and the table precompute kernels right before it). Throws
// InputError when the trace does not describe a GEMM of these operands, std::runtime_error naming
// kernel, block, warp and instruction when the schedule breaks one of the rules above. Returns Y
// (batch*m x n, row-major). `upstream_tables`: tables the trace reads without precomputing them
// come from a producer outside it (a fused norm in a model trace) and are built from the
// activations on demand.
std::vector<double> interpret_gemm(const traces::Trace& trace, const GemmOperands& ops,
                                   InterpretStats* stats = nullptr, bool upstream_tables = false);

// Random operands, whole-trace checks against the golden model: see traces/functional.h.
using traces::check_gemm_trace;
using traces::check_trace_gemms;
using traces::GemmCheck;
using traces::KernelCheck;
using traces::random_gemm_operands;

}  // namespace ltc::compiler
