#include "model/roofline/estimate.h"

#include "model/golden/error.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

namespace ltc::roofline {

StepEstimate estimate(const Machine& m, const llm::ModelConfig& model, const StepRequest& r) {
  const auto weights = llm::parse_weight_format(r.weights, "--weights");
  const auto acts = golden::parse_dtype(r.acts, "--acts");
  std::optional<llm::PrecomputeMode> mode;
  if (r.precompute) mode = parse_precompute(*r.precompute);
  if (r.batch <= 0) throw InputError("--batch: must be >= 1 (got " + std::to_string(r.batch) + ")");
  if (r.length <= 0 && r.phase == llm::Phase::kPrefill) {
    throw InputError("--seq: must be >= 1 (got " + std::to_string(r.length) + ")");
  }
  if (r.length < 0) {
    throw InputError("--context: must be >= 0 (got " + std::to_string(r.length) + ")");
  }
  const auto step =
      make_step(r.phase, r.batch, r.length, weights, acts, m.gpu(), mode, r.quantize_tables);
  return estimate_step(m, llm::build_step_graph(model, step));
}

StepEstimate estimate(const StepRequest& r) {
  const Machine m(hw::load_gpu(r.gpu));
  return estimate(m, llm::load_model(r.model), r);
}

std::vector<GemmCheck> load_gemm_measurements(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open file");
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path + ": not valid JSON: " + e.what());
  }
  if (!j.contains("gemm") || !j["gemm"].is_array()) {
    throw InputError(path + ": field 'gemm' must be an array of {name, M, N, K, ms}");
  }
  std::vector<GemmCheck> out;
  for (size_t i = 0; i < j["gemm"].size(); ++i) {
    const auto& e = j["gemm"][i];
    GemmCheck c;
    try {
      c.name = e.value("name", "");
      c.m = e.at("M").get<int64_t>();
      c.n = e.at("N").get<int64_t>();
      c.k = e.at("K").get<int64_t>();
      c.measured_ms = e.at("ms").get<double>();
    } catch (const nlohmann::json::exception& ex) {
      throw InputError(path + ": gemm[" + std::to_string(i) + "]: " + ex.what());
    }
    if (!(c.measured_ms > 0)) {
      throw InputError(path + ": gemm[" + std::to_string(i) + "]: field 'ms' must be > 0");
    }
    if (c.m < 1 || c.n < 1 || c.k < 1) {
      throw InputError(path + ": gemm[" + std::to_string(i) + "]: M, N, K must be >= 1");
    }
    out.push_back(c);
  }
  return out;
}

CalibrationReport check_gemms(const Machine& m, const std::string& path) {
  CalibrationReport rep;
  const llm::WeightFormat fp16;
  for (GemmCheck c : load_gemm_measurements(path)) {
    c.model_ms = gemm_cost(m, make_gemm(c.m, c.n, c.k, fp16, golden::DType::kFp16)).ms;
    rep.mape += std::abs(c.error());
    rep.gemms.push_back(c);
  }
  if (!rep.gemms.empty()) rep.mape /= double(rep.gemms.size());
  return rep;
}

std::string format_step(const StepEstimate& e) {
  std::string s =
      fmt::format("{} {} on {}: batch {}, {} {}, weights {}, acts {}, precompute {}\n", e.model,
                  e.phase, e.gpu, e.batch, e.phase == "decode" ? "context" : "seq",
                  e.phase == "decode" ? e.context : e.seq, e.weights, e.acts, e.precompute);
  s += fmt::format("  {:<16} {:>10} {:>8} {:>7} {:>12} {:>12}  {}\n", "op", "ms", "share", "bound",
                   "GFLOP", "MB", "unit");
  auto rows = [&](const std::vector<OpCost>& ops, double total) {
    for (const auto& c : ops) {
      s += fmt::format("  {:<16} {:>10.4f} {:>7.1f}% {:>7} {:>12.3f} {:>12.3f}  {}\n", c.name, c.ms,
                       total > 0 ? 100.0 * c.ms / total : 0.0, c.bound, c.flops / 1e9,
                       c.bytes / 1e6, c.unit);
    }
  };
  rows(e.layer, e.layer_ms);
  s += fmt::format("  per layer {:.4f} ms x {} layers\n", e.layer_ms, e.layers);
  rows(e.embedding, 0);
  rows(e.head, 0);
  s += fmt::format(
      "latency {:.3f} ms, {:.1f} tokens/s, {:.3f} mJ/token (tensor {:.3f} J, DRAM {:.3f} J)\n",
      e.latency_ms, e.tokens_per_s, e.energy_mj_per_token, e.tensor_energy_j, e.dram_energy_j);
  s += fmt::format("memory: {:.1f} GB of weights and KV cache{}\n", e.memory_gb,
                   e.fits_memory ? "" : " (does NOT fit the GPU's DRAM)");
  s += fmt::format("tensor core: {}, peak {:.0f} TOP/s", e.tensor_unit, e.tensor_peak_tops);
  if (e.tensor_area_mm2 > 0) {
    s += fmt::format(", {:.2f} mm2 ({:.2f} TOPs/mm2)", e.tensor_area_mm2, e.tensor_tops_per_mm2);
  }
  if (e.tensor_power_w > 0) {
    s += fmt::format(", {:.1f} W ({:.2f} TOPs/W)", e.tensor_power_w, e.tensor_tops_per_w);
  }
  s += "\n";
  return s;
}

}  // namespace ltc::roofline
