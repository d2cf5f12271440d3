// One tensor-core design point: the value type shared by the RTL testbenches (`ltc verify`), the
// PPA flow (`ltc ppa`, sweeps), the LMMA ISA validation in the compiler, the simulator and the
// roofline. It says which design (LUT tensor core or a baseline), its tile shape and its formats.
#pragma once

#include "model/golden/dtype.h"
#include "model/golden/lmma.h"
#include "model/golden/mac.h"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <string_view>

namespace ltc::hw {

enum class TensorCoreDesign : uint8_t {
  kLut,       // LUT tensor core: precomputed half tables in, offline-transformed weights
  kLutNaive,  // conventional LUT: full table built inside the tile, index inversion in hardware
  kMac,       // multiply-accumulate dot-product array (FP16xFP16->FP32, INT8xINT8->INT32, FP8)
  kAdd,       // bit-serial adder core (Stripes-like): one add per weight bit
};
std::string_view design_name(TensorCoreDesign d);  // "lut", "lut-naive", "mac", "add"
TensorCoreDesign parse_design(std::string_view name, std::string_view what = "--design");

struct TensorCoreConfig {
  TensorCoreDesign design = TensorCoreDesign::kLut;
  golden::LmmaShape shape{2, 64, 4};
  golden::DType act = golden::DType::kFp16;  // activation dtype fed to the core
  int wbits = 1;  // weight planes (lut, lut-naive, add); mac with int weights: code bits
  // mac only: the weight operand dtype; an integer weight with a float activation selects the
  // dequantize-then-MAC path (wbits-bit codes, per-column FP16 scale and zero point, see
  // mac_dequant())
  golden::DType weight = golden::DType::kFp16;
  golden::DType table = golden::DType::kFp16;  // lut, lut-naive: table entry dtype
  golden::DType acc = golden::DType::kFp32;
  golden::DType out = golden::DType::kFp32;
  int pipeline_stages = 1;  // register stages inside the datapath (>= 1)

  // Fills table/acc/out/weight from the activation dtype the way the paper's designs do:
  // int8 -> int16 table (exact), int32 acc; fp16/bf16/fp8 -> table in the act dtype, fp32 acc;
  // mac: weight = act (int8 x int8, fp16 x fp16, fp8 x fp8).
  static TensorCoreConfig make(TensorCoreDesign design, golden::LmmaShape shape, golden::DType act,
                               int wbits);

  golden::LmmaType lmma_type() const;  // lut, lut-naive, add
  // mac: the MAC array's types (with dequantization the weights arrive in the activation dtype)
  golden::MacType mac_type() const;
  // mac with integer weight codes and float activations (W_INTn x A_float mpGEMM): codes are
  // dequantized to the activation dtype in the tile, then multiplied.
  bool mac_dequant() const;
  // Throws InputError naming the field and the valid values.
  void validate() const;
  // "lut-m2n64k4-fp16-w1-fp32": stable, used for caches and result stores.
  std::string id() const;
  // Operations per cycle the way the paper counts them: 2*M*N*K per plane-cycle for a 1-bit
  // weight, divided by W_BIT for wider weights (lut, lut-naive, add); 2*M*N*K for mac.
  double ops_per_cycle() const;
  // Operand storage one LMMA reads, in bits (docs/hardware.md#operand-storage): the tables M *
  // 2^(K-1) * LUT_BIT (lut) or activations M * K * A_BIT (lut-naive builds its full table inside;
  // add, mac), plus the weights K * N * W_BIT (all planes; mac: K * N * weight bits, codes when it
  // dequantizes). The tile RTL reads operands from ports; the PPA sweep adds this storage as
  // registers to compare shapes.
  int64_t operand_bits() const;
};

void to_json(nlohmann::json& j, const TensorCoreConfig& c);
void from_json(const nlohmann::json& j, TensorCoreConfig& c);

}  // namespace ltc::hw
