// The GEMM cost model against hand calculations, against real H200 measurements (the shipped
// calibration file), and the precision paths (LUT, native MAC, dequantize-then-MAC).
#include "common/config_dir.h"
#include "common/error.h"
#include "model/llm/model_config.h"
#include "model/roofline/estimate.h"
#include "model/tiling/tiling.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <thread>
#include <tuple>

namespace ltc::roofline {
namespace {

const std::string kCalibration =
    std::string(LTC_SOURCE_DIR) + "/configs/calibration/h200-gemm.json";

Machine machine(const std::string& name) {
  return Machine(hw::load_gpu(name));
}
llm::WeightFormat wf(const std::string& s) {
  return llm::parse_weight_format(s);
}
double ms(const Machine& m, int64_t M, int64_t N, int64_t K, const std::string& w = "fp16",
          golden::DType a = golden::DType::kFp16, bool tables = false) {
  return gemm_cost(m, make_gemm(M, N, K, wf(w), a, tables)).ms;
}

// The old GEMM-only calibration (42 cuBLAS fp16 GEMMs on an H200, M = 1..4096, LLaMA-2-13B/70B
// and OPT-175B shapes) is no longer fitted: configs/gpus/h200.json is fitted on the reference-step
// profile (configs/calibration/h200-profile.json, model/roofline/README.md). It stays a test of
// the refit section, from another session: its long compute-bound GEMMs ran 10-20% faster than
// the profile's (748 vs 661 TFLOP/s at 8192^3; the profile's clocks sat at the power cap), so the
// bound is 8% MAPE (2.65% when it was fitted on it) and 25% per shape.
TEST(GemmCalibration, H200MapeWithinEightPercent) {
  const auto rep = check_gemms(machine("h200"), kCalibration);
  ASSERT_EQ(rep.gemms.size(), 42u);
  for (const auto& c : rep.gemms) {
    EXPECT_LT(std::abs(c.error()), 0.25)
        << c.name << " M=" << c.m << " measured " << c.measured_ms << " model " << c.model_ms;
  }
  std::printf("H200 GEMM MAPE: %.2f%%\n", 100 * rep.mape);
  EXPECT_LT(rep.mape, 0.08);
}

// The profile's 8192^3 FP16 GEMM (`peaks`, not used by the fit): an independent check, within
// 10% (the fitted throttle, a log of the busy time capped at x1.25, slows this 1.7 ms GEMM a
// little more than the profile's GEMMs of up to 1.1 ms that it was fitted on).
TEST(GemmCalibration, H200LargeGemmMatchesTheProfilesCeiling) {
  std::ifstream in(config_dir("calibration") + "/h200-profile.json");
  const auto j = nlohmann::json::parse(in);
  double measured_tflops = 0;
  for (const auto& p : j.at("peaks")) {
    if (p.value("what", "") == "gemm" && p.value("dtype", "") == "fp16" &&
        p.value("M", 0) == 8192) {
      measured_tflops = p.at("tflops").get<double>();
    }
  }
  ASSERT_GT(measured_tflops, 0);
  const double t = ms(machine("h200"), 8192, 8192, 8192);
  const double tflops = 2.0 * 8192.0 * 8192 * 8192 / (t * 1e-3) / 1e12;
  EXPECT_NEAR(tflops, measured_tflops, 0.10 * measured_tflops);
}

TEST(GemmCost, GemvIsWeightBytesOverAchievableBandwidthPlusFixedCost) {
  const Machine a100 = machine("a100");
  const auto& g = a100.gpu();
  // 8192 x 8192 fp16 weights (+ tiny x and y) at 1555 GB/s x 0.84, plus the 6 us kernel cost.
  const double bytes = 8192.0 * 8192 * 2 + 8192 * 2 * 2;
  const double hand_ms = (bytes / (g.dram.bw_gbps * 1e9 * g.achievable.dram_bw_fraction) +
                          g.achievable.kernel_fixed_us * 1e-6) *
                         1e3;
  EXPECT_NEAR(ms(a100, 1, 8192, 8192), hand_ms, 0.05 * hand_ms);
  EXPECT_EQ(gemm_cost(a100, make_gemm(1, 8192, 8192, wf("fp16"), golden::DType::kFp16)).bound,
            "dram");
}

TEST(GemmCost, LargeGemmIsTensorRateTimesEfficiency) {
  const Machine a100 = machine("a100");
  const double hand_ms =
      2.0 * 8192 * 8192 * 8192 / (312e12 * a100.achievable().tensor_fraction) * 1e3;
  const auto c = gemm_cost(a100, make_gemm(8192, 8192, 8192, wf("fp16"), golden::DType::kFp16));
  EXPECT_NEAR(c.ms, hand_ms, 0.05 * hand_ms);
  EXPECT_EQ(c.bound, "compute");
}

TEST(GemmCost, TimeGrowsWithRows) {
  const Machine h200 = machine("h200");
  double prev = 0;
  for (int64_t m : {1, 16, 64, 256, 1024, 4096}) {
    const double t = ms(h200, m, 8192, 8192);
    EXPECT_GE(t, prev * 0.999) << m;
    prev = t;
  }
}

TEST(GemmPath, LowBitWeightsWithoutLutCoresDequantizeThenMac) {
  const Machine a100 = machine("a100");
  const auto p = a100.gemm_path(wf("int2"), golden::DType::kFp16, false);
  EXPECT_EQ(p.unit, GemmUnit::kMacDequant);
  EXPECT_DOUBLE_EQ(p.peak_tops, 312);
  // Decode GEMV: an eighth of the fp16 weight bytes, so less than fp16 time, but never less
  // than the byte ratio (fixed costs apart: the kernel's, and the reduce kernel's when it splits
  // K). Above it: the CUDA-core dequantize work, 4 thread instructions per code, 2 of them
  // integer (measured in real W4A16 kernels: configs/calibration/h200-microbench.json, topic
  // "dequant"), on an A100 SM's 64 FP32 and 64 INT32 lanes together at its 4 x 32 issue rate,
  // at cuda_core_fraction 0.7: by hand 4 x 8192 x 8192 / (128 x 108 SMs x 1.41 GHz x 0.7) =
  // 19.7 us with every SM busy; tiles of whole columns leave some SMs idle in a wave.
  const auto fp16 = gemm_cost(a100, make_gemm(1, 8192, 8192, wf("fp16"), golden::DType::kFp16));
  const auto int2 = gemm_cost(a100, make_gemm(1, 8192, 8192, wf("int2"), golden::DType::kFp16));
  auto fixed = [&](const OpCost& c) {
    const auto& a = a100.achievable();
    return (a.kernel_fixed_us + (c.tile.split_k > 1 ? a.elementwise_fixed_us : 0)) * 1e-3;
  };
  const double ratio = (int2.ms - fixed(int2)) / (fp16.ms - fixed(fp16));
  EXPECT_GE(ratio, 2.0 / 16 - 0.01);
  EXPECT_LT(ratio, 1.0);
  // The hand figure's premises, as the A100's file states them.
  const hw::GpuConfig& g = a100.gpu();
  ASSERT_EQ(g.sms, 108);
  ASSERT_DOUBLE_EQ(g.clock_ghz, 1.41);
  ASSERT_DOUBLE_EQ(a100.achievable().cuda_core_fraction, 0.7);
  ASSERT_EQ(g.fp32_lanes_per_sm(), 64);
  ASSERT_EQ(g.int32_lanes_per_sm(), 64);
  ASSERT_EQ(g.sub_partitions_per_sm, 4);
  const double hand_ms = 4.0 * 8192 * 8192 / (128.0 * 108 * 1.41e9 * 0.7) * 1e3;  // 19.7 us
  EXPECT_EQ(int2.bound, "dequant");
  EXPECT_GE(int2.ms - fixed(int2), hand_ms * 0.999);
  EXPECT_LT(int2.ms - fixed(int2), hand_ms * 1.25);
}

TEST(GemmPath, NativeIntegerPairsUseTheirTensorRate) {
  const Machine a100 = machine("a100"), h200 = machine("h200");
  EXPECT_EQ(a100.gemm_path(wf("int4"), golden::DType::kInt8, false).unit, GemmUnit::kMac);
  EXPECT_DOUBLE_EQ(a100.gemm_path(wf("int4"), golden::DType::kInt8, false).peak_tops, 1248);
  EXPECT_DOUBLE_EQ(h200.gemm_path(wf("int8"), golden::DType::kInt8, false).peak_tops, 1979);
  EXPECT_DOUBLE_EQ(h200.gemm_path(wf("fp8e4m3"), golden::DType::kFp8E4M3, false).peak_tops, 1979);
  // Twice the peak is not twice the speed: torch._int_mm (cuBLASLt) at the profile's M = 4096
  // LLM shapes runs 0.9x..1.4x the FP16 speed (configs/calibration/h200-profile.json). The fitted
  // INT8 path (configs/gpus/h200.json gemm_paths), fitted over M = 1..4096, gives the mean
  // ratio within 20% (it is 16% pessimistic here: model/roofline/README.md).
  std::ifstream in(config_dir("calibration") + "/h200-profile.json");
  const auto j = nlohmann::json::parse(in);
  std::map<std::string, double> fp16_ms;
  for (const auto& o : j.at("ops")) {
    if (o.value("op", "") == "gemm" && o.value("M", 0) == 4096 && o.value("dtype", "") == "fp16") {
      fp16_ms[o.at("model").get<std::string>() + o.at("name").get<std::string>()] = o.at("ms");
    }
  }
  double measured = 0, model = 0;
  int n = 0;
  for (const auto& o : j.at("ops")) {
    if (o.value("op", "") != "gemm" || o.value("M", 0) != 4096 || o.value("dtype", "") != "int8") {
      continue;
    }
    const int64_t N = o.at("N"), K = o.at("K");
    measured += fp16_ms.at(o.at("model").get<std::string>() + o.at("name").get<std::string>()) /
                o.at("ms").get<double>();
    model += ms(h200, 4096, N, K) / ms(h200, 4096, N, K, "int8", golden::DType::kInt8);
    ++n;
  }
  ASSERT_EQ(n, 36);
  EXPECT_NEAR(model / n, measured / n, 0.20 * measured / n);
}

// A path's per-tile overhead (prologue and epilogue as K depth of main loop): a compute-bound
// GEMM of K = 4096 whose tiles each pay another 4096 takes twice the compute time. Hand check:
// 8192^3 INT8 at 1979 TOPS x 0.5 is 1.111 ms of tensor work; with the overhead 2.222 ms.
TEST(GemmPath, TileOverheadAddsItsKDepthToEveryTile) {
  hw::GpuConfig gpu = hw::load_gpu("h200");
  gpu.achievable.throttle_per_efold = 0;
  gpu.achievable.gemm_paths = {hw::GemmPathRates{"int8", "int8", 0.5, 0.9, 0, 0, 1.0, 1}};
  const Machine plain(gpu);
  gpu.achievable.gemm_paths[0].tile_overhead_k = 4096;
  const Machine overhead(gpu);
  const auto g = make_gemm(8192, 8192, 4096, wf("int8"), golden::DType::kInt8);
  const double hand_ms = 2.0 * 8192 * 8192 * 4096 / (1979e12 * 0.5) * 1e3;
  const auto a = gemm_cost(plain, g), b = gemm_cost(overhead, g);
  EXPECT_NEAR(a.compute_ms, hand_ms, 0.05 * hand_ms);
  EXPECT_NEAR(b.compute_ms, 2 * hand_ms, 0.05 * 2 * hand_ms);
  EXPECT_EQ(b.bound, "compute");
}

// A path whose kernels keep one row tile (max_tile_m = tile_m: tinygemm's per-row work) repeats
// its per-tile work for every tile row of M, so a compute-bound GEMM's time is linear in M;
// without the cap the roofline picks 128..256-row tiles and the time per row falls.
TEST(GemmPath, LargestRowTileMakesTimeLinearInRows) {
  hw::GpuConfig gpu = hw::load_gpu("h200");
  gpu.achievable.throttle_per_efold = 0;
  gpu.achievable.gemm_paths = {hw::GemmPathRates{"bf16", "int4", 0.03, 0.5, 1, 0.03, 1.0, 4}};
  gpu.achievable.gemm_paths[0].max_tile_m = 1;
  const Machine capped(gpu);
  for (int64_t m : {1024, 2048, 4096}) {
    const auto c =
        gemm_cost(capped, make_gemm(m, 8192, 8192, wf("int4:g=128"), golden::DType::kBf16));
    EXPECT_EQ(c.tile.tm, 1) << m;
  }
  const double t1 = ms(capped, 1024, 8192, 8192, "int4:g=128", golden::DType::kBf16);
  const double t4 = ms(capped, 4096, 8192, 8192, "int4:g=128", golden::DType::kBf16);
  EXPECT_NEAR(t4 / t1, 4.0, 0.1);
  gpu.achievable.gemm_paths[0].max_tile_m = 0;
  const Machine free_tiles(gpu);
  const auto c =
      gemm_cost(free_tiles, make_gemm(4096, 8192, 8192, wf("int4:g=128"), golden::DType::kBf16));
  EXPECT_GT(c.tile.tm, 1);
  EXPECT_LT(c.ms, 0.5 * t4);
}

// An H200 without throttling whose one GEMM path is `path`, its kernels one tile of
// tile_m x tile_n rows and columns, fed from L2 at `l2_fraction`.
hw::GpuConfig one_tile_gpu(hw::GemmPathRates path, int tile_n, double l2_fraction) {
  hw::GpuConfig gpu = hw::load_gpu("h200");
  gpu.achievable.throttle_per_efold = 0;
  path.max_tile_m = path.tile_m;
  path.tile_n = tile_n;
  path.l2_bw_fraction = l2_fraction;
  gpu.achievable.gemm_paths = {path};
  return gpu;
}

// tinygemm's kernel (tile_n 8, one m16 row tile): each of its ceil(M / 16) x N / 8 tiles reads
// the rows of X that exist and its 8 weight columns from L2, so an L2-bound GEMV grows with the
// rows present, not the padded 16. Hand check, 12288 x 4096 bf16 x int4 (g = 128), L2 at
// 0.1 x 20 TB/s over 132 SMs: 1536 tiles in 12 waves, a tile's bytes (rows x 2 + 8 x w) x K.
TEST(GemmPath, OneColumnTileReadsTheRowsPresentFromL2) {
  hw::GpuConfig gpu =
      one_tile_gpu(hw::GemmPathRates{"bf16", "int4", 1.0, 0.9, 16, 1.0, 1.0, 1}, 8, 0.1);
  gpu.achievable.gemm_paths[0].data_parallel = 1;
  const Machine m(gpu);
  const auto g1 = make_gemm(1, 12288, 4096, wf("int4:g=128"), golden::DType::kBf16);
  const double w = g1.w_bytes_per_element();
  EXPECT_NEAR(w, 0.5 + 4.0 / 128, 0.02);  // 4 bits and a 16-bit scale and zero per 128
  const double l2_per_sm = 20000e9 * 0.1 / 132;
  for (int64_t rows : {1, 4, 16}) {
    const auto c =
        gemm_cost(m, make_gemm(rows, 12288, 4096, wf("int4:g=128"), golden::DType::kBf16));
    EXPECT_EQ(c.tile.tm, 16);
    EXPECT_EQ(c.tile.tn, 8);
    EXPECT_EQ(c.tile.tiles, 1536);
    EXPECT_EQ(c.tile.waves, 12);
    const double hand_ms = 12 * (rows * 2.0 + 8 * w) * 4096 / l2_per_sm * 1e3;
    EXPECT_NEAR(c.compute_ms, hand_ms, 1e-3 * hand_ms) << rows;
    EXPECT_EQ(c.bound, "l2") << rows;
  }
  // 100 rows in 7 row tiles: each reads 100 / 7 rows on average, in 82 waves.
  const auto c = gemm_cost(m, make_gemm(100, 12288, 4096, wf("int4:g=128"), golden::DType::kBf16));
  EXPECT_EQ(c.tile.tiles, 7 * 1536);
  const double hand_ms = 82 * (100.0 / 7 * 2 + 8 * w) * 4096 / l2_per_sm * 1e3;
  EXPECT_NEAR(c.compute_ms, hand_ms, 1e-3 * hand_ms);
}

// Data-parallel kernels (cuBLASLt's INT8 CUTLASS sm80 kernels) run whole tiles in waves: one
// 128 x 128 tile past the 132 SMs' first wave takes a second wave, twice the compute time;
// with stream-K the library deals the K loops evenly (144 / 132 x 1.05 of it).
TEST(GemmPath, DataParallelKernelsStepWithWaves) {
  hw::GpuConfig gpu =
      one_tile_gpu(hw::GemmPathRates{"int8", "int8", 0.5, 0.9, 128, 0.5, 1.0, 1}, 128, 1.0);
  const Machine stream_k(gpu);
  gpu.achievable.gemm_paths[0].data_parallel = 1;
  const Machine waves(gpu);
  auto cost = [](const Machine& m, int64_t rows) {
    return gemm_cost(m, make_gemm(rows, 1536, 8192, wf("int8"), golden::DType::kInt8));
  };
  const auto one = cost(waves, 1408), two = cost(waves, 1409);
  EXPECT_EQ(one.tile.tiles, 132);
  EXPECT_EQ(two.tile.tiles, 144);
  EXPECT_EQ(two.tile.waves, 2);
  EXPECT_NEAR(two.compute_ms / one.compute_ms, 2.0, 1e-9);
  const auto dealt = cost(stream_k, 1409);
  EXPECT_TRUE(dealt.tile.stream_k);
  EXPECT_NEAR(dealt.compute_ms / one.compute_ms, 144.0 / 132 * 1.05, 1e-9);
  EXPECT_FALSE(two.tile.stream_k);
}

// A path whose kernels pick their tile by the library's heuristic (tile_choice) is costed at that
// tile, faster or not. Hand check, INT8 at 0.5 of 1979 TOPS over 132 SMs, L2 and DRAM not
// binding: 200 x 4096 x 11008 takes 128x128 tiles (819,200 outputs, K >= 8000): 2 x 32 = 64
// tiles in one wave, each 2 x 128 x 128 x 11008 operations; the fastest tiles (64 rows, 128
// tiles, still one wave) take half that; at an entry's own tensor efficiency of 0.25, twice it.
TEST(GemmPath, TileChoiceCostsTheLibrarysTileNotTheFastest) {
  hw::GpuConfig gpu = hw::load_gpu("h200");
  gpu.achievable.throttle_per_efold = 0;
  hw::GemmPathRates path{"int8", "int8", 0.5, 1.0, 0, 0.5, 1.0, 1};
  path.l2_bw_fraction = 1.0;
  path.data_parallel = 1;
  gpu.achievable.gemm_paths = {path};
  const Machine fastest(gpu);
  gpu.achievable.gemm_paths[0].tile_choice = {
      {128, 256, 8e6, 0}, {128, 128, 8e5, 8000}, {128, 64, 8e5, 0}, {64, 64, 0, 0}};
  const Machine library(gpu);
  auto cost = [](const Machine& m, int64_t rows, int64_t n, int64_t k) {
    return gemm_cost(m, make_gemm(rows, n, k, wf("int8"), golden::DType::kInt8));
  };
  const auto chosen = cost(library, 200, 4096, 11008);
  EXPECT_EQ(chosen.tile.tm, 128);
  EXPECT_EQ(chosen.tile.tn, 128);
  EXPECT_EQ(chosen.tile.tiles, 64);
  EXPECT_EQ(chosen.tile.waves, 1);
  const double per_sm = 1979e12 * 0.5 / 132;
  const double hand_ms = 2.0 * 128 * 128 * 11008 / per_sm * 1e3;
  EXPECT_NEAR(chosen.compute_ms, hand_ms, 1e-6 * hand_ms);
  EXPECT_EQ(chosen.bound, "compute");
  const auto best = cost(fastest, 200, 4096, 11008);
  EXPECT_EQ(best.tile.tm, 64);
  EXPECT_NEAR(best.compute_ms, hand_ms / 2, 1e-6 * hand_ms);
  EXPECT_GT(chosen.ms, best.ms);
  // An entry's own tensor efficiency (its kernel's) replaces the path's: half of it, twice the
  // compute time.
  gpu.achievable.gemm_paths[0].tile_choice[1].tensor_fraction = 0.25;
  const auto slower = cost(Machine(gpu), 200, 4096, 11008);
  EXPECT_NEAR(slower.compute_ms, 2 * hand_ms, 1e-6 * hand_ms);
  // The other entries at the shapes they apply to.
  for (auto [rows, n, k, tm, tn] :
       {std::tuple{128, 4096, 4096, 64, 64}, std::tuple{200, 4096, 4096, 128, 64},
        std::tuple{2048, 4096, 4096, 128, 256}}) {
    const auto c = cost(library, rows, n, k);
    EXPECT_EQ(c.tile.tm, tm) << rows << " " << k;
    EXPECT_EQ(c.tile.tn, tn) << rows << " " << k;
  }
}

// A grouped GEMM (the MoE reference step's torch._grouped_mm) runs whole tiles, each group's
// row tiles rounded up to whole clusters of two along M (CUTLASS's grouped scheduler) and as
// many as the routing fills, and its thread blocks move to another group about once per tile
// while there are more groups than waves. Hand check, Mixtral's gate+up (N 28672, K 4096) over
// its 8 experts, top-2 of 512 tokens, on a path of one 64 x 128 tile: each group of
// X ~ Binomial(512, 1/4) rows takes 2 ceil(X / 128) row tiles, 224 column tiles each, in waves
// of 132 at 0.5 of the BF16 peak, plus one group switch per group (more waves than groups).
TEST(GemmPath, GroupedGemmRunsWholeTilesOverTheRoutedGroups) {
  hw::GpuConfig gpu = hw::load_gpu("h200");
  gpu.achievable.throttle_per_efold = 0;
  hw::GemmPathRates plain{"bf16", "bf16", 0.5, 1.0, 64, 0.5, 1.0, 16};
  plain.max_tile_m = 64;
  plain.tile_n = 128;
  hw::GemmPathRates grouped = plain;
  grouped.kernel = "grouped";
  grouped.group_switch_us = 2;
  gpu.achievable.gemm_paths = {plain, grouped};
  ASSERT_EQ(gpu.sm.cluster_size, 2);
  const Machine m(gpu);
  GemmProblem g = make_gemm(1024, 28672, 4096, wf("bf16"), golden::DType::kBf16);
  g.grouped = true;
  g.batch = 8;
  g.m = 128;
  g.group_tokens = 512;
  g.group_pick.assign(8, 0.25);
  // E[ceil(X / 128)] by the whole pmf.
  double groups = 0;
  for (int x = 1; x <= 512; ++x) {
    groups += std::exp(std::lgamma(513.0) - std::lgamma(x + 1.0) - std::lgamma(513.0 - x) +
                       x * std::log(0.25) + (512 - x) * std::log(0.75)) *
              std::ceil(x / 128.0);
  }
  const auto c = gemm_cost(m, g);
  EXPECT_EQ(c.tile.tm, 64);
  EXPECT_EQ(c.tile.tn, 128);
  EXPECT_EQ(c.tile.split_k, 1);
  EXPECT_FALSE(c.tile.stream_k);
  const int64_t tiles = std::llround(8 * 2 * groups) * 224;
  EXPECT_EQ(c.tile.tiles, tiles);
  EXPECT_EQ(c.tile.waves, (tiles + 131) / 132);
  const double per_sm = m.mac_tops(golden::DType::kBf16) * 1e12 * 0.5 / 132;
  const double hand_ms = (double(c.tile.waves) * 2.0 * 64 * 128 * 4096 / per_sm + 8 * 2e-6) * 1e3;
  EXPECT_NEAR(c.compute_ms, hand_ms, 1e-6 * hand_ms);
  // Every group at its mean of 128 rows: 2 row tiles a group.
  GemmProblem even = g;
  even.group_pick.clear();
  EXPECT_EQ(gemm_cost(m, even).tile.tiles, 8 * 2 * 224);
  // More groups than waves (Qwen3-MoE's 128 experts of N 1536, 8 rows each): a switch per wave.
  GemmProblem many = make_gemm(1024, 1536, 2048, wf("bf16"), golden::DType::kBf16);
  many.grouped = true;
  many.batch = 128;
  many.m = 8;
  const auto q = gemm_cost(m, many);
  EXPECT_EQ(q.tile.tiles, 128 * 2 * 12);
  EXPECT_EQ(q.tile.waves, 24);
  EXPECT_NEAR(q.compute_ms, (24 * 2.0 * 64 * 128 * 2048 / per_sm + 24 * 2e-6) * 1e3, 1e-6);
}

// The sustained-power throttle follows the tensor cores' duty: a long GEMM bound by its tensor
// cores slows by throttle(t) = 1 + 0.2 ln(t / 0.5 ms) (capped at 1.25); one bound by its L2
// feed (tinygemm at M = 8192, about 20 ms) slows by that excess times the share of its tile
// time the tensor cores work: 2 x 16 x 8 x K at 989 TFLOP/s over 132 SMs against its L2 bytes.
TEST(GemmPath, ThrottleFollowsTensorWork) {
  hw::GpuConfig gpu =
      one_tile_gpu(hw::GemmPathRates{"bf16", "int4", 1.0, 0.9, 16, 1.0, 1.0, 1}, 8, 0.2);
  gpu.achievable.gemm_paths.push_back(hw::GemmPathRates{"int8", "int8", 0.5, 0.9, 0, 0, 1.0, 1});
  const Machine steady(gpu);
  gpu.achievable.throttle_per_efold = 0.2;
  gpu.achievable.throttle_onset_ms = 0.5;
  gpu.achievable.throttle_max = 1.25;
  const Machine throttled(gpu);
  auto slowdown = [](double compute_ms) {
    return std::min(1.25, 1 + 0.2 * std::log(compute_ms / 0.5)) - 1;
  };
  const auto w4 = make_gemm(8192, 12288, 4096, wf("int4:g=128"), golden::DType::kBf16);
  const auto a = gemm_cost(steady, w4), b = gemm_cost(throttled, w4);
  EXPECT_EQ(b.bound, "l2");
  EXPECT_GT(b.compute_ms, 10);
  const double tensor_s = 2.0 * 16 * 8 * 4096 / (989e12 / 132);
  const double l2_s = (16 * 2.0 + 8 * w4.w_bytes_per_element()) * 4096 / (20000e9 * 0.2 / 132);
  const double duty = tensor_s / l2_s;
  EXPECT_LT(duty, 0.05);
  EXPECT_NEAR(b.ms - 1e-3, (a.ms - 1e-3) * (1 + duty * slowdown(a.compute_ms)), 1e-4 * b.ms);
  const auto i8 = make_gemm(8192, 8192, 8192, wf("int8"), golden::DType::kInt8);
  const auto c = gemm_cost(steady, i8), d = gemm_cost(throttled, i8);
  EXPECT_EQ(d.bound, "compute");
  EXPECT_NEAR(d.ms - 1e-3, (c.ms - 1e-3) * (1 + slowdown(c.compute_ms)), 1e-3 * d.ms);
}

TEST(GemmPath, LutTensorCoreRunsLowBitGemmsFromTables) {
  const Machine lut4x = machine("a100-lut4x"), a100 = machine("a100");
  const auto p = lut4x.gemm_path(wf("int2"), golden::DType::kInt8, true);
  EXPECT_EQ(p.unit, GemmUnit::kLut);
  EXPECT_NEAR(p.peak_tops, 1248, 1);
  // Compute-bound W2A8 GEMM: faster than fp16 MAC, never beyond the 4x peak ratio.
  const double mac = ms(a100, 4096, 8192, 8192);
  const double lut = ms(lut4x, 4096, 8192, 8192, "int2", golden::DType::kInt8, true);
  EXPECT_GT(mac / lut, 2.0);
  EXPECT_LE(mac / lut, 4.0);
  // Fewer planes are faster: int1 beats int2 beats int4 at large M.
  const double w1 = ms(lut4x, 4096, 8192, 8192, "int1", golden::DType::kInt8, true);
  const double w4 = ms(lut4x, 4096, 8192, 8192, "int4", golden::DType::kInt8, true);
  EXPECT_LT(w1, lut);
  EXPECT_LT(lut, w4);
}

// One cost per kernel: a LUT GEMM's roofline time is the compiler's kernel, the tile model/tiling
// picks and its estimate, plus the kernel boundary the simulator waits after it; the estimate is
// the fill and drain plus compute and memory overlapped by the fitted exponent.
TEST(GemmPath, LutGemmCostIsTheCompilersKernelEstimatePlusTheKernelBoundary) {
  const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  const Machine m(gpu);
  for (auto [M, N, K, w, a] : {std::tuple{1, 4096, 4096, 2, golden::DType::kInt8},
                               std::tuple{16, 11008, 4096, 1, golden::DType::kFp16},
                               std::tuple{1024, 28672, 8192, 2, golden::DType::kInt8}}) {
    const auto cost = gemm_cost(m, make_gemm(M, N, K, wf("int" + std::to_string(w)), a, true));
    const auto c = tiling::require_tiles(tiling::lut_gemm_problem(gpu, M, N, K, a, w), gpu);
    const double gap_ms = double(gpu.step_kernel_gap_cycles()) / (gpu.clock_ghz * 1e6);
    EXPECT_NEAR(cost.ms, c.estimated_us * 1e-3 + gap_ms, 1e-9) << M << "x" << N << "x" << K;
    EXPECT_EQ(cost.tile.tm, c.block.m);
    EXPECT_EQ(cost.tile.tn, c.block.n);
    // Fill and drain (first round trip; the last K step and the output's trip to L2) bracket
    // compute and memory overlapped at the fitted exponent: between the two and their sum.
    const double fill_drain_us = (gpu.dram.latency_ns + 2 * gpu.l2.latency_ns) * 1e-3;
    const double body = c.estimated_us - fill_drain_us;
    EXPECT_GE(body, std::max(c.compute_us, c.memory_us) * (1 - 1e-9));
    EXPECT_LE(body, c.compute_us + c.memory_us);
  }
}

TEST(GemmCost, RejectsEmptyShapes) {
  EXPECT_THROW(make_gemm(0, 8, 8, wf("fp16"), golden::DType::kFp16), InputError);
}

// The LUT tile memo is filled by concurrent estimates (report sections run on threads) without a
// race, and every thread sees the answer one thread alone gets.
TEST(GemmCost, ConcurrentLutEstimatesOnOneMachineAgreeWithSerial) {
  const Machine serial = machine("a100-lut4x");
  const Machine shared = machine("a100-lut4x");
  const std::vector<int64_t> ms_rows = {1, 16, 128, 2048};
  std::vector<double> want;
  for (int64_t M : ms_rows)
    want.push_back(ms(serial, M, 27648, 5120, "int1", golden::DType::kInt8, true));
  std::vector<std::vector<double>> got(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int64_t M : ms_rows)
        got[t].push_back(ms(shared, M, 27648, 5120, "int1", golden::DType::kInt8, true));
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& g : got) EXPECT_EQ(g, want);
}

}  // namespace
}  // namespace ltc::roofline
