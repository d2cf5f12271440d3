#include "model/hw/tensor_core.h"

#include "common/error.h"
#include "model/golden/fp.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace ltc::hw {

using golden::DType;

std::string_view design_name(TensorCoreDesign d) {
  switch (d) {
    case TensorCoreDesign::kLut:
      return "lut";
    case TensorCoreDesign::kLutNaive:
      return "lut-naive";
    case TensorCoreDesign::kMac:
      return "mac";
    case TensorCoreDesign::kAdd:
      return "add";
  }
  return "?";
}

TensorCoreDesign parse_design(std::string_view name, std::string_view what) {
  for (auto d : {TensorCoreDesign::kLut, TensorCoreDesign::kLutNaive, TensorCoreDesign::kMac,
                 TensorCoreDesign::kAdd}) {
    if (design_name(d) == name) return d;
  }
  throw InputError(std::string(what) + ": unknown design '" + std::string(name) +
                   "' (valid: lut, lut-naive, mac, add)");
}

TensorCoreConfig TensorCoreConfig::make(TensorCoreDesign design, golden::LmmaShape shape, DType act,
                                        int wbits) {
  TensorCoreConfig c;
  c.design = design;
  c.shape = shape;
  c.act = act;
  c.wbits = wbits;
  const bool int_act = golden::is_int(act);
  c.table = golden::lut_table_dtype(act);
  if (design == TensorCoreDesign::kAdd) c.table = act;
  c.acc = int_act ? DType::kInt32 : DType::kFp32;
  c.out = c.acc;
  c.weight = act;
  return c;
}

golden::LmmaType TensorCoreConfig::lmma_type() const {
  return golden::LmmaType{table, wbits, acc, out};
}

golden::MacType TensorCoreConfig::mac_type() const {
  return golden::MacType{act, mac_dequant() ? act : weight, acc, out};
}

bool TensorCoreConfig::mac_dequant() const {
  return design == TensorCoreDesign::kMac && golden::is_int(weight) && !golden::is_int(act);
}

void TensorCoreConfig::validate() const {
  if (pipeline_stages < 1 || pipeline_stages > 8) {
    throw InputError("pipeline_stages: " + std::to_string(pipeline_stages) +
                     " is out of range (valid: 1..8)");
  }
  if (design == TensorCoreDesign::kMac) {
    if (mac_dequant() && (weight != DType::kInt8 || wbits < 1 || wbits > golden::kMaxWBits)) {
      throw InputError("mac dequantize path: weight must be int8 with wbits 1..8 code bits (got " +
                       std::string(golden::dtype_name(weight)) + ", wbits " +
                       std::to_string(wbits) + ")");
    }
    golden::validate(shape, mac_type());
    return;
  }
  if (design == TensorCoreDesign::kAdd && table != act) {
    throw InputError(
        "add design: the accumulated operand is the activation (table must equal act)");
  }
  golden::validate(shape, lmma_type());
  if (!golden::converts_exactly(act, table) && table != DType::kInt8) {
    throw InputError(std::string("table dtype ") + std::string(golden::dtype_name(table)) +
                     " cannot hold activation dtype " + std::string(golden::dtype_name(act)) +
                     " exactly");
  }
}

std::string TensorCoreConfig::id() const {
  std::string s = std::string(design_name(design)) + "-" + shape.name() + "-" +
                  std::string(golden::dtype_name(act));
  if (design == TensorCoreDesign::kMac) {
    s += "-" + std::string(golden::dtype_name(weight));
    if (mac_dequant()) s += "-w" + std::to_string(wbits);
  } else {
    s += "-w" + std::to_string(wbits);
    if (table != act) s += "-t" + std::string(golden::dtype_name(table));
  }
  s += "-" + std::string(golden::dtype_name(acc));
  if (out != acc) s += "-o" + std::string(golden::dtype_name(out));
  if (pipeline_stages != 1) s += "-p" + std::to_string(pipeline_stages);
  return s;
}

double TensorCoreConfig::ops_per_cycle() const {
  const double base = 2.0 * shape.m * shape.n * shape.k;
  if (design == TensorCoreDesign::kMac) return base;
  return base / wbits;
}

int64_t TensorCoreConfig::operand_bits() const {
  const int64_t m = shape.m, n = shape.n, k = shape.k;
  const int64_t act_bits = golden::dtype_bits(act);
  if (design == TensorCoreDesign::kMac) {
    const int64_t w = mac_dequant() ? wbits : golden::dtype_bits(weight);
    return m * k * act_bits + k * n * w;
  }
  const int64_t a = design == TensorCoreDesign::kLut
                        ? m * (int64_t{1} << (k - 1)) * golden::dtype_bits(table)
                        : m * k * act_bits;
  return a + k * n * wbits;
}

void to_json(nlohmann::json& j, const TensorCoreConfig& c) {
  j = nlohmann::json{{"design", design_name(c.design)},
                     {"m", c.shape.m},
                     {"n", c.shape.n},
                     {"k", c.shape.k},
                     {"act", golden::dtype_name(c.act)},
                     {"wbits", c.wbits},
                     {"weight", golden::dtype_name(c.weight)},
                     {"table", golden::dtype_name(c.table)},
                     {"acc", golden::dtype_name(c.acc)},
                     {"out", golden::dtype_name(c.out)},
                     {"pipeline_stages", c.pipeline_stages}};
}

void from_json(const nlohmann::json& j, TensorCoreConfig& c) {
  if (!j.is_object()) throw InputError("tensor-core config: expected a JSON object");
  // Every key a lambda below asks about is valid; anything else is reported with the closest.
  std::vector<std::string> known;
  auto contains = [&](const char* key) {
    known.emplace_back(key);
    return j.contains(key);
  };
  auto str = [&](const char* key) {
    if (!contains(key) || !j.at(key).is_string()) {
      throw InputError(std::string("tensor-core config: '") + key + "' must be a string");
    }
    return j.at(key).get<std::string>();
  };
  // Integers only, in a sane range: a float or a huge value is an error, never a silent cast.
  auto integer = [&](const char* key, int fallback, bool required) {
    if (!contains(key)) {
      if (required) throw InputError(std::string("tensor-core config: '") + key + "' is missing");
      return fallback;
    }
    const auto& v = j.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > (1 << 20)) {
      throw InputError(std::string("tensor-core config: '") + key +
                       "' must be an integer in 0..1048576 (got " + v.dump() + ")");
    }
    return static_cast<int>(v.get<int64_t>());
  };
  const auto design = parse_design(str("design"), "design");
  const golden::LmmaShape shape{integer("m", 0, true), integer("n", 0, true),
                                integer("k", 0, true)};
  const DType act = golden::parse_dtype(str("act"), "act");
  c = TensorCoreConfig::make(design, shape, act, integer("wbits", 1, false));
  if (contains("weight")) c.weight = golden::parse_dtype(str("weight"), "weight");
  if (contains("table")) c.table = golden::parse_dtype(str("table"), "table");
  if (contains("acc")) c.acc = golden::parse_dtype(str("acc"), "acc");
  c.out = contains("out") ? golden::parse_dtype(str("out"), "out") : c.acc;
  c.pipeline_stages = integer("pipeline_stages", 1, false);
  for (const auto& item : j.items()) {
    if (std::find(known.begin(), known.end(), item.key()) == known.end()) {
      throw InputError("tensor-core config: unknown field '" + item.key() + "'" +
                       did_you_mean(item.key(), known));
    }
  }
}

}  // namespace ltc::hw
