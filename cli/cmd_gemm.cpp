// `ltc gemm`: tile-level estimate of one (mp)GEMM Y[M,N] = X[M,K] W[N,K]^T on a GPU; with
// --calibration FILE, the model against every measured GEMM in FILE and its MAPE.
#include "cli/command.h"
#include "cli/options.h"
#include "common/error.h"
#include "model/golden/gemm.h"
#include "model/roofline/estimate.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <memory>

namespace ltc::cli {
namespace {

struct GemmFlags {
  int64_t m = 0, n = 0, k = 0;
  std::string gpu = "a100";
  std::string weights, acts;  // empty: gemm_precision_defaults (the GPU's tensor precision)
  std::string tables = "auto";
  bool quantize_tables = false;
  std::string calibration;
  std::string gpu_set;  // --gpu-set path=value,...
  bool json = false;
  const CLI::App* sub = nullptr;  // for the defaults it took
};

void run_calibration(const GemmFlags& o) {
  const roofline::Machine m(hw::load_gpu(o.gpu));
  const auto rep = roofline::check_gemms(m, o.calibration);
  if (!rep.device_mismatch.empty()) fmt::print(stderr, "ltc: warning: {}\n", rep.device_mismatch);
  if (o.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& c : rep.gemms) {
      rows.push_back({{"name", c.name},
                      {"m", c.m},
                      {"n", c.n},
                      {"k", c.k},
                      {"measured_ms", c.measured_ms},
                      {"ms", c.model_ms},
                      {"error", c.error()}});
    }
    fmt::print("{}\n", nlohmann::json{{"gpu", o.gpu},
                                      {"file", o.calibration},
                                      {"device", rep.device},
                                      {"gemms", rows},
                                      {"mape", rep.mape}}
                           .dump());
    return;
  }
  fmt::print("{:<20} {:>6} {:>6} {:>6} {:>10} {:>10} {:>7}\n", "name", "M", "N", "K", "meas ms",
             "model ms", "err");
  for (const auto& c : rep.gemms) {
    fmt::print("{:<20} {:>6} {:>6} {:>6} {:>10.4f} {:>10.4f} {:>+6.1f}%\n", c.name, c.m, c.n, c.k,
               c.measured_ms, c.model_ms, 100 * c.error());
  }
  fmt::print("MAPE {:.2f}% over {} GEMMs on {}\n", 100 * rep.mape, rep.gemms.size(), o.gpu);
  if (!rep.device_mismatch.empty()) fmt::print("note: {}\n", rep.device_mismatch);
}

void run(GemmFlags o) {
  if (!o.calibration.empty()) return run_calibration(o);
  if (o.m <= 0 || o.n <= 0 || o.k <= 0) {
    throw InputError("--m, --n, --k: required, each >= 1 (or --calibration FILE)");
  }
  golden::check_gemm_extents(o.m, o.n, o.k);
  const hw::GpuConfig base = hw::load_gpu(o.gpu);
  nlohmann::json defaults = defaults_taken(o.sub, {"--gpu", "--tables"});
  const std::string why = gemm_precision_defaults(
      o.gpu_set.empty() ? base : hw::with_overrides(base, o.gpu_set), o.weights, o.acts, defaults);
  const auto w = llm::parse_weight_format(o.weights, "--weights");
  const auto a = golden::parse_act_dtype(o.acts, "--acts");
  // Every field --gpu-set changes must change one of the two paths' costs.
  const roofline::Machine m(apply_gpu_set(base, o.gpu_set, [&](const hw::GpuConfig& g) {
    const roofline::Machine mg(g);
    nlohmann::json j = nlohmann::json::array();
    j.push_back(roofline::gemm_cost(mg, roofline::make_gemm(o.m, o.n, o.k, w, a)));
    if (w.is_low_bit() && g.has_lut_tensor() && g.lut_tops(o.acts, w.planes()) > 0) {
      j.push_back(roofline::gemm_cost(
          mg, roofline::make_gemm(o.m, o.n, o.k, w, a, true, o.quantize_tables)));
    }
    return j;
  }));
  const bool lut_possible =
      w.is_low_bit() && m.gpu().has_lut_tensor() && m.gpu().lut_tops(o.acts, w.planes()) > 0;
  if (o.tables != "auto" && o.tables != "on" && o.tables != "off") {
    throw InputError("--tables: '" + o.tables + "' is not valid (valid: auto, on, off)");
  }
  if (o.tables == "on" && !lut_possible) {
    throw InputError("--tables on: gpu '" + m.gpu().name + "' has no LUT tensor core for " +
                     w.name() + " weights x " + o.acts +
                     " activations (tables need low-bit weights and a GPU with LUT cores, e.g. "
                     "a100-lut4x)");
  }
  auto cost_of = [&](bool tables) {
    return roofline::gemm_cost(
        m, roofline::make_gemm(o.m, o.n, o.k, w, a, tables, tables && o.quantize_tables));
  };
  bool tables = o.tables == "on" || (o.tables == "auto" && lut_possible);
  roofline::OpCost c = cost_of(tables);
  std::string choice;
  if (o.tables == "auto" && lut_possible) {
    // Left to the tool: the faster of the LUT and MAC paths, and why.
    const roofline::OpCost mac = cost_of(false);
    if (mac.ms < c.ms) {
      choice =
          fmt::format("auto: mac path {:.4f} ms vs lut path {:.4f} ms (mac kept)", mac.ms, c.ms);
      c = mac;
      tables = false;
    } else {
      choice =
          fmt::format("auto: lut path {:.4f} ms vs mac path {:.4f} ms (lut kept)", c.ms, mac.ms);
    }
  }
  if (o.quantize_tables && !tables) {
    throw InputError(
        "--quantize-tables: applies to LUT tables only, and this GEMM runs on the " +
        std::string(lut_possible ? "MAC path (faster; add --tables on)"
                                 : "MAC path (gpu '" + m.gpu().name + "' has no LUT core for it)"));
  }
  const auto g = roofline::make_gemm(o.m, o.n, o.k, w, a, tables, o.quantize_tables);
  const double tops = g.flops() / (c.ms * 1e-3) / 1e12;
  if (o.json) {
    nlohmann::json j = c;
    j.erase("name");
    j.erase("kind");
    j.update({{"gpu", m.gpu().name},
              {"m", o.m},
              {"n", o.n},
              {"k", o.k},
              {"weights", w.name()},
              {"acts", o.acts},
              {"tables", tables},
              {"tops", tops},
              {"gpu_set", o.gpu_set},
              {"defaults", defaults}});
    if (!why.empty()) j["precision_default"] = why;
    if (!choice.empty()) j["path_choice"] = choice;
    j["tiles"] = j["tile"]["tiles"];
    fmt::print("{}\n", j.dump());
    return;
  }
  fmt::print("gemm M={} N={} K={} on {}{} ({}): {:.4f} ms, {} bound, {:.1f} TOP/s\n", o.m, o.n, o.k,
             m.gpu().name, o.gpu_set.empty() ? "" : " with --gpu-set " + o.gpu_set,
             c.execution_path, c.ms, c.bound, tops);
  fmt::print(
      "  tile {}x{} split-k {}: {} tiles in {} waves; compute {:.4f} ms, memory {:.4f} ms, "
      "DRAM {:.1f} MB\n",
      c.tile.tm, c.tile.tn, c.tile.split_k, c.tile.tiles, c.tile.waves, c.compute_ms, c.memory_ms,
      c.bytes / 1e6);
  if (!choice.empty()) fmt::print("  tables {}\n", choice);
  fmt::print("{}", defaults_line(defaults, why));
}

CommandRegistrar reg{
    40, [](CLI::App& app) {
      auto opts = std::make_shared<GemmFlags>();
      CLI::App* sub = app.add_subcommand(
          "gemm",
          "Tile-level estimate of one (mp)GEMM Y[M,N] = X[M,K] W[N,K]^T (or --calibration)");
      sub->add_option("--m", opts->m, "rows of X (tokens), 1..2^31-1");
      sub->add_option("--n", opts->n, "output channels (rows of W), 1..2^31-1");
      sub->add_option("--k", opts->k, "input channels, 1..2^31-1");
      add_gpu_option(sub, opts->gpu)->capture_default_str();
      sub->add_option("--weights", opts->weights,
                      std::string("fp16, bf16, fp8e4m3, int8..int1[:g=G], ternary, "
                                  "binary[:kb=,g=,s=]; ") +
                          kGemmPrecisionHelp);
      sub->add_option("--acts", opts->acts,
                      std::string("int8, fp16, bf16, fp8e4m3, fp8e5m2; ") + kGemmPrecisionHelp);
      sub->add_option("--tables", opts->tables,
                      "X as LUT tables: auto (the faster of the LUT and MAC paths, when the GPU "
                      "has LUT tensor cores), on, off")
          ->capture_default_str();
      sub->add_flag("--quantize-tables", opts->quantize_tables, "INT8 table entries");
      sub->add_option("--calibration", opts->calibration,
                      "measurement file (configs/calibration/h200-gemm.json, taken on an H200: "
                      "use --gpu h200): model vs each GEMM");
      add_gpu_set_option(sub, opts->gpu_set, "estimate");
      sub->add_flag("--json", opts->json, "print one JSON object");
      set_examples(sub,
                   {"ltc gemm --m 1 --n 4096 --k 4096 --gpu a100-lut4x --weights int2 --acts int8",
                    "ltc gemm --m 8192 --n 8192 --k 8192 --gpu h200 --json",
                    "ltc gemm --calibration configs/calibration/h200-gemm.json --gpu h200"});
      opts->sub = sub;
      sub->callback([opts, sub] {
        FlagRules(sub)
            .flags({"--gpu-set"}, "without --calibration",
                   "the measurements are of the GPU as it is",
                   [opts] { return opts->calibration.empty(); })
            .check();
        run(*opts);
      });
    }};

}  // namespace
}  // namespace ltc::cli
