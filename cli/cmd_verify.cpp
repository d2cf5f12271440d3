// `ltc verify` (docs/cli.md): a design point's verilated RTL against the golden model on random
// operands; builds the verilated model on demand (cached). Exit 1 when any output bit differs.
#include "cli/command.h"
#include "cli/design_point.h"
#include "cli/options.h"
#include "common/file_io.h"
#include "rtl/rtl_verify.h"

#include <fmt/core.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace ltc::cli {
namespace {

struct VerifyFlags {
  DesignPointFlags point;
  std::string vcd, cache;
  int vectors = 64;
  uint64_t seed = 1;
  int stall = 10;
  bool json = false;
  const CLI::App* sub = nullptr;  // for the defaults it took
};

void run_verify(const VerifyFlags& a) {
  const hw::TensorCoreConfig config = make_design_point(a.point);
  rtl::VerifyOptions opt;
  opt.vectors = a.vectors;
  opt.seed = a.seed;
  opt.in_stall_pct = static_cast<uint32_t>(a.stall);
  opt.out_stall_pct = static_cast<uint32_t>(a.stall);
  // The VCD appears whole or not at all (a failed or interrupted run leaves no half file).
  std::optional<AtomicFile> vcd;
  if (!a.vcd.empty()) {
    vcd.emplace(a.vcd);
    opt.vcd = vcd->temporary();
  }
  opt.harness.cache_dir = a.cache;
  if (progress_enabled()) {
    fmt::print(stderr, "verify {}: building or loading the verilated model...\n", config.id());
  }
  const rtl::VerifyReport r = rtl::verify(config, opt);
  if (vcd) vcd->commit();
  if (a.json) {
    nlohmann::json mism = nlohmann::json::array();
    for (const auto& x : r.first_mismatches) {
      mism.push_back({{"lmma", x.lmma}, {"m", x.m}, {"n", x.n}, {"got", x.got}, {"want", x.want}});
    }
    nlohmann::json j = {{"config", config},
                        {"id", r.config_id},
                        {"vectors", r.vectors},
                        {"seed", a.seed},
                        {"elements", r.elements},
                        {"mismatches", r.mismatches},
                        {"first_mismatches", mism},
                        {"cycles", r.cycles},
                        {"build_s", r.build_seconds},
                        {"run_s", r.run_seconds},
                        {"defaults", design_point_defaults(a.sub)}};
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print("verify {} (seed {}): {} LMMAs, {} output elements, {} mismatches, {} cycles\n",
               r.config_id, a.seed, r.vectors, r.elements, r.mismatches, r.cycles);
    fmt::print("{}", defaults_line(design_point_defaults(a.sub)));
    for (const auto& x : r.first_mismatches) {
      fmt::print("  lmma {} O[{},{}]: rtl 0x{:x}, golden 0x{:x}\n", x.lmma, x.m, x.n, x.got,
                 x.want);
    }
  }
  if (r.mismatches != 0) set_exit_code(kExitFailed);
}

CommandRegistrar reg{
    40, [](CLI::App& app) {
      auto args = std::make_shared<VerifyFlags>();
      auto* sub = app.add_subcommand(
          "verify",
          "Run a design point's verilated RTL against the golden model on random operands");
      sub->add_option("--design", args->point.design, "lut, lut-naive, mac, add")
          ->capture_default_str();
      add_tile_options(sub, args->point.m, args->point.n, args->point.k, args->point.wbits,
                       "--weights intN: N");
      add_operand_options(sub, &args->point.act, args->point.weights, args->point.wbits);
      sub->add_option("--acc", args->point.acc,
                      "accumulator dtype (default from --acts: int32 or fp32)");
      sub->add_option("--table", args->point.table,
                      "table dtype (default: int16 for int8, else --acts)");
      sub->add_option("--out", args->point.out, "output dtype (default: the accumulator's)");
      sub->add_option(
          "--weight", args->point.weight,
          "mac weight dtype (default: --acts; int8 with a float --acts: --weights intN codes)");
      sub->add_option("--pipeline", args->point.pipeline_stages, "pipeline stages (1..8)")
          ->capture_default_str()
          ->check(in_range(1, 8));
      sub->add_option("--vectors", args->vectors, "random LMMAs (1..10^7)")
          ->capture_default_str()
          ->check(in_range(1, 1e7));
      sub->add_option("--seed", args->seed, "random seed")->capture_default_str();
      sub->add_option("--stall", args->stall, "percent of cycles with handshake stalls (0..90)")
          ->capture_default_str()
          ->check(in_range(0, 90));
      sub->add_option("--vcd", args->vcd, "write a VCD trace of the run to this file");
      sub->add_option("--cache", args->cache, "model cache directory (default ~/.cache/ltc)");
      sub->add_flag("--json", args->json, "print one JSON object");
      set_examples(sub, {"ltc verify --design lut --m 2 --n 64 --k 4 --weights int2 --acts fp16",
                         "ltc verify --design mac --acts int8 --vectors 256 --vcd run.vcd"});
      args->sub = sub;
      sub->callback([args, sub] {
        args->point.wbits_given =
            sub->get_option("--wbits")->count() + sub->get_option("--weights")->count() > 0;
        check_design_point_flags(sub, args->point);
        if (!args->vcd.empty()) check_output_path(args->vcd, "--vcd");
        run_verify(*args);
      });
    }};

}  // namespace
}  // namespace ltc::cli
