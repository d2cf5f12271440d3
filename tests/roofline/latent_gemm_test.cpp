// The absorbed MLA decode's alignment-1 batched GEMMs: where cuBLAS runs its strided-batched GEMV
// kernels (gemmSN) and what they cost, against the H100 sweep that lists every GEMM's kernels
// (configs/calibration/h100-latent-gemms.json) and, on a GPU the rule and rates never saw, the
// H200's own kernel lists of DeepSeek-V2-Lite's decode (configs/calibration/h200-moe-kernels.json).
#include "common/config_dir.h"
#include "model/hw/gpu.h"
#include "model/roofline/cost.h"
#include "model/roofline/estimate.h"
#include "model/roofline/machine.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <tuple>

namespace ltc::roofline {
namespace {

nlohmann::json calibration_json(const std::string& name) {
  return nlohmann::json::parse(std::ifstream(config_dir("calibration") + "/" + name));
}

bool names_gemmsn(const nlohmann::json& kernels) {
  for (const auto& k : kernels) {
    if (k.at("name").get<std::string>().find("gemmSN") != std::string::npos) return true;
  }
  return false;
}

LatentGemm layout_of(const std::string& layout) {
  return layout == "latent_value" ? LatentGemm::kValue : LatentGemm::kScore;
}

// The sweep's GEMMs with the kernels each ran, by (name, batch, M, N, K).
using Key = std::tuple<std::string, int64_t, int64_t, int64_t, int64_t>;
std::map<Key, nlohmann::json> kernel_lists(const nlohmann::json& sweep) {
  std::map<Key, nlohmann::json> lists;
  for (const auto& k : sweep.at("kernels")) {
    lists[{k.at("name"), k.at("batch"), k.at("M"), k.at("N"), k.at("K")}] = k.at("kernels");
  }
  return lists;
}

TEST(LatentGemm, GemmsnWhereTheH100SweepRanIt) {
  const auto sweep = calibration_json("h100-latent-gemms.json");
  const auto lists = kernel_lists(sweep);
  int gemms = 0, gemmsn = 0, agree = 0;
  for (const auto& o : sweep.at("ops")) {
    const Key key{o.at("name"), o.at("batch"), o.at("M"), o.at("N"), o.at("K")};
    ASSERT_TRUE(lists.count(key)) << o.dump();
    const bool ran = names_gemmsn(lists.at(key));
    const bool rule =
        latent_gemmsn(layout_of(o.at("layout")), o.at("batch"), o.at("M"), o.at("N"), o.at("K"));
    ++gemms;
    gemmsn += ran;
    agree += ran == rule;
    // Every GEMM of over 10 us: the kernel the library ran (four of a few us are not followed).
    if (o.at("ms").get<double>() > 0.010) {
      EXPECT_EQ(rule, ran) << o.at("layout") << " heads " << o.at("M") << " batch " << o.at("batch")
                           << " N " << o.at("N") << " K " << o.at("K");
    }
  }
  EXPECT_EQ(gemms, 1728);
  EXPECT_EQ(gemmsn, 30);
  EXPECT_GE(agree, gemms - 4);
}

TEST(LatentGemm, GemmsnTimesWithinTheH100Sweep) {
  const auto sweep = calibration_json("h100-latent-gemms.json");
  const auto lists = kernel_lists(sweep);
  const Machine h100(hw::load_gpu("h100"));  // 132 SMs at 1.98 GHz, as the sweep's device
  ASSERT_EQ(sweep.at("device").at("sm_count"), h100.sms());
  double sum = 0, worst = 0;
  int n = 0;
  for (const auto& o : sweep.at("ops")) {
    const double ms = o.at("ms");
    if (ms < 0.05 ||
        !names_gemmsn(lists.at({o.at("name"), o.at("batch"), o.at("M"), o.at("N"), o.at("K")}))) {
      continue;
    }
    const double s = latent_gemmsn_s(h100, layout_of(o.at("layout")), o.at("batch"), o.at("M"),
                                     o.at("N"), o.at("K"));
    const double err = std::abs(s * 1e3 / ms - 1);
    sum += err;
    worst = std::max(worst, err);
    ++n;
  }
  EXPECT_EQ(n, 26);
  std::printf("gemmSN over the H100 sweep: %d GEMMs, MAPE %.2f%%, max %.2f%%\n", n, 100 * sum / n,
              100 * worst);
  EXPECT_LT(sum / n, 0.02);
  EXPECT_LT(worst, 0.05);
}

// cuBLAS splits the K loop of its alignment-1 kernels (a splitKreduce kernel after the GEMM) only
// for a batch of one: 71 of the sweep's 192 GEMMs at B1, none of its 1536 at B2..B256. The
// roofline's tile search follows: split-K for some B1 GEMMs, never for a larger batch.
TEST(LatentGemm, SplitKOnlyForABatchOfOne) {
  const auto sweep = calibration_json("h100-latent-gemms.json");
  const auto lists = kernel_lists(sweep);
  const Machine h100(hw::load_gpu("h100"));
  int ran_b1 = 0, ran_more = 0, split_b1 = 0, split_more = 0, agree_b1 = 0, b1 = 0;
  for (const auto& o : sweep.at("ops")) {
    const auto& kernels = lists.at({o.at("name"), o.at("batch"), o.at("M"), o.at("N"), o.at("K")});
    if (names_gemmsn(kernels)) continue;
    bool ran = false;
    for (const auto& k : kernels) {
      ran = ran || k.at("name").get<std::string>().find("splitKreduce") != std::string::npos;
    }
    GemmProblem g;
    g.batch = o.at("batch");
    g.m = o.at("M");
    g.n = o.at("N");
    g.k = o.at("K");
    g.weights.dtype = g.acts = g.out = golden::DType::kFp16;
    g.weights.bits = 16;
    g.unaligned = true;
    const bool split = gemm_cost(h100, g).tile.split_k > 1;
    if (g.batch == 1) {
      ++b1;
      ran_b1 += ran;
      split_b1 += split;
      agree_b1 += ran == split;
    } else {
      ran_more += ran;
      split_more += split;
    }
  }
  std::printf("split-K at B1: sweep %d, roofline %d of %d (agree on %d); at B > 1: %d, %d\n",
              ran_b1, split_b1, b1, agree_b1, ran_more, split_more);
  EXPECT_EQ(ran_b1, 71);
  EXPECT_EQ(ran_more, 0);
  EXPECT_EQ(split_more, 0);
  EXPECT_GT(split_b1, 0);
}

// DeepSeek-V2-Lite (16 heads, latents 512) on the H200: at B256 L4096 the score and value GEMMs
// run as gemmSN (2243 and 1318 us in the profiler's list), at B16 L4096 as WMMA tensor-op GEMMs.
TEST(LatentGemm, TheH200RunsTheSameKernelsAtTheSameRates) {
  const auto lists = calibration_json("h200-moe-kernels.json");
  const Machine h200(hw::load_gpu("h200"));
  int checked = 0;
  for (const auto& k : lists.at("kernels")) {
    if (k.at("model") != "deepseek-v2-lite" || k.at("phase") != "decode" ||
        k.at("context") != 4096) {
      continue;
    }
    const int64_t b = k.at("batch"), heads = 16, latent = 512, len = 4097;
    double tn = 0, nn = 0;
    for (const auto& e : k.at("kernels")) {
      const std::string name = e.at("name");
      if (name.find("gemmSN_TN") != std::string::npos) tn += e.at("us").get<double>();
      if (name.find("gemmSN_NN") != std::string::npos) nn += e.at("us").get<double>();
    }
    const bool score = latent_gemmsn(LatentGemm::kScore, b, heads, len, latent);
    const bool value = latent_gemmsn(LatentGemm::kValue, b, heads, latent, len);
    EXPECT_EQ(score, tn > 0) << "B" << b;
    EXPECT_EQ(value, nn > 0) << "B" << b;
    if (score) {
      const double us = 1e6 * latent_gemmsn_s(h200, LatentGemm::kScore, b, heads, len, latent);
      EXPECT_NEAR(us / tn, 1, 0.05) << us << " us vs " << tn;
    }
    if (value) {
      const double us = 1e6 * latent_gemmsn_s(h200, LatentGemm::kValue, b, heads, latent, len);
      EXPECT_NEAR(us / nn, 1, 0.05) << us << " us vs " << nn;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

// The step's attention carries the gemmSN GEMMs' time: at B256 L4096 both long GEMMs are on the
// CUDA cores, so the attention takes at least their sum; at B16 none is.
TEST(LatentGemm, DecodeAttentionTakesTheGemvTime) {
  const Machine h200(hw::load_gpu("h200"));
  const auto model = llm::load_model("deepseek-v2-lite");
  StepRequest r;
  r.phase = llm::Phase::kDecode;
  r.length = 4096;
  for (int64_t b : {16, 256}) {
    r.batch = b;
    const OpCost* att = nullptr;
    const auto e = estimate(h200, model, r);
    for (const auto& c : e.layer) {
      if (c.name == "attention") att = &c;
    }
    ASSERT_NE(att, nullptr);
    const double gemv_ms = 1e3 * (latent_gemmsn_s(h200, LatentGemm::kScore, b, 16, 4097, 512) +
                                  latent_gemmsn_s(h200, LatentGemm::kValue, b, 16, 512, 4097));
    if (b == 256) {
      EXPECT_NE(att->execution_path.find("2 as gemmSN"), std::string::npos) << att->execution_path;
      EXPECT_GT(att->ms, gemv_ms);
    } else {
      EXPECT_EQ(att->execution_path.find("gemmSN"), std::string::npos) << att->execution_path;
    }
  }
}

}  // namespace
}  // namespace ltc::roofline
