// Paper Table III: LLaMA 3B FP16 on A100 against BitNet b1.58 3B W_INT2 A_INT8 on A100s with LUT
// tensor cores, and the tensor cores' density, efficiency and area from the GPU files.
#include "cli/report/html.h"
#include "cli/report/paper.h"
#include "cli/report/section.h"
#include "cli/report/step_request.h"

#include <fmt/core.h>

#include <cmath>
#include <tuple>
#include <vector>

namespace ltc::report {
using nlohmann::json;

namespace {

Comparison::Verdict within(double ours, double paper, double tolerance) {
  return std::abs(ours / paper - 1) <= tolerance ? Comparison::Verdict::kMatch
                                                 : Comparison::Verdict::kDiffers;
}

std::string build(SectionContext& ctx) {
  std::vector<std::vector<std::string>> rows;
  json values = json::array();
  std::string cmds;
  const char* gpus[] = {"a100-lut4x", "a100-lut8x"};
  const double* paper_ms[] = {paper::kTable3Lut4xMs, paper::kTable3Lut8xMs};
  double density[2] = {0, 0}, efficiency[2] = {0, 0}, area[2] = {0, 0}, area8 = 0;
  for (int col = 0; col < 2; ++col) {
    const llm::Phase phase = col == 0 ? llm::Phase::kDecode : llm::Phase::kPrefill;
    const std::string step = col == 0 ? "decode B1 L2048" : "prefill B1 S2048";
    const roofline::StepRequest base_q = step_request("llama-3b", "a100", phase, 1, 2048);
    const auto base = roofline::estimate(base_q);
    rows.push_back(
        {step, "a100", "llama-3b W_FP16 A_FP16", fixed(base.latency_ms, 2), "1.00", "1.00"});
    cmds += reproduce(step_command(base_q));
    for (int i = 0; i < 2; ++i) {
      roofline::StepRequest q =
          step_request("bitnet-b1.58-3b", gpus[i], phase, 1, 2048, "int2", "int8");
      q.quantize_tables = true;  // the paper's A_INT8 LUT tables are INT8
      const auto e = roofline::estimate(q);
      const double ours = base.latency_ms / e.latency_ms;
      const double theirs = paper::kTable3A100Ms[col] / paper_ms[i][col];
      rows.push_back({step, gpus[i], "bitnet-b1.58-3b W_INT2 A_INT8", fixed(e.latency_ms, 2),
                      fixed(ours, 2), fixed(theirs, 2)});
      cmds += reproduce(step_command(q));
      using Bar = std::tuple<const char*, double, std::string>;
      for (const auto& [who, v, cmd] : std::vector<Bar>{{"paper", theirs, "(paper Table III)"},
                                                        {"ltc", ours, step_command(q)}}) {
        values.push_back({{"step", step},
                          {"gpu", gpus[i]},
                          {"source", who},
                          {"bar", std::string(gpus[i]) + " " + who},
                          {"speedup", v},
                          {"reproduce", cmd}});
      }
      Comparison c;
      c.figure = fmt::format("Table III: {} speedup, {}", gpus[i], step);
      c.paper = fmt::format("{:.2f}x", theirs);
      c.ours = fmt::format("{:.2f}x", ours);
      c.paper_value = theirs;
      c.ours_value = ours;
      c.verdict = within(ours, theirs, 0.25);
      c.reason = c.verdict == Comparison::Verdict::kMatch
                     ? "same speedup within 25%; the paper does not state its batch and length"
                     : "the paper does not state the batch and length of its columns; ours are "
                       "a memory-bound decode and a compute-bound prefill";
      ctx.compare(c);
      if (col == 0 && i == 0) {
        density[1] = e.tensor_tops_per_mm2;
        efficiency[1] = e.tensor_tops_per_w;
        area[1] = e.tensor_area_mm2;
        density[0] = base.tensor_tops_per_mm2;
        efficiency[0] = base.tensor_tops_per_w;
        area[0] = base.tensor_area_mm2;
      }
      if (col == 0 && i == 1) area8 = e.tensor_area_mm2;
    }
  }
  json spec = {
      {"title", "Speedup over LLaMA 3B FP16 on A100"},
      {"height", 220},
      {"mark", "bar"},
      {"encoding",
       {{"x", {{"field", "step"}, {"type", "nominal"}, {"title", nullptr}}},
        {"xOffset", {{"field", "bar"}, {"sort", nullptr}}},
        {"y", {{"field", "speedup"}, {"type", "quantitative"}, {"title", "speedup (x)"}}},
        {"color", {{"field", "bar"}, {"type", "nominal"}, {"title", nullptr}, {"sort", nullptr}}},
        {"tooltip", vl_tooltip({"step", "gpu", "source", "speedup", "reproduce"})}}}};
  std::string html = para(
      "LLaMA 3B W_FP16 A_FP16 on A100 against BitNet b1.58 3B W_INT2 A_INT8 (INT8 tables) on "
      "A100s whose tensor cores are LUT tensor cores delivering 4x / 8x the FP16 rate "
      "(configs/gpus/a100-lut4x.json, a100-lut8x.json). The paper gives two latency columns "
      "without their batch and length; we set its first beside a memory-bound decode and its "
      "second beside a compute-bound prefill.");
  html += ctx.plot("table3", spec, values);
  html += details(
      "Table III as a table",
      table({"step", "GPU", "model", "latency (ms)", "ltc speedup", "paper speedup"}, rows) + cmds);
  if (density[0] > 0 && efficiency[0] > 0 && area[0] > 0) {
    html += para(fmt::format(
        "Tensor cores (from the GPU files): A100 FP16 {:.2f} TFLOPS/mm2, {:.2f} TFLOPS/W; "
        "A100-LUT-4X {:.2f} TOPS/mm2, {:.2f} TOPS/W.",
        density[0], efficiency[0], density[1], efficiency[1]));
    const struct {
      const char* figure;
      double ours, theirs;
      const char* unit;
    } figs[] = {{"Table III: compute density gain, LUT-4X", density[1] / density[0],
                 paper::kTable3DensityGain, "x"},
                {"Table III: energy efficiency gain, LUT-4X", efficiency[1] / efficiency[0],
                 paper::kTable3EfficiencyGain, "x"},
                {"Table III: tensor-core area share, LUT-4X", 100 * area[1] / area[0],
                 100 * paper::kTable3Lut4xAreaShare, "%"},
                {"Table III: tensor-core area share, LUT-8X", 100 * area8 / area[0],
                 100 * paper::kTable3Lut8xAreaShare, "%"}};
    for (const auto& f : figs) {
      if (f.ours <= 0) continue;
      Comparison c;
      c.figure = f.figure;
      c.paper = fmt::format("{:.1f}{}", f.theirs, f.unit);
      c.ours = fmt::format("{:.1f}{}", f.ours, f.unit);
      c.paper_value = f.theirs;
      c.ours_value = f.ours;
      c.verdict = within(f.ours, f.theirs, 0.1);
      c.reason = c.verdict == Comparison::Verdict::kMatch
                     ? "the GPU files carry the paper's tensor-core figures: an input, not a "
                       "result"
                     : "the GPU files' tensor-core figures differ from the paper's";
      ctx.compare(c);
    }
  }
  return html;
}

}  // namespace

SectionDef table3_section() {
  return {"table3", "Table III: LLaMA 3B on A100 vs BitNet b1.58 3B on A100-LUT", build};
}

}  // namespace ltc::report
