// `ltc bench roofline`: how fast the tile-level model is. Runs 10,000 step estimates (built-in
// models x GPUs x precisions x batch x context, decode and prefill) on one core and prints the
// rate; the target is 10,000 estimates in under 1 s.
#include "cli/command.h"
#include "cli/options.h"
#include "model/roofline/estimate.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <memory>

namespace ltc::cli {
namespace {

struct BenchRooflineFlags {
  int estimates = 10000;
  bool json = false;
};

void run(const BenchRooflineFlags& o) {
  const std::vector<std::string> gpus = {"a100", "h200", "rtx3090", "a100-lut4x", "a100-lut8x"};
  const std::vector<std::string> models = {"llama2-7b", "llama2-70b", "opt-175b",
                                           "bitnet-b1.58-3b"};
  const std::vector<std::pair<std::string, std::string>> precisions = {
      {"fp16", "fp16"}, {"int4", "fp16"}, {"int2", "int8"}, {"int1", "int8"}, {"ternary", "int8"}};
  const std::vector<int64_t> batches = {1, 8, 64, 256, 1024};
  const std::vector<int64_t> lengths = {128, 512, 2048, 8192};
  std::vector<roofline::Machine> machines;
  for (const auto& g : gpus) machines.emplace_back(hw::load_gpu(g));
  std::vector<llm::ModelConfig> configs;
  for (const auto& m : models) configs.push_back(llm::load_model(m));

  double checksum = 0;
  int done = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (done < o.estimates) {
    for (size_t g = 0; g < machines.size() && done < o.estimates; ++g) {
      for (size_t m = 0; m < configs.size() && done < o.estimates; ++m) {
        for (const auto& [w, a] : precisions) {
          for (int64_t b : batches) {
            for (int64_t l : lengths) {
              if (done >= o.estimates) break;
              roofline::StepRequest r;
              r.phase = done % 2 ? llm::Phase::kPrefill : llm::Phase::kDecode;
              r.batch = b;
              r.length = r.phase == llm::Phase::kPrefill ? std::min<int64_t>(l, 2048) : l;
              r.weights = w;
              r.acts = a;
              checksum += roofline::estimate(machines[g], configs[m], r).latency_ms;
              ++done;
            }
          }
        }
      }
    }
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (o.json) {
    fmt::print("{}\n", nlohmann::json{{"estimates", done},
                                      {"seconds", s},
                                      {"estimates_per_s", done / s},
                                      {"checksum_ms", checksum}}
                           .dump());
  } else {
    fmt::print(
        "roofline: {} step estimates in {:.3f} s on one core ({:.0f} estimates/s; target "
        "10000 in < 1 s)\n",
        done, s, done / s);
  }
}

CommandRegistrar reg{
    91, [](CLI::App& app) {
      auto opts = std::make_shared<BenchRooflineFlags>();
      CLI::App* sub = bench_command(app).add_subcommand(
          "roofline",
          "10,000 tile-level step estimates (models x GPUs x precisions x batch x context)");
      sub->add_option("--estimates", opts->estimates, "how many estimates, 1..10^7")
          ->capture_default_str()
          ->check(in_range(1, 1e7));
      set_examples(sub, {"ltc bench roofline", "ltc bench roofline --estimates 1000 --json"});
      sub->add_flag("--json", opts->json, "print one JSON object");
      sub->callback([opts] { run(*opts); });
    }};

}  // namespace
}  // namespace ltc::cli
