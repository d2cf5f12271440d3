// `ltc sweep SPEC --out DIR -j N`: many design points through the PPA flow (or `ltc sim` runs),
// resumable, with CSV and the ratios against the paper (synth/sweep.h). SPEC is a JSON
// file, a built-in name (dp-k, dp4, wbits, dse), `all` for the four built-ins into one results
// store, or `ledger` (synth/ledger.h: the DP4 comparison from the flow's first setup to the
// paper's, one cause at a time). `--executor slurm` runs the points as Slurm job arrays
// (synth/executor.h); each array task runs `ltc sweep-task MANIFEST INDEX`. `--markdown FILE`
// writes the sweeps' ratios and crossovers, or the ledger's steps, as a PPA results file
// (cli/report/ppa_results.h).
#include "cli/command.h"
#include "cli/options.h"
#include "cli/report/ppa_results.h"
#include "common/error.h"
#include "common/file_io.h"
#include "sim/step_pool.h"
#include "synth/ledger.h"
#include "synth/sweep.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>

namespace ltc::cli {
namespace {

struct SweepFlags {
  std::string spec;
  std::string out;
  int jobs = 1;
  bool retry_failed = false, keep_work = false, progress = false, json = false;
  bool report_only = false;
  int limit = 0;
  double timeout_s = 3600;
  std::string executor = "local";
  std::string lib;     // empty: each spec's own library
  std::string timing;  // empty: each spec's own activity_timing
  std::string markdown;
  synth::SlurmOptions slurm;
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

constexpr const char* kSlurmGroup = "Slurm (--executor slurm)";

std::string fixed(double v, const char* fmt_spec = "{:.2f}") {
  return std::isfinite(v) ? fmt::format(fmt::runtime(fmt_spec), v) : std::string("n/a");
}

// `ltc sweep ledger`: the DP4 comparison from the flow's first setup to the paper's, one cause at
// a time (synth/ledger.h).
void run_ledger(const SweepFlags& o) {
  if (!o.lib.empty() || !o.timing.empty()) {
    throw InputError(std::string(o.lib.empty() ? "--activity-timing" : "--lib") +
                     ": not with the ledger (its steps set the library and the delay model)");
  }
  if (o.executor != "local") throw InputError("--executor: the ledger runs locally only");
  synth::LedgerOptions lo;
  lo.out_dir = o.out;
  lo.jobs = o.jobs;
  lo.progress = o.progress || progress_enabled();
  lo.report_only = o.report_only;
  lo.tool_timeout_s = o.timeout_s;
  if (!o.markdown.empty()) check_output_path(o.markdown, "--markdown");
  const synth::LedgerResult r = synth::run_ledger(lo);
  if (!o.markdown.empty()) {
    write_text_atomic(o.markdown, report::ledger_markdown(synth::to_json(r)));
    if (!o.json) fmt::print("wrote {}\n", o.markdown);
  }
  if (o.json) {
    fmt::print("{}\n", synth::to_json(r).dump());
  } else {
    fmt::print(
        "PPA ledger (DP4, M1N1K4, LUT W_INTn A_FP16 vs MAC W_FP16 A_FP16; {} points, {} from the "
        "store, {} run, {} failed, {:.1f} s)\n",
        r.points, r.reused, r.ran, r.failed, r.seconds);
    fmt::print("{:<12} {:<10} {:<8} {:<5} {:>9} {:>9} {:>10} {:>10} {:>8} {:>15} {:>13}\n", "step",
               "library", "activity", "acc", "MAC pJ/op", "LUT pJ/op", "MAC/LUT E", "LUT/MAC den",
               "E up to", "TOPS/mm2 @1GHz", "glitch M/L");
    for (const auto& s : r.steps) {
      fmt::print("{:<12} {:<10} {:<8} {:<5} {:>9} {:>9} {:>10} {:>10} {:>8} {:>15} {:>13}\n",
                 s.name, s.library, synth::delay_model_name(s.timing), s.acc,
                 fixed(s.mac_pj, "{:.3g}"), fixed(s.lut_pj, "{:.3g}"), fixed(s.energy_ratio) + "x",
                 fixed(s.density_ratio) + "x", "W" + std::to_string(s.crossover_w),
                 fixed(s.lut_tops_mm2_1ghz, "{:.3g}") + "/" + fixed(s.mac_tops_mm2_1ghz, "{:.3g}"),
                 s.timing == synth::DelayModel::kZero
                     ? std::string("-")
                     : fixed(100 * s.mac_glitch, "{:+.0f}") + "/" +
                           fixed(100 * s.lut_glitch, "{:+.0f}") + "%");
    }
    fmt::print(
        "{:<12} {:<10} {:<8} {:<5} {:>9} {:>9} {:>10} {:>10} {:>8} {:>15}\n", "paper", "TSMC 28nm",
        "DC", "fp16", "", "", fixed(synth::kPaperEnergyRatio) + "x",
        fixed(synth::kPaperDensityRatio) + "x", "all W",
        fixed(synth::kPaperLutTopsMm2, "{:.3g}") + "/" + fixed(synth::kPaperMacTopsMm2, "{:.3g}"));
    for (const auto& f : r.files) fmt::print("  wrote {}\n", f);
  }
  if (r.failed > 0) set_exit_code(kExitFailed);
}

void run(const SweepFlags& o) {
  if (o.out.empty()) throw InputError("--out: an output directory is required");
  if (o.spec == "ledger" && !std::filesystem::is_regular_file(o.spec)) {
    run_ledger(o);
    return;
  }
  std::vector<synth::SweepSpec> specs;
  for (const auto& p : spec_paths(o.spec)) specs.push_back(synth::SweepSpec::load(p));
  if (!o.markdown.empty()) check_output_path(o.markdown, "--markdown", spec_paths(o.spec));
  if (!o.lib.empty()) {
    synth::cell_library(o.lib);  // an unknown name is an InputError naming --lib
    for (auto& spec : specs) spec.library = o.lib;
  }
  if (!o.timing.empty()) {
    const synth::DelayModel m = synth::parse_delay_model(o.timing, "--activity-timing");
    for (auto& spec : specs) spec.timing = m;
  }
  synth::SweepOptions so;
  so.out_dir = o.out;
  so.jobs = o.jobs;
  so.retry_failed = o.retry_failed;
  so.keep_work = o.keep_work;
  so.progress = o.progress || progress_enabled();
  so.limit = o.limit;
  so.report_only = o.report_only;
  so.tool_timeout_s = o.timeout_s;
  so.ltc_binary = o.slurm.ltc_binary;  // what sim points run (and their key's fingerprint)
  // Sim points: the host's threads split between the points running at once and each point's
  // simulator (a Slurm task: the CPUs it asks for).
  so.sim_threads =
      o.executor == "slurm" ? std::max(1, o.slurm.cpus_per_task) : sim_threads_per_job(o.jobs);
  const std::string threads_rule =
      o.executor == "slurm" ? fmt::format("{} per point: --cpus-per-task", so.sim_threads)
      : std::getenv("LTC_THREADS") && *std::getenv("LTC_THREADS")
          ? fmt::format("{} per point: LTC_THREADS", so.sim_threads)
          : fmt::format("{} per point: max(1, {} hardware threads / -j {})", so.sim_threads,
                        sim::hardware_threads(), o.jobs);
  if (o.executor == "slurm") {
    so.executor = std::make_shared<synth::SlurmExecutor>(o.slurm);
  } else if (o.executor != "local") {
    throw InputError("--executor: '" + o.executor + "' is not valid (valid: local, slurm)");
  }
  nlohmann::json all = nlohmann::json::array();
  int failed = 0;
  for (const auto& spec : specs) {
    if (so.progress) {
      fmt::print(stderr, "sweep {}: {} points ({}) -> {}\n", spec.name, spec.points.size(),
                 spec.library, o.out);
    }
    const auto s = synth::run_sweep(spec, so);
    failed += s.failed;
    const auto stored = std::count_if(s.rows.begin(), s.rows.end(), [](const nlohmann::json& r) {
      return r.value("status", "") == "ok";
    });
    nlohmann::json j = {{"sweep", spec.name},
                        {"title", spec.title},
                        {"library", spec.library},
                        {"activity_timing", synth::delay_model_name(spec.timing)},
                        {"points", s.points},
                        {"reused", s.reused},
                        {"ran", s.ran},
                        {"ok", s.ok},
                        {"failed", s.failed},
                        {"rows", s.rows.size()},
                        {"rows_ok", stored},
                        {"resubmitted", s.resubmitted},
                        {"executor", o.executor},
                        {"seconds", s.seconds},
                        {"files", s.files},
                        {"ratios", s.ratios},
                        {"crossovers", s.crossovers}};
    if (spec.tool == "sim") {
      j["sim_threads"] = so.sim_threads;
      j["sim_threads_rule"] = threads_rule;
    }
    all.push_back(j);
    if (!o.json) {
      fmt::print(
          "sweep {} ({}): {} design points ({} from the store, {} run: {} ok, {} failed{}) in "
          "{:.1f} s\n",
          spec.name, spec.library, s.points, s.reused, s.ran, s.ok, s.failed,
          s.resubmitted ? fmt::format(", {} Slurm task(s) resubmitted", s.resubmitted) : "",
          s.seconds);
      if (spec.tool == "sim") fmt::print("  simulator threads: {}\n", threads_rule);
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
  if (!o.markdown.empty()) {
    write_text_atomic(o.markdown, report::ppa_markdown(all));
    if (!o.json) fmt::print("wrote {}\n", o.markdown);
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
      auto o = std::make_shared<SweepFlags>();
      CLI::App* sub = app.add_subcommand(
          "sweep",
          "Many design points through the PPA flow (or ltc sim runs), here or as Slurm job "
          "arrays; resumable; CSV in --out (the report plots it)");
      sub->add_option("spec", o->spec,
                      "sweep spec JSON, a built-in name (dp-k, dp4, wbits, dse), 'all', or "
                      "'ledger' (the DP4 comparison taken to the paper's setup step by step)")
          ->required();
      sub->add_option("--out", o->out, "results folder (results.jsonl, CSV, summary)")->required();
      sub->add_option("-j,--jobs", o->jobs, "design points in parallel, 1..1024")
          ->capture_default_str()
          ->check(in_range(1, 1024));
      sub->add_flag("--retry-failed", o->retry_failed, "rerun points stored as failed");
      sub->add_flag("--keep-work", o->keep_work, "keep netlists and simulation files");
      sub->add_flag("--progress", o->progress, "progress on stderr even when it is not a TTY");
      sub->add_option("--limit", o->limit, "run at most this many new points (0: all)")
          ->check(in_range(0, 1e9));
      sub->add_flag("--report-only", o->report_only,
                    "run nothing; write CSV and summary from the stored results");
      sub->add_option("--lib", o->lib,
                      "cell library of every point: osu018 or nangate45 (default: the spec's "
                      "\"library\", else osu018)");
      sub->add_option("--activity-timing", o->timing,
                      "delay model of the activity simulation: zero, unit or liberty (glitches "
                      "counted; default: the spec's \"activity_timing\", else zero)");
      sub->add_option("--timeout-s", o->timeout_s, "limit per tool run")
          ->capture_default_str()
          ->check(in_range(1, 1e6));
      sub->add_flag("--json", o->json, "print one JSON object");
      sub->add_option("--markdown", o->markdown,
                      "also write the sweeps' ratios and crossovers against the paper (the "
                      "ledger: its steps) as Markdown to this file (docs/results/ppa.md, "
                      "ppa-ledger.md)");
      sub->add_option("--executor", o->executor,
                      "where points run: local (-j at a time) or slurm (job arrays; --out on a "
                      "filesystem the nodes share)")
          ->capture_default_str();
      const char* kSlurm = kSlurmGroup;
      sub->add_option("--partition", o->slurm.partition, "sbatch --partition")->group(kSlurm);
      sub->add_option("--time-limit", o->slurm.time_limit, "sbatch --time per task, e.g. 30:00")
          ->group(kSlurm);
      sub->add_option("--mem", o->slurm.mem, "sbatch --mem per task, e.g. 4G")->group(kSlurm);
      sub->add_option("--cpus-per-task", o->slurm.cpus_per_task, "sbatch --cpus-per-task")
          ->check(in_range(1, 1e6))
          ->group(kSlurm);
      sub->add_option("--sbatch-template", o->slurm.sbatch_template,
                      "a site's batch script (#!, #SBATCH lines, module loads) with a line "
                      "{command} where the task's ltc command goes")
          ->group(kSlurm);
      sub->add_option("--sbatch-arg", o->slurm.sbatch_args,
                      "one more sbatch option, as given (repeatable), e.g. --sbatch-arg=--qos=low")
          ->expected(1)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
          ->group(kSlurm);
      sub->add_option("--max-running", o->slurm.max_running,
                      "at most this many array tasks at once (0: no limit)")
          ->check(in_range(0, 1e6))
          ->group(kSlurm);
      sub->add_option("--max-retries", o->slurm.max_retries,
                      "submit a task again at most this often when it ends without a record "
                      "(killed, timed out, node failure)")
          ->capture_default_str()
          ->check(in_range(0, 100))
          ->group(kSlurm);
      sub->add_option("--poll-s", o->slurm.poll_s, "seconds between squeue polls")
          ->capture_default_str()
          ->check(in_range(0.1, 3600))
          ->group(kSlurm);
      sub->add_option("--lost-after-s", o->slurm.lost_after_s,
                      "a task that ended without a record is submitted again after this long "
                      "(time for its record to show on the shared filesystem)")
          ->capture_default_str()
          ->check(in_range(0, 86400))
          ->group(kSlurm);
      sub->add_option("--ltc-bin", o->slurm.ltc_binary,
                      "the ltc the tasks run (default: this one; must be reachable from the "
                      "nodes)")
          ->group(kSlurm);
      set_examples(sub, {"ltc sweep dp4 --out sweeps/dp4 -j 2",
                         "ltc sweep synth/sweeps/wbits.json --out sweeps/wbits --report-only",
                         "ltc sweep dse --out /shared/dse --executor slurm --partition cpu "
                         "--time-limit 30:00 --mem 4G"});
      sub->callback([o, sub] {
        std::vector<std::string> slurm_flags;
        for (const CLI::Option* opt : sub->get_options()) {
          if (opt->get_group() == kSlurmGroup) slurm_flags.push_back(opt->get_name());
        }
        FlagRules(sub)
            .flags(slurm_flags, "with --executor slurm", "the local executor runs points here",
                   [o] { return o->executor == "slurm"; })
            .flags({"--jobs"}, "with --executor local",
                   "Slurm runs as many tasks as the cluster gives; --max-running limits them",
                   [o] { return o->executor != "slurm"; })
            .flags({"--jobs", "--retry-failed", "--keep-work", "--limit", "--timeout-s"},
                   "without --report-only", "--report-only runs nothing",
                   [o] { return !o->report_only; })
            .check();
        run(*o);
      });
    }};

struct SweepTaskFlags {
  std::string manifest;
  int index = -1;
};

// What each Slurm array task runs: one task of a manifest written by `ltc sweep --executor slurm`.
void run_task(const SweepTaskFlags& o) {
  int index = o.index;
  if (index < 0) {
    const char* env = std::getenv("SLURM_ARRAY_TASK_ID");
    if (!env || !*env) {
      throw InputError(
          "INDEX: give the task index, or run inside a Slurm array task "
          "(SLURM_ARRAY_TASK_ID)");
    }
    index = std::atoi(env);
  }
  const nlohmann::json rec = synth::run_manifest_task(
      o.manifest, index, [](const synth::SweepTask& t) { return synth::run_sweep_task(t.job); });
  fmt::print("{} {}: {}\n", rec.value("id", std::string()), rec.value("status", std::string()),
             rec.value("status", "") == "ok" ? std::string("record written")
                                             : rec.value("error", std::string()));
  if (rec.value("status", "") != "ok") set_exit_code(kExitFailed);
}

CommandRegistrar reg_task{
    62, [](CLI::App& app) {
      auto o = std::make_shared<SweepTaskFlags>();
      CLI::App* sub = app.add_subcommand(
          "sweep-task",
          "One task of a sweep batch (what each Slurm array task of ltc sweep runs): its record "
          "goes to <out>/records/");
      sub->add_option("manifest", o->manifest, "batch manifest (<out>/slurm/batch-N.json)")
          ->required();
      sub->add_option("index", o->index, "task index (default: $SLURM_ARRAY_TASK_ID)");
      set_examples(sub, {"ltc sweep-task sweeps/dse/slurm/batch-1.json 0"});
      sub->callback([o] { run_task(*o); });
    }};

}  // namespace
}  // namespace ltc::cli
