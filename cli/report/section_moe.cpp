// Mixture of experts: one MoE model's decode and prefill across GPUs and precisions, LUT vs
// MAC tensor cores. Each expert's GEMM sees only the tokens routed to it, so decode's expert
// GEMMs stay skinny and weight-bound at batches where a dense model's are not.
#include "cli/report/html.h"
#include "cli/report/section.h"
#include "cli/report/step_request.h"

#include <fmt/core.h>

namespace ltc::report {
using nlohmann::json;

namespace {

constexpr char kModel[] = "mixtral-8x7b";

std::string build(SectionContext& ctx) {
  struct Precision {
    const char* weights;
    const char* acts;
  };
  const Precision precisions[] = {{"fp16", "fp16"}, {"int4", "fp16"}, {"int2", "int8"}};
  const char* gpus[] = {"a100", "a100-lut4x", "h200"};
  struct Point {
    llm::Phase phase;
    int64_t batch, length;
    const char* label;
  };
  const Point points[] = {{llm::Phase::kDecode, 1, 1024, "decode B1 L1024"},
                          {llm::Phase::kDecode, 32, 1024, "decode B32 L1024"},
                          {llm::Phase::kPrefill, 1, 1024, "prefill B1 S1024"}};
  std::vector<std::vector<std::string>> rows;
  json values = json::array();
  std::string cmds, routing[2];
  for (const auto& p : precisions) {
    for (const char* gpu : gpus) {
      std::vector<std::string> row = {gpu, fmt::format("W_{} A_{}", p.weights, p.acts)};
      std::string unit;
      for (size_t i = 0; i < std::size(points); ++i) {
        const Point& pt = points[i];
        roofline::StepRequest q =
            step_request(kModel, gpu, pt.phase, pt.batch, pt.length, p.weights, p.acts);
        // The LUT GPU runs low-bit weights on its LUT cores (tables fused into their producers),
        // not on whichever path the tool would find faster: the comparison is LUT vs MAC.
        if (std::string(gpu) == "a100-lut4x" && std::string(p.weights) != "fp16") {
          q.precompute = "fused";
        }
        const auto e = roofline::estimate(q);
        if (i < 2) routing[i] = e.routing;
        double experts_ms = 0;
        for (const auto& op : e.layer) {
          if (op.name.rfind("expert_", 0) == 0 && op.kind == "linear") experts_ms += op.ms;
        }
        const double share = e.layer_ms > 0 ? experts_ms / e.layer_ms : 0.0;
        row.push_back(fixed(e.latency_ms, 2));
        row.push_back(fmt::format("{:.0f}%", 100 * share));
        for (const auto& op : e.layer) {
          if (op.name == "expert_gate_proj" && i == 0) unit = op.execution_path;
        }
        values.push_back({{"gpu", gpu},
                          {"precision", row[1]},
                          {"step", pt.label},
                          {"latency_ms", e.latency_ms},
                          {"tokens_per_s", e.tokens_per_s},
                          {"expert_gemm_share", share},
                          {"reproduce", step_command(q)}});
        cmds += reproduce(step_command(q));
      }
      row.push_back(unit);
      rows.push_back(row);
    }
  }
  json spec = {
      {"title", "Mixtral-8x7B: step latency by GPU and precision (roofline)"},
      {"height", 220},
      {"mark", "bar"},
      {"encoding",
       {{"x", {{"field", "precision"}, {"type", "nominal"}, {"sort", nullptr}, {"title", nullptr}}},
        {"xOffset", {{"field", "gpu"}, {"sort", nullptr}}},
        {"y",
         {{"field", "latency_ms"},
          {"type", "quantitative"},
          {"scale", {{"type", "log"}}},
          {"title", "latency (ms, log)"}}},
        {"color", {{"field", "gpu"}, {"type", "nominal"}, {"sort", nullptr}, {"title", nullptr}}},
        {"column", {{"field", "step"}, {"type", "nominal"}, {"sort", nullptr}, {"title", nullptr}}},
        {"tooltip", vl_tooltip({"gpu", "precision", "step", "latency_ms", "tokens_per_s",
                                "expert_gemm_share", "reproduce"})}}}};
  std::string html = para(
      "Mixtral-8x7B (8 experts, top-2) on MAC GPUs (A100, H200) and the LUT GPU (A100 with 4x "
      "LUT tensor cores), decode and prefill, at FP16, W_INT4 A_FP16 and W_INT2 A_INT8. The "
      "expert GEMMs are grouped GEMMs over the tokens each expert receives, under uniform "
      "independent routing (" +
      routing[0] + "; at batch 32: " + routing[1] +
      "). These layers' roofline figures are predictions: their reference steps "
      "(docs/performance-models.md) are not yet measured on an H200.");
  html += ctx.plot("moe", spec, values);
  html += details("as a table",
                  table({"GPU", "precision", "decode B1 (ms)", "expert GEMMs", "decode B32 (ms)",
                         "expert GEMMs", "prefill S1024 (ms)", "expert GEMMs", "expert GEMM unit"},
                        rows) +
                      cmds);
  return html;
}

}  // namespace

SectionDef moe_section() {
  return {"moe", "Mixture of experts: Mixtral-8x7B across GPUs and precisions, LUT vs MAC", build};
}

}  // namespace ltc::report
