// The roofline against whole decoder layers measured on an H200 (configs/calibration/
// h200-profile.json, tools/profile-gpu): decode and prefill steps of nine models. `ltc calibrate`
// fitted configs/gpus/h200.json's achievable section to these steps, so the errors here are
// in-sample; its leave-one-model-out errors (a fit of 2-4 minutes, too long for the report) are
// printed by the command this section names (model/roofline/README.md).
//
// To show them here: roofline::calibrate()'s per-case data maps onto MeasuredCase one to one
// (set: "in-sample" / "held out"), and ctx.measured_vs_estimated() draws it the same way.
#include "cli/report/html.h"
#include "cli/report/section.h"
#include "cli/report/step_request.h"
#include "model/hw/gpu.h"
#include "model/llm/model_config.h"
#include "model/roofline/estimate.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <map>

namespace ltc::report {
using nlohmann::json;

namespace {

constexpr const char* kProfileFile = "configs/calibration/h200-profile.json";

std::string build(SectionContext& ctx) {
  std::ifstream f(std::string(LTC_SOURCE_DIR) + "/" + kProfileFile);
  if (!f) throw std::runtime_error(std::string("cannot read ") + kProfileFile);
  const json profile = json::parse(f);
  std::map<std::string, std::string> source;  // model name -> config path in the repository
  for (const auto& m : profile.at("models")) source[m.at("name")] = m.at("source");
  const roofline::Machine h200(hw::load_gpu("h200"));
  std::map<std::string, llm::ModelConfig> models;
  std::vector<MeasuredCase> cases;
  double abs_err[2] = {0, 0};
  int count[2] = {0, 0};
  int step_index = 0;
  for (const auto& s : profile.at("steps")) {
    if (s.value("dtype", "fp16") != "fp16") continue;
    const bool decode = s.at("phase") == "decode";
    if (ctx.quick() && step_index++ % 6 != 0) continue;
    const std::string name = s.at("model");
    const std::string path = source.at(name);
    if (!models.count(path))
      models.emplace(path, llm::load_model(std::string(LTC_SOURCE_DIR) + "/" + path));
    const roofline::StepRequest q = step_request(
        path, "h200", decode ? llm::Phase::kDecode : llm::Phase::kPrefill, s.at("batch"),
        decode ? s.at("context").get<int64_t>() : s.at("seq").get<int64_t>());
    const roofline::StepEstimate e = roofline::estimate(h200, models.at(path), q);
    const double measured = s.at("ms_per_layer");
    cases.push_back(
        {decode ? "decode layer" : "prefill layer", name, measured, e.layer_ms,
         fmt::format("{} batch {} {} {}", name, q.batch, decode ? "context" : "seq", q.length),
         step_command(q) + "   # layer_ms"});
    abs_err[decode ? 0 : 1] += std::abs(e.layer_ms - measured) / measured;
    ++count[decode ? 0 : 1];
  }
  std::string html = para(fmt::format(
      "One decoder layer (FP16, batch x context or sequence as in the file) measured on an H200 "
      "with CUDA-graph replay ({}, written by tools/profile-gpu) against the roofline on "
      "configs/gpus/h200.json, whose achievable section ltc calibrate fitted to these steps: "
      "in-sample errors. Mean absolute error: decode {:.1f}% over {} steps, prefill {:.1f}% over "
      "{} steps. The leave-one-model-out errors (each model estimated by a fit on the other "
      "eight): ltc calibrate --gpu h200 --measurements configs/calibration/h200-profile.json.",
      kProfileFile, count[0] ? 100 * abs_err[0] / count[0] : 0.0, count[0],
      count[1] ? 100 * abs_err[1] / count[1] : 0.0, count[1]));
  html += ctx.measured_vs_estimated("validation-h200-steps",
                                    "H200 decoder layers: roofline vs measured", cases);
  for (int phase = 0; phase < 2; ++phase) {
    if (!count[phase]) continue;
    Comparison c;
    c.figure = fmt::format("{} layers on H200, in-sample of the calibrate fit (MAPE)",
                           phase == 0 ? "Decode" : "Prefill");
    c.paper = "5.21% (its simulator, A100/RTX 3090 layers)";
    const double mape = 100 * abs_err[phase] / count[phase];
    c.ours = fmt::format("{:.1f}% ({} steps, 9 models)", mape, count[phase]);
    c.paper_value = 5.21;
    c.ours_value = mape;
    c.verdict = mape <= 10 ? Comparison::Verdict::kMatch : Comparison::Verdict::kDiffers;
    c.reason = mape <= 10 ? "in-sample (the fit's own steps); ltc calibrate prints the "
                            "leave-one-model-out error"
                          : "the fit leaves these steps far off: run ltc calibrate";
    ctx.compare(c);
  }
  return html;
}

}  // namespace

SectionDef step_validation_section() {
  return {"validation", "Roofline validation: H200 decoder layers", build};
}

}  // namespace ltc::report
