// `ltc calibrate`: fit a GPU's `achievable` section to profiler measurements
// (model/roofline/calibrate.h) and print the in-sample and leave-one-model-out errors.
#include "cli/command.h"
#include "cli/options.h"
#include "common/error.h"
#include "common/file_io.h"
#include "model/roofline/calibrate.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <memory>

namespace ltc::cli {
namespace {

struct CalibrateFlags {
  std::string gpu = "h200";
  std::vector<std::string> measurements;
  std::string out;
  bool no_lomo = false;
  bool no_loso = false;
  int shape_folds = 8;
  std::string markdown;
  std::vector<std::string> hold_out;
  bool json = false;
};

void run(const CalibrateFlags& o) {
  std::vector<std::string> inputs = o.measurements;
  inputs.push_back(roofline::gpu_file_path(o.gpu));
  if (!o.out.empty()) check_output_path(o.out, "--out", inputs);
  if (!o.markdown.empty()) check_output_path(o.markdown, "--markdown", inputs);
  if (o.shape_folds < 0) {
    throw InputError(fmt::format(
        "--shape-folds: {} is not valid (give 0 for one fold per (N, K) shape, or a number of "
        "folds >= 1)",
        o.shape_folds));
  }
  const hw::GpuConfig gpu = hw::load_gpu(o.gpu);
  const auto data = roofline::load_measurements(o.measurements);
  roofline::CalibrateOptions opts;
  opts.lomo = !o.no_lomo;
  opts.loso = !o.no_loso;
  opts.shape_folds = o.shape_folds;
  opts.hold_out = o.hold_out;
  const auto r = roofline::calibrate(gpu, data, opts);
  if (!r.device_mismatch.empty()) fmt::print(stderr, "ltc: warning: {}\n", r.device_mismatch);
  if (!o.out.empty() && r.parameters.empty()) {
    throw InputError(
        "--out: these measurements fit no parameter (no decode or prefill step, no GEMM of a "
        "profile, no low-bit GEMM; a GEMM-only file is checked, not fitted): no GPU file is "
        "written");
  }
  if (!o.out.empty()) {
    const std::string text = roofline::calibrated_gpu_json(roofline::gpu_file_path(o.gpu), r);
    // Written whole or not at all: a temporary beside it, renamed over it.
    try {
      write_text_atomic(o.out, text);
    } catch (const std::runtime_error&) {
      throw InputError("--out: cannot write '" + o.out + "'");
    }
  }
  if (!o.markdown.empty()) {
    try {
      write_text_atomic(o.markdown, roofline::calibration_markdown(r));
    } catch (const std::runtime_error&) {
      throw InputError("--markdown: cannot write '" + o.markdown + "'");
    }
  }
  if (o.json) {
    nlohmann::json j = r;
    if (!o.out.empty()) j["out"] = o.out;
    fmt::print("{}\n", j.dump());
    return;
  }
  fmt::print("{}", roofline::format_calibration(r));
  if (!o.out.empty()) fmt::print("wrote {}\n", o.out);
}

CommandRegistrar reg{
    43, [](CLI::App& app) {
      auto opts = std::make_shared<CalibrateFlags>();
      CLI::App* sub = app.add_subcommand(
          "calibrate",
          "Fit a GPU's achievable rates to profiler measurements (tools/profile-gpu); print "
          "in-sample and leave-one-model-out errors");
      add_gpu_option(sub, opts->gpu)->capture_default_str();
      sub->add_option("--measurements", opts->measurements,
                      "measurement files: profiles (schema ltc-gpu-profile/1) and/or GEMM lists "
                      "({\"gemm\": [...]})")
          ->required()
          ->expected(1, -1);
      sub->add_option("--out", opts->out, "write the GPU file with the fitted achievable section");
      sub->add_flag("--no-lomo", opts->no_lomo, "skip the leave-one-model-out fits");
      sub->add_flag("--no-loso", opts->no_loso, "skip the leave-one-shape-out GEMM fits");
      sub->add_option("--shape-folds", opts->shape_folds,
                      "leave-one-shape-out folds of the distinct GEMM (N, K) shapes (0: one per "
                      "shape)")
          ->capture_default_str();
      sub->add_option("--markdown", opts->markdown,
                      "also write the error tables as Markdown to this file (e.g. "
                      "docs/results/calibration.md)");
      sub->add_option("--hold-out", opts->hold_out,
                      "a --measurements file held out by construction: one more fit without it "
                      "predicts its cases (repeatable)");
      sub->add_flag("--json", opts->json, "print one JSON object");
      set_examples(sub, {"ltc calibrate --gpu h200 --measurements "
                         "configs/calibration/h200-profile.json --out h200.json",
                         "ltc calibrate --gpu h200 --measurements "
                         "configs/calibration/h200-profile.json --json"});
      sub->callback([opts, sub] {
        FlagRules(sub)
            .flags({"--shape-folds"}, "without --no-loso", "--no-loso fits no held-out shape folds",
                   [opts] { return !opts->no_loso; })
            .check();
        run(*opts);
      });
    }};

}  // namespace
}  // namespace ltc::cli
