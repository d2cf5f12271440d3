// Numerics of the LUT datapath: the golden model's LUT mpGEMM against the dense reference, every
// activation type x weight format, with and without INT8 table quantization.
#include "cli/report/html.h"
#include "cli/report/numerics.h"
#include "cli/report/section.h"

#include <fmt/core.h>

namespace ltc::report {
using nlohmann::json;

namespace {

std::string sci(double v) {
  return fmt::format("{:.2e}", v);
}

std::string build(SectionContext& ctx) {
  std::vector<const char*> acts = {"int8", "fp16", "bf16", "fp8e4m3", "fp8e5m2"};
  std::vector<const char*> weights = {"int2:g=128", "int4:g=128", "ternary",
                                      "binary:kb=2,g=128,s=8"};
  if (ctx.quick()) {
    acts = {"int8", "fp16"};
    weights = {"int2:g=128", "ternary"};
  }
  std::vector<std::vector<std::string>> rows;
  json values = json::array();
  double fp16_rms[2] = {0, 0};  // mean rms error of FP16 activations without / with table quant
  int fp16_runs[2] = {0, 0};
  long grouped_bad = 0, grouped_runs = 0;
  for (const char* a : acts) {
    for (const char* w : weights) {
      for (bool quant : {false, true}) {
        NumericsOptions o;
        o.m = 2;
        o.n = 128;
        o.k = 1024;
        o.acts = a;
        o.weights = w;
        o.quantize_table = quant;
        ctx.progress("numerics " + o.command());
        const NumericsResult r = run_numerics(o);
        if (std::string(a) == "fp16") {
          fp16_rms[quant] += r.rms_rel;
          ++fp16_runs[quant];
        }
        if (r.grouped_exact >= 0) {
          ++grouped_runs;
          grouped_bad += r.total - r.grouped_exact;
        }
        const std::string exact =
            r.grouped_exact < 0 ? "-" : fmt::format("{}/{}", r.grouped_exact, r.total);
        rows.push_back(
            {a, w, quant ? "int8" : "off", sci(r.max_rel), sci(r.rms_rel), exact, o.command()});
        values.push_back({{"acts", a},
                          {"weights", w},
                          {"tables", quant ? "INT8 tables" : "tables in the activation format"},
                          {"max_rel_err", r.max_rel},
                          {"rms_rel_err", r.rms_rel},
                          {"grouped_exact", r.grouped_exact},
                          {"outputs", r.total},
                          {"reproduce", o.command()}});
      }
    }
  }
  json spec = {{"title", "LUT datapath: rms relative error per output (log scale)"},
               {"height", 160},
               {"mark", {{"type", "point"}, {"filled", true}, {"size", 70}}},
               {"encoding",
                {{"x", {{"field", "weights"}, {"type", "nominal"}, {"title", nullptr}}},
                 {"xOffset", {{"field", "tables"}}},
                 {"y",
                  {{"field", "rms_rel_err"},
                   {"type", "quantitative"},
                   {"scale", {{"type", "log"}}},
                   {"title", "rms error / sum|a*w|"}}},
                 {"color", {{"field", "tables"}, {"type", "nominal"}, {"title", "tables"}}},
                 {"column", {{"field", "acts"}, {"type", "nominal"}, {"title", "activations"}}},
                 {"tooltip", vl_tooltip({"acts", "weights", "tables", "max_rel_err", "rms_rel_err",
                                         "reproduce"})}}}};
  spec["width"] = 150;
  std::string html = para(
      "Error of the LUT datapath (golden model: table precompute in the table format, optional "
      "INT8 table quantization, bit-serial accumulation in FP32/INT32) on a 2x128x1024 mpGEMM "
      "with LLM-like activations (N(0,1) with 2% outlier channels x20), relative to sum|a*w| per "
      "output, against the dense dequantize-then-GEMM in double; for INT8 activations also "
      "against the grouped integer reference, which must match bit for bit. Multi-basis binary "
      "with INT8 activations re-quantizes a*alpha_c to INT8 (scale fusion), hence its error.");
  html += ctx.plot("numerics", spec, values);
  html += details(fmt::format("{} runs as a table", rows.size()),
                  table({"acts", "weights", "tables", "max rel. error", "rms rel. error",
                         "outputs exact vs integer ref.", "reproduce"},
                        rows));
  if (fp16_runs[0] && fp16_runs[1]) {
    const double off = fp16_rms[0] / fp16_runs[0], on = fp16_rms[1] / fp16_runs[1];
    html += para(fmt::format(
        "FP16 activations, averaged over the weight formats: rms relative error {} with FP16 "
        "tables, {} with INT8-quantized tables.",
        sci(off), sci(on)));
    Comparison c;
    c.figure = "INT8 table quantization: accuracy";
    c.paper = "no loss (LLaMA-2-7B WikiText-2 PPL 7.68 -> 7.69)";
    c.ours = fmt::format("rms rel. error {} -> {} (FP16 acts)", sci(off), sci(on));
    c.verdict = on < 1.0 / 254 ? Comparison::Verdict::kMatch : Comparison::Verdict::kDiffers;
    c.reason =
        "different measure: GEMM output error, not perplexity; the added error stays "
        "below INT8's half step (1/254)";
    ctx.compare(c);
  }
  if (grouped_runs) {
    Comparison c;
    c.figure = "INT8 activations: LUT result vs integer reference";
    c.paper = "bit-exact (same integer arithmetic)";
    c.ours = fmt::format("{} differing outputs in {} runs", grouped_bad, grouped_runs);
    c.verdict = grouped_bad == 0 ? Comparison::Verdict::kMatch : Comparison::Verdict::kDiffers;
    c.reason = grouped_bad == 0 ? "every output equal, bit for bit"
                                : "the golden model's LUT path is not exact: a bug";
    ctx.compare(c);
  }
  return html;
}

}  // namespace

SectionDef numerics_section() {
  return {"numerics", "Numerics of the LUT datapath", build};
}

}  // namespace ltc::report
