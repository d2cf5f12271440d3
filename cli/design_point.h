// The flags that name one tensor-core design point, and the one rule that turns them into a
// TensorCoreConfig, shared by `ltc verify` and `ltc ppa` so the same flags give the same point.
#pragma once

#include "model/hw/tensor_core.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace ltc::cli {

struct DesignPointFlags {
  std::string design = "lut";
  int m = 2, n = 64, k = 4, wbits = 1, pipeline_stages = 1;
  std::string act = "fp16";
  std::string acc, table, out, weight;  // empty: the default for the design and --acts
  std::string weights;                  // --weights intN / binary: N weight planes (--wbits N)
  bool wbits_given = false;             // --weights or --wbits was on the command line
};

// The validated design point (InputError naming the flag). Defaults follow --acts
// (TensorCoreConfig::make); --weights intN with mac and a float --acts means N-bit weight codes
// dequantized in the tile (weight int8) unless --weight says otherwise.
hw::TensorCoreConfig make_design_point(const DesignPointFlags& o);

// Refuses the design-point flags given on `sub`'s command line that do not apply to the design
// (FlagRules): --weight outside mac, --wbits on a mac tile without weight codes (an integer
// --acts: the MAC multiplies --acts by --acts), --table on mac (it has no table).
void check_design_point_flags(const CLI::App* sub, const DesignPointFlags& o);

// The design-point flags `sub`'s command line left at their defaults (defaults_taken), the
// weight planes under the spelling --weights ("int1").
nlohmann::json design_point_defaults(const CLI::App* sub);

}  // namespace ltc::cli
