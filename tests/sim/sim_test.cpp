// The SM model's first principles on hand-written traces: exact cycles of instruction chains as
// model/hw defines them, the scoreboard's register classes, cp.async groups, barriers, shared-
// memory wavefronts, determinism, and bad input.
#include "common/error.h"
#include "model/hw/gpu.h"
#include "sim/dispatch_policy.h"
#include "sim/memory.h"
#include "sim/simulator.h"
#include "sim/stats.h"
#include "sim/units.h"
#include "traces/trace.h"

#include "tests/sim/text_trace.h"
#include "tests/test_seed.h"

#include <gtest/gtest.h>

#include <tlm_utils/simple_initiator_socket.h>

#include <functional>
#include <optional>
#include <random>
#include <string>
#include <utility>

namespace ltc {
namespace {

using test_support::trace_of;

hw::GpuConfig lut_gpu() {
  return hw::load_gpu("a100-lut4x");
}

int64_t cycles_of(const traces::Trace& t, const hw::GpuConfig& gpu) {
  const sim::RunStats r = sim::simulate(t, gpu, {});
  EXPECT_FALSE(r.interrupted);
  return r.kernels.at(0).cycles;
}

// A functional unit by hand: two pipes take two instructions in one cycle and the third waits
// for the first to free; a queue of 64 cycles accepts work until 64 cycles are queued, each
// instruction starting when the one before it ends.
TEST(FunctionalUnit, PipesAndQueueByHand) {
  sim::FunctionalUnit two(2, 0);
  EXPECT_EQ(two.issue(10, 4), 10);
  EXPECT_EQ(two.free_at(), 0);  // the second pipe is free
  EXPECT_EQ(two.issue(10, 6), 10);
  EXPECT_EQ(two.free_at(), 14);
  EXPECT_EQ(two.issue(14, 4), 14);
  EXPECT_EQ(two.free_at(), 16);
  sim::FunctionalUnit lsu(1, sim::kLsuQueueCycles);
  EXPECT_EQ(lsu.issue(0, 100), 0);
  EXPECT_EQ(lsu.free_at(), 36);  // 100 - 64 queued
  EXPECT_EQ(lsu.issue(36, 10), 100);
  EXPECT_EQ(lsu.free_at(), 46);
  lsu.reset();
  EXPECT_EQ(lsu.free_at(), 0);
  EXPECT_EQ(lsu.issue(5, 1), 5);
  EXPECT_EQ(lsu.free_at(), 0);
}

// Each unit's structural stall follows the scoreboard's, in the unit's order, with its name.
TEST(FunctionalUnit, EachUnitHasItsStall) {
  EXPECT_EQ(sim::stall_name(sim::Stall::kValues), "scoreboard_values");
  EXPECT_EQ(sim::stall_name(sim::busy_stall(sim::Unit::kTensor)), "tensor_busy");
  EXPECT_EQ(sim::stall_name(sim::busy_stall(sim::Unit::kAlu)), "alu_busy");
  EXPECT_EQ(sim::stall_name(sim::busy_stall(sim::Unit::kSfu)), "sfu_busy");
  EXPECT_EQ(sim::stall_name(sim::busy_stall(sim::Unit::kLsu)), "lsu_busy");
  EXPECT_EQ(int(sim::busy_stall(sim::Unit::kLsu)), sim::kStallKinds - 1);
  const hw::GpuConfig h200 = hw::load_gpu("h200");
  EXPECT_EQ(sim::unit_kind(sim::Unit::kTensor).copies(h200),
            h200.tensor_cores_per_sm / h200.sub_partitions_per_sm);
  EXPECT_TRUE(sim::unit_kind(sim::Unit::kLsu).per_sm);
}

TEST(LmmaChain, IndependentLmmasIssueAtTheTensorCoresInitiationInterval) {
  const hw::GpuConfig gpu = lut_gpu();
  // m4n256k4 spans 8 tiles: 2 rounds of the tensor core's 4 tiles x 2 planes = 4 cycles.
  const hw::TensorOpTiming t = gpu.lmma_timing({4, 256, 4}, 2);
  ASSERT_EQ(t.issue_cycles, 4);
  for (int n : {1, 2, 7, 32}) {
    const auto tr = trace_of("    loop " + std::to_string(n) +
                             "\n      lmma.m4n256k4.i8.i2.i32.i32 m=0 n=i0*256 k=0\n    endloop\n");
    EXPECT_EQ(cycles_of(tr, gpu), (n - 1) * t.issue_cycles + t.latency_cycles) << n << " lmmas";
  }
}

TEST(LmmaChain, LmmasOnOneAccumulatorWaitForEachOther) {
  const hw::GpuConfig gpu = lut_gpu();
  const hw::TensorOpTiming t = gpu.lmma_timing({2, 64, 4}, 2);
  EXPECT_EQ(t.issue_cycles, 2);
  EXPECT_EQ(t.latency_cycles,
            2 + gpu.lut_tensor->core.pipeline_stages + gpu.sm.lmma_latency_cycles);
  for (int n : {1, 3, 16}) {
    const auto tr = trace_of("    loop " + std::to_string(n) +
                             "\n      lmma.m2n64k4.i8.i2.i32.i32 m=0 n=0 k=i0*4\n    endloop\n");
    EXPECT_EQ(cycles_of(tr, gpu), n * t.latency_cycles) << n << " lmmas";
  }
}

TEST(LmmaChain, WiderWeightsTakeOneBeatPerPlane) {
  const hw::GpuConfig gpu = lut_gpu();
  for (int w : {1, 2, 4, 8}) {
    const hw::TensorOpTiming t = gpu.lmma_timing({2, 256, 4}, w);
    EXPECT_EQ(t.issue_cycles, w);
    const auto tr = trace_of("    loop 10\n      lmma.m2n256k4.i8.i" + std::to_string(w) +
                             ".i32.i32 m=0 n=i0*256 k=0\n    endloop\n");
    EXPECT_EQ(cycles_of(tr, gpu), 9 * t.issue_cycles + t.latency_cycles) << "W" << w;
  }
}

TEST(LmmaChain, TwoTensorCoresPerSubPartitionHalveTheInterval) {
  hw::GpuConfig gpu = lut_gpu();
  gpu.tensor_cores_per_sm = 8;
  gpu.finalize();
  const hw::TensorOpTiming t = gpu.lmma_timing({4, 256, 4}, 2);
  // 16 independent lmmas alternate between the two cores: 8 per core.
  const auto tr = trace_of(
      "    loop 16\n      lmma.m4n256k4.i8.i2.i32.i32 m=0 n=i0*256 k=0\n"
      "    endloop\n");
  EXPECT_EQ(cycles_of(tr, gpu), 7 * t.issue_cycles + 1 + t.latency_cycles);
}

// More pipes per unit than the simulator models: refused, naming the unit and the fields.
TEST(LmmaChain, MoreTensorCoresPerSubPartitionThanModelledAreRefused) {
  hw::GpuConfig gpu = lut_gpu();
  gpu.tensor_cores_per_sm = 4 * (sim::kMaxUnitCopies + 1);
  gpu.finalize();
  const auto tr = trace_of("    lmma.m4n256k4.i8.i2.i32.i32 m=0 n=0 k=0\n");
  try {
    sim::simulate(tr, gpu, {});
    ADD_FAILURE() << "simulated";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the tensor unit would have 9 (field "
                                         "'tensor_cores_per_sm' over 'sub_partitions_per_sm')"),
              std::string::npos)
        << e.what();
  }
}

TEST(MmaChain, DependentMmasTakeTheMeasuredLatencyEach) {
  const hw::GpuConfig gpu = hw::load_gpu("h200");
  const hw::TensorOpTiming t = gpu.mma_timing({16, 8, 16}, "fp16", "fp16");
  // 989 TFLOP/s over 528 tensor cores at the datasheet's rate clock (sm.tensor_rate_clock_ghz
  // 1.829 GHz): 1024 FLOP per cycle, the 2048 MACs per SM cycle wgmma reaches
  // (configs/calibration/h200-microbench.json); 4096 FLOP -> 4 cycles.
  EXPECT_EQ(t.issue_cycles, 4);
  EXPECT_EQ(t.latency_cycles, gpu.sm.mma_latency_cycles);
  std::string text =
      "ltc-trace 2\ngpu h200\nkernel k\n  grid 1 1\n  block 1 1\n  resources smem=0 regs=32\n"
      "  tiles core=-1 block=16,8,16 warp=16,8,16 instr=16,8,16\n  program\n"
      "    loop 12\n      mma.m16n8k16.f16.f16.f32.f32 m=0 n=0 k=i0*16\n    endloop\n"
      "    loop 12\n      mma.m16n8k16.f16.f16.f32.f32 m=16 n=i0*8 k=0\n    endloop\n"
      "  end\nend\n";
  const auto tr = traces::read_text(text, "mma.lmt");
  // 12 dependent (latency each; the 12th issues at 11 latencies), then 12 independent ones, each
  // an issue interval after the previous: the last ends 12 intervals + 1 latency after that.
  EXPECT_EQ(cycles_of(tr, gpu), 12 * t.latency_cycles + 12 * t.issue_cycles);
}

TEST(Scoreboard, ComputeWaitsForTheLoadedFragmentsAndStoresForTheValues) {
  const hw::GpuConfig gpu = lut_gpu();
  // lds (1 wavefront) -> alu: the alu issues when the data is back; stg waits for the alu.
  const auto tr = trace_of("    lds bytes=128 addr=0\n    alu count=32\n");
  const int lanes = gpu.fp32_lanes_per_sm() / gpu.sub_partitions_per_sm;
  const int64_t alu = (32 + lanes - 1) / lanes;
  EXPECT_EQ(cycles_of(tr, gpu), gpu.sm.smem_latency_cycles + alu + gpu.sm.alu_latency_cycles);
  // Loads back to back do not wait for each other.
  const auto two = trace_of("    lds bytes=128 addr=0\n    lds bytes=128 addr=128\n");
  EXPECT_EQ(cycles_of(two, gpu), 1 + gpu.sm.smem_latency_cycles);
}

TEST(SharedMemory, ContiguousAccessesTakeOneWavefrontPer128Bytes) {
  const hw::GpuConfig gpu = lut_gpu();
  for (int bytes : {4, 128, 256, 512, 1000}) {
    const auto tr = trace_of("    lds bytes=" + std::to_string(bytes) + " addr=0\n");
    const sim::RunStats r = sim::simulate(tr, gpu, {});
    const int64_t w = (bytes + 127) / 128;
    EXPECT_EQ(int64_t(r.kernels[0].mem.smem_wavefronts), w) << bytes;
    EXPECT_EQ(r.kernels[0].mem.bank_conflict_cycles, 0u);
    EXPECT_EQ(r.kernels[0].cycles, gpu.sm.smem_latency_cycles + w - 1) << bytes;
  }
}

// A dispatch policy (sim/dispatch_policy.h) that admits every block and reports block `id`'s
// residency as the kernel's timed blocks.
class OneBlockTimed final : public sim::DispatchPolicy {
 public:
  explicit OneBlockTimed(int64_t id) : id_(id) {}
  void begin_kernel(const traces::Kernel&, int64_t) override {}
  bool admit(int64_t) override { return true; }
  void retired(int64_t id, int64_t start, int64_t end) override {
    if (id == id_) cycles_ = uint64_t(end - start);
  }
  std::optional<std::pair<uint64_t, uint64_t>> timed_blocks() const override {
    return std::pair<uint64_t, uint64_t>{1, cycles_};
  }

 private:
  int64_t id_;
  uint64_t cycles_ = 0;
};

// Eight one-warp blocks on one SM, two per sub-partition, each a loop of 512-byte shared loads:
// the LSU is the limit. On the H200 every warp gets an equal share (tools/microbench/
// smsp_arbitration.cu: with 8 warps the last ends 1.00005x after the first). In the model the
// warps refused an LSU slot wait first come, first served: every block ends within 1% of the
// others (when the sub-partitions tried in a fixed order and each kept its oldest warp on the
// LSU, they ended one after the other, at 2,074 .. 16,022 cycles).
TEST(SharedMemory, EveryWarpGetsAnEqualShareOfTheLsu) {
  hw::GpuConfig gpu = lut_gpu();
  gpu.sms = 1;
  const auto tr = trace_of("    loop 500\n      lds bytes=512 addr=0\n    endloop\n", 8);
  std::vector<double> residency;
  for (int64_t b = 0; b < 8; ++b) {
    OneBlockTimed timed(b);
    sim::SimOptions o;
    o.dispatch = &timed;
    const sim::RunStats r = sim::simulate(tr, gpu, o);
    ASSERT_EQ(r.kernels[0].timed_blocks, 1u);
    residency.push_back(double(r.kernels[0].timed_block_cycles));
  }
  const auto [lo, hi] = std::minmax_element(residency.begin(), residency.end());
  EXPECT_LT(*hi / *lo, 1.01) << "first block done at " << *lo << " cycles, last at " << *hi;
  // LSU-bound: 8 warps x 500 x 4 wavefronts at one per cycle.
  EXPECT_GT(*lo, 0.98 * 8 * 500 * 4);
}

TEST(SharedMemory, StridedAccessesCostWhatTheBankModelSays) {
  const hw::GpuConfig gpu = lut_gpu();
  struct Case {
    int bytes, stride, wavefronts;
  };
  // 32 banks x 4 bytes: threads 4 B apart hit 32 banks (1); 8 B apart two threads share a bank
  // on different words (2); 128 B apart all 32 threads land in bank 0 (32). 16-byte accesses go
  // in 4 phases of 8 threads: contiguous (stride 16) costs 4, stride 32 costs 8.
  for (const Case& c : {Case{128, 4, 1}, Case{128, 8, 2}, Case{128, 128, 32}, Case{256, 8, 2},
                        Case{512, 16, 4}, Case{512, 32, 8}, Case{128, 0, 1}}) {
    const auto tr = trace_of("    lds bytes=" + std::to_string(c.bytes) +
                             " addr=0 stride=" + std::to_string(c.stride) + "\n");
    const sim::RunStats r = sim::simulate(tr, gpu, {});
    EXPECT_EQ(int64_t(r.kernels[0].mem.smem_wavefronts), c.wavefronts)
        << c.bytes << "/" << c.stride;
    EXPECT_EQ(int64_t(r.kernels[0].mem.bank_conflict_cycles), c.wavefronts - (c.bytes + 127) / 128);
    EXPECT_EQ(r.kernels[0].cycles, gpu.sm.smem_latency_cycles + c.wavefronts - 1);
  }
}

TEST(Scoreboard, ATensorOpWaitsOnlyForItsFragmentBuffer) {
  const hw::GpuConfig gpu = lut_gpu();
  const hw::TensorOpTiming t = gpu.lmma_timing({2, 256, 4}, 2);
  // Buffer 2's lds is in flight while the lmma on buffer 1 (already loaded) issues.
  const auto other = trace_of(
      "    lds bytes=128 addr=0 frag=2\n"
      "    lmma.m2n256k4.i8.i2.i32.i32 m=0 n=0 k=0 frag=1\n");
  EXPECT_EQ(cycles_of(other, gpu),
            std::max<int64_t>(1 + t.latency_cycles, gpu.sm.smem_latency_cycles));
  const auto same = trace_of(
      "    lds bytes=128 addr=0 frag=2\n"
      "    lmma.m2n256k4.i8.i2.i32.i32 m=0 n=0 k=0 frag=2\n");
  EXPECT_EQ(cycles_of(same, gpu), gpu.sm.smem_latency_cycles + t.latency_cycles);
  const auto unnamed = trace_of(
      "    lds bytes=128 addr=0 frag=2\n"
      "    lmma.m2n256k4.i8.i2.i32.i32 m=0 n=0 k=0\n");
  EXPECT_EQ(cycles_of(unnamed, gpu), gpu.sm.smem_latency_cycles + t.latency_cycles);
}

TEST(AsyncCopy, WaitBlocksUntilTheOlderGroupsLand) {
  const hw::GpuConfig gpu = lut_gpu();
  // Without a wait the alu does not depend on the copy; with wait n=0 it follows it.
  const auto free_run = trace_of("    ldgsts t=0 bytes=512 addr=0\n    commit\n    alu count=32\n");
  const auto waited =
      trace_of("    ldgsts t=0 bytes=512 addr=0\n    commit\n    wait n=0\n    alu count=32\n");
  const auto kept = trace_of(
      "    ldgsts t=0 bytes=512 addr=0\n    commit\n    ldgsts t=0 bytes=512 addr=4096\n"
      "    commit\n    wait n=2\n    alu count=32\n");
  const int64_t dram = int64_t(gpu.dram.latency_ns * gpu.clock_ghz);
  const int64_t c_free = cycles_of(free_run, gpu), c_wait = cycles_of(waited, gpu);
  EXPECT_GE(c_wait, dram);  // a cold miss: DRAM latency before the alu may start
  EXPECT_GT(c_wait, c_free);
  // Both runs end when the copy lands; the alu's own time adds only after a wait.
  EXPECT_LT(c_free, c_wait);
  // n=2 keeps both groups in flight: the second copy only queues behind the first on the SM's
  // port into L2 (512 bytes at noc_bytes_per_cycle).
  EXPECT_LE(cycles_of(kept, gpu), c_free + 512 / gpu.sm.noc_bytes_per_cycle + 2);
}

TEST(AsyncCopy, ATensorMemoryAcceleratorCopiesWithoutTheLoadStorePath) {
  hw::GpuConfig gpu = lut_gpu();
  // 32 KB of ldgsts (256 lines) then independent shared loads: with cp.async every line takes
  // an LSU cycle, so the lds queue behind them; a TMA moves the tile by itself.
  const auto tr = trace_of(
      "    ldgsts t=0 bytes=32768 addr=0\n    commit\n    loop 8\n      lds bytes=128 addr=0\n"
      "    endloop\n",
      1, 1, "    tensor 0 a bytes=1048576\n", 32768);
  const sim::RunStats cp_async = sim::simulate(tr, gpu, {});
  EXPECT_GT(cp_async.kernels[0].stall_cycles[size_t(sim::busy_stall(sim::Unit::kLsu))], 100u);
  gpu.sm.tma = true;
  const sim::RunStats tma = sim::simulate(tr, gpu, {});
  EXPECT_EQ(tma.kernels[0].stall_cycles[size_t(sim::busy_stall(sim::Unit::kLsu))], 0u);
  EXPECT_EQ(tma.kernels[0].mem.l2_read_bytes, cp_async.kernels[0].mem.l2_read_bytes);
}

TEST(Clock, AKernelRunsAtTheClockItsTensorUtilizationLeaves) {
  hw::GpuConfig gpu = lut_gpu();
  gpu.clock_ghz = 2.0;
  gpu.sm.tensor_load_clock_ghz = 1.5;
  EXPECT_DOUBLE_EQ(gpu.loaded_clock_ghz(0.0), 2.0);
  EXPECT_DOUBLE_EQ(gpu.loaded_clock_ghz(1.0), 1.5);
  EXPECT_DOUBLE_EQ(gpu.loaded_clock_ghz(0.5), 1.75);
  // A chain of independent LMMAs keeps its tensor core busy: the kernel's clock and time
  // follow from its measured utilization, and the run's time is the kernels' plus the gaps'.
  const auto one =
      trace_of("    loop 64\n      lmma.m4n256k4.i8.i2.i32.i32 m=0 n=i0*256 k=0\n    endloop\n");
  const sim::RunStats r = sim::simulate(one, gpu, {});
  const sim::KernelStats& k = r.kernels[0];
  EXPECT_DOUBLE_EQ(k.clock_ghz, gpu.loaded_clock_ghz(k.tensor_utilization()));
  EXPECT_LT(k.clock_ghz, 2.0);
  EXPECT_DOUBLE_EQ(k.time_ms(), double(k.cycles) / (k.clock_ghz * 1e6));
  EXPECT_DOUBLE_EQ(r.time_ms(), k.time_ms() + double(r.cycles - k.cycles) / (2.0 * 1e6));
}

TEST(FastMod, EqualsTheRemainderOfTheFoldedValue) {
  const uint64_t rng_seed = ltc::test_support::test_seed(7);
  SCOPED_TRACE(ltc::test_support::seed_note(rng_seed));
  std::mt19937_64 rng(rng_seed);
  for (uint32_t d : {1u, 2u, 3u, 7u, 96u, 267u, 1000003u, 4294967295u}) {
    const sim::FastMod mod(d);
    for (int i = 0; i < 20000; ++i) {
      const uint64_t x = i < 100 ? uint64_t(i) : rng();
      ASSERT_EQ(mod(x), uint32_t(x ^ (x >> 32)) % d) << x << " mod " << d;
    }
  }
}

// An alu whose ops are half integer (a dequantize pass) on the A100: 16 FP32 and 16 INT32 lanes
// per sub-partition, one warp instruction a cycle, so 8192 ops occupy the lanes 256 cycles
// instead of 512 on the FP32 lanes alone (GpuConfig::cuda_core_cycles; docs/published-figures.md).
// Twelve dependent ones: 12 x 256 cycles sooner. On the H200 (32 FP32, 16 INT32 lanes) 256
// cycles either way: its INT32 lanes take 4096 in 256 cycles, as its FP32 lanes take 8192.
TEST(CudaCores, IntegerOpsRunOnTheirOwnLanesBesideFp32) {
  const std::string fp_only = "    loop 12\n      alu count=8192\n    endloop\n";
  const std::string mixed = "    loop 12\n      alu count=8192 int=4096\n    endloop\n";
  const std::string tensors = "    tensor 0 a bytes=1048576\n";
  for (const char* name : {"a100-lut4x", "h200"}) {
    hw::GpuConfig gpu = hw::load_gpu(name);
    const int64_t fp = cycles_of(trace_of(fp_only, 1, 1, tensors, 0, 4), gpu);
    const int64_t mix = cycles_of(trace_of(mixed, 1, 1, tensors, 0, 4), gpu);
    EXPECT_EQ(fp - mix, std::string(name) == "h200" ? 0 : 12 * (512 - 256)) << name;
    // Without INT32 lanes apart the integer ops take the FP32 lanes: as the FP-only trace.
    gpu.cuda_int32_tops = 0;
    EXPECT_EQ(cycles_of(trace_of(mixed, 1, 1, tensors, 0, 4), gpu), fp) << name;
  }
}

TEST(Barrier, EveryWarpOfTheBlockLeavesWhenTheLastArrives) {
  const hw::GpuConfig gpu = lut_gpu();
  // Warp 0 (wx = 0) computes 64 ALU ops per lane more than the others before the barrier; after
  // it, each warp runs one short alu. The block ends one short alu after the slow warp's result.
  const auto tr = trace_of("    alu count=32\n    bar\n    alu count=32\n", 1, 4);
  const auto slow =
      trace_of("    loop 8\n      alu count=2048\n    endloop\n    bar\n    alu count=32\n", 1, 4);
  EXPECT_GT(cycles_of(slow, gpu), cycles_of(tr, gpu));
  const sim::RunStats r = sim::simulate(slow, gpu, {});
  EXPECT_EQ(r.kernels[0].issued[size_t(traces::Opcode::kBarrier)], 4u);
  EXPECT_GT(r.kernels[0].stall_cycles[size_t(sim::Stall::kValues)], 0u);
}

// Blocks after the first wave go to the slots that free first, those freed in one quantum SM by
// SM (sim/README.md, "Block dispatch"). Two identical blocks of ALU work per H200 SM (by shared
// memory) share its sub-partitions: the first of each SM retires one ALU instruction (32 cycles)
// before the second, so a tail of 79 blocks takes the first slot of SMs 0..78, one each, and the
// kernel ends a lone block's residency after the wave (a lone block has the SM's lanes to
// itself: 0.56 of a wave). The H200 spreads such a tail about as a random choice of free slots
// (its dispatch comes about 0.22 us after a slot frees, when both are free), and about 12 of its
// SMs take two (tools/microbench/block_placement.cu): it ends a whole residency later.
TEST(Dispatch, ATailTakesTheSlotsThatFreeFirstSmBySm) {
  const hw::GpuConfig gpu = hw::load_gpu("h200");
  ASSERT_EQ(gpu.sms, 132);
  const std::string spin = "    loop 200\n      alu count=1024\n    endloop\n";
  const int smem = 112 * 1024;  // two blocks per SM
  const int64_t wave = cycles_of(trace_of(spin, 264, 4, "", smem), gpu);
  const int64_t tail = cycles_of(trace_of(spin, 264 + 79, 4, "", smem), gpu);
  const int64_t alone = cycles_of(trace_of(spin, 79, 4, "", 2 * smem), gpu);  // one per SM
  EXPECT_LT(alone, wave);
  // The first slot frees 32 cycles before the wave ends; its block starts at its dispatch
  // boundary, 32 cycles at most later, whatever the quantum.
  EXPECT_NEAR(double(tail), double(wave + alone), 64);
}

TEST(Determinism, TheSameTraceGivesTheSameStatisticsTwice) {
  const hw::GpuConfig gpu = lut_gpu();
  const auto tr = trace_of(
      "    loop 20\n      ldgsts t=0 bytes=512 addr=bx*10240+i0*512\n      commit\n"
      "      wait n=1\n      lds bytes=256 addr=0\n      lmma.m4n256k4.i8.i2.i32.i32 m=bx*4 n=0 "
      "k=i0*4\n    endloop\n    stg t=0 bytes=256 addr=bx*256\n",
      100, 4, "    tensor 0 a bytes=1048576\n", 8192);
  const sim::RunStats a = sim::simulate(tr, gpu, {}), b = sim::simulate(tr, gpu, {});
  EXPECT_EQ(a.cycles, b.cycles);
  EXPECT_EQ(a.kernels[0].stall_cycles, b.kernels[0].stall_cycles);
  EXPECT_EQ(a.kernels[0].mem.dram_read_bytes, b.kernels[0].mem.dram_read_bytes);
  EXPECT_EQ(a.kernels[0].issued, b.kernels[0].issued);
}

TEST(BadInput, LmmaOnAGpuWithoutLutCoresNamesKernelAndInstruction) {
  const auto tr = trace_of("    lmma.m2n64k4.i8.i2.i32.i32 m=0 n=0 k=0\n");
  try {
    sim::simulate(tr, hw::load_gpu("a100"), {});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("kernel k"), std::string::npos) << m;
    EXPECT_NE(m.find("instruction 0"), std::string::npos) << m;
    EXPECT_NE(m.find("no"), std::string::npos) << m;
  }
}

TEST(BadInput, UnknownKernelAndOversizedBlockAreRefused) {
  const hw::GpuConfig gpu = lut_gpu();
  sim::SimOptions o;
  o.kernel = "nope";
  EXPECT_THROW(sim::simulate(trace_of("    bar\n"), gpu, o), InputError);
  EXPECT_THROW(
      sim::simulate(trace_of("    bar\n", 1, 1, "    tensor 0 a bytes=64\n", 400000), gpu, {}),
      InputError);
  o = {};
  o.tc = "verilog";
  EXPECT_THROW(sim::simulate(trace_of("    bar\n"), gpu, o), InputError);
}

// Thread-block clusters with TMA multicast (sim/cluster.h): each block loads the tile of A that
// every block shares (16 KB) and its own tile of B (16 KB). Without clusters every block reads
// both from L2; in clusters of 2 one read of A serves both blocks of a cluster, so A's L2 read
// bytes halve; a GPU without clusters (sm.cluster_size 1) runs the same trace as before.
traces::Trace cluster_trace(int blocks, int cluster, int64_t b_stride = 16384) {
  std::string text = std::string("ltc-trace ") + (cluster > 1 ? "3" : "2") +
                     "\ngpu h200\nkernel k\n  grid " + std::to_string(blocks) +
                     " 1\n  block 1 1\n  resources smem=0 regs=32\n";
  if (cluster > 1) text += "  cluster " + std::to_string(cluster) + "\n";
  text +=
      "  tiles core=-1 block=16,8,16 warp=16,8,16 instr=16,8,16\n"
      "  tensor 0 a bytes=16384\n  tensor 1 b bytes=65536\n  program\n"
      "    ldgsts t=0 bytes=16384 addr=0\n    ldgsts t=1 bytes=16384 addr=bx*" +
      std::to_string(b_stride) + "\n    commit\n    wait n=0\n  end\nend\n";
  return traces::read_text(text, "cluster.lmt");
}

TEST(Cluster, MulticastReadsTheSharedTileFromL2OncePerCluster) {
  const hw::GpuConfig gpu = hw::load_gpu("h200");
  ASSERT_EQ(gpu.sm.cluster_size, 2);
  const uint64_t tile = 16384;
  const sim::RunStats alone = sim::simulate(cluster_trace(4, 1), gpu, {});
  EXPECT_EQ(alone.kernels[0].mem.l2_read_bytes, 4 * tile + 4 * tile);
  EXPECT_EQ(alone.kernels[0].mem.multicast_bytes, 0u);
  // 2 clusters of 2: A read twice instead of 4 times, delivered twice by multicast.
  const sim::RunStats paired = sim::simulate(cluster_trace(4, 2), gpu, {});
  EXPECT_EQ(paired.kernels[0].mem.l2_read_bytes, 2 * tile + 4 * tile);
  EXPECT_EQ(paired.kernels[0].mem.multicast_bytes, 2 * tile);
  EXPECT_EQ(paired.kernels[0].mem.smem_bytes, alone.kernels[0].mem.smem_bytes);
  // 3 blocks: a cluster of 2 and one of 1 (the grid's last column).
  const sim::RunStats odd = sim::simulate(cluster_trace(3, 2), gpu, {});
  EXPECT_EQ(odd.kernels[0].mem.l2_read_bytes, 2 * tile + 3 * tile);
  EXPECT_EQ(odd.kernels[0].mem.multicast_bytes, tile);
  // A GPU without clusters runs the cluster trace as independent blocks: the same as without.
  hw::GpuConfig flat = gpu;
  flat.sm.cluster_size = 1;
  const sim::RunStats ignored = sim::simulate(cluster_trace(4, 2), flat, {});
  EXPECT_EQ(ignored.kernels[0].mem.l2_read_bytes, alone.kernels[0].mem.l2_read_bytes);
  EXPECT_EQ(ignored.kernels[0].mem.multicast_bytes, 0u);
  EXPECT_EQ(ignored.kernels[0].cycles, alone.kernels[0].cycles);
  // Only the shared tile (an address without a bx term) is multicast: B tiles 128 bytes apart
  // overlap in all but one line, yet each block reads its own from L2.
  const sim::RunStats overlap = sim::simulate(cluster_trace(4, 2, 128), gpu, {});
  EXPECT_EQ(overlap.kernels[0].mem.multicast_bytes, 2 * tile);
  EXPECT_EQ(overlap.kernels[0].mem.l2_read_bytes, 2 * tile + 4 * tile);
}

// The memory system serves one warp instruction's lines as one burst (sim/memory.h). Two equal
// L2 + DRAM systems, one given each line as its own plain transaction and the other the same
// lines as bursts, must agree on every line's ready time and every counter: the slices,
// channels and tags see the same requests in the same order. A 256 KB L2 makes the random lines
// hit, miss and evict dirty lines (write-backs beside the fills).
struct Requester : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Requester> out;
  std::function<void(Requester&)> body;
  SC_HAS_PROCESS(Requester);
  explicit Requester(sc_core::sc_module_name n) : sc_core::sc_module(n), out("out") {
    SC_THREAD(run);
  }
  void run() { body(*this); }
};

// An L2 with its DRAM and one requester (after sim::fresh_systemc_context()).
struct L2WithDram {
  sim::MemoryStats stats;
  sim::Dram dram;
  sim::L2 l2;
  Requester req;
  explicit L2WithDram(const hw::GpuConfig& gpu)
      : dram("dram", gpu, stats), l2("l2", gpu, stats), req("req") {
    l2.dram.bind(dram.target);
    req.out.bind(l2.target);
  }
};

TEST(MemoryBurst, ABurstServesEachLineAsItsOwnTransactionWould) {
  const uint32_t seed = ltc::test_support::test_seed(77);
  SCOPED_TRACE(ltc::test_support::seed_note(seed));
  hw::GpuConfig gpu = lut_gpu();
  gpu.l2.capacity_mb = 0.25;
  sim::fresh_systemc_context();
  sim::MemoryStats s_plain, s_burst;
  sim::Dram d_plain("d_plain", gpu, s_plain), d_burst("d_burst", gpu, s_burst);
  sim::L2 l2_plain("l2_plain", gpu, s_plain), l2_burst("l2_burst", gpu, s_burst);
  l2_plain.dram.bind(d_plain.target);
  l2_burst.dram.bind(d_burst.target);
  Requester plain("plain"), burst("burst");
  plain.out.bind(l2_plain.target);
  burst.out.bind(l2_burst.target);

  // 200 instructions of 1..16 lines each (reads, or writes), lines drawn from 4096 (512 KB),
  // contiguous sectors, arrivals a few cycles apart (fractional: the port's times are).
  struct Access {
    bool write;
    std::vector<sim::LineBurst::Line> lines;
  };
  std::mt19937 rng(seed);
  std::vector<Access> accesses(200);
  for (Access& a : accesses) {
    a.write = rng() % 3 == 0;
    const int n = 1 + int(rng() % 16);
    uint64_t enter = rng() % 4000;
    for (int i = 0; i < n; ++i) {
      const uint32_t lo = rng() % 4, hi = lo + rng() % (4 - lo);
      sim::LineBurst::Line l;
      l.addr = uint64_t(rng() % 4096) * 128;
      l.sectors = ((2u << hi) - 1) & ~((1u << lo) - 1);
      l.enter = enter;
      enter += 1000 + rng() % 2500;
      a.lines.push_back(l);
    }
  }
  std::vector<uint64_t> ready_plain, ready_burst;
  plain.body = [&](Requester& r) {
    for (const Access& a : accesses) {
      for (const sim::LineBurst::Line& l : a.lines) {
        tlm::tlm_generic_payload p;
        const uint32_t lo = uint32_t(__builtin_ctz(l.sectors)),
                       n = uint32_t(sim::popcount4(l.sectors));
        p.set_command(a.write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
        p.set_address(l.addr + 32 * lo);
        p.set_data_length(32 * n);
        sc_core::sc_time d = sc_core::sc_time::from_value(l.enter);
        r.out->b_transport(p, d);
        ready_plain.push_back(d.value());
      }
    }
  };
  burst.body = [&](Requester& r) {
    sim::LineBurst ext;
    tlm::tlm_generic_payload p;
    p.set_extension(&ext);
    for (const Access& a : accesses) {
      ext.lines = a.lines;
      p.set_command(a.write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
      p.set_address(a.lines[0].addr);
      sc_core::sc_time d = sc_core::sc_time::from_value(a.lines[0].enter);
      r.out->b_transport(p, d);
      for (const sim::LineBurst::Line& l : ext.lines) ready_burst.push_back(l.ready);
    }
    p.clear_extension(&ext);
  };
  sc_core::sc_start();
  ASSERT_EQ(ready_plain.size(), ready_burst.size());
  EXPECT_EQ(ready_plain, ready_burst);
  EXPECT_GT(s_plain.dram_write_bytes, 0u);  // dirty evictions happened
  EXPECT_GT(s_plain.l2_hit_sectors, 0u);
  EXPECT_LT(s_plain.l2_hit_sectors, s_plain.l2_sectors);
  EXPECT_EQ(s_plain.l2_sectors, s_burst.l2_sectors);
  EXPECT_EQ(s_plain.l2_hit_sectors, s_burst.l2_hit_sectors);
  EXPECT_EQ(s_plain.l2_read_bytes, s_burst.l2_read_bytes);
  EXPECT_EQ(s_plain.dram_read_bytes, s_burst.dram_read_bytes);
  EXPECT_EQ(s_plain.dram_write_bytes, s_burst.dram_write_bytes);
}

// A read that finds sectors an earlier miss installed, before that miss's data is back, waits
// for it (the L2's fill times, sim/memory.h): reading the line again 10 ticks after the miss
// returns with the miss, not at the hit latency; long after, at the hit latency; another sector
// of the line in the meantime misses on its own.
TEST(L2, AReadOfALineStillBeingFilledWaitsForTheFill) {
  const hw::GpuConfig gpu = lut_gpu();
  sim::fresh_systemc_context();
  L2WithDram m(gpu);
  auto read = [](Requester& r, uint64_t addr, uint64_t enter) {
    tlm::tlm_generic_payload p;
    p.set_command(tlm::TLM_READ_COMMAND);
    p.set_address(addr);
    p.set_data_length(32);
    sc_core::sc_time d = sc_core::sc_time::from_value(enter);
    r.out->b_transport(p, d);
    return d.value();
  };
  uint64_t miss = 0, again = 0, later = 0, later_at = 0, other = 0;
  m.req.body = [&](Requester& r) {
    miss = read(r, 0, 0);
    again = read(r, 0, 10);
    other = read(r, 32, 20);  // sector 1 of the same line: not in flight, a miss of its own
    later_at = miss + 100000;
    later = read(r, 0, later_at);
  };
  sc_core::sc_start();
  const uint64_t hit = later - later_at;
  EXPECT_GT(miss, 2 * hit);  // DRAM behind the L2
  // With the fill (whose arrival the L2 keeps to the cycle: up to one cycle later).
  EXPECT_GE(again, miss);
  EXPECT_LE(again, miss + sc_core::sc_time(1, sc_core::SC_NS).value());
  EXPECT_GT(other, 2 * hit);
  EXPECT_EQ(m.stats.dram_read_bytes, 64u);  // sectors 0 and 1, once each
}

// The same in an SM's L1: a warp's ldg that hits a line another warp's ldg missed a cycle
// before waits for that line to come back from the L2 (here from DRAM), as long as a warp whose
// line is its own.
TEST(L1, ALoadHittingALineStillBeingFilledWaitsForTheFill) {
  const hw::GpuConfig gpu = lut_gpu();
  auto fragment_stalls = [&](const std::string& addr) {
    const auto tr = trace_of("    ldg t=0 bytes=128 addr=" + addr + "\n    alu count=32\n", 1, 2);
    const sim::RunStats r = sim::simulate(tr, gpu, {});
    return int64_t(r.kernels.at(0).stall_cycles[size_t(sim::Stall::kFragments)]);
  };
  const int64_t shared = fragment_stalls("0"), own = fragment_stalls("wx*4096");
  const int64_t dram = int64_t(gpu.dram.latency_ns * gpu.clock_ghz);
  EXPECT_GT(own, 2 * dram);  // each warp waits for DRAM
  EXPECT_NEAR(double(shared), double(own), 0.02 * double(own));
}

// A GEMM's K loop reads one 64-byte piece of every row at a time; with rows a power of two apart
// those lines share their low bits. The L2 hashes them over its slices and, within a slice, over
// its sets: a working set of half the L2 read twice hits the second time whatever the stride
// (99.1% of the sectors; with the line number's low bits as the set index, none from a stride of
// 1 KB on: a slice's lines fell in 8 or fewer of its 64 sets).
TEST(L2, HoldsAStridedWorkingSetOfHalfItsCapacity) {
  hw::GpuConfig gpu = lut_gpu();
  gpu.l2.capacity_mb = 10;  // 80 slices of 64 sets of 16 ways, as a power of two as the A100's
  ASSERT_EQ(gpu.sm.l2_slices, 80);
  for (const uint64_t stride : {128u, 1024u, 8192u, 65536u}) {
    SCOPED_TRACE("row stride " + std::to_string(stride) + " B");
    sim::fresh_systemc_context();
    L2WithDram m(gpu);
    const uint64_t lines = uint64_t(gpu.l2_bytes()) / 2 / 128;
    uint64_t second_pass_hits = 0;
    m.req.body = [&](Requester& r) {
      for (int pass = 0; pass < 2; ++pass) {
        const uint64_t hits_before = m.stats.l2_hit_sectors;
        for (uint64_t i = 0; i < lines; ++i) {
          tlm::tlm_generic_payload p;
          p.set_command(tlm::TLM_READ_COMMAND);
          p.set_address(i * stride);  // 64 bytes, two sectors, of each row
          p.set_data_length(64);
          sc_core::sc_time d = sc_core::SC_ZERO_TIME;
          r.out->b_transport(p, d);
        }
        if (pass == 1) second_pass_hits = m.stats.l2_hit_sectors - hits_before;
      }
    };
    sc_core::sc_start();
    EXPECT_GE(double(second_pass_hits), 0.97 * double(2 * lines));
  }
}

// The ways that hold no line (sampled simulation's loop trips, sim/sampler/README.md): all of a
// fresh cache's; one fewer per line installed until a set's ways are full, then none.
TEST(L2, EmptySlotsAreTheWaysHoldingNoLine) {
  const uint64_t sets = 4, ways = 2;
  sim::SectorCache c(sets * ways * 128, int(ways), 128);  // line l in set l % 4
  EXPECT_EQ(c.empty_slots(), sets * ways);
  c.access(0 * 128, 0x1, false);
  c.access(1 * 128, 0xf, true);
  c.access(0 * 128, 0x2, false);  // a hit installs nothing
  EXPECT_EQ(c.empty_slots(), sets * ways - 2);
  for (uint64_t l = 4; l < 16; l += 4) c.access(l * 128, 0xf, false);  // set 0: evicts from 3 on
  EXPECT_EQ(c.empty_slots(), sets * ways - 3);
  for (uint64_t l = 0; l < 64; ++l) c.access(l * 128, 0xf, false);
  EXPECT_EQ(c.empty_slots(), 0u);
}

// Sampled simulation does not simulate a repeated kernel, but passes its lines through the L2
// (SectorCache::stream): per set a Poisson count of new lines pushes out the oldest, below the
// dirty lines of a range kept.
TEST(L2, AStreamOfNewLinesPushesOutTheOldestOfEachSet) {
  const uint64_t sets = 256, ways = 16;
  const auto filled = [&] {
    sim::SectorCache c(sets * ways * 128, int(ways), 128, true);
    for (uint64_t l = 0; l < sets * ways * 8; ++l) c.access(l * 128, 0xf, false);  // full
    return c;
  };
  const auto found = [&](sim::SectorCache c, uint64_t lo, uint64_t hi) {
    uint64_t n = 0;
    for (uint64_t l = lo; l < hi; ++l) {
      sim::SectorCache probe = c;  // a probe that misses installs
      n += probe.access(l * 128, 0xf, false).missed == 0;
    }
    return n;
  };
  const uint64_t last = sets * ways * 8;
  sim::SectorCache c = filled();
  // The last capacity's lines, less those of sets that took more than their ways of them.
  const uint64_t before = found(c, last - sets * ways, last);
  EXPECT_GT(before, sets * ways * 85 / 100);
  const uint64_t recent_before = found(c, last - sets * ways / 8, last);
  uint32_t filler = ~uint32_t(0);
  c.stream({{4, 0.5}}, filler, 7);  // 4 new lines per set on average
  const uint64_t pushed_in = ~uint32_t(0) - filler;
  EXPECT_NEAR(double(pushed_in), 4.0 * sets, 0.05 * 4 * sets);
  const double kept = double(found(c, last - sets * ways, last)) / double(before);
  // The lines pushed out are the oldest: some of them older than the last capacity's lines.
  const double share_in = double(pushed_in) / double(sets * ways);
  EXPECT_GE(kept, 1 - share_in);
  EXPECT_LT(kept, 1 - share_in / 2);
  // The most recent lines (2 per set on average) stay unless their set took 14 or more new ones:
  // Poisson(4) does that once in 10^4.
  EXPECT_GE(found(c, last - sets * ways / 8, last), recent_before - 2);
  // Half the new lines are dirty: pushing them out writes them back.
  uint64_t dirty = 0, pushed = 0;
  for (uint64_t l = 0; l < sets * ways * 8; ++l) {
    const sim::SectorCache::Result r = c.access((1u << 24) * 128 + l * 128, 0xf, false);
    if (r.evicted_line_addr >> 7 > filler) {
      ++pushed;
      dirty += r.evicted_dirty == 0xf;
    }
  }
  EXPECT_GE(double(pushed), 0.99 * double(pushed_in));
  EXPECT_NEAR(double(dirty) / double(pushed), 0.5, 0.05);
  // A stream of many times the ways replaces every line.
  sim::SectorCache d = filled();
  d.stream({{100, 0}}, filler, 8);
  EXPECT_EQ(found(d, 0, last), 0u);
  // The dirty lines of a kept range (a loop cut's outputs) stay newer than the new lines: the
  // same stream replaces every other line and none of them.
  sim::SectorCache e = filled();
  const uint64_t from = last - sets * ways / 8;
  for (uint64_t l = from; l < last; ++l) e.access(l * 128, 0xf, true);
  const uint64_t written = found(e, from, last);
  EXPECT_GT(written, sets * ways / 8 * 95 / 100);
  e.stream({{100, 0}}, filler, 8, uint32_t(from), uint32_t(last));
  EXPECT_EQ(found(e, from, last), written);
  EXPECT_EQ(found(e, 0, from), 0u);
}

TEST(Cluster, NeedsTraceVersion3) {
  std::string text =
      "ltc-trace 2\ngpu h200\nkernel k\n  grid 2 1\n  block 1 1\n  resources smem=0 regs=32\n"
      "  cluster 2\n  tiles core=-1 block=16,8,16 warp=16,8,16 instr=16,8,16\n  program\n"
      "  end\nend\n";
  EXPECT_THROW(traces::read_text(text, "v2.lmt"), InputError);
}

}  // namespace
}  // namespace ltc
