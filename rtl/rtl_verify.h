// `ltc verify`: a design point's verilated model against the golden model on random operands,
// bit for bit. Operand generators and the golden reference of one LMMA are public so tests can
// build their own stimuli (corner cases, stalls, resets) on the same footing.
#pragma once

#include "model/hw/tensor_core.h"
#include "rtl/rtl_runner.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace ltc::rtl {

// One LMMA's operands in the golden model's terms.
struct LmmaOperands {
  std::vector<uint32_t> a;       // lut: half tables (M * 2^(K-1)); others: activations (M * K)
  std::vector<uint8_t> codes;    // lut, lut-naive, add, mac_dequant(): codes (N * K), < 2^wbits
  std::vector<uint32_t> w;       // mac: weights (N * K) in the weight dtype
  std::vector<uint32_t> scales;  // mac_dequant(): per column n, FP16 scale (N)
  std::vector<uint8_t> zeros;    // mac_dequant(): per column n, zero point < 2^wbits (N)
  std::vector<uint32_t> c;       // M * N, accumulator dtype
};

// Random raw value of dtype t: for floats mostly finite values of moderate magnitude, with zeros
// of both signs, subnormals, the largest finite value, infinities and NaNs mixed in when
// `specials` is set.
uint32_t random_value(golden::DType t, std::mt19937_64& rng, bool specials);
// Random operands for `config` (tables of the lut design are precomputed from random activations,
// or random entries every fourth LMMA).
LmmaOperands random_operands(const hw::TensorCoreConfig& config, std::mt19937_64& rng,
                             bool specials);
// The tile's view of the operands (beats of tables/activations and plane bits or weights).
TileLmma tile_lmma(const hw::TensorCoreConfig& config, const LmmaOperands& ops);
// The golden model's O (M * N, out dtype): lmma(), lut_naive(), add_serial_dot() or mac_dot()
// (for mac_dequant(), of the weights dequantize_codes() makes column by column).
std::vector<uint32_t> dequantized_weights(const hw::TensorCoreConfig& config,
                                          const LmmaOperands& ops);
std::vector<uint32_t> golden_output(const hw::TensorCoreConfig& config, const LmmaOperands& ops);

struct VerifyOptions {
  int vectors = 64;  // LMMAs
  uint64_t seed = 1;
  bool specials = true;
  uint32_t in_stall_pct = 10;
  uint32_t out_stall_pct = 10;
  std::string vcd;  // builds the traced model when set
  HarnessOptions harness;
};

struct Mismatch {
  int lmma = 0, m = 0, n = 0;
  uint32_t got = 0, want = 0;
};

struct VerifyReport {
  std::string config_id;
  std::string harness;  // executable that ran
  int vectors = 0;
  uint64_t elements = 0;    // output elements compared
  uint64_t mismatches = 0;  // elements that differ (plus missing LMMAs counted as M*N each)
  std::vector<Mismatch> first_mismatches;  // up to 10
  uint64_t cycles = 0;
  double build_seconds = 0, run_seconds = 0;
};

VerifyReport verify(const hw::TensorCoreConfig& config, const VerifyOptions& options);

}  // namespace ltc::rtl
