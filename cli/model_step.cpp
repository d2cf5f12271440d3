#include "cli/model_step.h"

#include "model/golden/dtype.h"
#include "model/llm/precision.h"

#include <fmt/core.h>

namespace ltc::cli {

llm::ModelConfig load_model_reporting(const std::string& name_or_path) {
  llm::ModelConfig model = llm::load_model(name_or_path);
  for (const auto& w : model.warnings) fmt::print(stderr, "ltc: warning: {}\n", w);
  return model;
}

llm::StepConfig step_from_flags(const std::string& phase, int64_t batch, int64_t context,
                                int64_t seq, const std::string& weights, const std::string& acts) {
  llm::StepConfig step = llm::parse_phase(phase) == llm::Phase::kDecode
                             ? llm::StepConfig::decode(batch, context)
                             : llm::StepConfig::prefill(batch, seq > 0 ? seq : context);
  step.weights = llm::parse_weight_format(weights, "--weights");
  step.acts = golden::parse_dtype(acts, "--acts");
  return step;
}

}  // namespace ltc::cli
