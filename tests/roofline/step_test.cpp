// Decode and prefill step estimates: the operator list, its sums, the KV-cache traffic, the
// bounds, the JSON contract of docs/cli.md#output, and any Hugging Face config.json.
#include "common/config_dir.h"
#include "common/error.h"
#include "model/roofline/estimate.h"
#include "model/tiling/tiling.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

namespace ltc::roofline {
namespace {

StepRequest decode(const std::string& model, const std::string& gpu, int64_t b, int64_t l) {
  StepRequest r;
  r.model = model;
  r.gpu = gpu;
  r.phase = llm::Phase::kDecode;
  r.batch = b;
  r.length = l;
  return r;
}
StepRequest prefill(const std::string& model, const std::string& gpu, int64_t b, int64_t s) {
  StepRequest r = decode(model, gpu, b, s);
  r.phase = llm::Phase::kPrefill;
  return r;
}
const OpCost& find(const StepEstimate& e, const std::string& name) {
  for (const auto& c : e.layer) {
    if (c.name == name) return c;
  }
  throw std::runtime_error("no op " + name);
}

TEST(Step, LatencyIsLayersTimesLayerPlusEmbeddingAndHead) {
  const auto e = estimate(decode("llama2-7b", "h200", 8, 512));
  double layer = 0, rest = 0;
  for (const auto& c : e.layer) layer += c.ms;
  for (const auto& c : e.embedding) rest += c.ms;
  for (const auto& c : e.head) rest += c.ms;
  EXPECT_NEAR(e.layer_ms, layer, 1e-12);
  EXPECT_EQ(e.layers, 32);
  EXPECT_NEAR(e.latency_ms, 32 * layer + rest, 1e-9);
  EXPECT_NEAR(e.tokens_per_s, 8 / (e.latency_ms * 1e-3), 1e-6);
}

// Precompute "inkernel" (conventional LUT-GEMM): no precompute op; every mpGEMM reads fp16
// activations and builds its tables per 64-column warp tile. Hand calculation of the redundant
// CUDA-core work for a compute-bound GEMM: 3 ops x 2 entries per activation (K = 4 half tables of
// 8 entries) x M x K activations x N / 64 warp tiles, over the A100's fp16 CUDA-core rate.
TEST(Step, InKernelPrecomputeIsRedundantAlongN) {
  StepRequest r = prefill("llama2-7b", "a100", 1, 2048);
  r.weights = "int2";
  r.precompute = "inkernel";
  const auto e = estimate(r);
  for (const auto& c : e.layer) EXPECT_NE(c.kind, "precompute") << c.name;
  const auto& q = find(e, "q_proj");
  EXPECT_NE(q.execution_path.find("tables built in kernel"), std::string::npos) << q.execution_path;
  EXPECT_EQ(r.precompute, "inkernel");
  EXPECT_EQ(e.precompute, "inkernel");

  const Machine a100(hw::load_gpu("a100"));
  const auto w = llm::parse_weight_format("int2");
  const int64_t M = 8192, N = 8192, K = 8192;
  GemmProblem g = make_gemm(M, N, K, w, golden::DType::kFp16, true);
  const double with_tables = gemm_cost(a100, g).ms;  // tables read from memory
  g.tables_in_kernel = true;
  g.x_bytes = double(M) * K * 2;
  const auto in_kernel = gemm_cost(a100, g);
  const auto& gpu = a100.gpu();
  const double cuda = gpu.cuda_fp16_tflops * 1e12 * gpu.achievable.cuda_core_fraction;
  const double hand_ms = 3.0 * 2.0 * double(M) * K * (N / 64.0) / cuda * 1e3;
  EXPECT_NEAR(in_kernel.ms - with_tables, hand_ms, 0.15 * hand_ms)
      << in_kernel.ms << " vs " << with_tables;
  EXPECT_THROW(parse_precompute("in-kernel"), InputError);
}

TEST(Step, DecodeAttentionReadsTheWholeKvCache) {
  // llama2-70b: 8 KV heads of 128; B = 16, L = 4096: K and V, fp16, per layer.
  const auto e = estimate(decode("llama2-70b", "h200", 16, 4096));
  const double kv = 2.0 * 16 * 4096 * 8 * 128 * 2;
  const auto& att = find(e, "attention");
  EXPECT_GE(att.bytes, kv);
  EXPECT_LT(att.bytes, kv * 1.01);
  // At this size attention streams from DRAM: time at least bytes over achievable bandwidth.
  const auto g = hw::load_gpu("h200");
  EXPECT_GE(att.ms, kv / (g.dram.bw_gbps * 1e9 * g.achievable.dram_bw_fraction) * 1e3);
  EXPECT_EQ(att.bound, "dram");
}

TEST(Step, GroupedQueryAttentionReadsLessKvThanMultiHead) {
  // llama2-7b (MHA, 32 KV heads) vs llama2-70b (GQA, 8 KV heads) per layer: same head_dim.
  const auto mha = estimate(decode("llama2-7b", "h200", 32, 2048));
  const auto gqa = estimate(decode("llama2-70b", "h200", 32, 2048));
  EXPECT_NEAR(find(mha, "attention").bytes / find(gqa, "attention").bytes, 4.0, 0.1);
}

TEST(Step, SmallDecodeIsMemoryBoundAndLargePrefillComputeBound) {
  const auto d = estimate(decode("llama2-13b", "h200", 1, 1024));
  EXPECT_TRUE(find(d, "up_proj").bound == "dram" || find(d, "up_proj").bound == "fixed");
  const auto p = estimate(prefill("llama2-13b", "h200", 4, 2048));
  EXPECT_EQ(find(p, "up_proj").bound, "compute");
  EXPECT_EQ(find(p, "attention").bound, "compute");
}

TEST(Step, DecodeTimeGrowsWithBatchAndContext) {
  double prev = 0;
  for (int64_t b : {1, 8, 64, 256}) {
    const double t = estimate(decode("llama2-7b", "h200", b, 1024)).layer_ms;
    EXPECT_GT(t, prev);
    prev = t;
  }
  prev = 0;
  for (int64_t l : {128, 1024, 8192}) {
    const double t = estimate(decode("llama2-7b", "h200", 16, l)).layer_ms;
    EXPECT_GT(t, prev);
    prev = t;
  }
}

TEST(Step, JsonCarriesTheSpecFields) {
  const nlohmann::json j = estimate(decode("opt-175b", "a100", 4, 256));
  for (const char* f : {"latency_ms", "layer_ms", "layers", "tokens_per_s", "ops"}) {
    EXPECT_TRUE(j.contains(f)) << f;
  }
  bool head = false, embedding = false;
  for (const auto& op : j["ops"]) {
    for (const char* f : {"name", "ms", "bound", "flops", "bytes"})
      EXPECT_TRUE(op.contains(f)) << f;
    head |= op["name"] == "lm_head";
    embedding |= op["name"] == "embedding";
  }
  EXPECT_TRUE(head && embedding);
}

TEST(Step, EveryBuiltinModelRunsOnEveryBuiltinGpu) {
  for (const auto& g : hw::builtin_gpu_names()) {
    const Machine m(hw::load_gpu(g));
    for (const auto& name : llm::builtin_model_names()) {
      const auto model = llm::load_model(name);
      for (auto phase : {llm::Phase::kDecode, llm::Phase::kPrefill}) {
        StepRequest r = decode(name, g, 4, 256);
        r.phase = phase;
        for (auto [w, a] : {std::pair{"fp16", "fp16"}, std::pair{"int2", "int8"}}) {
          r.weights = w;
          r.acts = a;
          const auto e = estimate(m, model, r);
          EXPECT_TRUE(std::isfinite(e.latency_ms) && e.latency_ms > 0) << g << " " << name;
        }
      }
    }
  }
}

TEST(Step, AcceptsAHuggingFaceConfigJson) {
  const std::string path = ::testing::TempDir() + "tiny_llama_config.json";
  std::ofstream(path) << R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"],
    "hidden_size": 2048, "intermediate_size": 5632, "num_attention_heads": 32,
    "num_key_value_heads": 4, "num_hidden_layers": 22, "vocab_size": 32000,
    "max_position_embeddings": 2048, "hidden_act": "silu", "rms_norm_eps": 1e-5})";
  const auto e = estimate(decode(path, "h200", 2, 128));
  EXPECT_EQ(e.layers, 22);
  EXPECT_GT(e.layer_ms, 0);
}

// FlashAttention-2 forward, causal, head dim 128, on H100 SXM5 (FlashAttention-3 paper, Fig. 5:
// batch 16k/S, 16 heads): 191, 260, 298, 319, 333, 335 TFLOP/s at S = 512 .. 16k. The model's
// attention tile time (without its kernel fixed cost) must give these within 8%.
TEST(Step, PrefillAttentionMatchesPublishedFlashAttention2Rates) {
  const std::string path = ::testing::TempDir() + "fa2_bench_config.json";
  std::ofstream(path) << R"({"model_type": "llama", "hidden_size": 2048,
    "intermediate_size": 5632, "num_attention_heads": 16, "num_key_value_heads": 16,
    "num_hidden_layers": 1, "vocab_size": 32000, "max_position_embeddings": 16384,
    "hidden_act": "silu"})";
  const std::pair<int64_t, double> published[] = {{512, 191},  {1024, 260}, {2048, 298},
                                                  {4096, 319}, {8192, 333}, {16384, 335}};
  for (auto [s, tflops] : published) {
    const auto e = estimate(prefill(path, "h100", 16384 / s, s));
    const auto& att = find(e, "attention");
    const double model_tflops = att.flops / (att.compute_ms * 1e-3) / 1e12;
    EXPECT_NEAR(model_tflops, tflops, 0.08 * tflops) << "S=" << s;
  }
}

TEST(Step, MemoryIsWeightsPlusKvCacheAgainstDramCapacity) {
  // llama2-7b fp16: parameters x 2 bytes (the graph's weights, counted independently by the
  // model loader) + K and V of 32 layers x B x (L + 1) x 4096.
  const auto model = llm::load_model("llama2-7b");
  const auto e = estimate(decode("llama2-7b", "h200", 2, 1023));
  const double kv = 32.0 * 2 * 1024 * 2 * 4096 * 2;
  EXPECT_NEAR(e.memory_gb * 1e9, model.parameters() * 2.0 + kv, 0.001 * e.memory_gb * 1e9);
  EXPECT_TRUE(e.fits_memory);
  EXPECT_FALSE(estimate(decode("llama2-7b", "h200", 1024, 8192)).fits_memory);
}

TEST(Step, BadInputIsAnInputError) {
  EXPECT_THROW(estimate(decode("llama2-7b", "h200", 0, 128)), InputError);
  EXPECT_THROW(estimate(prefill("llama2-7b", "h200", 1, 0)), InputError);
  StepRequest r = decode("llama2-7b", "h200", 1, 128);
  r.weights = "int9";
  EXPECT_THROW(estimate(r), InputError);
  r = decode("llama2-7b", "h200", 1, 128);
  r.precompute = "sometimes";
  EXPECT_THROW(estimate(r), InputError);
}

}  // namespace
}  // namespace ltc::roofline

namespace ltc::roofline {
namespace {

// The eager norm reduces each row in one block: a decode step's norm costs its row's chain
// (ns per element x the normalized width; LayerNorm's own rate where given) plus the kernel's
// fixed cost, whatever the batch; a prefill's rows stream for longer than that; the compiled
// plan's row kernels are the simulator's.
TEST(Step, ReferenceNormIsBoundByItsRowChain) {
  const std::string opt = config_dir("calibration") + "/profile-models/opt-6.7b.json";
  auto norm_ms = [](const std::string& model, double rms_ns, double ln_ns, llm::Phase phase,
                    int64_t b, int64_t len, llm::KernelPlan plan) {
    hw::GpuConfig gpu = hw::load_gpu("h200");
    gpu.achievable.norm_row_ns_per_element = rms_ns;
    gpu.achievable.layer_norm_row_ns_per_element = ln_ns;
    StepRequest r;
    r.phase = phase;
    r.batch = b;
    r.length = len;
    r.kernels = plan;
    const Machine m(gpu);
    for (const auto& c : estimate(m, llm::load_model(model), r).layer) {
      if (c.name == "attn_norm") return std::pair(c.ms, m.elementwise_fixed_s() * 1e3);
    }
    return std::pair(0.0, 0.0);
  };
  const auto ref = llm::KernelPlan::kReference;
  const auto dec = llm::Phase::kDecode;
  for (int64_t b : {1, 16, 256}) {
    const auto [ms, fixed_ms] = norm_ms("llama2-7b", 2.0, 3.0, dec, b, 512, ref);
    EXPECT_NEAR(ms, fixed_ms + 2.0 * 4096 * 1e-6, 1e-12) << "B=" << b;
    EXPECT_LT(norm_ms("llama2-7b", 0, 0, dec, b, 512, ref).first, ms) << "B=" << b;
    // OPT's LayerNorm at its own rate, or at RMSNorm's where it has none.
    EXPECT_NEAR(norm_ms(opt, 2.0, 3.0, dec, b, 512, ref).first, fixed_ms + 3.0 * 4096 * 1e-6,
                1e-12);
    EXPECT_NEAR(norm_ms(opt, 2.0, 0, dec, b, 512, ref).first, fixed_ms + 2.0 * 4096 * 1e-6, 1e-12);
  }
  const auto pre = llm::Phase::kPrefill;
  EXPECT_DOUBLE_EQ(norm_ms("llama2-7b", 2.0, 3.0, pre, 8, 2048, ref).first,
                   norm_ms("llama2-7b", 0, 0, pre, 8, 2048, ref).first);
  const auto cmp = llm::KernelPlan::kCompiled;
  EXPECT_DOUBLE_EQ(norm_ms("llama2-7b", 2.0, 3.0, dec, 1, 512, cmp).first,
                   norm_ms("llama2-7b", 0, 0, dec, 1, 512, cmp).first);
}

// The reference SDPA kernels are built for head dimensions in steps of 64: heads of 80 run the
// 128 kernel, so their MMA time equals that of heads of 128 (same heads, batch and lengths); the
// compiled plan's kernel works on the exact 80.
TEST(Step, ReferenceAttentionRunsTheNextBuiltHeadDimension) {
  auto config = [](int64_t hidden) {
    const std::string path = ::testing::TempDir() + "hd_" + std::to_string(hidden) + ".json";
    std::ofstream(path) << R"({"model_type": "llama", "hidden_size": )" << hidden
                        << R"(, "intermediate_size": 8192, "num_attention_heads": 32,
      "num_key_value_heads": 32, "num_hidden_layers": 1, "vocab_size": 32000,
      "max_position_embeddings": 8192, "hidden_act": "silu"})";
    return path;
  };
  const std::string hd80 = config(2560), hd128 = config(4096);
  for (auto plan : {llm::KernelPlan::kReference, llm::KernelPlan::kCompiled}) {
    for (auto r : {decode(hd80, "h200", 64, 512), prefill(hd80, "h200", 1, 2048)}) {
      r.kernels = plan;
      const double narrow = find(estimate(r), "attention").compute_ms;
      r.model = hd128;
      const double wide = find(estimate(r), "attention").compute_ms;
      if (plan == llm::KernelPlan::kReference) {
        EXPECT_NEAR(narrow, wide, 1e-12 * wide);
      } else {
        EXPECT_LT(narrow, 0.9 * wide);
      }
    }
  }
}

// The reference decode kernel's MMAs and softmax run on whole 128-key tiles: 513 keys cost what
// 640 do, 5/4 of 512 keys.
TEST(Step, ReferenceDecodeAttentionComputesWholeKeyTiles) {
  auto compute_ms = [](int64_t context) {
    return find(estimate(decode("llama2-7b", "h200", 64, context)), "attention").compute_ms;
  };
  EXPECT_NEAR(compute_ms(512), compute_ms(639), 1e-12);
  EXPECT_NEAR(compute_ms(511) * 5 / 4, compute_ms(512), 1e-12);
}

// The kernel plan (llm::KernelPlan) the roofline costs: the reference step's eager RoPE is five
// kernels on q and five on k moving 10 elements per rotated element at the fitted elementwise rate;
// the compiler's is one kernel moving the op's bytes at the simulator's DRAM bandwidth (its input,
// the 25 MB QKV output, does not fit in half of the L2). The reference's GEMMs are the fitted
// library kernels; the compiled plan's the compiler's kernel (QKV as one GEMM, q_proj its share by
// N): the tiling's estimate plus the kernel boundary.
TEST(Step, KernelPlanSetsLaunchesAndBytesOfCudaCoreOps) {
  StepRequest r = prefill("llama2-7b", "a100", 1, 1024);
  const auto ref = estimate(r);
  r.kernels = llm::KernelPlan::kCompiled;
  const auto cmp = estimate(r);
  const auto& rope_ref = find(ref, "rope");
  const auto& rope_cmp = find(cmp, "rope");
  EXPECT_EQ(rope_ref.kernels, 10);  // five on q, five on k
  EXPECT_EQ(rope_cmp.kernels, 1);
  EXPECT_NEAR(rope_ref.bytes, 5.0 * rope_cmp.bytes, 1e-6 * rope_ref.bytes);  // 10 vs 2 per element
  const Machine m(hw::load_gpu("a100"));
  EXPECT_NEAR(rope_cmp.memory_ms, rope_cmp.bytes / (m.gpu().dram_sim_gbps() * 1e9) * 1e3, 1e-12);
  EXPECT_NEAR(rope_ref.memory_ms, rope_ref.bytes / m.elementwise_bytes_per_s() * 1e3, 1e-12);
  EXPECT_EQ(find(ref, "attention").kernels, 4);
  EXPECT_EQ(find(cmp, "attention").kernels, 2);  // KV append, FlashAttention
  const tiling::TileChoice qkv =
      tiling::require_tiles(tiling::mma_kernel_problem(m.gpu(), 1024, 12288, 4096,
                                                       golden::DType::kFp16, golden::DType::kFp16),
                            m.gpu());
  const double gap_ms = double(m.gpu().step_kernel_gap_cycles()) / (m.gpu().clock_ghz * 1e6);
  EXPECT_NEAR(find(cmp, "q_proj").ms, (qkv.estimated_us * 1e-3 + gap_ms) * 4096 / 12288, 1e-12);
  EXPECT_EQ(find(cmp, "q_proj").tile.tm, qkv.block.m);
  EXPECT_LT(cmp.latency_ms, ref.latency_ms);
}

}  // namespace
}  // namespace ltc::roofline
