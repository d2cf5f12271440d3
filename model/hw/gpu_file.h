// GPU files and measurements: writing a file's fitted section (what `ltc calibrate` puts into
// configs/gpus/*.json; the fields in the order of their table in gpu.cpp, the one the reader and
// `--gpu-set` use), and which built-in GPU a measured device is.
#pragma once

#include "model/hw/gpu.h"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <string_view>

namespace ltc::hw {

// The `achievable` section: each field of AchievableRates and each gemm_paths entry in table
// order (gemm_paths before `source`), numbers rounded to `decimals`, empty strings left out.
nlohmann::ordered_json achievable_json(const AchievableRates& a, int decimals = 4);

// The built-in GPU a profiler's device name is: the product (a built-in name without '-') that
// the device name, in lower case without spaces, contains, the longest such ("NVIDIA H100 80GB
// HBM3" -> "h100", "NVIDIA GeForce RTX 3090" -> "rtx3090"); "" when none is.
std::string builtin_gpu_of_device(std::string_view device);

// Whether measurements taken on `device` are of GPU `gpu` (built-in or derived: its name up to
// the first '-' is the product). True for an unnamed device.
bool device_is_gpu(std::string_view device, std::string_view gpu);

}  // namespace ltc::hw
