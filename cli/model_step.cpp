#include "cli/model_step.h"

#include "common/error.h"
#include "model/golden/dtype.h"
#include "model/llm/precision.h"

#include <fmt/core.h>

namespace ltc::cli {

llm::ModelConfig load_model_reporting(const std::string& name_or_path) {
  llm::ModelConfig model = llm::load_model(name_or_path);
  for (const auto& w : model.warnings) fmt::print(stderr, "ltc: warning: {}\n", w);
  return model;
}

void warn_past_positions(const llm::ModelConfig& model, int64_t tokens, const std::string& flag) {
  if (model.max_positions > 0 && tokens > model.max_positions) {
    fmt::print(stderr,
               "ltc: warning: {}: {} tokens exceed {}'s max_position_embeddings {}; the "
               "estimate assumes the model could attend that far\n",
               flag, tokens, model.name, model.max_positions);
  }
}

llm::StepConfig step_from_flags(const llm::ModelConfig& model, const std::string& phase,
                                int64_t batch, int64_t context, int64_t seq,
                                const std::string& weights, const std::string& acts,
                                const std::string& expert_load) {
  const llm::Phase p = llm::parse_phase(phase);
  if (batch < 1) throw InputError("--batch: must be >= 1 (got " + std::to_string(batch) + ")");
  if (context < 0) {
    throw InputError("--context: must be >= 0 (got " + std::to_string(context) + ")");
  }
  if (seq < 0) throw InputError("--seq: must be >= 1 (got " + std::to_string(seq) + ")");
  if (p == llm::Phase::kDecode && seq > 0) {
    throw InputError("--seq: applies to --phase prefill; a decode step reads --context");
  }
  llm::StepConfig step = p == llm::Phase::kDecode
                             ? llm::StepConfig::decode(batch, context)
                             : llm::StepConfig::prefill(batch, seq > 0 ? seq : context);
  if (step.new_tokens() < 1) throw InputError("--seq: a prefill needs >= 1 token");
  step.weights = llm::parse_weight_format(weights, "--weights");
  step.acts = golden::parse_act_dtype(acts, "--acts");
  step.expert_load = llm::expert_load_for(model, expert_load);
  warn_past_positions(model, step.kv_length(),
                      p == llm::Phase::kDecode || seq == 0 ? "--context" : "--seq");
  return step;
}

}  // namespace ltc::cli
