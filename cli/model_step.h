// The model step a command names by flags (--model, --phase, --batch, --context, --seq, --weights,
// --acts): shared by `ltc compile model` and `ltc sim --model`, so both read them the same way.
#pragma once

#include "model/llm/graph.h"
#include "model/llm/model_config.h"

#include <cstdint>
#include <string>

namespace ltc::cli {

// load_model, with the loader's warnings printed to stderr.
llm::ModelConfig load_model_reporting(const std::string& name_or_path);

// Decode (KV cache of `context`) or prefill (`seq` tokens, else `context`) of `batch` sequences
// with the given weight format and activation dtype; InputError naming the flag when bad.
llm::StepConfig step_from_flags(const std::string& phase, int64_t batch, int64_t context,
                                int64_t seq, const std::string& weights, const std::string& acts);

}  // namespace ltc::cli
