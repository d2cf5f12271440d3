// Mixture-of-experts, sliding-window and latent-attention models: their Hugging Face configs,
// the expert routing, and the step graph's work against hand calculations.
#include "common/error.h"
#include "model/llm/graph.h"
#include "model/llm/model_config.h"
#include "model/llm/routing.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <random>
#include <set>
#include <string>

namespace ltc::llm {
namespace {

using nlohmann::json;

std::string error_of(const json& j) {
  try {
    model_from_hf_config(j, "cfg.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

json tiny_moe() {
  return {{"model_type", "qwen2_moe"},
          {"hidden_size", 256},
          {"num_hidden_layers", 2},
          {"num_attention_heads", 4},
          {"num_key_value_heads", 4},
          {"intermediate_size", 512},
          {"vocab_size", 1000},
          {"num_experts", 8},
          {"num_experts_per_tok", 2},
          {"moe_intermediate_size", 128},
          {"shared_expert_intermediate_size", 256}};
}

// Published sizes (model cards): Mixtral-8x7B 46.7B total / 12.9B active, Qwen1.5-MoE-A2.7B
// 14.3B, Qwen3-30B-A3B 30.5B, DeepSeek-V2-Lite 15.7B, Mistral-7B 7.24B.
TEST(MoeConfigs, BuiltinParameterCountsMatchPublishedSizesWithinOnePercent) {
  const std::pair<const char*, double> published[] = {{"mixtral-8x7b", 46.7e9},
                                                      {"qwen1.5-moe-a2.7b", 14.3e9},
                                                      {"qwen3-30b-a3b", 30.5e9},
                                                      {"deepseek-v2-lite", 15.7e9},
                                                      {"mistral-7b", 7.24e9}};
  for (const auto& [name, params] : published) {
    const ModelConfig m = load_model(name);
    EXPECT_NEAR(double(m.parameters()) / params, 1.0, 0.01) << name << " " << m.parameters();
  }
  // Mixtral's active parameters: every expert but the top-2 of 8 left out.
  const ModelConfig m = load_model("mixtral-8x7b");
  const double active = double(m.parameters()) - 32.0 * 6 * 3 * 4096 * 14336;
  EXPECT_NEAR(active / 12.9e9, 1.0, 0.01);
}

TEST(MoeConfigs, EveryFieldThatChangesTheWorkIsRead) {
  const ModelConfig mx = load_model("mixtral-8x7b");
  EXPECT_EQ(mx.moe.experts, 8);
  EXPECT_EQ(mx.moe.top_k, 2);
  EXPECT_EQ(mx.moe.intermediate, 14336);
  EXPECT_EQ(mx.moe.shared_intermediate, 0);
  EXPECT_TRUE(mx.moe.norm_topk);
  EXPECT_EQ(mx.sliding_window, 0);  // "sliding_window": null
  EXPECT_TRUE(mx.warnings.empty());

  const ModelConfig qw = load_model("qwen1.5-moe-a2.7b");
  EXPECT_EQ(qw.moe.experts, 60);
  EXPECT_EQ(qw.moe.top_k, 4);
  EXPECT_EQ(qw.moe.intermediate, 1408);
  EXPECT_EQ(qw.moe.shared_intermediate, 5632);
  EXPECT_TRUE(qw.moe.shared_gate);
  EXPECT_FALSE(qw.moe.norm_topk);
  EXPECT_TRUE(qw.qkv_bias);
  EXPECT_EQ(qw.sliding_window, 0);  // use_sliding_window false

  const ModelConfig q3 = load_model("qwen3-30b-a3b");
  EXPECT_EQ(q3.moe.experts, 128);
  EXPECT_EQ(q3.moe.top_k, 8);
  EXPECT_EQ(q3.moe.intermediate, 768);
  EXPECT_TRUE(q3.moe.norm_topk);
  EXPECT_EQ(q3.head_dim, 128);
  EXPECT_EQ(q3.kv_heads, 4);

  const ModelConfig ds = load_model("deepseek-v2-lite");
  EXPECT_EQ(ds.moe.experts, 64);
  EXPECT_EQ(ds.moe.top_k, 6);
  EXPECT_EQ(ds.moe.shared_intermediate, 2 * 1408);
  EXPECT_EQ(ds.moe.first_dense, 1);
  EXPECT_FALSE(ds.layer_kind(0).moe);
  EXPECT_TRUE(ds.layer_kind(1).moe);
  EXPECT_TRUE(ds.layer_kind(26).moe);
  EXPECT_EQ(ds.mla.kv_lora_rank, 512);
  EXPECT_EQ(ds.mla.q_lora_rank, 0);
  EXPECT_EQ(ds.mla.qk_rope_dim, 64);
  EXPECT_EQ(ds.head_dim, 192);
  EXPECT_EQ(ds.rotary_dims(), 64);

  const ModelConfig mi = load_model("mistral-7b");
  EXPECT_EQ(mi.sliding_window, 4096);
  EXPECT_EQ(mi.layer_kind(0).window, 4096);
  EXPECT_EQ(mi.layer_kind(31).window, 4096);
  EXPECT_TRUE(mi.warnings.empty());
}

TEST(MoeConfigs, SlidingWindowLayerPatterns) {
  json g = {{"model_type", "gemma2"},   {"hidden_size", 256},   {"num_hidden_layers", 4},
            {"num_attention_heads", 4}, {"head_dim", 64},       {"intermediate_size", 512},
            {"vocab_size", 1000},       {"sliding_window", 128}};
  const ModelConfig gemma = model_from_hf_config(g, "gemma2.json");
  // Gemma2DecoderLayer: even layers slide, odd layers are global.
  EXPECT_EQ(gemma.layer_kind(0).window, 128);
  EXPECT_EQ(gemma.layer_kind(1).window, 0);
  EXPECT_EQ(gemma.layer_kind(2).window, 128);
  ASSERT_EQ(gemma.layer_kinds().size(), 2u);
  EXPECT_EQ(gemma.layer_kinds()[0].second, 2);
  g["layer_types"] = {"full_attention", "full_attention", "full_attention", "sliding_attention"};
  const ModelConfig listed = model_from_hf_config(g, "gemma2.json");
  EXPECT_EQ(listed.layer_kind(0).window, 0);
  EXPECT_EQ(listed.layer_kind(3).window, 128);
  json q = {{"model_type", "qwen2"},    {"hidden_size", 256},         {"num_hidden_layers", 4},
            {"num_attention_heads", 4}, {"intermediate_size", 512},   {"vocab_size", 1000},
            {"sliding_window", 64},     {"use_sliding_window", true}, {"max_window_layers", 3}};
  const ModelConfig qwen = model_from_hf_config(q, "qwen2.json");
  EXPECT_EQ(qwen.layer_kind(2).window, 0);
  EXPECT_EQ(qwen.layer_kind(3).window, 64);
  q["use_sliding_window"] = false;
  EXPECT_EQ(model_from_hf_config(q, "qwen2.json").sliding_window, 0);
}

TEST(MoeConfigs, WhatIsNotModelledIsRefusedNamingTheField) {
  json j = tiny_moe();
  j["model_type"] = "dbrx";
  EXPECT_NE(error_of(j).find("dbrx"), std::string::npos) << error_of(j);
  j = tiny_moe();
  j["num_experts_per_tok"] = 9;
  EXPECT_NE(error_of(j).find("num_experts_per_tok"), std::string::npos) << error_of(j);
  j = tiny_moe();
  j.erase("moe_intermediate_size");
  EXPECT_NE(error_of(j).find("moe_intermediate_size"), std::string::npos) << error_of(j);
  j = tiny_moe();
  j["model_type"] = "qwen3_moe";
  EXPECT_NE(error_of(j).find("shared_expert_intermediate_size"), std::string::npos);
  j = tiny_moe();
  j["kv_lora_rank"] = 64;
  EXPECT_NE(error_of(j).find("qk_nope_head_dim"), std::string::npos) << error_of(j);
  j = tiny_moe();
  j["sliding_window"] = 64;
  j["layer_types"] = {"linear_attention", "full_attention"};
  EXPECT_NE(error_of(j).find("layer_types"), std::string::npos) << error_of(j);
  j = tiny_moe();
  j["mlp_only_layers"] = "0";
  EXPECT_NE(error_of(j).find("mlp_only_layers"), std::string::npos) << error_of(j);
}

TEST(Routing, UniformExpectedActiveExpertsAndSpreadByHand) {
  // One token: exactly its top-k.
  RoutingStats r = routing_stats(1, 8, 2, {});
  EXPECT_DOUBLE_EQ(r.active, 2.0);
  EXPECT_NEAR(r.active_sd, 0.0, 1e-12);
  // Two tokens, top-2 of 8: the second token's picks overlap the first's hypergeometrically
  // (X of 2 draws from 8 with 2 marked): E[4 - X] = 4 - 0.5, Var X = 2 (1/4)(3/4)(6/7) = 9/28.
  r = routing_stats(2, 8, 2, {});
  EXPECT_NEAR(r.active, 3.5, 1e-12);
  EXPECT_NEAR(r.active_sd, std::sqrt(9.0 / 28.0), 1e-12);
  // Many tokens touch every expert; E (1 - (1 - k/E)^T) in between.
  EXPECT_NEAR(routing_stats(4096, 64, 6, {}).active, 64.0, 1e-9);
  EXPECT_NEAR(routing_stats(16, 60, 4, {}).active, 60.0 * (1 - std::pow(56.0 / 60.0, 16)), 1e-9);
}

TEST(Routing, MonteCarloAgreesWithTheClosedForm) {
  const unsigned seed = 46;
  std::mt19937 rng(seed);
  const int experts = 16, k = 3, tokens = 7, trials = 40000;
  double sum = 0, sum2 = 0;
  std::vector<int> ids(experts);
  for (int t = 0; t < trials; ++t) {
    std::set<int> hit;
    for (int i = 0; i < tokens; ++i) {
      for (int e = 0; e < experts; ++e) ids[e] = e;
      std::shuffle(ids.begin(), ids.end(), rng);
      hit.insert(ids.begin(), ids.begin() + k);
    }
    sum += double(hit.size());
    sum2 += double(hit.size()) * double(hit.size());
  }
  const double mean = sum / trials, sd = std::sqrt(sum2 / trials - mean * mean);
  const RoutingStats r = routing_stats(tokens, experts, k, {});
  EXPECT_NEAR(mean, r.active, 0.03) << "seed " << seed;
  EXPECT_NEAR(sd, r.active_sd, 0.03) << "seed " << seed;
}

TEST(Routing, SkewedAndMeasuredLoads) {
  const ExpertLoad zipf = parse_expert_load("zipf:0", 8);
  ASSERT_EQ(zipf.share.size(), 8u);
  EXPECT_NEAR(routing_stats(5, 8, 2, zipf).active, routing_stats(5, 8, 2, {}).active, 1e-12);
  const ExpertLoad skew = parse_expert_load("zipf:2", 8);
  EXPECT_LT(routing_stats(16, 8, 2, skew).active, routing_stats(16, 8, 2, {}).active);
  const std::string path = ::testing::TempDir() + "moe_load.json";
  std::ofstream(path) << "[10, 0, 0, 0]";
  const ExpertLoad measured = parse_expert_load(path, 4);
  EXPECT_NEAR(routing_stats(100, 4, 1, measured).active, 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(routing_stats(100, 4, 1, measured).max_tokens, 100.0);
  EXPECT_THROW(parse_expert_load(path, 8), InputError);  // 4 loads for 8 experts
  EXPECT_THROW(parse_expert_load("zipf:x", 8), InputError);
  EXPECT_THROW(parse_expert_load("no-such-file.json", 8), InputError);
  StepConfig s = StepConfig::decode(1, 16);
  s.expert_load = parse_expert_load("zipf:1", 8);
  EXPECT_THROW(build_step_graph(load_model("llama2-7b"), s), InputError);  // no experts
}

// E[ceil(X / t)], X ~ Binomial(n, p), by summing the whole pmf (log-space terms).
double ceil_mean_by_pmf(int64_t n, double p, int64_t t) {
  double sum = 0;
  for (int64_t x = 1; x <= n; ++x) {
    const double log_pmf = std::lgamma(double(n) + 1) - std::lgamma(double(x) + 1) -
                           std::lgamma(double(n - x) + 1) + double(x) * std::log(p) +
                           double(n - x) * std::log1p(-p);
    sum += std::exp(log_pmf) * double((x + t - 1) / t);
  }
  return sum;
}

// The row tiles a grouped GEMM's groups fill: against the whole binomial pmf, each term by
// lgamma (group_row_tiles sums the pmf near its mode by recurrence); a tile taller than every
// group counts the active experts (routing_stats), one-row tiles the token-expert pairs.
TEST(Routing, GroupRowTilesAgainstTheWholePmf) {
  struct Case {
    int64_t tokens, experts, top_k, tile;
  };
  // Mixtral prefill S512 / S2048 / B8 S512 (the kernel's 128- and 256-row cluster units),
  // Qwen1.5-MoE and Qwen3-MoE and DeepSeek-V2-Lite decode and prefill.
  for (const Case c : {Case{512, 8, 2, 128}, Case{2048, 8, 2, 256}, Case{4096, 8, 2, 256},
                       Case{4, 8, 2, 128}, Case{256, 60, 4, 128}, Case{512, 128, 8, 128},
                       Case{2048, 128, 8, 128}, Case{512, 64, 6, 128}, Case{4096, 64, 6, 256}}) {
    const auto pick = expert_pick(c.experts, c.top_k, {});
    const double p = double(c.top_k) / double(c.experts);
    const double want = double(c.experts) * ceil_mean_by_pmf(c.tokens, p, c.tile);
    EXPECT_NEAR(group_row_tiles(c.tokens, pick, c.tile), want, 1e-9 * want)
        << c.tokens << " tokens, " << c.experts << " experts, tile " << c.tile;
  }
  for (int64_t tokens : {1, 3, 16, 100}) {
    const auto pick = expert_pick(60, 4, {});
    EXPECT_NEAR(group_row_tiles(tokens, pick, 1 << 20), routing_stats(tokens, 60, 4, {}).active,
                1e-9);
    EXPECT_NEAR(group_row_tiles(tokens, pick, 1), double(tokens) * 4, 1e-6 * double(tokens));
  }
  // A skewed load: each expert at its own pick probability, one expert picked by every token.
  const ExpertLoad zipf = parse_expert_load("zipf:2", 8);
  const auto pick = expert_pick(8, 2, zipf);
  EXPECT_DOUBLE_EQ(pick[0], 1.0);
  double want = 0;
  for (double q : pick) want += q >= 1 ? std::ceil(300.0 / 64) : ceil_mean_by_pmf(300, q, 64);
  EXPECT_NEAR(group_row_tiles(300, pick, 64), want, 1e-9 * want);
}

double linear_flops(const std::vector<Op>& ops) {
  double f = 0;
  for (const auto& op : ops) f += op.kind == OpKind::kLinear ? op.flops : 0.0;
  return f;
}

TEST(MoeGraph, MixtralDecodeWorkByHand) {
  const ModelConfig m = load_model("mixtral-8x7b");
  const StepGraph g = build_step_graph(m, StepConfig::decode(1, 1023));
  ASSERT_TRUE(g.other_layers.empty());
  EXPECT_EQ(g.layers, 32);
  // One token: its 2 experts, 3 matrices of 4096 x 14336 each; attention 4096 x (4096 + 2 x
  // 1024) + 4096 x 4096; the router 4096 x 8. FP16 weights, 2 FLOPs per weight.
  const double attn = 4096.0 * (4096 + 2 * 1024) + 4096.0 * 4096;
  const double experts = 2.0 * 3 * 4096 * 14336;
  const double router = 4096.0 * 8;
  EXPECT_DOUBLE_EQ(linear_flops(g.layer), 2 * (attn + experts + router));
  const Op* gate = g.find("expert_gate_proj");
  ASSERT_NE(gate, nullptr);
  EXPECT_EQ(gate->gemm.batch, 2);
  EXPECT_EQ(gate->gemm.m, 1);
  EXPECT_DOUBLE_EQ(gate->weight_bytes, 2.0 * 14336 * 4096 * 2);
  // KV cache: 1024 keys of 8 KV heads x 128, K and V, FP16, read; one row appended.
  EXPECT_DOUBLE_EQ(g.find("attention")->kv_bytes, 1024.0 * 2 * 1024 * 2 + 2 * 1024 * 2);
  EXPECT_DOUBLE_EQ(m.kv_cache_elements(1024), 32.0 * 1024 * 2 * 1024);
  EXPECT_NE(g.routing.find("2.00 +- 0.00 of 8 experts"), std::string::npos) << g.routing;
  // 64 tokens: every expert's weights, FLOPs of 128 token-expert pairs.
  const StepGraph b = build_step_graph(m, StepConfig::decode(64, 1023));
  const Op* gate64 = b.find("expert_gate_proj");
  EXPECT_NEAR(gate64->weight_bytes, 8.0 * (1 - std::pow(0.75, 64)) * 14336 * 4096 * 2, 1.0);
  EXPECT_DOUBLE_EQ(gate64->flops, 2.0 * 128 * 14336 * 4096);
  EXPECT_EQ(gate64->gemm.batch, 8);
  EXPECT_EQ(gate64->gemm.m, 16);
  // How the rows spread: 64 tokens, each picking an expert with probability 2/8.
  EXPECT_EQ(gate64->group_tokens, 64);
  EXPECT_EQ(gate64->group_pick, std::vector<double>(8, 0.25));
}

TEST(MoeGraph, SharedExpertAndItsGate) {
  const ModelConfig m = load_model("qwen1.5-moe-a2.7b");
  const StepGraph g = build_step_graph(m, StepConfig::decode(1, 100));
  // Attention 2048 x 3 x 2048 + 2048 x 2048 (+ q/k/v biases, not FLOPs), 4 experts of 3 x 2048 x
  // 1408, the shared expert 3 x 2048 x 5632, its gate 2048 x 1, the router 2048 x 60.
  const double w =
      4.0 * 2048 * 2048 + 4.0 * 3 * 2048 * 1408 + 3.0 * 2048 * 5632 + 2048 + 2048.0 * 60;
  EXPECT_DOUBLE_EQ(linear_flops(g.layer), 2 * w);
  ASSERT_NE(g.find("shared_expert_gate"), nullptr);
  EXPECT_EQ(g.find("shared_expert_gate")->gemm.n, 1);
  EXPECT_EQ(g.find("shared_up_proj")->launch_with, "shared_gate_proj");
}

TEST(MoeGraph, SlidingWindowReadsAndCachesTheWindow) {
  const ModelConfig m = load_model("mistral-7b");
  const StepGraph d = build_step_graph(m, StepConfig::decode(2, 9999));
  const Op* a = d.find("attention");
  EXPECT_EQ(a->attention.kv_len, 4096);
  EXPECT_DOUBLE_EQ(a->kv_bytes, 2.0 * 4096 * 2 * 1024 * 2 + 2.0 * 2 * 1024 * 2);
  EXPECT_DOUBLE_EQ(a->flops, 4.0 * 2 * 32 * 128 * 4096);
  // The cache keeps the window: 32 layers x 4096 tokens x K and V of 1024.
  EXPECT_DOUBLE_EQ(m.kv_cache_elements(10000), 32.0 * 4096 * 2 * 1024);
  EXPECT_DOUBLE_EQ(m.kv_cache_elements(100), 32.0 * 100 * 2 * 1024);
  // Prefill of 8192: the first 4096 queries see a growing prefix, the rest 4096 keys each.
  const StepGraph p = build_step_graph(m, StepConfig::prefill(1, 8192));
  const double pairs = 4096.0 * 4097 / 2 + 4096.0 * 4096;
  EXPECT_DOUBLE_EQ(p.find("attention")->flops, 4.0 * 32 * 128 * pairs);
}

TEST(MoeGraph, LatentAttentionAndDenseFirstLayerByHand) {
  const ModelConfig m = load_model("deepseek-v2-lite");
  const StepGraph g = build_step_graph(m, StepConfig::decode(1, 1023));
  EXPECT_EQ(g.layers, 26);
  ASSERT_EQ(g.other_layers.size(), 1u);
  EXPECT_EQ(g.other_layers[0].count, 1);
  EXPECT_FALSE(g.other_layers[0].kind.moe);
  EXPECT_EQ(g.layer_group[0], 1);
  EXPECT_EQ(g.layer_group[1], 0);
  // The cache: 512 latent + 64 RoPE-key elements per token and layer, read for 1024 keys.
  const Op* a = g.find("attention");
  EXPECT_TRUE(a->attention.latent);
  EXPECT_EQ(a->attention.kv_heads, 1);
  EXPECT_DOUBLE_EQ(a->kv_bytes, 1024.0 * 576 * 2 + 576 * 2);
  // Scores over 576 dims and values of 512, 16 heads, 1024 keys.
  EXPECT_DOUBLE_EQ(a->flops, 2.0 * 16 * 1024 * (576 + 512));
  EXPECT_EQ(m.kv_elements_per_token(), 576);
  EXPECT_DOUBLE_EQ(m.kv_cache_elements(1024), 27.0 * 1024 * 576);
  // Absorbed W_UK (16 heads x 128 -> 512) and W_UV (512 -> 128), q_proj 2048 -> 16 x 192,
  // kv_a_proj 2048 -> 576, o_proj 2048 x 2048; the MoE FFN: 6 experts + 2 shared of 3 x 2048
  // x 1408, router 2048 x 64.
  const double attn = 2048.0 * 3072 + 2048.0 * 576 + 16.0 * 128 * 512 * 2 + 2048.0 * 2048;
  const double ffn = 8.0 * 3 * 2048 * 1408 + 2048.0 * 64;
  EXPECT_DOUBLE_EQ(linear_flops(g.layer), 2 * (attn + ffn));
  EXPECT_DOUBLE_EQ(linear_flops(g.other_layers[0].ops), 2 * (attn + 3.0 * 2048 * 10944));
  // Prefill up-projects keys and values (kv_b_proj 512 -> 16 x 256) and attends over 192 / 128.
  const StepGraph p = build_step_graph(m, StepConfig::prefill(1, 512));
  ASSERT_NE(p.find("kv_b_proj"), nullptr);
  EXPECT_EQ(p.find("kv_b_proj")->gemm.n, 16 * 256);
  EXPECT_DOUBLE_EQ(p.find("attention")->flops, 2.0 * 16 * (512.0 * 513 / 2) * (192 + 128));
  EXPECT_EQ(p.find("q_absorb"), nullptr);
}

TEST(MoeGraph, TotalsSumEveryLayerGroup) {
  const ModelConfig m = load_model("deepseek-v2-lite");
  const StepGraph g = build_step_graph(m, StepConfig::decode(4, 100));
  double f = 0;
  for (const auto& list : {g.embedding, g.head}) {
    for (const auto& op : list) f += op.flops;
  }
  for (int64_t l = 0; l < g.all_layers(); ++l) {
    for (const auto& op : g.ops_of_layer(l)) f += op.flops;
  }
  EXPECT_NEAR(g.total_flops() / f, 1.0, 1e-12);
  EXPECT_EQ(g.all_layers(), 27);
}

}  // namespace
}  // namespace ltc::llm
