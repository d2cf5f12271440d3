#include "cli/design_point.h"

#include "model/golden/dtype.h"

namespace ltc::cli {

hw::TensorCoreConfig make_design_point(const DesignPointFlags& o) {
  const auto design = hw::parse_design(o.design, "--design");
  auto c = hw::TensorCoreConfig::make(design, golden::LmmaShape{o.m, o.n, o.k},
                                      golden::parse_act_dtype(o.act, "--act"), o.wbits);
  if (!o.table.empty()) c.table = golden::parse_dtype(o.table, "--table");
  if (!o.weight.empty()) {
    c.weight = golden::parse_dtype(o.weight, "--weight");
  } else if (design == hw::TensorCoreDesign::kMac && o.wbits_given && !golden::is_int(c.act)) {
    c.weight = golden::DType::kInt8;  // --wbits n: n-bit codes, dequantize-then-MAC
  }
  if (!o.acc.empty()) {
    c.acc = golden::parse_dtype(o.acc, "--acc");
    c.out = c.acc;
  }
  if (!o.out.empty()) c.out = golden::parse_dtype(o.out, "--out");
  c.pipeline_stages = o.pipeline_stages;
  c.validate();
  return c;
}

}  // namespace ltc::cli
