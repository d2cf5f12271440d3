// Model configurations and the step graph against published sizes and hand calculations.
#include "common/error.h"
#include "model/llm/graph.h"
#include "model/llm/model_config.h"
#include "model/llm/precision.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace ltc::llm {
namespace {

struct Published {
  const char* name;
  double params;  // published parameter count
};

// Model cards / papers: LLaMA 2 (Touvron et al. 2023, HF model cards), OPT (Zhang et al. 2022),
// BLOOM (BigScience 2022: 176,247M), OpenLLaMA 3B and BitNet b1.58 3B (HF model pages, 3.43B).
const Published kPublished[] = {
    {"llama2-7b", 6.74e9},       {"llama2-13b", 13.0e9},  {"llama2-70b", 68.98e9},
    {"opt-175b", 175e9},         {"bloom-176b", 176.2e9}, {"llama-3b", 3.43e9},
    {"bitnet-b1.58-3b", 3.43e9},
};

TEST(ModelConfig, BuiltinParameterCountsMatchPublishedSizesWithinOnePercent) {
  for (const auto& p : kPublished) {
    const ModelConfig m = load_model(p.name);
    EXPECT_NEAR(double(m.parameters()) / p.params, 1.0, 0.01) << p.name << " " << m.parameters();
    EXPECT_TRUE(m.warnings.empty()) << p.name << ": " << m.warnings.front();
  }
}

TEST(ModelConfig, EveryBuiltinIsListed) {
  const auto names = builtin_model_names();
  for (const auto& p : kPublished) {
    EXPECT_NE(std::find(names.begin(), names.end(), p.name), names.end()) << p.name;
  }
}

TEST(ModelConfig, Llama2_7bLayerParametersByHand) {
  const ModelConfig m = load_model("llama2-7b");
  // 4 attention matrices 4096^2, 3 FFN matrices 4096 x 11008, two RMSNorm weight vectors.
  EXPECT_EQ(m.layer_parameters(), 4LL * 4096 * 4096 + 3LL * 4096 * 11008 + 2 * 4096);
  EXPECT_EQ(m.head_dim, 128);
}

TEST(ModelConfig, GqaFromNumKeyValueHeads) {
  const ModelConfig m = load_model("llama2-70b");
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.kv_dim(), 1024);
  EXPECT_EQ(m.q_dim(), 8192);
}

TEST(ModelConfig, HfConfigWithExplicitHeadDimAndPlainFfn) {
  nlohmann::json j = {{"model_type", "gpt_neox"}, {"hidden_size", 512},
                      {"num_hidden_layers", 2},   {"num_attention_heads", 4},
                      {"head_dim", 64},           {"intermediate_size", 2048},
                      {"vocab_size", 1000},       {"hidden_act", "gelu"}};
  const ModelConfig m = model_from_hf_config(j, "cfg.json");
  EXPECT_EQ(m.head_dim, 64);
  EXPECT_EQ(m.q_dim(), 256);
  EXPECT_EQ(m.ffn, FfnKind::kPlain);
  EXPECT_EQ(m.activation, "gelu");
}

TEST(ModelConfig, UnmodelledMixtureOfExpertsIsAnError) {
  nlohmann::json j = {{"model_type", "jamba"},    {"hidden_size", 4096},
                      {"num_hidden_layers", 32},  {"num_attention_heads", 32},
                      {"num_key_value_heads", 8}, {"intermediate_size", 14336},
                      {"vocab_size", 32000},      {"num_experts", 16}};
  try {
    model_from_hf_config(j, "jamba.json");
    FAIL() << "MoE accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("mixture-of-experts"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("num_experts"), std::string::npos) << e.what();
  }
}

TEST(ModelConfig, SlidingWindowIsRead) {
  nlohmann::json j = {{"model_type", "mistral"},  {"hidden_size", 4096},
                      {"num_hidden_layers", 32},  {"num_attention_heads", 32},
                      {"num_key_value_heads", 8}, {"intermediate_size", 14336},
                      {"vocab_size", 32000},      {"sliding_window", 4096}};
  const ModelConfig m = model_from_hf_config(j, "mistral.json");
  EXPECT_TRUE(m.warnings.empty());
  EXPECT_EQ(m.sliding_window, 4096);
  EXPECT_EQ(m.layer_kind(31).window, 4096);
  EXPECT_EQ(m.ffn, FfnKind::kGated);
}

TEST(ModelConfig, UnknownModelNameNamesTheBuiltins) {
  try {
    load_model("llama9-1t");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("llama2-7b"), std::string::npos) << e.what();
  }
}

TEST(WeightFormat, ParsesEverySpecSpelling) {
  EXPECT_EQ(parse_weight_format("int2").planes(), 2);
  EXPECT_EQ(parse_weight_format("ternary").planes(), 2);
  EXPECT_EQ(parse_weight_format("binary").planes(), 1);
  EXPECT_EQ(parse_weight_format("fp16").bits_per_weight(), 16);
  EXPECT_EQ(parse_weight_format("int4:g=128").name(), "int4:g=128");
  EXPECT_THROW(parse_weight_format("int9"), InputError);
  EXPECT_THROW(parse_weight_format("float3"), InputError);
}

TEST(WeightFormat, FluxBinBitsPerWeightMatchThePaper) {
  EXPECT_NEAR(parse_weight_format("binary:kb=2,g=128,s=0").bits_per_weight(), 2.25, 0.005);
  EXPECT_NEAR(parse_weight_format("binary:kb=2,g=128,s=8").bits_per_weight(), 2.63, 0.005);
  EXPECT_NEAR(parse_weight_format("binary:kb=2,g=128,s=16").bits_per_weight(), 2.75, 0.005);
}

// Decode FLOPs per token of the linear layers are 2 x (their parameters): the usual 2N rule.
TEST(StepGraph, DecodeLinearFlopsAreTwicePerTokenWeights) {
  for (const auto& p : kPublished) {
    const ModelConfig m = load_model(p.name);
    StepConfig s = StepConfig::decode(1, 128);
    const StepGraph g = build_step_graph(m, s);
    double linear = 0;
    for (const auto& op : g.layer) {
      if (op.kind == OpKind::kLinear) linear += op.flops;
    }
    EXPECT_NEAR(linear * m.layers / (2.0 * m.linear_weight_parameters()), 1.0, 1e-12) << p.name;
    // Whole step: 2 x (non-embedding parameters + a tied LM head) within 1% (attention adds a
    // little at L = 128).
    const double head = m.tied_embeddings ? double(m.vocab) * m.hidden : 0.0;
    const double dense = 2.0 * (m.parameters() - m.embedding_parameters() + head);
    EXPECT_NEAR(g.total_flops() / dense, 1.0, 0.01) << p.name;
  }
}

TEST(StepGraph, DecodeAttentionReadsTheKvCacheOnce) {
  const ModelConfig m = load_model("llama2-70b");
  const StepGraph g = build_step_graph(m, StepConfig::decode(4, 4096));
  const Op* att = g.find("attention");
  ASSERT_NE(att, nullptr);
  // K and V, 8 KV heads x 128, fp16, (4096 cached + 1 new) tokens, 4 sequences; plus the append.
  const double read = 4.0 * 4097 * 2 * 1024 * 2;
  const double append = 4.0 * 2 * 1024 * 2;
  EXPECT_DOUBLE_EQ(att->kv_bytes, read + append);
  EXPECT_DOUBLE_EQ(att->flops, 4.0 * 4 * 64 * 128 * 4097);
}

TEST(StepGraph, LowBitWeightsShrinkWeightBytes) {
  const ModelConfig m = load_model("llama2-7b");
  StepConfig s = StepConfig::decode(1, 0);
  s.weights = parse_weight_format("int2");
  s.acts = golden::DType::kInt8;
  const StepGraph g = build_step_graph(m, s);
  EXPECT_DOUBLE_EQ(g.find("q_proj")->weight_bytes, 4096.0 * 4096 * 2 / 8);
  EXPECT_TRUE(g.find("q_proj")->low_bit);
  EXPECT_FALSE(g.find("lm_head")->low_bit);
}

TEST(StepGraph, FusedPrecomputeMovesTableWritesIntoTheNorm) {
  const ModelConfig m = load_model("llama2-7b");
  StepConfig s = StepConfig::prefill(1, 16);
  s.weights = parse_weight_format("int2");
  s.acts = golden::DType::kInt8;
  s.precompute = PrecomputeMode::kSeparate;
  const StepGraph sep = build_step_graph(m, s);
  s.precompute = PrecomputeMode::kFused;
  const StepGraph fus = build_step_graph(m, s);
  const Op* p_sep = sep.find("attn_precompute");
  const Op* p_fus = fus.find("attn_precompute");
  ASSERT_TRUE(p_sep && p_fus);
  EXPECT_EQ(p_sep->fused_into, "");
  EXPECT_EQ(p_fus->fused_into, "attn_norm");
  // 16 rows x 4096/4 tables x 8 entries x int16.
  EXPECT_DOUBLE_EQ(p_sep->write_bytes, 16.0 * 1024 * 8 * 2);
  EXPECT_DOUBLE_EQ(p_fus->read_bytes, 0);
  EXPECT_DOUBLE_EQ(fus.find("attn_norm")->write_bytes, 0);
  // o_proj's precompute cannot fuse into attention.
  EXPECT_EQ(fus.find("o_precompute")->fused_into, "");
  EXPECT_TRUE(fus.find("q_proj")->reads_tables);
  EXPECT_LT(fus.total_bytes(), sep.total_bytes());
}

}  // namespace
}  // namespace ltc::llm
