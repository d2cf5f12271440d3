// The simulator's energy (sim/energy.h) against hand calculations: the ops and bytes of one GEMM
// derived from its shape and tiles, times the figures the GPU files cite
// (docs/published-figures.md#energy-per-operation-and-per-access); the L2's dirty output written
// back at the end of a run; and a part without a figure reported as unknown, not as 0.
#include "sim/energy.h"
#include "common/config_dir.h"
#include "common/error.h"
#include "model/hw/gpu.h"
#include "sim/simulator.h"
#include "tests/sim/sim_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace ltc {
namespace {

using test_support::compiled_gemm;

// Published figures, written out here rather than read from the GPU files.
constexpr double kMmaPj = 1 / 2.98;  // A100 FP16 tensor cores: 2.98 TFLOP/s per W (Table III)
constexpr double kDramPj = 3.9 * 8;  // HBM2: 3.9 pJ/bit
constexpr double kSramPj = 20.0 / 8, kL2Pj = 100.0 / 8;  // 64-bit reads: 32 KB, 1 MB SRAM

TEST(Energy, AnFp16GemmCostsItsOpsAndBytesAtThePublishedFigures) {
  // 128 x 256 x 256 FP16 on the A100, 50 W of static power given for the test.
  const hw::GpuConfig gpu = hw::with_overrides(hw::load_gpu("a100"), "energy.static_w=50");
  const int64_t m = 128, n = 256, k = 256;
  const traces::Trace trace = compiled_gemm(gpu, m, n, k, "fp16", golden::DType::kFp16);
  // The compiler's tiles the byte counts below follow from: 16 x 16 output tiles, one per block.
  ASSERT_EQ(trace.kernels.size(), 1u);
  const auto& tiles = trace.kernels[0].tiles;
  ASSERT_EQ(tiles.block[0], 16);
  ASSERT_EQ(tiles.block[1], 16);
  const sim::RunStats r = sim::simulate(trace, gpu, {});
  const int64_t blocks = (m / 16) * (n / 16);  // 128

  // By hand from the shape:
  const double ops = 2.0 * m * n * k;                  // no padding: M, N, K are tile multiples
  const double dram_read = double(m * k + k * n) * 2;  // each operand once (the L2 holds them)
  const double dram_write = double(m * n) * 2;         // the FP16 output, written back at the end
  // Each block stages its A panel (16 x K) and B panel (K x 16) in shared memory (the fill) and
  // reads each once: both go through shared memory twice, and L2 serves every fill.
  const double panels = double(blocks) * double(16 * k + k * 16) * 2;
  const double smem = 2 * panels, l2 = panels + dram_write;
  const double hand_j =
      (ops * kMmaPj + (dram_read + dram_write) * kDramPj + smem * kSramPj + l2 * kL2Pj) * 1e-12 +
      50.0 * r.time_ms() * 1e-3;

  const sim::Energy e = sim::run_energy(r, sim::energy_coefficients(gpu));
  EXPECT_NEAR(e.tensor_j, ops * kMmaPj * 1e-12, 1e-3 * e.tensor_j);
  EXPECT_NEAR(e.dram_j, (dram_read + dram_write) * kDramPj * 1e-12, 1e-3 * e.dram_j);
  EXPECT_NEAR(e.smem_j, smem * kSramPj * 1e-12, 1e-3 * e.smem_j);
  EXPECT_NEAR(e.l2_j, l2 * kL2Pj * 1e-12, 1e-3 * e.l2_j);
  EXPECT_EQ(e.cuda_j, 0);  // no CUDA-core work in a plain FP16 GEMM
  EXPECT_NEAR(e.total_j(), hand_j, 1e-3 * hand_j);
  EXPECT_NEAR(e.average_w(), e.total_j() / (r.time_ms() * 1e-3), 1e-9);
  EXPECT_TRUE(e.unknown.empty());
}

TEST(Energy, TheOutputStillInTheL2IsWrittenBackAtTheEnd) {
  const hw::GpuConfig gpu = hw::load_gpu("a100");
  const sim::RunStats r =
      sim::simulate(compiled_gemm(gpu, 256, 512, 512, "fp16", golden::DType::kFp16), gpu, {});
  // 256 x 512 FP16 outputs fit the 40 MB L2 many times over: none leaves it during the run.
  EXPECT_EQ(r.end_writeback_bytes, 256u * 512 * 2);
  EXPECT_EQ(r.total().mem.dram_write_bytes, r.kernels[0].mem.dram_write_bytes + 256u * 512 * 2);
}

TEST(Energy, LutTilesPayPerWeightPlaneAtTheGpuFilesPower) {
  // A100-LUT-4X: 0.347 W per SM of LUT tensor cores for 2496 TOP/s at W1 over 108 SMs.
  const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  const double pj_per_plane_op = 0.347 / (2496e12 / 108) * 1e12;  // 0.0150 pJ
  const int64_t m = 128, n = 256, k = 256;
  for (const auto& [weights, planes] : {std::pair{"int2", 2}, std::pair{"int4", 4}}) {
    const sim::RunStats r =
        sim::simulate(compiled_gemm(gpu, m, n, k, weights, golden::DType::kInt8), gpu, {});
    const sim::Energy e = sim::run_energy(r, sim::energy_coefficients(gpu));
    EXPECT_NEAR(e.tensor_j, 2.0 * m * n * k * planes * pj_per_plane_op * 1e-12, 1e-3 * e.tensor_j)
        << weights;
    // The A100's static power has no source: left out and named, not charged as 0 silently.
    EXPECT_EQ(e.static_j, 0);
    EXPECT_NE(std::find(e.unknown.begin(), e.unknown.end(), "static"), e.unknown.end());
  }
}

TEST(Energy, LutTilesPayTheGpuFilesPpaFigureForTheTracesPrecision) {
  // An energy.lut entry for the A100-LUT-4X's own tile at W_INT2 A_INT8 (the tile id written out
  // by hand: lut, M2N64K4, int8 activations, int16 table, int32 accumulator, 2 planes).
  constexpr double kPjPerOp = 0.0425;
  const hw::GpuConfig gpu = hw::parse_gpu_json(R"({"base": "a100-lut4x", "name": "lut4x-ppa",
      "energy": {"lut": [{"tile": "lut-m2n64k4-int8-w2-tint16-int32", "pj_per_op": 0.0425,
                          "source": "test"}]}})",
                                               "lut4x-ppa.json");
  const int64_t m = 128, n = 256, k = 256;
  const traces::Trace w2 = compiled_gemm(gpu, m, n, k, "int2", golden::DType::kInt8);
  const sim::RunStats r = sim::simulate(w2, gpu, {});
  const sim::EnergyCoefficients c = sim::energy_coefficients(gpu, &w2);
  EXPECT_EQ(c.lmma_tile, "lut-m2n64k4-int8-w2-tint16-int32");
  // By hand: 2 M N K ops (M = 128 fills the tile's rows: no padding), each at the entry's pJ,
  // all weight planes included.
  EXPECT_NEAR(sim::run_energy(r, c).lmma_j, 2.0 * m * n * k * kPjPerOp * 1e-12,
              1e-9 * 2.0 * m * n * k * kPjPerOp * 1e-12);
  EXPECT_NE(c.lmma_source.find("energy.lut entry lut-m2n64k4-int8-w2-tint16-int32"),
            std::string::npos)
      << c.lmma_source;

  // W_INT4 has no entry: the stated fallback, the GPU's tensor power per plane op.
  const traces::Trace w4 = compiled_gemm(gpu, m, n, k, "int4", golden::DType::kInt8);
  const sim::EnergyCoefficients f = sim::energy_coefficients(gpu, &w4);
  EXPECT_TRUE(f.lmma_tile.empty());
  EXPECT_NEAR(f.lmma_pj_per_plane_op, 0.347 / (2496e12 / 108) * 1e12, 1e-3 * 0.015);
  EXPECT_NE(f.lmma_source.find("no energy.lut entry for tile lut-m2n64k4-int8-w4-tint16-int32"),
            std::string::npos)
      << f.lmma_source;
  EXPECT_NE(f.lmma_source.find("fallback"), std::string::npos);
}

// The built-in LUT GPUs' energy.lut entries are the PPA flow's NanGate 45 nm records shipped in
// configs/ppa/, scaled to 7 nm at 0.7 V by hand here: dynamic energy per op = (internal +
// switching) power x clock / ops per cycle, x (7 / 45) x (0.7 / 1.1)^2 (docs/energy.md).
TEST(Energy, BuiltinLutGpusCarryTheFlowsRecordsScaledTo7nm) {
  const std::string path = config_dir("ppa") + "/a100-lut4x-nangate45.jsonl";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::set<std::string> recorded;
  for (const std::string name : {"a100-lut4x", "a100-lut8x", "a100-lut4x-drm"}) {
    const hw::GpuConfig gpu = hw::load_gpu(name);
    in.clear();
    in.seekg(0);
    std::string line;
    int records = 0;
    while (std::getline(in, line)) {
      const auto r = nlohmann::json::parse(line);
      ASSERT_NE(r.at("library").get<std::string>().find("1.1 V"), std::string::npos);
      const double pj = (r.at("internal_mw").get<double>() + r.at("switching_mw").get<double>()) *
                        r.at("clock_ns").get<double>() / r.at("ops_per_cycle").get<double>() *
                        (7.0 / 45) * (0.7 / 1.1) * (0.7 / 1.1);
      const std::string tile = r.at("id");
      const hw::LutTileEnergy* e = gpu.energy.lut_entry(tile);
      ASSERT_NE(e, nullptr) << name << " " << tile;
      EXPECT_NEAR(e->pj_per_op, pj, 1e-9 * pj) << name << " " << tile;
      EXPECT_NE(e->source.find("a100-lut4x-nangate45.jsonl"), std::string::npos) << e->source;
      recorded.insert(tile);
      ++records;
    }
    EXPECT_EQ(records, 8);
    EXPECT_EQ(gpu.energy.lut.size(), size_t(records)) << name;  // no entry without its record
  }
  // The traces the report and the agreement bench simulate take their entry, not the fallback.
  for (const char* tile : {"lut-m2n64k4-int8-w2-tint16-int32", "lut-m2n64k4-fp16-w1-fp32"}) {
    EXPECT_EQ(recorded.count(tile), 1u) << tile;
  }
}

TEST(Energy, AnEnergyLutEntryIsRefusedWithoutATileOrTwice) {
  auto bad = [](const std::string& lut) {
    try {
      hw::parse_gpu_json(R"({"base": "a100-lut4x", "name": "x", "energy": {"lut": )" + lut + "}}",
                         "x.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(bad(R"([{"tile": "t", "pj_per_op": 0, "source": "s"}])").find("pj_per_op"),
            std::string::npos);
  EXPECT_NE(bad(R"([{"tile": "t", "pj_per_op": 1}])").find("source"), std::string::npos);
  EXPECT_NE(bad(R"([{"tile": "t", "pj_per_op": 1, "source": "s"},
                    {"tile": "t", "pj_per_op": 2, "source": "s"}])")
                .find("repeats 't'"),
            std::string::npos);
  EXPECT_NE(bad(R"([{"tile": "t", "pj_per_op": 1, "source": "s", "pj": 1}])").find("'pj'"),
            std::string::npos);
}

}  // namespace
}  // namespace ltc
