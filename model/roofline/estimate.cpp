#include "model/roofline/estimate.h"

#include "common/error.h"
#include "common/file_io.h"
#include "common/json_fields.h"
#include "common/units.h"
#include "model/golden/gemm.h"
#include "model/hw/gpu_file.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>

namespace ltc::roofline {

StepEstimate estimate(const Machine& m, const llm::ModelConfig& model, const StepRequest& r) {
  const auto weights = llm::parse_weight_format(r.weights, "--weights");
  const auto acts = golden::parse_act_dtype(r.acts, "--acts");
  std::optional<llm::PrecomputeMode> mode;
  if (r.precompute) mode = parse_precompute(*r.precompute);
  if (r.batch <= 0) throw InputError("--batch: must be >= 1 (got " + std::to_string(r.batch) + ")");
  if (r.length <= 0 && r.phase == llm::Phase::kPrefill) {
    throw InputError("--seq: must be >= 1 (got " + std::to_string(r.length) + ")");
  }
  if (r.length < 0) {
    throw InputError("--context: must be >= 0 (got " + std::to_string(r.length) + ")");
  }
  const bool lut_path = m.gpu().has_lut_tensor() && weights.is_low_bit() &&
                        m.gpu().lut_tops(golden::dtype_name(acts), weights.planes()) > 0;
  if (r.quantize_tables && (!lut_path || (mode && *mode == llm::PrecomputeMode::kNone))) {
    throw InputError("--quantize-tables: applies to LUT tables only; gpu '" + m.gpu().name +
                     "' runs " + weights.name() + " x " + std::string(golden::dtype_name(acts)) +
                     " without tables (a GPU with LUT tensor cores and low-bit weights has them)");
  }
  if (mode && *mode != llm::PrecomputeMode::kNone && !weights.is_low_bit()) {
    throw InputError("--precompute: " + *r.precompute +
                     " applies to low-bit weights only (their LUT tables, built for LUT tensor "
                     "cores or CUDA-core LUT kernels); " +
                     weights.name() + " weights have none (valid here: none)");
  }
  auto step =
      make_step(r.phase, r.batch, r.length, weights, acts, m.gpu(), mode, r.quantize_tables);
  step.kernels = r.kernels;
  step.expert_load = llm::expert_load_for(model, r.expert_load);
  StepEstimate e = estimate_step(m, llm::build_step_graph(model, step));
  if (!mode && step.precompute != llm::PrecomputeMode::kNone && !r.quantize_tables) {
    // Left to the tool (--quantize-tables asks for tables, so it pins the LUT path): the MAC
    // path may be faster (W8A8 on a LUT GPU runs 8 planes); keep the faster and say why.
    auto mac_step = make_step(r.phase, r.batch, r.length, weights, acts, m.gpu(),
                              llm::PrecomputeMode::kNone, false);
    mac_step.kernels = r.kernels;
    mac_step.expert_load = step.expert_load;
    StepEstimate mac = estimate_step(m, llm::build_step_graph(model, mac_step));
    const bool lut_faster = e.latency_ms <= mac.latency_ms;
    const std::string why = fmt::format(
        "auto: {} path {:.3f} ms vs {} path {:.3f} ms ({} kept; --precompute none "
        "forces the MAC path, --precompute fused the LUT path)",
        lut_faster ? "lut" : "mac", lut_faster ? e.latency_ms : mac.latency_ms,
        lut_faster ? "mac" : "lut", lut_faster ? mac.latency_ms : e.latency_ms,
        lut_faster ? "lut" : "mac");
    if (!lut_faster) e = std::move(mac);
    e.path_choice = why;
  }
  return e;
}

StepEstimate estimate(const StepRequest& r) {
  const Machine m(hw::load_gpu(r.gpu));
  return estimate(m, llm::load_model(r.model), r);
}

std::vector<GemmCheck> load_gemm_measurements(const std::string& path, std::string* device) {
  const std::string text = read_input_file(path);
  nlohmann::json j = parse_json(text, path);
  if (!j.contains("gemm") || !j["gemm"].is_array()) {
    throw InputError(path + ": field 'gemm' must be an array of {name, M, N, K, ms}");
  }
  if (device) {
    *device = j.contains("device") && j["device"].is_string() ? j["device"].get<std::string>()
                                                              : std::string();
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
      throw InputError(path + ": gemm[" + std::to_string(i) + "]: " + plain_json_error(ex));
    }
    if (!(c.measured_ms > 0)) {
      throw InputError(path + ": gemm[" + std::to_string(i) + "]: field 'ms' must be > 0");
    }
    for (int64_t v : {c.m, c.n, c.k}) {
      if (v < 1 || v > golden::kMaxGemmExtent) {
        throw InputError(path + ": gemm[" + std::to_string(i) + "]: M, N, K must be in 1.." +
                         std::to_string(golden::kMaxGemmExtent));
      }
    }
    out.push_back(c);
  }
  return out;
}

CalibrationReport check_gemms(const Machine& m, const std::string& path) {
  CalibrationReport rep;
  const std::vector<GemmCheck> gemms = load_gemm_measurements(path, &rep.device);
  if (!rep.device.empty()) {
    const std::string& gpu = m.gpu().name;
    if (!hw::device_is_gpu(rep.device, gpu)) {
      const std::string builtin = hw::builtin_gpu_of_device(rep.device);
      rep.device_mismatch = "the measurements in " + path + " are from an " + rep.device +
                            " but the model is gpu '" + gpu + "': the errors compare two machines" +
                            (builtin.empty() ? "" : " (use --gpu " + builtin + ")");
    }
  }
  const llm::WeightFormat fp16;
  for (size_t i = 0; i < gemms.size(); ++i) {
    GemmCheck c = gemms[i];
    try {
      c.model_ms = gemm_cost(m, make_gemm(c.m, c.n, c.k, fp16, golden::DType::kFp16)).ms;
    } catch (const InputError& ex) {
      throw InputError(path + ": gemm[" + std::to_string(i) + "]: " + ex.what());
    }
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
  // share: of the whole step (a layer's operators counted once per layer), so every row,
  // lm_head and embedding included, adds up to 100%.
  s += fmt::format("  {:<16} {:>10} {:>8} {:>7} {:>12} {:>12}  {}\n", "op", "ms", "of step",
                   "bound", "GFLOP", "MB", "unit");
  auto rows = [&](const std::vector<OpCost>& ops, double times) {
    for (const auto& c : ops) {
      s += fmt::format("  {:<16} {:>10.4f} {:>7.1f}% {:>7} {:>12.3f} {:>12.3f}  {}\n", c.name, c.ms,
                       e.latency_ms > 0 ? 100.0 * times * c.ms / e.latency_ms : 0.0, c.bound,
                       c.flops / 1e9, c.bytes / 1e6, c.execution_path);
    }
  };
  rows(e.layer, double(e.layers));
  s += fmt::format("  per layer {:.4f} ms x {} layers{}\n", e.layer_ms, e.layers,
                   e.other_layers.empty() ? "" : " (" + e.layer_kind + ")");
  for (const auto& g : e.other_layers) {
    rows(g.ops, double(g.count));
    s += fmt::format("  per layer {:.4f} ms x {} layers ({})\n", g.ms, g.count, g.kind);
  }
  rows(e.embedding, 1);
  rows(e.head, 1);
  auto joules = [](bool known, double j) { return known ? si_text(j, "J") : "unknown"; };
  s += fmt::format("latency {:.3f} ms, {:.1f} tokens/s, {} (tensor {}, DRAM {})\n", e.latency_ms,
                   e.tokens_per_s,
                   e.tensor_energy_known && e.dram_energy_known
                       ? si_text(e.energy_mj_per_token * 1e-3, "J/token")
                       : std::string("energy per token unknown"),
                   joules(e.tensor_energy_known, e.tensor_energy_j),
                   joules(e.dram_energy_known, e.dram_energy_j));
  if (!e.path_choice.empty()) s += "linear layers: " + e.path_choice + "\n";
  if (!e.routing.empty()) s += "experts: " + e.routing + "\n";
  s += fmt::format("memory: {:.1f} GB of weights and KV cache{}\n", e.memory_gb,
                   e.fits_memory ? "" : " (does NOT fit the GPU's DRAM)");
  s += fmt::format("tensor core: {}, peak {:.0f} TOP/s", e.tensor_unit, e.tensor_peak_tops);
  if (e.tensor_area_mm2 > 0) {
    s += fmt::format(", {:.2f} mm2 ({:.2f} TOPS/mm2)", e.tensor_area_mm2, e.tensor_tops_per_mm2);
  }
  if (e.tensor_power_w > 0) {
    s += fmt::format(", {:.1f} W ({:.2f} TOPS/W)", e.tensor_power_w, e.tensor_tops_per_w);
  }
  s += "\n";
  return s;
}

}  // namespace ltc::roofline
