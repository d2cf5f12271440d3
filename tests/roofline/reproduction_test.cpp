// The paper's end-to-end figures beside ours (printed), with the checks our model must pass.
// Where the model and the paper differ, the test asserts our model's behaviour and the report
// (docs in the closing note) says why.
#include "model/roofline/estimate.h"
#include "model/roofline/paper_figures.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

namespace ltc::roofline {
namespace {

StepRequest req(const std::string& model, const std::string& gpu, llm::Phase phase, int64_t b,
                int64_t len, const std::string& w = "fp16", const std::string& a = "fp16") {
  StepRequest r;
  r.model = model;
  r.gpu = gpu;
  r.phase = phase;
  r.batch = b;
  r.length = len;
  r.weights = w;
  r.acts = a;
  return r;
}

// Table I: single layer on A100, LUT mpGEMM (W_INT2 A_FP16) without table precompute cost
// ("Welder"), with unfused precompute, and with precompute fused into the producer. The paper's
// unfused column is the conventional LUT-GEMM practice of building the tables inside every
// mpGEMM (precompute "inkernel": per warp tile, redundantly across the N extent); a single
// separate precompute kernel per GEMM input ("separate") is printed as well and costs far less.
TEST(PaperTableI, PrecomputeOverheadUnfusedVersusFused) {
  const Machine a100(hw::load_gpu("a100"));
  std::printf(
      "%-11s %-12s | paper: base  +unfused +fused | ours: base  +inkernel +separate +fused\n",
      "model", "config");
  double sum_diff = 0;
  for (const auto& r : paper::kTableI) {
    const auto model = llm::load_model(r.model);
    StepRequest q = req(r.model, "a100", r.phase, r.batch, r.length, "int2", "fp16");
    double ms[4];
    const char* modes[] = {"none", "inkernel", "separate", "fused"};
    for (int i = 0; i < 4; ++i) {
      q.precompute = modes[i];
      ms[i] = estimate(a100, model, q).layer_ms;
    }
    const double paper_unfused = r.unfused_ms / r.base_ms - 1, ours_unfused = ms[1] / ms[0] - 1;
    std::printf("%-11s %-12s | %7.2f %+7.1f%% %+6.1f%% | %7.2f %+7.1f%% %+8.1f%% %+6.1f%%\n",
                r.model,
                r.phase == llm::Phase::kPrefill ? ("BS1 SEQ" + std::to_string(r.length)).c_str()
                                                : "BS1024 SEQ1",
                r.base_ms, 100 * paper_unfused, 100 * (r.fused_ms / r.base_ms - 1), ms[0],
                100 * ours_unfused, 100 * (ms[2] / ms[0] - 1), 100 * (ms[3] / ms[0] - 1));
    EXPECT_NEAR(ms[0], r.base_ms, 0.4 * r.base_ms) << r.model;  // same order as the paper's layer
    // Unfused in-kernel overhead against the paper's (8.4..32.8%): within 15 points per row
    // (13 before the roofline followed the reference step: PyTorch eager elementwise kernels at
    // the H200-fitted eager bandwidth, one fused QKV GEMM and split-K reduce launches make our
    // base layer heavier than the paper's Welder-compiled one, which dilutes the GEMM-side
    // overhead: LLaMA2-70B BS1024 19.9% -> 18.6% vs the paper's 32.8%).
    EXPECT_NEAR(ours_unfused, paper_unfused, 0.15) << r.model;
    sum_diff += std::abs(ours_unfused - paper_unfused);
    EXPECT_GT(ms[1], ms[2]) << "redundant in-kernel precompute must cost more than one kernel";
    EXPECT_GT(ms[2], ms[3]) << "separate precompute must cost more than fused";
    EXPECT_GT(ms[3], ms[0]);
    EXPECT_LT(ms[3] / ms[0] - 1, 0.05) << "fused precompute overhead (paper ~2.5%)";
  }
  std::printf("mean |ours - paper| unfused overhead: %.1f points\n", 100 * sum_diff / 6);
  EXPECT_LT(sum_diff / 6, 0.08);
}

// Table III: LLaMA 3B W_FP16 A_FP16 on A100 against BitNet b1.58 3B W_INT2 A_INT8 on
// A100-LUT-4X / 8X. The paper does not say which batch/length its two latency columns use; we
// report a memory-bound decode (B1, L2048) and a compute-bound prefill (B1, S2048). The LUT
// runs use INT8 table entries (--quantize-tables: the A_INT8 LUT datapath is 8 bits wide); exact
// INT16 tables are printed too: they double the table bytes and leave both LUT GPUs L2-bound.
TEST(PaperTableIII, LutGpusSpeedUpBitNetAndTensorCoreDensity) {
  const Machine a100(hw::load_gpu("a100")), x4(hw::load_gpu("a100-lut4x")),
      x8(hw::load_gpu("a100-lut8x"));
  const auto llama = llm::load_model("llama-3b"), bitnet = llm::load_model("bitnet-b1.58-3b");
  auto gemm_ms = [](const StepEstimate& e) {
    double ms = 0;
    for (const auto& c : e.layer) ms += c.kind == "linear" ? c.ms : 0;
    return ms;
  };
  for (auto phase : {llm::Phase::kDecode, llm::Phase::kPrefill}) {
    const bool decode = phase == llm::Phase::kDecode;
    const auto base = estimate(a100, llama, req("llama-3b", "a100", phase, 1, 2048));
    auto q = req("bitnet-b1.58-3b", "", phase, 1, 2048, "int2", "int8");
    q.precompute = "fused";  // the LUT path: left to auto, the MAC int4 path can be faster
    const auto e4x16 = estimate(x4, bitnet, q), e8x16 = estimate(x8, bitnet, q);
    q.quantize_tables = true;
    const auto e4 = estimate(x4, bitnet, q), e8 = estimate(x8, bitnet, q);
    std::printf(
        "%s B1 L2048: A100 fp16 %.2f ms; LUT-4X %.2f ms (%.2fx, paper 2.8x/4.5x); "
        "LUT-8X %.2f ms (%.2fx, paper 3.1x/6.9x); linear layers only %.2fx / %.2fx; "
        "int16 tables %.2fx / %.2fx\n",
        decode ? "decode" : "prefill", base.latency_ms, e4.latency_ms,
        base.latency_ms / e4.latency_ms, e8.latency_ms, base.latency_ms / e8.latency_ms,
        gemm_ms(base) / gemm_ms(e4), gemm_ms(base) / gemm_ms(e8),
        base.latency_ms / e4x16.latency_ms, base.latency_ms / e8x16.latency_ms);
    EXPECT_GT(base.latency_ms / e4.latency_ms, 1.5);
    EXPECT_GE(base.latency_ms / e8.latency_ms, base.latency_ms / e4.latency_ms * 0.999);
    EXPECT_LE(e4.latency_ms, e4x16.latency_ms * 1.0001);  // int8 tables move fewer bytes
    if (!decode) {
      // Prefill (paper 6.9x on 8X vs 4.5x on 4X): the compiler's LUT kernels are bound by the
      // SM's shared-memory data path (table and weight fragments), which 8X does not widen, so
      // 8X runs them as fast as 4X; the doubled register file's larger warp tiles read fewer
      // bytes per op, and there 8X pays off.
      EXPECT_NEAR(gemm_ms(e4) / gemm_ms(e8), 1.0, 0.02);
      const Machine x4drm(hw::load_gpu("a100-lut4x-drm")), x8drm(hw::load_gpu("a100-lut8x-drm"));
      const auto d4 = estimate(x4drm, bitnet, q), d8 = estimate(x8drm, bitnet, q);
      std::printf("prefill with doubled registers: LUT-4X %.2f ms, LUT-8X %.2f ms (%.2fx)\n",
                  d4.latency_ms, d8.latency_ms, base.latency_ms / d8.latency_ms);
      EXPECT_GT(gemm_ms(d4) / gemm_ms(d8), 1.2);
      EXPECT_GT(d4.latency_ms / d8.latency_ms, 1.05);
    }
    if (decode) {
      // Density and efficiency of the tensor cores (paper: 2.96 / 61.84 TOPs/mm2, 2.98 / 33.32
      // TOPs/W; 20.9x density).
      EXPECT_NEAR(base.tensor_tops_per_mm2, 2.96, 0.03);
      EXPECT_NEAR(e4.tensor_tops_per_mm2, 61.84, 0.6);
      EXPECT_NEAR(base.tensor_tops_per_w, 2.98, 0.03);
      EXPECT_NEAR(e4.tensor_tops_per_w, 33.32, 0.4);
      EXPECT_NEAR(e4.tensor_tops_per_mm2 / base.tensor_tops_per_mm2, 20.9, 0.3);
      EXPECT_NEAR(e4.tensor_area_mm2 / base.tensor_area_mm2, 0.187 / 0.975, 1e-9);
    }
  }
}

// Figure 16 trend: the W_INT1 A_INT8 LUT peak is 16x the FP16 tensor core on A100-LUT-8X; the
// end-to-end gain (paper: up to 8.2x) stays well below it and grows once the step is
// compute-bound (large batch). LLaMA2-70B (GQA, short context: the fp16 KV cache stays small),
// A100-80G fp16 against A100-LUT-8X-DRM W1A8 with INT8 tables.
TEST(PaperFigure16, PeakGainSixteenEndToEndGainBelowIt) {
  const auto lut8 = hw::load_gpu("a100-lut8x");
  EXPECT_NEAR(lut8.lut_tops("int8", 1) / 312.0, 16.0, 0.05);
  const Machine a100(hw::load_gpu("a100-80g")), x8(hw::load_gpu("a100-lut8x-drm"));
  const auto model = llm::load_model("llama2-70b");
  auto gain = [&](llm::Phase phase, int64_t b, int64_t len) {
    const double base = estimate(a100, model, req("llama2-70b", "", phase, b, len)).latency_ms;
    StepRequest q = req("llama2-70b", "", phase, b, len, "int1", "int8");
    q.quantize_tables = true;
    const double lut = estimate(x8, model, q).latency_ms;
    std::printf(
        "fig16 llama2-70b %s B%lld L%lld: A100 fp16 %.2f ms, LUT-8X-DRM W1A8 %.2f ms: "
        "%.2fx (paper: up to 8.2x)\n",
        phase == llm::Phase::kDecode ? "decode" : "prefill", static_cast<long long>(b),
        static_cast<long long>(len), base, lut, base / lut);
    return base / lut;
  };
  double best = 0;
  for (int64_t b : {1, 16, 256, 1024}) best = std::max(best, gain(llm::Phase::kDecode, b, 128));
  const double prefill_small = gain(llm::Phase::kPrefill, 1, 512);
  const double prefill_large = gain(llm::Phase::kPrefill, 64, 512);
  best = std::max({best, prefill_small, prefill_large});
  EXPECT_GT(prefill_large, prefill_small);  // larger at large batch
  EXPECT_GT(best, 4.0);
  EXPECT_LT(best, 16.0);
}

// BitLLM: W8A8 and W4A8 decode gain 1.66x and 2.36x over FP16, not the ideal 2x / 4x, because
// norms, softmax and fixed per-kernel costs do not shrink with the weight width.
TEST(BitLlmDecodeEffect, LowBitDecodeFallsShortOfIdealSpeedup) {
  const Machine a100(hw::load_gpu("a100"));
  const auto model = llm::load_model("llama2-7b");
  const auto f16 = estimate(a100, model, req("llama2-7b", "", llm::Phase::kDecode, 1, 512));
  const auto w8 =
      estimate(a100, model, req("llama2-7b", "", llm::Phase::kDecode, 1, 512, "int8", "int8"));
  const auto w4 =
      estimate(a100, model, req("llama2-7b", "", llm::Phase::kDecode, 1, 512, "int4", "int8"));
  const double s8 = f16.latency_ms / w8.latency_ms, s4 = f16.latency_ms / w4.latency_ms;
  std::printf(
      "BitLLM effect, llama2-7b decode B1 L512 on A100: W8A8 %.2fx (BitLLM 1.66x, ideal "
      "2x), W4A8 %.2fx (BitLLM 2.36x, ideal 4x)\n",
      s8, s4);
  EXPECT_GT(s8, 1.3);
  EXPECT_LT(s8, 1.9);
  EXPECT_GT(s4, 1.9);
  EXPECT_LT(s4, 3.2);
  // The part that does not shrink: non-GEMM share of a layer grows as weights get narrower.
  auto non_gemm_share = [](const StepEstimate& e) {
    double other = 0;
    for (const auto& c : e.layer) other += c.kind == "linear" ? 0 : c.ms;
    return other / e.layer_ms;
  };
  EXPECT_GT(non_gemm_share(w4), non_gemm_share(w8));
  EXPECT_GT(non_gemm_share(w8), non_gemm_share(f16));
}

}  // namespace
}  // namespace ltc::roofline
