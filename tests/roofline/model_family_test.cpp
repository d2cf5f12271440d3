// The model families of the H200 profile (configs/calibration/profile-models/): what the model
// graph (model/llm) builds for each, and the kernels the roofline assumes for the reference step
// (issue #17) against the kernel lists the profiler recorded with the PyTorch profiler.
#include "common/config_dir.h"
#include "model/llm/graph.h"
#include "model/llm/model_config.h"
#include "model/roofline/calibrate.h"
#include "model/roofline/estimate.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>

namespace ltc::roofline {
namespace {

llm::ModelConfig profile_model(const std::string& name) {
  return llm::load_model(config_dir("calibration") + "/profile-models/" + name + ".json");
}

llm::StepGraph decode_graph(const llm::ModelConfig& m, int64_t batch = 1) {
  return llm::build_step_graph(m, llm::StepConfig::decode(batch, 512));
}

int count_kind(const llm::StepGraph& g, llm::OpKind k) {
  int n = 0;
  for (const auto& op : g.layer) n += op.kind == k;
  return n;
}

// Parameter counts the configs' own comments give (Hugging Face model cards), within 1%.
TEST(ModelFamily, ParameterCountsMatchThePublishedOnes) {
  const std::pair<const char*, double> models[] = {
      {"phi-2", 2.78e9},       {"falcon-7b", 6.92e9}, {"gemma-2-2b", 2.61e9}, {"qwen2.5-7b", 7.6e9},
      {"llama3.2-1b", 1.24e9}, {"llama3-8b", 8.03e9}, {"opt-6.7b", 6.7e9}};
  for (const auto& [name, params] : models) {
    EXPECT_NEAR(double(profile_model(name).parameters()), params, 0.01 * params) << name;
  }
}

TEST(ModelFamily, PhiRunsAttentionAndMlpInParallelFromOneNormWithPartialRotary) {
  const auto m = profile_model("phi-2");
  EXPECT_TRUE(m.parallel_attention);
  EXPECT_EQ(m.rotary_dims(), 32);  // 0.4 x head_dim 80
  EXPECT_TRUE(m.linear_bias);
  const auto g = decode_graph(m, 4);
  EXPECT_EQ(count_kind(g, llm::OpKind::kNorm), 1);
  EXPECT_EQ(g.find("ffn_norm"), nullptr);
  const auto* rope = g.find("rope");
  ASSERT_NE(rope, nullptr);
  EXPECT_EQ(rope->elements, 4 * (32 + 32) * 32);
  EXPECT_EQ(rope->passthrough_elements, 4 * (32 + 32) * (80 - 32));
  // Both residual adds come after the MLP (attention branch + MLP branch, + the input).
  EXPECT_EQ(g.layer.back().name, "ffn_residual");
  EXPECT_EQ(g.layer[g.layer.size() - 2].name, "attn_residual");
  EXPECT_DOUBLE_EQ(g.find("up_proj")->weight_bytes, (10240.0 * 2560 + 10240) * 2);
}

TEST(ModelFamily, FalconIsMultiQueryParallelWithoutBiasesAndAnImplicitFfn) {
  const auto m = profile_model("falcon-7b");
  EXPECT_EQ(m.kv_heads, 1);
  EXPECT_TRUE(m.parallel_attention);
  EXPECT_FALSE(m.linear_bias);
  EXPECT_TRUE(m.ffn_implicit);
  EXPECT_EQ(m.intermediate, 4 * 4544);
  const auto g = decode_graph(m);
  EXPECT_EQ(g.find("k_proj")->gemm.n, 64);
  EXPECT_DOUBLE_EQ(g.find("q_proj")->weight_bytes, 4544.0 * 4544 * 2);
}

TEST(ModelFamily, Gemma2HasPostNormsAndHeadDim256) {
  const auto m = profile_model("gemma-2-2b");
  EXPECT_TRUE(m.post_norms);
  EXPECT_EQ(m.head_dim, 256);
  const auto g = decode_graph(m);
  EXPECT_EQ(count_kind(g, llm::OpKind::kNorm), 4);
  EXPECT_NE(g.find("post_attn_norm"), nullptr);
  EXPECT_NE(g.find("post_ffn_norm"), nullptr);
  EXPECT_EQ(g.find("o_proj")->gemm.k, 8 * 256);  // q_dim 2048, not hidden 2304
}

// Decode attention at head_dim 256: the reference kernel's tiles (16 query rows, 128-key K and V
// tiles: (16 + 2 x 128) x 256 x 2 bytes = 139,264 B) leave room for one block per H200 SM (228 KB),
// so a block's MMA and softmax add to its loads; at head_dim 128 (69,632 B, three blocks) they
// overlap. LLaMA-3-8B (8 KV heads of 128) reads the same KV bytes as Gemma-2-2B (4 of 256) and
// pads its query group to the same 16 rows: the same memory and compute terms (but for the query
// and output), combined two ways.
TEST(ModelFamily, HeadDim256DecodeAttentionDoesNotOverlapItsTiles) {
  const Machine h200(hw::load_gpu("h200"));
  EXPECT_EQ(hw::block_occupancy(h200.gpu(), 4, 1, (16 + 2 * 128) * 256 * 2).blocks_per_sm, 1);
  EXPECT_EQ(hw::block_occupancy(h200.gpu(), 4, 1, (16 + 2 * 128) * 128 * 2).blocks_per_sm, 3);
  StepRequest r;
  r.batch = 64;
  r.length = 4096;
  auto attention = [&](const char* model) {
    for (const auto& c : estimate(h200, profile_model(model), r).layer) {
      if (c.kind == "attention") return c;
    }
    throw std::runtime_error("no attention");
  };
  const OpCost gemma = attention("gemma-2-2b"), llama = attention("llama3-8b");
  EXPECT_NEAR(gemma.memory_ms, llama.memory_ms, 1e-3 * llama.memory_ms);  // Q and O differ
  // The same MMA work per key tile; Gemma's first (local) layer attends its window's 4096 keys,
  // 32 whole 128-key tiles, Llama 4097 keys, 33.
  EXPECT_NEAR(gemma.compute_ms * 33 / 32, llama.compute_ms, 1e-3 * llama.compute_ms);
  const auto& a = h200.gpu().achievable;
  const double fixed_ms = (h200.kernel_fixed_s() + 3 * h200.elementwise_fixed_s()) * 1e3;
  EXPECT_NEAR(gemma.ms, gemma.compute_ms + gemma.memory_ms + fixed_ms, 1e-9);
  EXPECT_NEAR(llama.ms,
              hw::overlap(llama.compute_ms, llama.memory_ms, a.overlap_exponent) + fixed_ms, 1e-9);
  EXPECT_GT(gemma.ms, 1.1 * llama.ms);
  // The compute term by hand: 64 sequences x 4 KV heads, each a 16-row tile (2 query heads padded)
  // over 4096 keys, Q K^T and P V at head_dim 256, at decode attention's own efficiency.
  const double flops = 2.0 * 64 * 4 * 16 * 4096 * (256 + 256);
  EXPECT_NEAR(
      gemma.compute_ms,
      flops / (h200.mac_tops(golden::DType::kFp16) * 1e12 * h200.decode_attention_fraction()) * 1e3,
      1e-9);
  // A GPU file without the field takes prefill FlashAttention's efficiency.
  hw::GpuConfig g = h200.gpu();
  g.achievable.decode_attention_fraction = 0;
  EXPECT_EQ(Machine(g).decode_attention_fraction(), a.flash_attention_fraction);
}
// The latent-attention models beside DeepSeek-V2-Lite: DeepSeek-V2 (query low-rank, 128 heads) and
// MiniCPM3-4B, whose config has no v_head_dim (its attention takes hidden / heads).
TEST(ModelFamily, LatentAttentionModelsReadTheirLowRanks) {
  const auto ds = profile_model("deepseek-v2");
  EXPECT_EQ(ds.mla.q_lora_rank, 1536);
  EXPECT_EQ(ds.mla.kv_lora_rank, 512);
  EXPECT_EQ(ds.moe.experts, 160);
  EXPECT_NEAR(double(ds.parameters()), 236e9, 0.01 * 236e9);  // the model card's 236B

  const auto mc = profile_model("minicpm3-4b");
  EXPECT_EQ(mc.mla.v_head_dim, 64);
  bool noted = false;
  for (const auto& d : mc.defaulted) noted |= d.find("v_head_dim") != std::string::npos;
  EXPECT_TRUE(noted);
  // One layer by hand: q_a 768 x 2560, q_b 40 x (64 + 32) x 768, kv_a (256 + 32) x 2560,
  // kv_b 40 x (64 + 64) x 256, o 2560 x 40 x 64, gated FFN 3 x 2560 x 6400, norms 2 x 2560 +
  // 768 + 256.
  const int64_t attention = 768 * 2560 + 40 * 96 * 768 + 288 * 2560 + 40 * 128 * 256 + 2560 * 2560;
  EXPECT_EQ(mc.layer_parameters(), attention + 3 * 2560 * 6400 + 2 * 2560 + 768 + 256);
  const auto g = decode_graph(mc);
  EXPECT_EQ(g.find("o_proj")->gemm.k, 40 * 64);
}

TEST(ModelFamily, Qwen2HasBiasOnTheQkvProjectionOnly) {
  const auto m = profile_model("qwen2.5-7b");
  EXPECT_TRUE(m.qkv_bias);
  EXPECT_FALSE(m.linear_bias);
  const auto g = decode_graph(m);
  EXPECT_DOUBLE_EQ(g.find("k_proj")->weight_bytes, (512.0 * 3584 + 512) * 2);
  EXPECT_DOUBLE_EQ(g.find("o_proj")->weight_bytes, 3584.0 * 3584 * 2);
}

TEST(ModelFamily, QkvAndGateUpRunAsOneLaunchEach) {
  const auto m = profile_model("llama3-8b");
  const auto g = decode_graph(m);
  EXPECT_EQ(g.find("k_proj")->launch_with, "q_proj");
  EXPECT_EQ(g.find("v_proj")->launch_with, "q_proj");
  EXPECT_EQ(g.find("up_proj")->launch_with, "gate_proj");
  const auto e = estimate(Machine(hw::load_gpu("h200")), m, StepRequest{});
  int q = -1, k = -1;
  double qkv_ms = 0;
  for (const auto& c : e.layer) {
    if (c.name == "q_proj") q = c.kernels;
    if (c.name == "k_proj") k = c.kernels;
    if (c.name == "q_proj" || c.name == "k_proj" || c.name == "v_proj") qkv_ms += c.ms;
  }
  EXPECT_GE(q, 1);
  EXPECT_EQ(k, 0);
  // The fused launch costs what one GEMM of N = q + k + v costs.
  const Machine h200(hw::load_gpu("h200"));
  const double one = gemm_cost(h200, make_gemm(1, 4096 + 2 * 1024, 4096, llm::WeightFormat{},
                                               golden::DType::kFp16))
                         .ms;
  EXPECT_NEAR(qkv_ms, one, 0.02 * one);
}

// The kernels one reference layer launches, as the profiler recorded them, against the
// roofline's: CUDA-core and attention kernels exactly (one list may differ by one: Phi's
// prefill makes one more contiguous copy), GEMM launches (with split-K reduces and cuBLAS's
// workspace memsets) within two.
TEST(ReferenceStep, RooflineLaunchesTheProfiledKernels) {
  const std::string path = config_dir("calibration") + "/h200-profile.json";
  const auto data = load_measurements({path});
  const auto j = nlohmann::json::parse(std::ifstream(path));
  const Machine h200(hw::load_gpu("h200"));
  int exact = 0, lists = 0;
  for (const auto& k : j.at("kernels")) {
    StepRequest r;
    r.phase = llm::parse_phase(k.at("phase").get<std::string>());
    r.batch = k.at("batch");
    r.length = r.phase == llm::Phase::kDecode ? k.at("context").get<int64_t>()
                                              : k.at("seq").get<int64_t>();
    const auto e = estimate(h200, data.model(k.at("model")), r);
    int ours_gemm = 0, ours_other = 0;
    for (const auto& c : e.layer) (c.kind == "linear" ? ours_gemm : ours_other) += c.kernels;
    int gemm = 0, other = 0;
    const auto& ks = k.at("kernels");
    for (size_t i = 0; i < ks.size(); ++i) {
      const std::string name = ks[i].at("name");
      const bool next_gemm =
          i + 1 < ks.size() && ks[i + 1].at("name").get<std::string>().rfind("nvjet", 0) == 0;
      const bool is_gemm = name.rfind("nvjet", 0) == 0 ||
                           name.find("splitKreduce") != std::string::npos ||
                           (name.rfind("Memset", 0) == 0 && next_gemm);
      (is_gemm ? gemm : other) += 1;
    }
    const std::string what =
        k.at("model").get<std::string>() + " " + k.at("phase").get<std::string>();
    EXPECT_LE(std::abs(ours_other - other), 1) << what;
    EXPECT_LE(std::abs(ours_gemm - gemm), 2) << what;
    exact += ours_other == other;
    ++lists;
  }
  EXPECT_EQ(lists, 18);
  EXPECT_GE(exact, lists - 1);
}

}  // namespace
}  // namespace ltc::roofline
