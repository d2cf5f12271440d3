// The calls `ltc gemm|decode|prefill` and the tests make: load a model and a GPU by name or path,
// build the step, cost it; compare the GEMM model against a measurement file.
#pragma once

#include "model/roofline/cost.h"

#include <optional>
#include <string>
#include <vector>

namespace ltc::roofline {

struct StepRequest {
  std::string model = "llama2-7b";  // built-in name or config.json path
  std::string gpu = "a100";         // built-in name or GPU JSON path
  llm::Phase phase = llm::Phase::kDecode;
  int64_t batch = 1;
  int64_t length = 128;          // decode: context L; prefill: sequence S
  std::string weights = "fp16";  // --weights spelling
  std::string acts = "fp16";
  std::optional<std::string> precompute;  // none | separate | fused (default by GPU)
  bool quantize_tables = false;
  // The kernels the step runs (llm::KernelPlan): the calibrated reference step by default;
  // "compiled" costs the compiler's kernels, as the cycle-level simulator runs them.
  llm::KernelPlan kernels = llm::KernelPlan::kReference;
  // MoE models: how tokens spread over the experts (llm::parse_expert_load: uniform, zipf:<s>,
  // or a file of measured per-expert loads).
  std::string expert_load = "uniform";
};

StepEstimate estimate(const StepRequest& r);
StepEstimate estimate(const Machine& m, const llm::ModelConfig& model, const StepRequest& r);

// One measured GEMM against the model.
struct GemmCheck {
  std::string name;
  int64_t m = 0, n = 0, k = 0;
  double measured_ms = 0, model_ms = 0;
  double error() const { return (model_ms - measured_ms) / measured_ms; }
};
struct CalibrationReport {
  std::vector<GemmCheck> gemms;
  double mape = 0;     // mean |model - measured| / measured over the GEMMs
  std::string device;  // the file's "device" (where the measurements were taken), or ""
  // Set when `device` names another GPU than the one modelled: the errors then compare two
  // different machines. Says which, and the --gpu to use.
  std::string device_mismatch;
};
// `path`: a file with {"gemm": [{"name", "M", "N", "K", "ms"}, ...]} (fp16 x fp16 GEMMs), as
// configs/calibration/h200-gemm.json. Throws InputError naming the file and entry.
CalibrationReport check_gemms(const Machine& m, const std::string& path);
// The measured GEMMs of such a file (model_ms left 0), for other models to compare against.
// `device`, when given, receives the file's "device" field ("" if none).
std::vector<GemmCheck> load_gemm_measurements(const std::string& path,
                                              std::string* device = nullptr);

// Human-readable table of a step estimate (one line per operator).
std::string format_step(const StepEstimate& e);

}  // namespace ltc::roofline
