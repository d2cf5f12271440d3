#include "cli/report/roofline_section.h"

#include "cli/report/html.h"
#include "model/hw/gpu.h"
#include "model/llm/model_config.h"
#include "model/roofline/estimate.h"
#include "model/roofline/paper_figures.h"

#include <fmt/core.h>

#include <cmath>
#include <map>
#include <vector>

namespace ltc::report {
namespace {

using roofline::StepRequest;

StepRequest request(const std::string& model, const std::string& gpu, llm::Phase phase,
                    int64_t batch, int64_t len, const std::string& weights = "fp16",
                    const std::string& acts = "fp16") {
  StepRequest r;
  r.model = model;
  r.gpu = gpu;
  r.phase = phase;
  r.batch = batch;
  r.length = len;
  r.weights = weights;
  r.acts = acts;
  return r;
}

std::string command(const StepRequest& r) {
  std::string s =
      fmt::format("ltc {} --model {} --gpu {} --batch {} --{} {} --weights {} --acts {}",
                  r.phase == llm::Phase::kDecode ? "decode" : "prefill", r.model, r.gpu, r.batch,
                  r.phase == llm::Phase::kDecode ? "context" : "seq", r.length, r.weights, r.acts);
  if (r.precompute) s += " --precompute " + *r.precompute;
  if (r.quantize_tables) s += " --quantize-tables";
  return s;
}

std::string f2(double v) {
  return fmt::format("{:.2f}", v);
}
std::string pct(double v) {
  return fmt::format("{:+.1f}%", 100 * v);
}

// The calibration data ships with the repository (a copy of shared/reference).
std::string calibration_path() {
  return std::string(LTC_SOURCE_DIR) + "/configs/calibration/h200-gemm.json";
}

}  // namespace

std::string roofline_calibration_html(std::string* csv) {
  const roofline::Machine h200(hw::load_gpu("h200"));
  const auto rep = roofline::check_gemms(h200, calibration_path());
  std::vector<std::vector<std::string>> rows;
  *csv = "name,M,N,K,measured_ms,model_ms,error\n";
  for (const auto& g : rep.gemms) {
    rows.push_back({g.name, std::to_string(g.m), std::to_string(g.n), std::to_string(g.k),
                    fmt::format("{:.4f}", g.measured_ms), fmt::format("{:.4f}", g.model_ms),
                    pct(g.error())});
    *csv += fmt::format("{},{},{},{},{},{},{}\n", g.name, g.m, g.n, g.k, g.measured_ms, g.model_ms,
                        g.error());
  }
  std::string html = para(fmt::format(
      "FP16 GEMMs Y[M,N] = X[M,K] W[N,K]^T on the h200 configuration against real H200 "
      "measurements (cuBLAS through torch, CUDA graphs, median of 20; "
      "shared/reference/h200-calibration.json). The model has a few fitted physical parameters "
      "(achievable DRAM bandwidth, tensor-core efficiency, per-kernel fixed cost), no per-shape "
      "fit. Mean absolute percentage error over {} shapes: {:.2f}% (the paper's tile-level "
      "simulator: 5.21% on A100/RTX 3090 layers; LLMCompass: 4.1%).",
      rep.gemms.size(), 100 * rep.mape));
  html += table({"GEMM", "M", "N", "K", "measured ms", "model ms", "error"}, rows);
  html += reproduce("ltc gemm --gpu h200 --calibration configs/calibration/h200-gemm.json");
  return html;
}

std::string roofline_table1_html(std::string* csv) {
  std::vector<std::vector<std::string>> rows;
  *csv =
      "model,config,paper_base_ms,paper_precompute_ms,paper_fused_ms,base_ms,inkernel_ms,"
      "separate_kernel_ms,fused_ms\n";
  std::string cmds;
  for (const auto& p : roofline::paper::kTableI) {
    StepRequest q = request(p.model, "a100", p.phase, p.batch, p.length, "int2", "fp16");
    double ms[4];
    const char* modes[] = {"none", "inkernel", "separate", "fused"};
    for (int i = 0; i < 4; ++i) {
      q.precompute = modes[i];
      ms[i] = roofline::estimate(q).layer_ms;
      if (i == 1 || i == 3) cmds += reproduce(command(q) + "   # layer_ms");
    }
    const std::string cfg = p.phase == llm::Phase::kPrefill ? fmt::format("BS1 SEQ{}", p.length)
                                                            : fmt::format("BS{} SEQ1", p.batch);
    rows.push_back({p.model, cfg, f2(p.base_ms), pct(p.unfused_ms / p.base_ms - 1),
                    pct(p.fused_ms / p.base_ms - 1), f2(ms[0]), pct(ms[1] / ms[0] - 1),
                    pct(ms[2] / ms[0] - 1), pct(ms[3] / ms[0] - 1)});
    *csv += fmt::format("{},{},{},{},{},{},{},{},{}\n", p.model, cfg, p.base_ms, p.unfused_ms,
                        p.fused_ms, ms[0], ms[1], ms[2], ms[3]);
  }
  std::string html = para(
      "One decoder layer on A100 with LUT mpGEMM (W_INT2 A_FP16): the GEMMs alone, with the "
      "table precompute done inside each mpGEMM thread block (redundant along N, the "
      "conventional practice; we take it to be what the paper's unfused column measures, which "
      "the paper does not state), as one separate kernel, and "
      "fused into the preceding norm. Paper (its tile-level simulator, Welder kernels): ~16-24% "
      "overhead unfused, ~2.5% fused. Ours: the same operators costed on the a100 "
      "configuration (--precompute none | inkernel | separate | fused).");
  html += table({"model", "config", "paper base ms", "paper +precompute", "paper +fused",
                 "ours base ms", "ours +in-kernel", "ours +separate kernel", "ours +fused"},
                rows);
  return html + cmds;
}

std::string roofline_table3_html(std::string* csv) {
  std::vector<std::vector<std::string>> rows;
  *csv = "phase,gpu,model,precision,latency_ms,speedup,paper_speedup\n";
  std::string cmds;
  double density[2] = {0, 0}, efficiency[2] = {0, 0}, area[2] = {0, 0};
  for (auto phase : {llm::Phase::kDecode, llm::Phase::kPrefill}) {
    const bool decode = phase == llm::Phase::kDecode;
    const StepRequest base_q = request("llama-3b", "a100", phase, 1, 2048);
    const auto base = roofline::estimate(base_q);
    rows.push_back({decode ? "decode B1 L2048" : "prefill B1 S2048", "a100",
                    "llama-3b W_FP16 A_FP16", f2(base.latency_ms), "1.00", "1"});
    cmds += reproduce(command(base_q));
    const char* gpus[] = {"a100-lut4x", "a100-lut8x"};
    const char* paper[2][2] = {{"2.8 / 4.5", "3.1 / 6.9"}, {"2.8 / 4.5", "3.1 / 6.9"}};
    for (int i = 0; i < 2; ++i) {
      StepRequest q = request("bitnet-b1.58-3b", gpus[i], phase, 1, 2048, "int2", "int8");
      q.quantize_tables = true;  // the paper's A_INT8 LUT tables are INT8
      const auto e = roofline::estimate(q);
      rows.push_back({decode ? "decode B1 L2048" : "prefill B1 S2048", gpus[i],
                      "bitnet-b1.58-3b W_INT2 A_INT8", f2(e.latency_ms),
                      f2(base.latency_ms / e.latency_ms), paper[decode ? 0 : 1][i]});
      *csv += fmt::format("{},{},bitnet-b1.58-3b,W_INT2 A_INT8,{},{},\"{}\"\n",
                          decode ? "decode" : "prefill", gpus[i], e.latency_ms,
                          base.latency_ms / e.latency_ms, paper[0][i]);
      cmds += reproduce(command(q));
      if (decode && i == 0) {
        density[1] = e.tensor_tops_per_mm2;
        efficiency[1] = e.tensor_tops_per_w;
        area[1] = e.tensor_area_mm2;
        density[0] = base.tensor_tops_per_mm2;
        efficiency[0] = base.tensor_tops_per_w;
        area[0] = base.tensor_area_mm2;
      }
    }
    *csv += fmt::format("{},a100,llama-3b,W_FP16 A_FP16,{},1,1\n", decode ? "decode" : "prefill",
                        base.latency_ms);
  }
  std::string html = para(
      "LLaMA 3B W_FP16 A_FP16 on A100 against BitNet b1.58 3B W_INT2 A_INT8 (INT8 tables) on A100s "
      "whose "
      "tensor cores are LUT tensor cores delivering 4x / 8x the FP16 rate. Paper speedups, in its "
      "two latency columns: 2.8x / 4.5x (LUT-4X) and 3.1x / 6.9x (LUT-8X); it does not state the "
      "batch and length of those columns, so we show a memory-bound decode and a compute-bound "
      "prefill.");
  html += table({"step", "GPU", "model", "latency ms", "speedup", "paper speedup"}, rows);
  html += para(fmt::format(
      "Tensor cores (from the GPU files, paper Table III figures): A100 FP16 {:.2f} TFLOPs/mm2, "
      "{:.2f} TFLOPs/W; A100-LUT-4X {:.2f} TOPs/mm2, {:.2f} TOPs/W: {:.1f}x density (paper "
      "20.9x), {:.1f}x efficiency (paper 11.2x), {:.1f}% of the area (paper 19.2% for LUT-4X, "
      "38.3% for LUT-8X).",
      density[0], efficiency[0], density[1], efficiency[1], density[1] / density[0],
      efficiency[1] / efficiency[0], 100 * area[1] / area[0]));
  return html + cmds;
}

std::string roofline_fig16_html(std::string* csv) {
  const auto lut8 = hw::load_gpu("a100-lut8x");
  const double peak = lut8.lut_tops("int8", 1) / 312.0;
  struct Point {
    llm::Phase phase;
    int64_t batch, len;
  };
  const Point points[] = {{llm::Phase::kDecode, 1, 128},   {llm::Phase::kDecode, 16, 128},
                          {llm::Phase::kDecode, 256, 128}, {llm::Phase::kDecode, 1024, 128},
                          {llm::Phase::kPrefill, 1, 512},  {llm::Phase::kPrefill, 64, 512}};
  std::vector<std::vector<std::string>> rows;
  *csv = "phase,batch,length,a100_fp16_ms,lut8x_drm_w1a8_ms,gain\n";
  std::string cmds;
  double best = 0;
  std::string best_at;
  for (const auto& p : points) {
    const StepRequest bq = request("llama2-70b", "a100", p.phase, p.batch, p.len);
    StepRequest lq =
        request("llama2-70b", "a100-lut8x-drm", p.phase, p.batch, p.len, "int1", "int8");
    lq.quantize_tables = true;
    const double base = roofline::estimate(bq).latency_ms;
    const double lut = roofline::estimate(lq).latency_ms;
    const bool decode = p.phase == llm::Phase::kDecode;
    const std::string step = fmt::format("{} B{} {}{}", decode ? "decode" : "prefill", p.batch,
                                         decode ? "L" : "S", p.len);
    rows.push_back({step, f2(base), f2(lut), fmt::format("{:.2f}x", base / lut)});
    *csv += fmt::format("{},{},{},{},{},{}\n", decode ? "decode" : "prefill", p.batch, p.len, base,
                        lut, base / lut);
    if (base / lut > best) {
      best = base / lut;
      best_at = step;
    }
    cmds += reproduce(command(bq));
    cmds += reproduce(command(lq));
  }
  std::string html = para(fmt::format(
      "Peak LUT tensor-core rate at W_INT1 A_INT8 on A100-LUT-8X: {:.1f}x the FP16 tensor core "
      "(paper: up to 16x). End to end, LLaMA2-70B with W_INT1 A_INT8 (INT8 tables) on "
      "A100-LUT-8X with doubled registers against FP16 on the A100 it is built from: the largest "
      "gain here is {:.2f}x ({}), against the paper's Figure 16 'up to 8.2x'. The gain stays "
      "below the peak because FP16 attention over the KV cache, norms, RoPE and fixed per-kernel "
      "costs do not shrink with the weights.",
      peak, best, best_at));
  html += table({"step", "A100 FP16 ms", "LUT-8X-DRM W1A8 ms", "gain"}, rows);
  return html + cmds;
}

std::string roofline_bitllm_html(std::string* csv) {
  struct Case {
    const char* weights;
    const char* acts;
    double bitllm, ideal;
  };
  const Case cases[] = {
      {"fp16", "fp16", 1.0, 1.0}, {"int8", "int8", 1.66, 2.0}, {"int4", "int8", 2.36, 4.0}};
  std::vector<std::vector<std::string>> rows;
  *csv = "weights,acts,latency_ms,speedup,bitllm,ideal,non_gemm_share\n";
  std::string cmds;
  double base_ms = 0;
  for (const auto& c : cases) {
    const StepRequest q =
        request("llama2-7b", "a100", llm::Phase::kDecode, 1, 512, c.weights, c.acts);
    const auto e = roofline::estimate(q);
    if (base_ms == 0) base_ms = e.latency_ms;
    double other = 0;
    for (const auto& op : e.layer) other += op.kind == "linear" ? 0 : op.ms;
    const double share = other / e.layer_ms;
    rows.push_back({fmt::format("W{} A{}", c.weights, c.acts), f2(e.latency_ms),
                    fmt::format("{:.2f}x", base_ms / e.latency_ms),
                    fmt::format("{:.2f}x", c.bitllm), fmt::format("{:.0f}x", c.ideal),
                    fmt::format("{:.0f}%", 100 * share)});
    *csv += fmt::format("{},{},{},{},{},{},{}\n", c.weights, c.acts, e.latency_ms,
                        base_ms / e.latency_ms, c.bitllm, c.ideal, share);
    cmds += reproduce(command(q));
  }
  std::string html = para(
      "Low-bit decode does not reach the ideal speedup over FP16: norms, attention over the KV "
      "cache, softmax and fixed per-kernel costs do not shrink with the weight width. BitLLM "
      "measured 1.66x (W8A8) and 2.36x (W4A8) on mobile GPUs; ours is LLaMA2-7B decode at batch "
      "1, context 512, on A100 (a different GPU, so compare the shape of the effect: the "
      "non-GEMM share of a layer grows as weights narrow).");
  html += table(
      {"precision", "latency ms", "speedup", "BitLLM", "ideal", "non-GEMM share of a layer"}, rows);
  return html + cmds;
}

}  // namespace ltc::report
