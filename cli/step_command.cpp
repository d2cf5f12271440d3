#include "cli/step_command.h"

#include "common/error.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

namespace ltc::cli {

std::vector<int64_t> parse_int_list(const std::string& text, const std::string& flag) {
  std::vector<int64_t> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = text.find(',', pos);
    const std::string item =
        text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t used = 0;
    int64_t v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size()) {
      throw InputError(flag + ": '" + item + "' is not an integer (give N or a list N1,N2,...)");
    }
    out.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

void add_step_options(CLI::App* sub, const std::shared_ptr<StepFlags>& o, const char* length_flag,
                      const char* length_help) {
  o->length_flag = length_flag;
  o->sub = sub;
  add_model_option(sub, o->req.model)->required();
  add_gpu_option(sub, o->req.gpu)->required();
  sub->add_option("--batch", o->batch, "sequences (or a list 1,8,64 to sweep)")
      ->capture_default_str();
  sub->add_option(length_flag, o->length, length_help)->capture_default_str();
  sub->add_option("--weights", o->req.weights,
                  "fp16, bf16, fp8e4m3, int8..int1[:g=G], ternary, binary[:kb=,g=,s=]")
      ->capture_default_str();
  sub->add_option("--acts", o->req.acts, "int8, fp16, bf16, fp8e4m3, fp8e5m2")
      ->capture_default_str();
  sub->add_option("--precompute", o->precompute,
                  "table precompute: none (MAC path), separate, fused, inkernel (default on LUT "
                  "GPUs: the faster of fused and none, with the reason printed)");
  sub->add_flag("--quantize-tables", o->req.quantize_tables, "INT8 table entries");
  sub->add_option("--kernels", o->kernels,
                  "which kernels run the step: reference (the eager step the roofline is "
                  "calibrated on) or compiled (ltc compile model's, as ltc sim runs them; "
                  "docs/performance-models.md#one-kernel-list)")
      ->capture_default_str();
  sub->add_option("--expert-load", o->req.expert_load, kExpertLoadHelp)->capture_default_str();
  add_gpu_set_option(sub, o->gpu_set, "estimate");
  sub->add_flag("--json", o->json, "print one JSON object ({\"sweep\": [...]} for lists)");
}

void run_step(StepFlags o) {
  if (!o.precompute.empty()) o.req.precompute = o.precompute;
  o.req.kernels = llm::parse_kernel_plan(o.kernels, "--kernels");
  const auto batches = parse_int_list(o.batch, "--batch");
  const auto lengths = parse_int_list(o.length, o.length_flag);
  const nlohmann::json defaults =
      defaults_taken(o.sub, {"--batch", o.length_flag, "--weights", "--acts", "--kernels"});
  const auto model = load_model_reporting(o.req.model);
  const roofline::Machine m(
      apply_gpu_set(hw::load_gpu(o.req.gpu), o.gpu_set, [&](const hw::GpuConfig& g) {
        roofline::StepRequest r = o.req;
        r.batch = batches[0];
        r.length = lengths[0];
        return nlohmann::json(roofline::estimate(roofline::Machine(g), model, r));
      }));
  for (int64_t l : lengths) {
    warn_past_positions(model, o.req.phase == llm::Phase::kDecode ? l + 1 : l, o.length_flag);
  }
  if (batches.size() == 1 && lengths.size() == 1) {
    o.req.batch = batches[0];
    o.req.length = lengths[0];
    const auto e = roofline::estimate(m, model, o.req);
    if (o.json) {
      nlohmann::json j = e;
      j["defaults"] = defaults;
      if (!o.gpu_set.empty()) j["gpu_set"] = o.gpu_set;
      fmt::print("{}\n", j.dump());
    } else {
      fmt::print(
          "{}{}{}", roofline::format_step(e),
          o.gpu_set.empty() ? "" : "gpu " + m.gpu().name + " with --gpu-set " + o.gpu_set + "\n",
          defaults_line(defaults));
    }
    return;
  }
  nlohmann::json rows = nlohmann::json::array();
  if (!o.json) {
    fmt::print("{} {} on {}{}, weights {}, acts {}\n{}", model.name, llm::phase_name(o.req.phase),
               m.gpu().name, o.gpu_set.empty() ? "" : " with --gpu-set " + o.gpu_set, o.req.weights,
               o.req.acts, defaults_line(defaults));
    fmt::print("{:>8} {:>8} {:>12} {:>12} {:>14} {:>10}  {}\n", "batch", o.length_flag.substr(2),
               "layer_ms", "latency_ms", "tokens_per_s", "memory_gb", "fits DRAM");
  }
  for (int64_t b : batches) {
    for (int64_t l : lengths) {
      o.req.batch = b;
      o.req.length = l;
      const auto e = roofline::estimate(m, model, o.req);
      if (o.json) {
        rows.push_back(e);
      } else {
        fmt::print("{:>8} {:>8} {:>12.4f} {:>12.3f} {:>14.1f} {:>10.1f}  {}\n", b, l, e.layer_ms,
                   e.latency_ms, e.tokens_per_s, e.memory_gb, e.fits_memory ? "yes" : "NO");
      }
    }
  }
  if (o.json) {
    nlohmann::json j{{"sweep", rows}, {"defaults", defaults}};
    if (!o.gpu_set.empty()) j["gpu_set"] = o.gpu_set;
    fmt::print("{}\n", j.dump());
  }
}

}  // namespace ltc::cli
