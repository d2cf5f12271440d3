#include "sim/simulator.h"

#include "common/error.h"
#include "sim/functional.h"
#include "sim/gpu.h"
#include "sim/rtl_tensor_core.h"
#include "sim/sm.h"

#include <systemc>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>

namespace ltc::sim {
namespace {

std::atomic<bool> g_stop{false};
bool g_context_used = false;

// SystemC's banner would go to stdout, which is the caller's (--json). Set before main, while
// the process has one thread: setenv while another thread reads the environment (the DSE
// report runs its PPA sweeps beside its simulations) is a data race.
const bool g_quiet_systemc = setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0;

}  // namespace

void fresh_systemc_context() {
  if (g_context_used) {
    sc_core::sc_curr_simcontext = new sc_core::sc_simcontext;
    sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
  }
  g_context_used = true;
}

void request_stop() {
  g_stop.store(true);
}

int64_t longest_quantum(const hw::GpuConfig& gpu) {
  const int64_t l2_cycles = int64_t(std::floor(gpu.l2.latency_ns * gpu.clock_ghz));
  return std::clamp<int64_t>(l2_cycles, 1, 65535);
}

RunStats simulate(const traces::Trace& trace, const hw::GpuConfig& gpu, const SimOptions& given) {
  SimOptions options = given;
  if (options.quantum_cycles == 0) options.quantum_cycles = longest_quantum(gpu);
  std::vector<size_t> kernels;
  for (size_t i = 0; i < trace.kernels.size(); ++i) {
    if (options.kernel.empty() || trace.kernels[i].name == options.kernel) kernels.push_back(i);
  }
  if (kernels.empty()) {
    std::string names;
    for (size_t i = 0; i < trace.kernels.size() && i < 8; ++i) {
      names += (i ? ", " : "") + trace.kernels[i].name;
    }
    if (trace.kernels.size() > 8) names += ", ...";
    throw InputError(options.kernel.empty() ? std::string("trace: no kernels to simulate")
                                            : "--kernel: no kernel named '" + options.kernel +
                                                  "' in the trace (kernels: " + names + ")");
  }
  if (options.quantum_cycles < 0) {
    throw InputError("quantum_cycles: " + std::to_string(options.quantum_cycles) +
                     " (valid: 1 or more, 0: the longest)");
  }
  const int64_t longest = longest_quantum(gpu);
  if (options.quantum_cycles > longest) {
    throw InputError("quantum_cycles: " + std::to_string(options.quantum_cycles) +
                     (longest < 65535 ? " is longer than the L2 hit latency of '" + gpu.name +
                                            "' (" + std::to_string(longest) + " cycles"
                                      : std::string(" is too long (the simulator orders a "
                                                    "quantum's accesses in 16 bits")) +
                     "; valid: 1 to " + std::to_string(longest) + ")");
  }
  if (gpu.sms < 1 || gpu.sms > 65535) {  // the merge's keys (Gpu::merge) hold 16 bits of SM
    throw InputError("gpu '" + gpu.name + "': " + std::to_string(gpu.sms) +
                     " SMs (the simulator takes 1 to 65535)");
  }
  if (options.threads < 1) {
    throw InputError("threads: " + std::to_string(options.threads) + " (valid: 1 or more)");
  }
  for (const UnitKind& u : kUnits) {
    const int n = u.copies(gpu);
    if (n < 1 || n > kMaxUnitCopies) {
      throw InputError("gpu '" + gpu.name + "': the simulator models 1 to " +
                       std::to_string(kMaxUnitCopies) + " pipes per unit; the " +
                       std::string(u.name) + " unit would have " + std::to_string(n) + " (" +
                       std::string(u.copies_from) + ")");
    }
  }
  const std::unique_ptr<TensorCoreModel> tc =
      make_tensor_core(options.tc, gpu, options.rtl_cache_dir, options.rtl_optimized);
  {
    // Every error a kernel can raise, before anything runs.
    uint64_t scratch = options.start_state ? options.start_state->next_address : 0;
    for (size_t i : kernels) plan_kernel(trace, i, gpu, *tc, scratch);
  }
  std::unique_ptr<FunctionalChecker> checker;
  if (options.functional) {
    checker = std::make_unique<FunctionalChecker>(trace, options.seed);
    checker->set_lmma_unit(tc->lmma_unit());
  }

  fresh_systemc_context();
  g_stop.store(false);
  const auto t0 = std::chrono::steady_clock::now();
  RunStats result;
  {
    Gpu gpu_module("gpu", trace, gpu, options, *tc, g_stop, checker.get(), kernels);
    sc_core::sc_start();
    if (g_stop.load()) {
      gpu_module.collect_partial();
      gpu_module.result().interrupted = true;
    }
    result = std::move(gpu_module.result());
  }
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (const auto* rtl = dynamic_cast<const RtlTensorCore*>(tc.get())) {
    result.rtl_tile_lmmas = rtl->tile_lmmas();
    result.rtl_tile_cycles = rtl->tile_cycles();
    result.rtl_computed_lmmas = rtl->computed_lmmas();
  }
  if (checker) {
    result.functional = true;
    if (!result.interrupted) checker->finish(result);
  }
  return result;
}

}  // namespace ltc::sim

// libsystemc's own main() refers to sc_main; ltc and the tests have their own main() and never
// call it.
extern "C" int sc_main(int, char*[]) {
  return 1;
}
