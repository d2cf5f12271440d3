// The roofline on mixture-of-experts, sliding-window and latent-attention models: every layer
// group costed, routing that changes the weights a step reads, windows that bound attention.
#include "common/error.h"
#include "model/roofline/estimate.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

namespace ltc::roofline {
namespace {

StepRequest step(const std::string& model, const std::string& gpu, llm::Phase phase, int64_t b,
                 int64_t l) {
  StepRequest r;
  r.model = model;
  r.gpu = gpu;
  r.phase = phase;
  r.batch = b;
  r.length = l;
  return r;
}

const char* const kModels[] = {"mixtral-8x7b", "qwen1.5-moe-a2.7b", "qwen3-30b-a3b",
                               "deepseek-v2-lite", "mistral-7b"};

TEST(MoeStep, LatencyIsEveryLayerGroupPlusEmbeddingAndHead) {
  const auto e = estimate(step("deepseek-v2-lite", "h200", llm::Phase::kDecode, 16, 2048));
  ASSERT_EQ(e.other_layers.size(), 1u);
  double sum = 0;
  for (const auto* ops : {&e.embedding, &e.head}) {
    for (const auto& c : *ops) sum += c.ms;
  }
  double layer = 0;
  for (const auto& c : e.layer) layer += c.ms;
  sum += double(e.layers) * layer;
  double dense = 0;
  for (const auto& c : e.other_layers[0].ops) dense += c.ms;
  sum += dense;
  EXPECT_NEAR(e.latency_ms / sum, 1.0, 1e-12);
  EXPECT_EQ(e.layers + e.other_layers[0].count, 27);
  const nlohmann::json j = e;
  EXPECT_EQ(j["other_layers"][0]["layers"], 1);
  EXPECT_NE(j["routing"].get<std::string>().find("of 64 experts active"), std::string::npos);
}

TEST(MoeStep, MoreTokensTouchMoreExpertsSoMoeDecodeGrowsWithBatch) {
  // Mixtral at B = 1 reads 2 of its 8 experts, at B = 64 all of them (1 - 0.75^64): the expert
  // weights (704 MB of its 755 MB per-token FP16 layer reads) grow 4x. A dense model's decode
  // reads the same weights at any small batch (a short context keeps the KV cache small).
  auto ms = [](const char* model, int64_t b) {
    return estimate(step(model, "h200", llm::Phase::kDecode, b, 16)).latency_ms;
  };
  EXPECT_GT(ms("mixtral-8x7b", 64) / ms("mixtral-8x7b", 1), 2.5);
  EXPECT_LT(ms("llama2-7b", 64) / ms("llama2-7b", 1), 1.5);
}

TEST(MoeStep, SkewedRoutingTouchesFewerExperts) {
  StepRequest r = step("qwen1.5-moe-a2.7b", "h200", llm::Phase::kDecode, 8, 512);
  const auto uniform = estimate(r);
  r.expert_load = "zipf:2";
  const auto skewed = estimate(r);
  EXPECT_LT(skewed.latency_ms, uniform.latency_ms);
  EXPECT_NE(skewed.routing.find("zipf:2"), std::string::npos) << skewed.routing;
  r.model = "llama2-7b";
  EXPECT_THROW(estimate(r), InputError);
}

TEST(MoeStep, LowBitExpertsOnLutCoresBeatFp16OnMacCores) {
  // Skinny, weight-bound expert GEMMs: INT2 weights on the LUT GPU read 8x fewer bytes.
  const auto mac = estimate(step("mixtral-8x7b", "a100", llm::Phase::kDecode, 4, 1024));
  StepRequest r = step("mixtral-8x7b", "a100-lut4x", llm::Phase::kDecode, 4, 1024);
  r.weights = "int2";
  r.acts = "fp16";
  const auto lut = estimate(r);
  EXPECT_LT(lut.latency_ms * 3, mac.latency_ms);
  EXPECT_NEAR(mac.memory_gb / (46.7e9 * 2 / 1e9), 1.0, 0.02);
}

TEST(MoeStep, SlidingWindowBoundsAttention) {
  std::ifstream in(std::string(LTC_SOURCE_DIR) + "/configs/models/mistral-7b.json");
  nlohmann::json j = nlohmann::json::parse(in);
  j["sliding_window"] = nullptr;
  const std::string path = ::testing::TempDir() + "mistral_full.json";
  std::ofstream(path) << j.dump();
  auto attention_ms = [](const StepEstimate& e) {
    for (const auto& c : e.layer) {
      if (c.name == "attention") return c.ms;
    }
    return 0.0;
  };
  // The compiled FlashAttention kernel visits the window's tiles only: 16384 queries over a
  // 4096-key window are about 7/16 of the causal triangle's pairs.
  StepRequest r = step("mistral-7b", "h200", llm::Phase::kPrefill, 1, 16384);
  r.kernels = llm::KernelPlan::kCompiled;
  StepRequest f = step(path, "h200", llm::Phase::kPrefill, 1, 16384);
  f.kernels = llm::KernelPlan::kCompiled;
  const double ratio = attention_ms(estimate(r)) / attention_ms(estimate(f));
  EXPECT_GT(ratio, 0.35);
  EXPECT_LT(ratio, 0.55);
  // The reference step passes the band to SDPA as an explicit mask: its kernel computes every
  // query-key tile, twice the causal triangle, after repeating K and V to the 32 query heads.
  const double masked =
      attention_ms(estimate(step("mistral-7b", "h200", llm::Phase::kPrefill, 1, 16384))) /
      attention_ms(estimate(step(path, "h200", llm::Phase::kPrefill, 1, 16384)));
  EXPECT_GT(masked, 1.9);
  EXPECT_LT(masked, 2.2);
  // A prompt inside the window is plain causal SDPA, as without one.
  const double inside =
      attention_ms(estimate(step("mistral-7b", "h200", llm::Phase::kPrefill, 1, 4096))) /
      attention_ms(estimate(step(path, "h200", llm::Phase::kPrefill, 1, 4096)));
  EXPECT_NEAR(inside, 1.0, 1e-9);
}

TEST(MoeStep, EveryNewModelRunsDecodeAndPrefillOnEveryPath) {
  for (const char* model : kModels) {
    for (auto phase : {llm::Phase::kDecode, llm::Phase::kPrefill}) {
      for (const char* gpu : {"h200", "a100-lut4x"}) {
        for (auto [w, a] : {std::pair{"fp16", "fp16"}, std::pair{"int2", "int8"}}) {
          StepRequest r = step(model, gpu, phase, 4, 256);
          r.weights = w;
          r.acts = a;
          const auto e = estimate(r);
          EXPECT_TRUE(std::isfinite(e.latency_ms) && e.latency_ms > 0) << model << " " << gpu;
          r.kernels = llm::KernelPlan::kCompiled;
          EXPECT_GT(estimate(r).latency_ms, 0) << model;
        }
      }
    }
  }
}

}  // namespace
}  // namespace ltc::roofline
