// `ltc bench kernels`: the compiler's skinny GEMM kernels (every LLaMA2 decoder linear layer at
// M = 1 and 16, weight widths 1..8 and fp16) simulated in full on the A100s and the H200: how
// close each streams to DRAM bandwidth (cli/report/skinny_kernels.h). --markdown writes the
// results file docs/results/kernels.md.
#include "cli/command.h"
#include "cli/options.h"
#include "cli/report/case_workers.h"
#include "cli/report/skinny_kernels.h"
#include "common/file_io.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace ltc::cli {
namespace {

struct BenchKernelsFlags {
  report::SkinnyOptions opts;
  std::vector<std::string> weights;  // --weights int1..int8, fp16 (else --wbits widths)
  std::string markdown;
  bool json = false;
  int jobs = 1;
};

void run(BenchKernelsFlags f) {
  if (!f.weights.empty()) {
    f.opts.widths.clear();
    for (const std::string& w : f.weights) {
      f.opts.widths.push_back(w == "fp16" ? 16 : weight_planes(w, 0));
    }
  }
  const std::vector<report::SkinnyCase> cases = report::skinny_cases(f.opts);
  std::vector<report::SkinnyResult> rows;
  nlohmann::json j = nlohmann::json::array();
  auto print = [&](size_t i, const nlohmann::json& result) {
    const report::SkinnyResult r = report::skinny_from_json(result);
    j.push_back(result);
    rows.push_back(r);
    if (f.json) return;
    fmt::print(
        "{:>4}/{} {:<10} {:<10} {:<24} M={:<2} W{:<2} {:<7} {:>8.2f} us {:>6.0f} GB/s "
        "{:>5.1f}% {}\n",
        i + 1, cases.size(), r.c.gpu, r.c.model, r.c.layer, r.c.m, r.c.wbits, r.path, r.time_us,
        r.gbps, r.fraction * 100, r.meets() ? "" : r.binding_stall);
    std::fflush(stdout);
  };
  report::run_cases(
      cases.size(), f.jobs,
      [&](size_t i) { return report::to_json(report::run_skinny_case(cases[i])); }, print);
  if (f.json) fmt::print("{}\n", j.dump());
  if (!f.markdown.empty()) write_text_atomic(f.markdown, report::skinny_markdown(rows));
  int below = 0;
  for (const auto& r : rows) below += r.meets() ? 0 : 1;
  if (!f.json) {
    fmt::print("{} of {} kernels at >= {:.0f}% of DRAM streaming bandwidth\n",
               rows.size() - size_t(below), rows.size(), report::kSkinnyBandwidthTarget * 100);
  }
}

CommandRegistrar reg{
    93, [](CLI::App& app) {
      auto f = std::make_shared<BenchKernelsFlags>();
      CLI::App* sub = bench_command(app).add_subcommand(
          "kernels", "DRAM bandwidth of the skinny GEMM kernels (LLaMA2 linear layers, M <= 16)");
      sub->add_option("--model", f->opts.models, "models (repeatable)")->capture_default_str();
      sub->add_option("--gpu", f->opts.gpus, "GPUs (repeatable)")->capture_default_str();
      sub->add_option("--m", f->opts.rows, "rows, 1..16 (repeatable)")->capture_default_str();
      sub->add_option("--weights", f->weights,
                      "weight formats: int1 .. int8, fp16 (repeatable; default int1 .. int8 and "
                      "fp16)");
      sub->add_option("--wbits", f->opts.widths, "--weights intN or fp16: N, 16")
          ->capture_default_str()
          ->group("Older spellings (each the same as the flag it names)");
      sub->add_option("--markdown", f->markdown, "also write the table as Markdown to this file");
      sub->add_flag("--json", f->json, "print one JSON array");
      sub->add_option("-j,--jobs", f->jobs, "cases simulated at once (worker processes)")
          ->capture_default_str();
      set_examples(sub,
                   {"ltc bench kernels",
                    "ltc bench kernels --gpu a100-lut4x --model llama2-7b --m 1 --weights int2",
                    "ltc bench kernels --markdown docs/results/kernels.md"});
      sub->callback([f, sub] {
        check_older_spellings(sub);
        run(*f);
      });
    }};

}  // namespace
}  // namespace ltc::cli
