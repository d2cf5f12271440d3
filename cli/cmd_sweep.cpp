// `ltc sweep SPEC --out DIR -j N`: many design points through the PPA flow, resumable, with CSV,
// SVG plots and the ratios against the paper (synth/sweep.h). SPEC is a JSON file, a built-in
// name (dp-k, dp4, wbits, dse), or `all` for the four built-ins into one results store.
#include "cli/command.h"
#include "cli/options.h"
#include "model/golden/error.h"
#include "synth/sweep.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>

namespace ltc::cli {
namespace {

struct SweepCliOptions {
  std::string spec;
  std::string out;
  int jobs = 1;
  bool retry_failed = false, keep_work = false, progress = false, json = false;
  bool report_only = false;
  int limit = 0;
  double timeout_s = 3600;
};

std::vector<std::string> spec_paths(const std::string& spec) {
  if (spec == "all") {
    std::vector<std::string> paths;
    for (const auto& n : synth::SweepSpec::builtin_names()) {
      paths.push_back(synth::SweepSpec::builtin_path(n));
    }
    return paths;
  }
  if (!std::filesystem::exists(spec)) {
    for (const auto& n : synth::SweepSpec::builtin_names()) {
      if (n == spec) return {synth::SweepSpec::builtin_path(n)};
    }
  }
  return {spec};
}

void run(const SweepCliOptions& o) {
  if (o.out.empty()) throw InputError("--out: an output directory is required");
  if (o.jobs < 1) throw InputError("-j: must be >= 1");
  std::vector<synth::SweepSpec> specs;
  for (const auto& p : spec_paths(o.spec)) specs.push_back(synth::SweepSpec::load(p));
  synth::SweepOptions so;
  so.out_dir = o.out;
  so.jobs = o.jobs;
  so.retry_failed = o.retry_failed;
  so.keep_work = o.keep_work;
  so.progress = o.progress || progress_enabled();
  so.limit = o.limit;
  so.report_only = o.report_only;
  so.tool_timeout_s = o.timeout_s;
  nlohmann::json all = nlohmann::json::array();
  int failed = 0;
  for (const auto& spec : specs) {
    if (so.progress) {
      fmt::print(stderr, "sweep {}: {} points -> {}\n", spec.name, spec.points.size(), o.out);
    }
    const auto s = synth::run_sweep(spec, so);
    failed += s.failed;
    nlohmann::json j = {{"sweep", spec.name},   {"points", s.points}, {"reused", s.reused},
                        {"ran", s.ran},         {"ok", s.ok},         {"failed", s.failed},
                        {"seconds", s.seconds}, {"files", s.files},   {"ratios", s.ratios}};
    all.push_back(j);
    if (!o.json) {
      fmt::print(
          "sweep {}: {} design points ({} from the store, {} run: {} ok, {} failed) in "
          "{:.1f} s\n",
          spec.name, s.points, s.reused, s.ran, s.ok, s.failed, s.seconds);
      for (const auto& r : s.ratios) {
        const std::string v = r["value"].is_null()
                                  ? std::string("n/a")
                                  : fmt::format("{:.2f}", r["value"].get<double>());
        const std::string paper =
            r.contains("paper") ? fmt::format(" (paper {})", r["paper"].dump()) : std::string();
        fmt::print("  {}: {}{}\n", r["name"].get<std::string>(), v, paper);
      }
      for (const auto& c : s.crossovers) {
        const auto& up_to = c["a_below_b_up_to"];
        const std::string v = up_to.is_null() ? std::string("never (or no data)")
                                              : fmt::format("{}", up_to.get<double>());
        const std::string paper =
            c.contains("paper") ? fmt::format(" (paper {})", c["paper"].dump()) : std::string();
        fmt::print("  {}: {}{}\n", c["name"].get<std::string>(), v, paper);
      }
      for (const auto& f : s.files) fmt::print("  wrote {}\n", f);
    }
  }
  if (o.json) {
    fmt::print("{}\n", (all.size() == 1 ? all[0] : nlohmann::json{{"sweeps", all}}).dump());
  }
  if (failed > 0) {
    fmt::print(stderr, "ltc sweep: {} point(s) failed; their errors are in {}/results.jsonl\n",
               failed, o.out);
    set_exit_code(kExitFailed);
  }
}

CommandRegistrar reg{
    61, [](CLI::App& app) {
      auto o = std::make_shared<SweepCliOptions>();
      CLI::App* sub = app.add_subcommand(
          "sweep", "Many design points through the PPA flow; resumable; CSV + SVG in --out");
      sub->add_option("spec", o->spec,
                      "sweep spec JSON, a built-in name (dp-k, dp4, wbits, dse) or 'all'")
          ->required();
      sub->add_option("--out", o->out, "results folder (results.jsonl, CSV, SVG, summary)")
          ->required();
      sub->add_option("-j,--jobs", o->jobs, "design points in parallel")->capture_default_str();
      sub->add_flag("--retry-failed", o->retry_failed, "rerun points stored as failed");
      sub->add_flag("--keep-work", o->keep_work, "keep netlists and simulation files");
      sub->add_flag("--progress", o->progress, "progress on stderr even when it is not a TTY");
      sub->add_option("--limit", o->limit, "run at most this many new points (0: all)")
          ->check(in_range(0, 1e9));
      sub->add_flag("--report-only", o->report_only,
                    "run nothing; write CSV, SVG and summary from the stored results");
      sub->add_option("--timeout-s", o->timeout_s, "limit per tool run")
          ->capture_default_str()
          ->check(in_range(1, 1e6));
      sub->add_flag("--json", o->json, "print one JSON object");
      set_examples(sub, {"ltc sweep dp4 --out sweeps/dp4 -j 2",
                         "ltc sweep synth/sweeps/wbits.json --out sweeps/wbits --report-only"});
      sub->callback([o] { run(*o); });
    }};

}  // namespace
}  // namespace ltc::cli
