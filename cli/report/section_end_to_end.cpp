// End to end with the tile-level model: decode latency and tokens/s of one model against batch
// and context, across GPUs (with and without LUT tensor cores) and precisions.
#include "cli/report/html.h"
#include "cli/report/section.h"
#include "cli/report/step_request.h"

#include <fmt/core.h>

namespace ltc::report {
using nlohmann::json;

namespace {

constexpr StepSetup kSetups[] = {{"a100", "fp16", "fp16"},       {"h100", "fp16", "fp16"},
                                 {"h200", "fp16", "fp16"},       {"a100", "int4", "fp16"},
                                 {"a100-lut4x", "int2", "int8"}, {"a100-lut8x", "int2", "int8"},
                                 {"a100-lut8x", "int1", "int8"}};

json sweep_chart(const std::string& x, const std::string& x_title) {
  auto one = [&](const std::string& y, const std::string& y_title) {
    return json{{"width", 330},
                {"height", 260},
                {"mark", {{"type", "line"}, {"point", true}}},
                {"encoding",
                 {{"x",
                   {{"field", x},
                    {"type", "quantitative"},
                    {"scale", {{"type", "log"}, {"base", 2}}},
                    {"title", x_title}}},
                  {"y",
                   {{"field", y},
                    {"type", "quantitative"},
                    {"scale", {{"type", "log"}}},
                    {"title", y_title}}},
                  {"color", {{"field", "setup"}, {"type", "nominal"}, {"title", "GPU, precision"}}},
                  {"tooltip", vl_tooltip({"setup", x, "latency_ms", "tokens_per_s", "fits_memory",
                                          "reproduce"})}}}};
  };
  return {{"hconcat", {one("latency_ms", "step latency (ms)"), one("tokens_per_s", "tokens/s")}}};
}

std::string build(SectionContext& ctx) {
  const std::string model = "llama2-7b";
  const int64_t context = 1024, batch = 1;
  std::vector<int64_t> batches = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  std::vector<int64_t> contexts = {128, 512, 1024, 2048, 4096, 8192, 16384, 32768};
  if (ctx.quick()) {
    batches = {1, 16, 256};
    contexts = {128, 4096};
  }
  json by_batch = json::array(), by_context = json::array();
  std::vector<std::string> skipped;
  for (const StepSetup& s : kSetups) {
    const std::string setup = fmt::format("{} W_{} A_{}", s.gpu, s.weights, s.acts);
    auto add = [&](json& values, int64_t b, int64_t l) {
      roofline::StepRequest q =
          step_request(model, s.gpu, llm::Phase::kDecode, b, l, s.weights, s.acts);
      const auto e = roofline::estimate(q);
      values.push_back({{"setup", setup},
                        {"batch", b},
                        {"context", l},
                        {"latency_ms", e.latency_ms},
                        {"tokens_per_s", e.tokens_per_s},
                        {"fits_memory", e.fits_memory ? "yes" : "no"},
                        {"reproduce", step_command(q)}});
    };
    try {
      for (int64_t b : batches) add(by_batch, b, context);
      for (int64_t l : contexts) add(by_context, batch, l);
    } catch (const std::exception& e) {
      skipped.push_back(setup + ": " + e.what());
    }
  }
  std::string html = para(fmt::format(
      "{} decode steps on the tile-level model (model/roofline): A100, H100 and H200 with FP16 "
      "and A100 with INT4 weights (dequantize, then MAC), against A100s whose tensor cores are "
      "LUT tensor cores (configs/gpus/a100-lut4x.json, a100-lut8x.json) with 2- and 1-bit "
      "weights and INT8 activations. Hover a point for its command.",
      model));
  html += "<h3>Against batch (context " + std::to_string(context) + ")</h3>\n";
  html += ctx.plot("e2e-decode-batch", sweep_chart("batch", "batch (sequences)"), by_batch);
  html += "<h3>Against context (batch " + std::to_string(batch) + ")</h3>\n";
  html += ctx.plot("e2e-decode-context", sweep_chart("context", "context (tokens in the KV cache)"),
                   by_context);
  for (const auto& s : skipped) html += "<p class=\"warn\">Not estimated: " + escape(s) + "</p>\n";
  return html;
}

}  // namespace

SectionDef end_to_end_section() {
  return {"end-to-end", "End to end: decode latency and tokens/s vs batch and context", build};
}

}  // namespace ltc::report
