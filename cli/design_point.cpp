#include "cli/design_point.h"

#include "cli/options.h"
#include "common/error.h"
#include "model/golden/dtype.h"

#include <nlohmann/json.hpp>

#include <string>

namespace ltc::cli {

hw::TensorCoreConfig make_design_point(const DesignPointFlags& o) {
  const auto design = hw::parse_design(o.design, "--design");
  check_tile_units(o.m, o.n);
  const int wbits = weight_planes(o.weights, o.wbits);
  auto c = hw::TensorCoreConfig::make(design, golden::LmmaShape{o.m, o.n, o.k},
                                      golden::parse_act_dtype(o.act, "--acts"), wbits);
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

void check_design_point_flags(const CLI::App* sub, const DesignPointFlags& o) {
  check_older_spellings(sub);
  const hw::TensorCoreConfig c = make_design_point(o);
  const bool mac = c.design == hw::TensorCoreDesign::kMac;
  FlagRules r(sub);
  r.flags({"--weight"}, "with --design mac", "the other designs take weight bit-planes (--wbits)",
          [mac] { return mac; })
      .flags({"--weights", "--wbits"},
             "to lut, lut-naive, add, and to mac with weight codes (a float --acts)",
             "this mac tile multiplies " + std::string(golden::dtype_name(c.act)) + " by " +
                 std::string(golden::dtype_name(c.weight)) + " and has no weight codes",
             [mac, &c] { return !mac || c.mac_dequant(); });
  if (sub->get_option_no_throw("--table") != nullptr) {
    r.flags({"--table"}, "with --design lut, lut-naive or add", "a mac tile has no table",
            [mac] { return !mac; });
  }
  r.check();
}

nlohmann::json design_point_defaults(const CLI::App* sub) {
  nlohmann::json d = defaults_taken(sub, {"--design", "--m", "--n", "--k", "--acts"});
  if (sub->get_option("--weights")->count() + sub->get_option("--wbits")->count() == 0) {
    d["--weights"] = "int" + sub->get_option("--wbits")->get_default_str();
  }
  return d;
}

}  // namespace ltc::cli
