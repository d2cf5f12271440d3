#include "compiler/interpreter.h"

#include "common/error.h"

namespace ltc::compiler {

std::vector<double> interpret_gemm(const traces::Trace& trace, const GemmOperands& ops,
                                   InterpretStats* stats, bool upstream_tables) {
  const std::vector<size_t> gemms = traces::gemm_kernels(trace);
  if (gemms.empty()) throw InputError("interpreter: the trace has no GEMM kernel (gemm record)");
  return traces::execute_gemm(trace, gemms.back(), ops, stats, upstream_tables);
}

}  // namespace ltc::compiler
