// `ltc bench agreement`: the cycle-level simulator against the roofline on the same LLaMA2 steps
// (cli/report/model_agreement.h); --markdown writes the results file docs/results/agreement.md.
#include "cli/command.h"
#include "cli/options.h"
#include "cli/report/case_workers.h"
#include "cli/report/model_agreement.h"
#include "common/file_io.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace ltc::cli {
namespace {

struct BenchAgreementFlags {
  report::AgreementOptions opts;
  std::string markdown, energy;
  bool json = false;
  int jobs = 1;
};

void run(const BenchAgreementFlags& f) {
  const std::vector<report::AgreementCase> cases = report::agreement_cases(f.opts);
  std::vector<report::AgreementResult> rows;
  nlohmann::json j = nlohmann::json::array();
  auto print = [&](size_t i, const nlohmann::json& result) {
    const report::AgreementResult r = report::agreement_from_json(result);
    j.push_back(result);
    rows.push_back(r);
    if (f.json) return;
    fmt::print("{:>3}/{} {:<58} sim {:>9.3f} ms  roofline {:>9.3f} ms  {:+6.1f}%  ({:.1f} s)\n",
               i + 1, cases.size(), r.c.label(), r.sim_ms, r.roofline_ms, r.diff() * 100, r.wall_s);
    std::fflush(stdout);
  };
  report::run_cases(
      cases.size(), f.jobs,
      [&](size_t i) { return report::to_json(report::run_agreement(cases[i], f.opts.full)); },
      print);
  const std::string md = report::agreement_markdown(rows);
  if (f.json) {
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print("{}", md.substr(0, md.find('\n') + 1));
  }
  if (!f.markdown.empty()) write_text_atomic(f.markdown, md);
  if (!f.energy.empty()) write_text_atomic(f.energy, report::energy_markdown(rows));
}

CommandRegistrar reg{
    93, [](CLI::App& app) {
      auto f = std::make_shared<BenchAgreementFlags>();
      CLI::App* sub = bench_command(app).add_subcommand(
          "agreement", "Simulator vs roofline on LLaMA2 decode and prefill steps");
      sub->add_option("--model", f->opts.models, "models (repeatable)")->capture_default_str();
      sub->add_flag("--full", f->opts.full, "simulate every step in full (slow; default sampled)");
      sub->add_option("--markdown", f->markdown, "also write the tables as Markdown to this file");
      sub->add_option("--energy", f->energy,
                      "also write each step's energy per token, simulator beside roofline, as "
                      "Markdown to this file");
      sub->add_flag("--json", f->json, "print one JSON array");
      sub->add_option("-j,--jobs", f->jobs, "steps simulated at once (worker processes)")
          ->capture_default_str();
      set_examples(sub, {"ltc bench agreement --model llama2-7b",
                         "ltc bench agreement --markdown docs/results/agreement.md",
                         "ltc bench agreement --model llama2-7b --energy docs/results/energy.md"});
      sub->callback([f] {
        for (const std::string* out : {&f->markdown, &f->energy}) {
          if (!out->empty())
            check_output_path(*out, out == &f->markdown ? "--markdown" : "--energy");
        }
        run(*f);
      });
    }};

}  // namespace
}  // namespace ltc::cli
