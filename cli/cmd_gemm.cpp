// `ltc gemm`: tile-level estimate of one (mp)GEMM Y[M,N] = X[M,K] W[N,K]^T on a GPU; with
// --calibration FILE, the model against every measured GEMM in FILE and its MAPE.
#include "cli/command.h"
#include "model/golden/error.h"
#include "model/roofline/estimate.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <memory>

namespace ltc::cli {
namespace {

struct GemmOptions {
  int64_t m = 0, n = 0, k = 0;
  std::string gpu = "a100";
  std::string weights = "fp16";
  std::string acts = "fp16";
  std::string tables = "auto";
  bool quantize_tables = false;
  std::string calibration;
  bool json = false;
};

void run_calibration(const GemmOptions& o) {
  const roofline::Machine m(hw::load_gpu(o.gpu));
  const auto rep = roofline::check_gemms(m, o.calibration);
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
    fmt::print(
        "{}\n",
        nlohmann::json{{"gpu", o.gpu}, {"file", o.calibration}, {"gemms", rows}, {"mape", rep.mape}}
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
}

void run(const GemmOptions& o) {
  if (!o.calibration.empty()) return run_calibration(o);
  if (o.m <= 0 || o.n <= 0 || o.k <= 0) {
    throw InputError("--m, --n, --k: required, each >= 1 (or --calibration FILE)");
  }
  const roofline::Machine m(hw::load_gpu(o.gpu));
  const auto w = llm::parse_weight_format(o.weights, "--weights");
  const auto a = golden::parse_dtype(o.acts, "--acts");
  bool tables = w.is_low_bit() && m.gpu().has_lut_tensor();
  if (o.tables == "on") {
    tables = w.is_low_bit();
  } else if (o.tables == "off") {
    tables = false;
  } else if (o.tables != "auto") {
    throw InputError("--tables: '" + o.tables + "' is not valid (valid: auto, on, off)");
  }
  const auto g = roofline::make_gemm(o.m, o.n, o.k, w, a, tables, o.quantize_tables);
  const auto c = roofline::gemm_cost(m, g);
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
              {"tops", tops}});
    j["tiles"] = j["tile"]["tiles"];
    fmt::print("{}\n", j.dump());
    return;
  }
  fmt::print("gemm M={} N={} K={} on {} ({}): {:.4f} ms, {} bound, {:.1f} TOP/s\n", o.m, o.n, o.k,
             m.gpu().name, c.unit, c.ms, c.bound, tops);
  fmt::print(
      "  tile {}x{} split-k {}: {} tiles in {} waves; compute {:.4f} ms, DRAM {:.4f} ms, "
      "{:.1f} MB\n",
      c.tile.tm, c.tile.tn, c.tile.split_k, c.tile.tiles, c.tile.waves, c.compute_ms, c.memory_ms,
      c.bytes / 1e6);
}

CommandRegistrar reg{
    40, [](CLI::App& app) {
      auto opts = std::make_shared<GemmOptions>();
      CLI::App* sub = app.add_subcommand(
          "gemm",
          "Tile-level estimate of one (mp)GEMM Y[M,N] = X[M,K] W[N,K]^T (or --calibration)");
      sub->add_option("--m", opts->m, "rows of X (tokens)");
      sub->add_option("--n", opts->n, "output channels (rows of W)");
      sub->add_option("--k", opts->k, "input channels");
      sub->add_option("--gpu", opts->gpu, "built-in GPU name or GPU JSON path")
          ->capture_default_str();
      sub->add_option("--weights", opts->weights,
                      "fp16, bf16, fp8e4m3, int8..int1[:g=G], ternary, binary[:kb=,g=,s=]")
          ->capture_default_str();
      sub->add_option("--acts", opts->acts, "int8, fp16, bf16, fp8e4m3, fp8e5m2")
          ->capture_default_str();
      sub->add_option("--tables", opts->tables,
                      "X as LUT tables: auto (when the GPU has LUT tensor cores), on, off")
          ->capture_default_str();
      sub->add_flag("--quantize-tables", opts->quantize_tables, "INT8 table entries");
      sub->add_option(
          "--calibration", opts->calibration,
          "measurement file (shared/reference/h200-calibration.json): model vs each GEMM");
      sub->add_flag("--json", opts->json, "print one JSON object");
      sub->callback([opts] { run(*opts); });
    }};

}  // namespace
}  // namespace ltc::cli
