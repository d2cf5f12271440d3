// Where the shipped data files (configs/: gpus/, models/, calibration/) are found.
#pragma once

#include <string>
#include <string_view>

namespace ltc {

// The folder of built-in `kind` files ("gpus", "models", "calibration"), or of configs/ itself
// when `kind` is empty. One rule for every kind: the first of $LTC_CONFIG_DIR, the source tree's
// configs/, /usr/local/share/ltc/configs and /usr/share/ltc/configs that holds `kind`; when none
// does, the first of them (so an error names the folder the user set, else the source tree's).
std::string config_dir(std::string_view kind = {});

}  // namespace ltc
