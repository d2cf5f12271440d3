// Parallel stepping (sim/README.md, "Parallel stepping"): the statistics of a run, every field
// of its JSON but the wall time, are the same on 1, 2, 3 and 8 host threads, for GEMMs on each
// path (LUT, dequantize-then-MAC, dense warpgroup clusters with multicast), a model step, full
// and sampled, with and without --functional; and the same again when one run repeats at 8.
// LTC_TSAN=ON builds these under ThreadSanitizer (sim/README.md).
#include "common/error.h"
#include "compiler/model_lowering.h"
#include "model/hw/gpu.h"
#include "model/llm/model_config.h"
#include "model/llm/precision.h"
#include "sim/sampler/sampling.h"
#include "sim/simulator.h"
#include "sim/step_pool.h"
#include "tests/sim/sim_test_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ltc {
namespace {

using test_support::compiled_gemm;

struct Case {
  std::string name;
  traces::Trace trace;
  hw::GpuConfig gpu;
  bool functional;  // also with --functional (small GEMMs: the functional model runs serially)
};

std::vector<Case> cases() {
  const hw::GpuConfig lut = hw::load_gpu("a100-lut4x"), a100 = hw::load_gpu("a100"),
                      h200 = hw::load_gpu("h200");
  const auto gemm = [](const hw::GpuConfig& gpu, int64_t m, int64_t n, int64_t k,
                       const std::string& w, golden::DType act, bool functional) {
    return Case{gpu.name + " W " + w + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                    std::to_string(k),
                compiled_gemm(gpu, m, n, k, w, act), gpu, functional};
  };
  std::vector<Case> c;
  c.push_back(gemm(lut, 256, 2048, 1024, "int2", golden::DType::kInt8, false));  // LUT
  c.push_back(gemm(lut, 16, 512, 256, "int2", golden::DType::kFp16, true));
  c.push_back(gemm(a100, 64, 2048, 1024, "int4", golden::DType::kFp16, false));   // dequantize
  c.push_back(gemm(a100, 8, 256, 256, "int4", golden::DType::kFp16, true));       // then MAC
  c.push_back(gemm(h200, 1024, 2048, 512, "fp16", golden::DType::kFp16, false));  // clusters,
  c.push_back(gemm(h200, 128, 512, 64, "fp16", golden::DType::kFp16, true));      // multicast
  llm::StepConfig step = llm::StepConfig::decode(2, 64);
  step.weights = llm::parse_weight_format("int2");
  step.acts = golden::DType::kInt8;
  c.push_back(
      {"tiny-llama decode step",
       compiler::compile_model(
           llm::load_model(LTC_SOURCE_DIR "/traces/examples/tiny-llama.config.json"), step, lut),
       lut, true});
  return c;
}

// The run's JSON without its wall time.
nlohmann::json run_json(const Case& c, int threads, bool functional, bool sampled) {
  sim::SimOptions o;
  o.threads = threads;
  o.functional = functional;
  const sim::RunStats r =
      sampled ? sim::simulate_sampled(c.trace, c.gpu, o, {}) : sim::simulate(c.trace, c.gpu, o);
  nlohmann::json j = r;
  j.erase("wall_s");
  return j;
}

TEST(Parallel, EveryThreadCountGivesTheSameStatistics) {
  for (const Case& c : cases()) {
    for (const bool sampled : {false, true}) {
      for (const bool functional : {false, true}) {
        if (functional && (sampled || !c.functional)) continue;  // sampled: timing only
        const nlohmann::json one = run_json(c, 1, functional, sampled);
        ASSERT_GT(one.at("cycles").get<int64_t>(), 0) << c.name;
        if (functional) {
          EXPECT_EQ(one.at("functional").at("mismatches").get<uint64_t>(), 0u) << c.name;
        }
        for (const int threads : {2, 3, 8}) {
          const nlohmann::json many = run_json(c, threads, functional, sampled);
          EXPECT_EQ(many, one) << c.name << (sampled ? ", sampled" : "")
                               << (functional ? ", functional" : "") << ", " << threads
                               << " threads:\n"
                               << nlohmann::json::diff(one, many).dump(1).substr(0, 2000);
        }
      }
    }
  }
}

TEST(Parallel, ARunRepeatedAtEightThreadsNeverDiffers) {
  const std::vector<Case> all = cases();
  const Case& c = all[4];  // clusters: the most shared state (multicast, L2, dispatch)
  const nlohmann::json one = run_json(c, 1, false, false);
  for (int rep = 0; rep < 12; ++rep) {
    ASSERT_EQ(run_json(c, 8, false, false), one) << "repetition " << rep;
  }
}

// --host-profile times the host's work without changing the run: the same JSON as without it;
// its parts fit in one another (the batches in the run's wall time, the L2's items and each
// thread's items in the batches' time; a merge in every quantum); at 1 thread the batches are
// the one thread's busy time.
TEST(Parallel, TheHostProfileChangesNoResultAndItsPartsFit) {
  const std::vector<Case> all = cases();
  const Case& c = all[0];
  for (const int threads : {1, 3, 8}) {
    sim::SimOptions o;
    o.threads = threads;
    const nlohmann::json plain = run_json(c, threads, false, false);
    ASSERT_FALSE(plain.contains("host_profile"));
    o.host_profile = true;
    const sim::RunStats r = sim::simulate(c.trace, c.gpu, o);
    nlohmann::json j = r;
    ASSERT_TRUE(j.contains("host_profile")) << threads << " threads";
    j.erase("wall_s");
    j.erase("host_profile");
    EXPECT_EQ(j, plain) << threads << " threads";
    const sim::HostProfile& h = r.host;
    EXPECT_GT(h.quanta, 0u);
    EXPECT_GE(h.batches, h.quanta) << threads << " threads";
    EXPECT_GT(h.batch_s, 0.0);
    EXPECT_LE(h.batch_s, r.wall_s);
    EXPECT_LE(h.l2_chain_s, h.batch_s);
    ASSERT_EQ(h.thread_busy_s.size(), size_t(threads));
    double sum = 0;
    for (const double b : h.thread_busy_s) {
      EXPECT_LE(b, h.batch_s) << threads << " threads";
      sum += b;
    }
    EXPECT_GT(h.l2_serve_s, 0.0) << threads << " threads";
    EXPECT_LE(h.l2_serve_s + h.l2_wait_s, sum) << threads << " threads";
    if (threads == 1) {
      EXPECT_EQ(h.thread_busy_s[0], h.batch_s);
      EXPECT_EQ(h.l2_chain_s, 0.0);  // no pool: the L2 serves each quantum before the SMs
      EXPECT_EQ(h.l2_wait_s, 0.0);
    } else {
      EXPECT_GT(sum, 0.0) << threads << " threads";
      EXPECT_GT(h.l2_chain_s, 0.0) << threads << " threads";
    }
  }
}

// The pool runs every item of every batch once, whatever the batch's size against the threads,
// and rethrows the exception of the least item that threw, then goes on with the next batch.
TEST(StepPool, EveryItemRunsOnceAndTheLeastItemsExceptionComesBack) {
  for (const int threads : {1, 2, 3, 8}) {
    sim::StepPool pool(threads);
    std::vector<std::atomic<int>> runs(700);
    for (size_t n = 0; n < runs.size(); n += 1 + n / 3) {
      for (auto& r : runs) r.store(0);
      pool.run(n, [&](size_t i) { runs[i].fetch_add(1); });
      for (size_t i = 0; i < runs.size(); ++i) {
        ASSERT_EQ(runs[i].load(), i < n ? 1 : 0) << threads << " threads, " << n << " items";
      }
    }
    for (int rep = 0; rep < 20; ++rep) {
      try {
        pool.run(64, [&](size_t i) {
          if (i == 41 || i == 17 || i == 63) throw std::runtime_error(std::to_string(i));
        });
        FAIL() << "expected an exception";
      } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), "17") << threads << " threads";
      }
      std::atomic<size_t> sum{0};
      pool.run(100, [&](size_t i) { sum.fetch_add(i); });
      EXPECT_EQ(sum.load(), 4950u);
    }
  }
}

// A batch of phases: every item of a phase runs once, after every item of the phase before; an
// exception of a phase comes back (its least item's) and the later phases' items do not run.
TEST(StepPool, APhaseStartsOnceThePhaseBeforeEnded) {
  for (const int threads : {1, 2, 3, 8}) {
    sim::StepPool pool(threads);
    for (int rep = 0; rep < 50; ++rep) {
      const size_t sizes[4] = {size_t(5 + rep % 7), 1, 0, size_t(40 + rep)};
      std::vector<std::atomic<int>> done(4);
      std::atomic<int> wrong{0};
      std::function<void(size_t)> fns[4];
      sim::StepPool::Phase phases[4];
      for (size_t p = 0; p < 4; ++p) {
        fns[p] = [&, p](size_t) {
          for (size_t q = 0; q < p; ++q) wrong += done[q].load() != int(sizes[q]);
          done[p].fetch_add(1);
        };
        phases[p] = {sizes[p], &fns[p]};
      }
      pool.run(phases, 4);
      for (size_t p = 0; p < 4; ++p) ASSERT_EQ(done[p].load(), int(sizes[p])) << threads;
      ASSERT_EQ(wrong.load(), 0) << threads << " threads";
      std::atomic<int> later{0};
      const std::function<void(size_t)> throws = [](size_t i) {
        if (i == 9 || i == 3) throw std::runtime_error(std::to_string(i));
      };
      const std::function<void(size_t)> counts = [&](size_t) { later.fetch_add(1); };
      const sim::StepPool::Phase failing[2] = {{16, &throws}, {30, &counts}};
      try {
        pool.run(failing, 2);
        FAIL() << "expected an exception";
      } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), "3") << threads << " threads";
      }
      EXPECT_EQ(later.load(), 0) << threads << " threads";
    }
  }
}

// Work that some items of a phase need first (StepPool::Once, the L2's items in the merge):
// it runs once per batch, by whichever item needs it first, and every item that needs it sees
// what it made (a plain write: ThreadSanitizer checks the order).
TEST(StepPool, OnceRunsItsWorkOnceBeforeEveryItemThatNeedsIt) {
  for (const int threads : {1, 2, 3, 8}) {
    sim::StepPool pool(threads);
    sim::StepPool::Once once;
    int made = 0;
    for (int rep = 1; rep <= 200; ++rep) {
      std::atomic<int> runs{0}, seen{0}, wrong{0};
      const size_t n = size_t(1 + rep % 40);
      once.reset();
      const std::function<void(size_t)> item = [&](size_t i) {
        if (i % 3 != 1) return;  // needs nothing
        const bool ran = once.try_run([&] {
          runs.fetch_add(1);
          made = rep;
        });
        if (!ran) once.wait();
        seen.fetch_add(1);
        wrong += made != rep;
      };
      pool.run(n, item);
      ASSERT_EQ(runs.load(), n > 1 ? 1 : 0) << threads << " threads, " << n << " items";
      EXPECT_EQ(seen.load(), int((n + 1) / 3)) << threads << " threads";
      EXPECT_EQ(wrong.load(), 0) << threads << " threads";
    }
  }
}

// Steps that items of a phase need in order (StepPool::Chain, as the merge's L2 items and multicast
// settle): each step's items run once per batch, each after every item of the step before (it sees
// what they made: plain writes, ThreadSanitizer checks the order), and an item that needs the last
// step sees all of it, whichever threads take the steps' items (their own ranges, or one that needs
// the step and finishes it).
TEST(StepPool, AChainRunsEachItemOnceAfterTheStepBefore) {
  for (const int threads : {1, 2, 3, 8}) {
    sim::StepPool pool(threads);
    sim::StepPool::Chain chain;
    constexpr size_t kSteps = 3;
    for (int rep = 1; rep <= 100; ++rep) {
      const size_t width = size_t(1 + rep % 7);
      std::vector<std::vector<int>> made(kSteps, std::vector<int>(width, 0));
      std::vector<std::atomic<int>> runs(kSteps * width);
      std::atomic<int> wrong{0};
      std::vector<std::function<void(size_t)>> fns;
      for (size_t j = 0; j < kSteps; ++j) {
        fns.push_back([&, j](size_t i) {
          runs[j * width + i].fetch_add(1);
          if (j > 0) {
            for (size_t p = 0; p < width; ++p) wrong += made[j - 1][p] != rep;
          }
          made[j][i] = rep;
        });
      }
      std::vector<sim::StepPool::Phase> steps;
      for (size_t j = 0; j < kSteps; ++j) steps.push_back({width, &fns[j]});
      chain.reset(steps.data(), kSteps);
      ASSERT_EQ(chain.items(), kSteps * width);
      // Items 0 .. items - 1: the chain's own (some taken by their range, some left to whoever
      // needs them); then items that need the last step.
      const size_t own = chain.items() - size_t(rep % 3) * width, n = chain.items() + 12;
      const std::function<void(size_t)> item = [&](size_t k) {
        if (k < own) {
          const auto [j, i] = chain.locate(k);
          return chain.take(j, i);
        }
        if (k < chain.items()) return;
        chain.finish(kSteps - 1, k);
        for (size_t p = 0; p < width; ++p) wrong += made[kSteps - 1][p] != rep;
      };
      pool.run(n, item);
      for (size_t c = 0; c < runs.size(); ++c) {
        ASSERT_EQ(runs[c].load(), 1) << threads << " threads, step " << c / width;
      }
      EXPECT_EQ(wrong.load(), 0) << threads << " threads";
    }
  }
}

// A slot takes its next block at its dispatch boundary (sim/README.md, "Block dispatch") and a
// load's data time is exact for any quantum up to the L2 hit latency, so these GEMMs of several
// waves and this model step read the same cycles and counts for quanta of 32 and 100 cycles and
// the default (the L2 hit latency: 282 cycles on the A100s, 280 on the H200). Only the split of
// the stall cycles by reason moves: a sub-partition waiting for a load's data charges its wait to
// that load until the quantum's end. (Not every trace: sim/README.md, "Parallel stepping".)
TEST(Parallel, TheQuantumChangesNoCycleOrCount) {
  const auto without_stalls = [](nlohmann::json j) {
    j.erase("wall_s");
    j["total"].erase("stall_cycles");
    for (auto& k : j["kernels"]) k.erase("stall_cycles");
    return j;
  };
  EXPECT_EQ(sim::longest_quantum(hw::load_gpu("a100-lut4x")), 282);  // 200 ns x 1.41 GHz
  EXPECT_EQ(sim::longest_quantum(hw::load_gpu("h200")), 280);        // 141.6 ns x 1.98 GHz
  // GEMMs of 2.4 and 1.9 waves (the LUT path; the H200's clusters with multicast), and a
  // model step.
  const hw::GpuConfig lut = hw::load_gpu("a100-lut4x"), h200 = hw::load_gpu("h200");
  const std::vector<Case> all = cases();
  const std::vector<Case> waves = {
      {"lut", compiled_gemm(lut, 2048, 4096, 512, "int2", golden::DType::kInt8), lut, false},
      {"h200", compiled_gemm(h200, 2048, 4096, 512, "fp16", golden::DType::kFp16), h200, false},
      all.back()};
  for (const Case& c : waves) {
    sim::SimOptions o;
    o.threads = 2;
    const nlohmann::json longest = without_stalls(nlohmann::json(sim::simulate(c.trace, c.gpu, o)));
    for (const int64_t q : {32, 100}) {
      o.quantum_cycles = q;
      EXPECT_EQ(without_stalls(nlohmann::json(sim::simulate(c.trace, c.gpu, o))), longest)
          << c.name << ", quantum " << q;
    }
  }
}

TEST(Parallel, BadThreadCountsAndQuantaAreRefused) {
  const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  const traces::Trace t = compiled_gemm(gpu, 8, 256, 256, "int2", golden::DType::kInt8);
  sim::SimOptions o;
  o.threads = 0;
  EXPECT_THROW(sim::simulate(t, gpu, o), InputError);
  o.threads = 2;
  o.quantum_cycles = 100000;  // longer than an L2 round trip
  try {
    sim::simulate(t, gpu, o);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("L2 hit latency"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ltc
