// The flags that name one tensor-core design point, and the one rule that turns them into a
// TensorCoreConfig, shared by `ltc verify` and `ltc ppa` so the same flags give the same point.
#pragma once

#include "model/hw/tensor_core.h"

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
  std::string acc, table, out, weight;  // empty: the default for the design and --act
  bool wbits_given = false;             // --wbits was on the command line
};

// The validated design point (InputError naming the flag). Defaults follow --act
// (TensorCoreConfig::make); --wbits with mac and a float --act means --wbits-bit weight codes
// dequantized in the tile (weight int8) unless --weight says otherwise.
hw::TensorCoreConfig make_design_point(const DesignPointFlags& o);

// Refuses the design-point flags given on `sub`'s command line that do not apply to the design
// (FlagRules): --weight outside mac, --wbits on a mac tile without weight codes (an integer
// --act: the MAC multiplies --act by --act), --table on mac (it has no table).
void check_design_point_flags(const CLI::App* sub, const DesignPointFlags& o);

}  // namespace ltc::cli
