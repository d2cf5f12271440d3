// Options shared by `ltc decode` and `ltc prefill` (one tile-level step estimate each).
#pragma once

#include "cli/command.h"
#include "model/roofline/estimate.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <memory>

namespace ltc::cli {

struct StepOptions {
  roofline::StepRequest req;
  std::string precompute;
  bool json = false;
};

inline void add_step_options(CLI::App* sub, const std::shared_ptr<StepOptions>& o,
                             const char* length_flag, const char* length_help) {
  sub->add_option("--model", o->req.model, "built-in model name or Hugging Face config.json path")
      ->required();
  sub->add_option("--gpu", o->req.gpu, "built-in GPU name or GPU JSON path")->required();
  sub->add_option("--batch", o->req.batch, "sequences")->capture_default_str();
  sub->add_option(length_flag, o->req.length, length_help)->capture_default_str();
  sub->add_option("--weights", o->req.weights,
                  "fp16, bf16, fp8e4m3, int8..int1[:g=G], ternary, binary[:kb=,g=,s=]")
      ->capture_default_str();
  sub->add_option("--acts", o->req.acts, "int8, fp16, bf16, fp8e4m3, fp8e5m2")
      ->capture_default_str();
  sub->add_option("--precompute", o->precompute,
                  "table precompute: none, separate, fused (default: fused on LUT GPUs)");
  sub->add_flag("--quantize-tables", o->req.quantize_tables, "INT8 table entries");
  sub->add_flag("--json", o->json, "print one JSON object");
}

inline void run_step(StepOptions o) {
  if (!o.precompute.empty()) o.req.precompute = o.precompute;
  const auto e = roofline::estimate(o.req);
  if (o.json) {
    fmt::print("{}\n", nlohmann::json(e).dump());
  } else {
    fmt::print("{}", roofline::format_step(e));
  }
}

}  // namespace ltc::cli
