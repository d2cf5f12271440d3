// The roofline step requests the report's sections make, and the `ltc decode|prefill` line that
// reproduces each.
#pragma once

#include "model/roofline/estimate.h"

#include <string>

namespace ltc::report {

// A GPU and the precisions a section runs a step on.
struct StepSetup {
  const char* gpu;
  const char* weights;
  const char* acts;
};

roofline::StepRequest step_request(const std::string& model, const std::string& gpu,
                                   llm::Phase phase, int64_t batch, int64_t length,
                                   const std::string& weights = "fp16",
                                   const std::string& acts = "fp16");

// "ltc decode --model M --gpu G --batch B --context L --weights W --acts A [...]"
std::string step_command(const roofline::StepRequest& r);

}  // namespace ltc::report
