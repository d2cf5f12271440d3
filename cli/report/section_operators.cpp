// Where a decoder layer's time goes: the tile-level model's per-operator times of one decode and
// one prefill layer, stacked, across GPUs and precisions.
#include "cli/report/html.h"
#include "cli/report/section.h"
#include "cli/report/step_request.h"

#include <fmt/core.h>

namespace ltc::report {
using nlohmann::json;

namespace {

constexpr StepSetup kSetups[] = {{"a100", "fp16", "fp16"},
                                 {"a100", "int4", "fp16"},
                                 {"a100-lut4x", "int2", "int8"},
                                 {"a100-lut8x", "int1", "int8"},
                                 {"h200", "fp16", "fp16"}};

std::string build(SectionContext& ctx) {
  const std::string model = "llama2-7b";
  struct Step {
    const char* name;
    llm::Phase phase;
    int64_t batch, length;
  };
  const Step steps[] = {{"decode", llm::Phase::kDecode, 16, 1024},
                        {"prefill", llm::Phase::kPrefill, 1, 2048}};
  std::string html = para(
      "One decoder layer of " + model +
      " on the tile-level model, operator by operator (fused operators, whose work runs inside "
      "their producer, take no time of their own). Low-bit weights shrink the linear layers; "
      "attention over the KV cache, norms and fixed per-kernel costs stay.");
  for (const Step& st : steps) {
    json values = json::array();
    for (const StepSetup& s : kSetups) {
      roofline::StepRequest q =
          step_request(model, s.gpu, st.phase, st.batch, st.length, s.weights, s.acts);
      const auto e = roofline::estimate(q);
      const std::string setup = fmt::format("{} W_{} A_{}", s.gpu, s.weights, s.acts);
      int order = 0;
      for (const auto& op : e.layer) {
        ++order;
        if (op.ms <= 0) continue;
        values.push_back({{"setup", setup},
                          {"operator", op.name},
                          {"order", order},
                          {"ms", op.ms},
                          {"bound", op.bound},
                          {"unit", op.execution_path},
                          {"reproduce", step_command(q)}});
      }
    }
    const std::string what = st.phase == llm::Phase::kDecode
                                 ? fmt::format("decode, batch {}, context {}", st.batch, st.length)
                                 : fmt::format("prefill, batch {}, {} tokens", st.batch, st.length);
    json spec = {
        {"title", model + " layer, " + what},
        {"height", 220},
        {"mark", "bar"},
        {"encoding",
         {{"y", {{"field", "setup"}, {"type", "nominal"}, {"title", nullptr}, {"sort", nullptr}}},
          {"x", {{"field", "ms"}, {"type", "quantitative"}, {"title", "time per layer (ms)"}}},
          {"color",
           {{"field", "operator"},
            {"type", "nominal"},
            {"title", "operator"},
            {"scale", {{"scheme", "tableau20"}}},
            {"sort", {{"field", "order"}, {"op", "min"}}}}},
          {"order", {{"field", "order"}, {"type", "quantitative"}}},
          {"tooltip", vl_tooltip({"setup", "operator", "ms", "bound", "unit", "reproduce"})}}}};
    html += ctx.plot(std::string("operators-") + st.name, spec, values);
  }
  return html;
}

}  // namespace

SectionDef operator_breakdown_section() {
  return {"operators", "Per-operator time of a decode and a prefill layer", build};
}

}  // namespace ltc::report
