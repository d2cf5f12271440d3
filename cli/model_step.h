// The model step a command names by flags (--model, --phase, --batch, --context, --seq, --weights,
// --acts): shared by `ltc compile model`, `ltc sim --model`, `ltc decode` and `ltc prefill`, so
// all read them the same way and every one shows the loader's warnings.
#pragma once

#include "model/llm/graph.h"
#include "model/llm/model_config.h"

#include <cstdint>
#include <string>

namespace ltc::cli {

// The KV-cache length (decode) or tokens per sequence (prefill) every command assumes when
// --context or --seq is not given: the length the examples and the report use.
inline constexpr int64_t kDefaultContext = 1024;

// load_model, with the loader's warnings printed to stderr.
llm::ModelConfig load_model_reporting(const std::string& name_or_path);

// A warning on stderr when `tokens` (the context after the step) exceeds the model's
// max_position_embeddings; `flag` names the length flag the user gave.
void warn_past_positions(const llm::ModelConfig& model, int64_t tokens, const std::string& flag);

// Decode (KV cache of `context`) or prefill (`seq` tokens, else `context`) of `batch` sequences
// with the given weight format and activation dtype; InputError naming the flag when bad
// (including --seq with --phase decode, which has no use for it); a warning past the model's
// max_position_embeddings.
llm::StepConfig step_from_flags(const llm::ModelConfig& model, const std::string& phase,
                                int64_t batch, int64_t context, int64_t seq,
                                const std::string& weights, const std::string& acts,
                                const std::string& expert_load = "uniform");

// The help of --expert-load (decode, prefill, compile model, sim --model).
inline constexpr const char* kExpertLoadHelp =
    "MoE models: tokens per expert: uniform (independent uniform routing), zipf:S (expert i's "
    "share ~ 1/i^S), or a JSON file with one measured load per routed expert";

}  // namespace ltc::cli
