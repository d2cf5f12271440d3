// `ltc bench rtl`: simulated cycles per second of the verilated M2N64K4 LUT tile (FP16 and INT8
// activations, one weight plane per LMMA, back to back), in plain C++ and inside SystemC.
#include "cli/command.h"
#include "cli/options.h"
#include "common/error.h"
#include "model/hw/tensor_core.h"
#include "rtl/rtl_runner.h"

#include <fmt/core.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace ltc::cli {
namespace {

struct BenchRtlFlags {
  uint64_t cycles = 200000;
  std::string design = "lut";
  int m = 2, n = 64, k = 4, wbits = 1;
  std::string weights;  // --weights intN (else --wbits)
  bool systemc = true;
  bool json = false;
  std::string cache;
};

void run_bench(const BenchRtlFlags& a) {
  check_tile_units(a.m, a.n);
  nlohmann::json results = nlohmann::json::array();
  for (golden::DType act : {golden::DType::kFp16, golden::DType::kInt8}) {
    const auto config = hw::TensorCoreConfig::make(hw::parse_design(a.design, "--design"),
                                                   golden::LmmaShape{a.m, a.n, a.k}, act, a.wbits);
    for (bool sc : {false, true}) {
      if (sc && !a.systemc) continue;
      rtl::HarnessOptions ho;
      ho.kind = sc ? rtl::HarnessKind::kSystemC : rtl::HarnessKind::kBench;
      ho.cache_dir = a.cache;
      if (progress_enabled()) {
        fmt::print(stderr, "bench rtl: building or loading {}{}...\n", config.id(),
                   sc ? " (SystemC)" : "");
      }
      const std::string exe = rtl::build_harness(config, ho);
      const double cps = rtl::bench_harness(exe, a.cycles, a.wbits);
      results.push_back({{"config", config.id()},
                         {"act", golden::dtype_name(act)},
                         {"host", sc ? "systemc" : "c++"},
                         {"cycles", a.cycles},
                         {"cycles_per_s", cps}});
      if (!a.json) {
        fmt::print("{:<32} {:<8} {:>12.0f} cycles/s\n", config.id(), sc ? "systemc" : "c++", cps);
      }
    }
  }
  if (a.json) fmt::print("{}\n", nlohmann::json{{"bench", "rtl"}, {"results", results}}.dump());
}

CommandRegistrar reg{
    90, [](CLI::App& app) {
      auto args = std::make_shared<BenchRtlFlags>();
      auto* sub = bench_command(app).add_subcommand(
          "rtl", "Simulated cycles/s of the verilated M2N64K4 tile (FP16, INT8; C++ and SystemC)");
      sub->add_option("--cycles", args->cycles, "simulated cycles per measurement, >= 1000")
          ->capture_default_str()
          ->check(in_range(1000, 1e12));
      sub->add_option("--design", args->design, "lut, lut-naive, mac, add")->capture_default_str();
      add_tile_options(sub, args->m, args->n, args->k, args->wbits, "--weights intN: N");
      add_operand_options(sub, nullptr, args->weights, args->wbits);
      auto no_systemc = std::make_shared<bool>(false);
      sub->add_flag("--no-systemc", *no_systemc, "skip the SystemC measurement");
      sub->add_option("--cache", args->cache, "model cache directory (default ~/.cache/ltc)");
      sub->add_flag("--json", args->json, "print one JSON object");
      set_examples(sub, {"ltc bench rtl", "ltc bench rtl --design mac --no-systemc --json"});
      sub->callback([args, no_systemc, sub] {
        check_older_spellings(sub);
        args->wbits = weight_planes(args->weights, args->wbits);
        args->systemc = !*no_systemc;
        run_bench(*args);
      });
    }};

}  // namespace
}  // namespace ltc::cli
