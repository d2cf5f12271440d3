// Do the two performance models agree? One decode or prefill step compiled and run by the
// cycle-level simulator (sampled unless asked for in full) beside the tile-level roofline's
// estimate of the same step with the same kernels (llm::KernelPlan::kCompiled) on the same path
// (LUT GPUs: the precompute fused into its producers, as the compiler lowers it), for the LLaMA2
// models across GPUs and precisions. Per step: both times and their difference; per operator (a
// launch group, e.g. QKV, as one), those more than kOpGapListed apart, with each model's binding
// stall or bound. `ltc bench agreement` prints it.
#pragma once

#include "model/llm/graph.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ltc::report {

inline constexpr double kStepAgreementMax = 0.10;   // every step
inline constexpr double kStepAgreementMean = 0.05;  // mean over the steps
inline constexpr double kOpGapListed = 0.20;        // operators listed with their cause

struct AgreementCase {
  std::string model, gpu, weights, acts;
  llm::Phase phase = llm::Phase::kDecode;
  int64_t batch = 1, length = 1024;  // decode: context; prefill: tokens per sequence
  std::string label() const;         // "llama2-7b decode B1 L1024 a100-lut4x W int2 A int8"
};

struct OpGap {
  std::string op;  // a launch group's first op stands for the group
  double sim_ms = 0, roofline_ms = 0;
  std::string sim_stall, roofline_bound;
  double diff() const { return roofline_ms > 0 ? sim_ms / roofline_ms - 1 : 0; }
};

struct AgreementResult {
  AgreementCase c;
  double sim_ms = 0, roofline_ms = 0;
  std::string sim_method;  // sampled simulation's method, or "full"
  std::vector<OpGap> ops;  // every operator, step order (layer operators summed over layers)
  // Energy of the step (docs/energy.md): the simulator's parts and total, the roofline's tensor
  // and DRAM parts (a part is NaN where the GPU file has no figure for it), and the tokens it
  // produces.
  double sim_tensor_j = 0, sim_dram_j = 0, sim_total_j = 0;
  bool sim_total_partial = false;  // sim_total_j leaves out parts without a figure
  double roofline_tensor_j = 0, roofline_dram_j = 0;
  int64_t tokens = 0;
  double wall_s = 0;
  double diff() const { return roofline_ms > 0 ? sim_ms / roofline_ms - 1 : 0; }
};

struct AgreementOptions {
  std::vector<std::string> models{"llama2-7b", "llama2-13b", "llama2-70b"};
  bool full = false;  // simulate every step in full (slow) instead of sampled
};

// {models} x {decode B1 L1024, decode B16 L2048, prefill B1 S1024} x {h200 fp16, a100 fp16,
// a100 W4A16, a100-lut4x W2A8, a100-lut4x W1A16}.
std::vector<AgreementCase> agreement_cases(const AgreementOptions& o);
AgreementResult run_agreement(const AgreementCase& c, bool full);

nlohmann::json to_json(const AgreementResult& r);
AgreementResult agreement_from_json(const nlohmann::json& j);  // to_json's inverse
// The step table with its summary (max and mean |difference| against the targets) and the
// operators more than kOpGapListed apart.
std::string agreement_markdown(const std::vector<AgreementResult>& rows);
// Energy per token of each step: the simulator's (tensor, DRAM, all) beside the roofline's.
std::string energy_markdown(const std::vector<AgreementResult>& rows);

}  // namespace ltc::report
