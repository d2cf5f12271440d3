#include "cli/report/step_request.h"

#include <fmt/core.h>

namespace ltc::report {

roofline::StepRequest step_request(const std::string& model, const std::string& gpu,
                                   llm::Phase phase, int64_t batch, int64_t length,
                                   const std::string& weights, const std::string& acts) {
  roofline::StepRequest r;
  r.model = model;
  r.gpu = gpu;
  r.phase = phase;
  r.batch = batch;
  r.length = length;
  r.weights = weights;
  r.acts = acts;
  return r;
}

std::string step_command(const roofline::StepRequest& r) {
  const bool decode = r.phase == llm::Phase::kDecode;
  std::string s =
      fmt::format("ltc {} --model {} --gpu {} --batch {} --{} {} --weights {} --acts {}",
                  decode ? "decode" : "prefill", r.model, r.gpu, r.batch,
                  decode ? "context" : "seq", r.length, r.weights, r.acts);
  if (r.precompute) s += " --precompute " + *r.precompute;
  if (r.quantize_tables) s += " --quantize-tables";
  if (r.expert_load != "uniform") s += " --expert-load " + r.expert_load;
  if (r.kernels != llm::KernelPlan::kReference) {
    s += " --kernels " + std::string(llm::kernel_plan_name(r.kernels));
  }
  return s;
}

}  // namespace ltc::report
