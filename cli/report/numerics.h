// The LUT datapath's numerical error on one mpGEMM against the dense dequantize-then-GEMM in
// double (golden::dequant_gemm), and for integer activations against the grouped integer
// reference (golden::grouped_reference, which must match bit for bit). Used by `ltc numerics`
// and the report.
#pragma once

#include <cstdint>
#include <string>

namespace ltc::report {

struct NumericsOptions {
  int m = 4, n = 256, k = 1024;
  std::string acts = "fp16";
  std::string weights = "int2:g=128";
  int k_group = 4;
  bool quantize_table = false;
  uint64_t seed = 1;
  std::string command() const;  // the `ltc numerics ...` line that reproduces the run
};

struct NumericsResult {
  double max_abs = 0;  // max |lut - reference|
  double max_rel = 0;  // max |lut - reference| / sum_k |a_k w_k|
  double rms_rel = 0;
  long exact = 0;  // outputs bit-identical to the double reference
  long total = 0;
  long grouped_exact = -1;  // integer activations without table quantization: outputs equal to
                            // the grouped integer reference (must be all of them); else -1
};

// Throws InputError for bad options (naming the flag).
NumericsResult run_numerics(const NumericsOptions& o);

}  // namespace ltc::report
