// Writing a GPU file's fitted section (what `ltc calibrate` puts into configs/gpus/*.json): the
// fields in the order of their table in gpu.cpp, the one the reader and `--gpu-set` use.
#pragma once

#include "model/hw/gpu.h"

#include <nlohmann/json_fwd.hpp>

namespace ltc::hw {

// The `achievable` section: each field of AchievableRates and each gemm_paths entry in table
// order (gemm_paths before `source`), numbers rounded to `decimals`, empty strings left out.
nlohmann::ordered_json achievable_json(const AchievableRates& a, int decimals = 4);

}  // namespace ltc::hw
