// `ltc bench ppa`: seconds per design point of the PPA flow (default: the M2N64K4 FP16 LUT tile,
// the paper's reference shape) by stage, and optionally a whole built-in sweep at -j N.
#include "cli/command.h"
#include "cli/options.h"
#include "common/error.h"
#include "synth/ppa.h"
#include "synth/sweep.h"

#include <fmt/core.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <memory>

namespace ltc::cli {
namespace {

struct BenchPpaFlags {
  std::string design = "lut", act = "fp16";
  std::string lib = "osu018", timing = "zero";
  int m = 2, n = 64, k = 4, wbits = 1;
  std::string weights;  // --weights intN (else --wbits)
  std::string sweep;    // built-in name, 'all', or a spec path
  std::string out;
  int jobs = 2;
  bool json = false;
  bool vs_unit = false;  // also the single unit (M1N1K4) at the same formats: critical paths
};

void run(const BenchPpaFlags& o) {
  check_tile_units(o.m, o.n);
  auto config = hw::TensorCoreConfig::make(
      hw::parse_design(o.design), golden::LmmaShape{o.m, o.n, o.k},
      golden::parse_act_dtype(o.act, "--acts"), weight_planes(o.weights, o.wbits));
  config.validate();
  const auto root =
      std::filesystem::temp_directory_path() / fmt::format("ltc-bench-ppa-{}", ::getpid());
  synth::PpaOptions po;
  po.library = synth::cell_library(o.lib).name;
  po.sim.timing = synth::parse_delay_model(o.timing, "--activity-timing");
  po.workdir = (root / "point").string();
  po.sim.cycles = 0;  // auto by netlist size, as ltc ppa does
  const synth::PpaResult r = synth::run_ppa(config, po);
  nlohmann::json j = {
      {"point", config.id()},   {"library", r.library},  {"activity_timing", r.activity_timing},
      {"seconds", r.seconds},   {"cells", r.cells},      {"area_um2", r.area_um2},
      {"delay_ns", r.delay_ns}, {"power_mw", r.power_mw}};
  auto stage = [&r](const char* s) {
    const auto it = r.seconds.find(s);
    return it == r.seconds.end() ? 0.0 : it->second;
  };
  if (!o.json) {
    fmt::print(
        "ppa point {} ({}, {} delay activity): {:.1f} s (yosys {:.1f} s, activity {:.1f} s, sta "
        "{:.1f} s, power {:.1f} s), {} cells, critical path {:.3f} ns\n",
        config.id(), r.library, r.activity_timing, stage("total"), stage("yosys"),
        stage("activity"), stage("sta"), stage("power"), r.cells, r.delay_ns);
  }
  if (o.vs_unit) {
    auto unit = config;
    unit.shape = golden::LmmaShape{1, 1, config.shape.k};
    synth::PpaOptions uo = po;
    uo.workdir = (root / "unit").string();
    const synth::PpaResult u = synth::run_ppa(unit, uo);
    const double ratio = r.delay_ns / u.delay_ns;
    j["unit"] = {{"point", unit.id()}, {"delay_ns", u.delay_ns}, {"ratio", ratio}};
    if (!o.json) {
      fmt::print("critical path {} {:.3f} ns vs unit {} {:.3f} ns: {:.2f}x (issue #14: <= 1.5x)\n",
                 config.id(), r.delay_ns, unit.id(), u.delay_ns, ratio);
    }
    std::filesystem::remove_all(root / "unit");
  }
  if (!o.sweep.empty()) {
    std::vector<std::string> names =
        o.sweep == "all" ? synth::SweepSpec::builtin_names() : std::vector<std::string>{o.sweep};
    synth::SweepOptions so;
    so.out_dir = o.out.empty() ? (root / "sweep").string() : o.out;
    so.jobs = o.jobs;
    so.progress = progress_enabled();
    double total = 0;
    int points = 0, ran = 0;
    for (const auto& n : names) {
      const std::string path = std::filesystem::exists(n) ? n : synth::SweepSpec::builtin_path(n);
      const auto s = synth::run_sweep(synth::SweepSpec::load(path), so);
      total += s.seconds;
      points += s.points;
      ran += s.ran;
    }
    j["sweep"] = {
        {"name", o.sweep}, {"jobs", o.jobs}, {"points", points}, {"ran", ran}, {"seconds", total}};
    if (!o.json) {
      fmt::print("sweep {}: {} points ({} run) in {:.1f} s at -j {}\n", o.sweep, points, ran, total,
                 o.jobs);
    }
  }
  std::filesystem::remove_all(root / "point");
  if (o.out.empty()) std::filesystem::remove_all(root);
  if (o.json) fmt::print("{}\n", j.dump());
}

CommandRegistrar reg{
    900, [](CLI::App& app) {
      auto o = std::make_shared<BenchPpaFlags>();
      CLI::App* sub = bench_command(app).add_subcommand(
          "ppa", "Seconds per PPA design point (M2N64K4 FP16 LUT by default), optionally a sweep");
      sub->add_option("--design", o->design, "lut, lut-naive, mac, add")->capture_default_str();
      add_tile_options(sub, o->m, o->n, o->k, o->wbits, "--weights intN: N");
      add_operand_options(sub, &o->act, o->weights, o->wbits);
      sub->add_option("--lib", o->lib, "cell library: osu018 or nangate45")->capture_default_str();
      sub->add_option("--activity-timing", o->timing,
                      "activity delay model: zero, unit or liberty (glitches counted)")
          ->capture_default_str();
      sub->add_option("--sweep", o->sweep, "also time a sweep: dp-k, dp4, wbits, dse or all");
      sub->add_option("--out", o->out, "keep the sweep results here (default: temporary)");
      sub->add_option("-j,--jobs", o->jobs, "sweep parallelism")
          ->capture_default_str()
          ->check(in_range(1, 1024));
      set_examples(sub, {"ltc bench ppa", "ltc bench ppa --sweep dp4 -j 2 --json"});
      sub->add_flag("--vs-unit", o->vs_unit,
                    "also synthesize the single unit (M1N1K4) at the same formats and compare "
                    "critical paths");
      sub->add_flag("--json", o->json, "print one JSON object");
      sub->callback([o, sub] {
        check_older_spellings(sub);
        run(*o);
      });
    }};

}  // namespace
}  // namespace ltc::cli
