// Options shared by `ltc decode` and `ltc prefill` (tile-level step estimates). --batch and the
// length flag take one value or a comma-separated list; a list sweeps every combination.
#pragma once

#include "cli/model_step.h"
#include "cli/options.h"
#include "model/roofline/estimate.h"

#include <memory>
#include <string>
#include <vector>

namespace ltc::cli {

struct StepFlags {
  roofline::StepRequest req;
  std::string batch = "1";
  std::string length = std::to_string(kDefaultContext);
  std::string length_flag;
  std::string precompute;
  std::string kernels = "reference";
  std::string gpu_set;  // --gpu-set path=value,...
  bool json = false;
  const CLI::App* sub = nullptr;  // for the defaults it took
};

// "N" or "N1,N2,...": the values, or InputError naming `flag`.
std::vector<int64_t> parse_int_list(const std::string& text, const std::string& flag);

// The flags of `ltc decode` / `ltc prefill` into `o`; `length_flag` is --context or --seq.
void add_step_options(CLI::App* sub, const std::shared_ptr<StepFlags>& o, const char* length_flag,
                      const char* length_help);

// One estimate (the step's report or JSON), or a table / {"sweep": [...]} over every batch and
// length of the lists.
void run_step(StepFlags o);

}  // namespace ltc::cli
