#include "model/roofline/calibrate.h"

#include "common/config_dir.h"
#include "common/error.h"
#include "common/file_io.h"
#include "common/json_fields.h"
#include "model/hw/gpu_file.h"
#include "model/roofline/estimate.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cmath>
#include <exception>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <set>
#include <thread>
#include <tuple>

namespace ltc::roofline {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr char kProfileSchema[] = "ltc-gpu-profile/1";
constexpr char kValidInputs[] =
    "a profile written by tools/profile-gpu/profile_gpu.py (schema ltc-gpu-profile/1, e.g. "
    "configs/calibration/h200-profile.json) or a GEMM list {\"gemm\": [{name, M, N, K, ms}]} "
    "(e.g. configs/calibration/h200-gemm.json)";

json read_json(const std::string& path) {
  std::string text;
  try {
    text = read_input_file(path);
  } catch (const InputError& e) {
    throw InputError(std::string(e.what()) + " (valid input: " + kValidInputs + ")");
  }
  return parse_json(text, path);
}

// The config file a profile's model names: its "source" as given (working directory), under
// the repository (config_dir()/..), next to the profile, else the built-in model of its name.
std::string resolve_model(const std::string& profile, const std::string& name,
                          const std::string& source) {
  std::vector<fs::path> tries;
  if (!source.empty()) {
    tries.push_back(source);
    tries.push_back(fs::path(config_dir()).parent_path() / source);
    tries.push_back(fs::path(profile).parent_path() / fs::path(source).filename());
    tries.push_back(fs::path(profile).parent_path() / "profile-models" /
                    fs::path(source).filename());
  }
  for (const auto& p : tries) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return name;  // a built-in name (load_model names the valid ones when it is not)
}

// The profile recorded the shape it measured; the model graph must build the same layer.
void check_shape(const std::string& where, const llm::ModelConfig& c, const json& shape) {
  auto mismatch = [&](const std::string& field, const std::string& graph, const std::string& prof) {
    throw InputError(where + ": the model graph gives " + field + " = " + graph +
                     " but the profile measured " + prof + " (fix the config or model/llm)");
  };
  auto num = [&](const char* key, int64_t ours) {
    if (!shape.contains(key) || !shape[key].is_number_integer()) return;
    const int64_t v = shape[key].get<int64_t>();
    if (v != ours) mismatch(key, std::to_string(ours), std::to_string(v));
  };
  auto flag = [&](const char* key, bool ours) {
    if (!shape.contains(key) || !shape[key].is_boolean()) return;
    const bool v = shape[key].get<bool>();
    if (v != ours) mismatch(key, ours ? "true" : "false", v ? "true" : "false");
  };
  num("hidden", c.hidden);
  num("heads", c.heads);
  num("kv_heads", c.kv_heads);
  num("head_dim", c.head_dim);
  num("ffn", c.intermediate);
  flag("ffn_implicit", c.ffn_implicit);
  flag("gated", c.ffn == llm::FfnKind::kGated);
  num("rotary_dim", c.position == llm::PositionKind::kRope ? c.rotary_dims() : 0);
  flag("parallel", c.parallel_attention);
  if (c.parallel_attention) num("parallel_norms", c.parallel_norms);
  flag("post_norms", c.post_norms);
  flag("qkv_bias", c.linear_bias || c.qkv_bias);
  flag("o_bias", c.linear_bias);
  flag("mlp_bias", c.linear_bias);
  if (shape.contains("norm") && shape["norm"].is_string()) {
    const std::string ours = c.norm == llm::NormKind::kLayerNorm ? "layer_norm" : "rms_norm";
    if (shape["norm"] != ours) mismatch("norm", ours, shape["norm"].get<std::string>());
  }
}

void read_profile(const std::string& path, const json& j, Measurements& out) {
  const std::string schema = j.value("schema", "");
  if (schema != kProfileSchema) {
    throw InputError(path + ": schema '" + schema + "' is not supported (valid: " + kProfileSchema +
                     ")");
  }
  auto array = [&](const char* key) -> const json& {
    if (!j.contains(key) || !j[key].is_array()) {
      throw InputError(path + ": field '" + std::string(key) + "' must be an array (schema " +
                       kProfileSchema + ", tools/profile-gpu/README.md)");
    }
    return j[key];
  };
  if (j.contains("settings") && j["settings"].value("dtype", "fp16") != "fp16") {
    throw InputError(path + ": settings.dtype '" + j["settings"].value("dtype", "") +
                     "' is not supported (valid: fp16, the reference step's dtype)");
  }
  const std::string device =
      j.contains("device") && j["device"].is_object() ? j["device"].value("name", "") : "";
  if (!device.empty()) {
    if (!out.device.empty() && out.device != device) {
      throw InputError(path + ": measured on an " + device + " but the other files on an " +
                       out.device + " (give measurements of one GPU)");
    }
    out.device = device;
  }
  const json& models = array("models");
  for (size_t i = 0; i < models.size(); ++i) {
    const auto& e = models[i];
    const std::string where = path + ": models[" + std::to_string(i) + "]";
    if (!e.contains("name") || !e["name"].is_string()) {
      throw InputError(where + ": field 'name' must be a string");
    }
    ProfileModel pm;
    pm.name = e["name"].get<std::string>();
    const std::string source = e.value("source", "");
    try {
      pm.config = llm::load_model(resolve_model(path, pm.name, source));
    } catch (const InputError& ex) {
      throw InputError(where + " '" + pm.name + "': " + ex.what());
    }
    if (e.contains("shape")) check_shape(where + " '" + pm.name + "'", pm.config, e["shape"]);
    const bool known = std::any_of(out.models.begin(), out.models.end(),
                                   [&](const ProfileModel& m) { return m.name == pm.name; });
    if (!known) out.models.push_back(pm);
  }
  auto has_model = [&](const std::string& n) {
    return std::any_of(out.models.begin(), out.models.end(),
                       [&](const ProfileModel& m) { return m.name == n; });
  };
  const json& steps = array("steps");
  for (size_t i = 0; i < steps.size(); ++i) {
    const auto& e = steps[i];
    const std::string where = path + ": steps[" + std::to_string(i) + "]";
    StepMeasurement s;
    try {
      s.model = e.at("model").get<std::string>();
      s.phase = llm::parse_phase(e.at("phase").get<std::string>(), where + ": phase");
      s.batch = e.at("batch").get<int64_t>();
      s.length = s.phase == llm::Phase::kDecode ? e.at("context").get<int64_t>()
                                                : e.at("seq").get<int64_t>();
      s.ms = e.at("ms_per_layer").get<double>();
      s.file = path;
    } catch (const json::exception& ex) {
      throw InputError(where + ": " + plain_json_error(ex));
    }
    if (!has_model(s.model)) {
      throw InputError(where + ": model '" + s.model + "' is not in the file's 'models'");
    }
    if (!(s.ms > 0) || s.batch < 1 || s.length < (s.phase == llm::Phase::kDecode ? 0 : 1)) {
      throw InputError(where + ": needs ms_per_layer > 0, batch >= 1, context >= 0 / seq >= 1");
    }
    out.steps.push_back(s);
  }
  if (j.contains("ops")) {
    for (size_t i = 0; i < array("ops").size(); ++i) {
      const auto& e = j["ops"][i];
      if (e.value("op", "") != "gemm") continue;  // other operators: not fitted here
      const std::string where = path + ": ops[" + std::to_string(i) + "]";
      GemmMeasurement g;
      try {
        g.model = e.value("model", "");
        g.name = e.value("name", "");
        g.dtype = e.at("dtype").get<std::string>();
        g.m = e.at("M").get<int64_t>();
        g.m_run = e.value("M_run", g.m);
        g.n = e.at("N").get<int64_t>();
        g.k = e.at("K").get<int64_t>();
        g.ms = e.at("ms").get<double>();
        g.group_size = e.value("int4_group_size", 0);
        g.with_steps = !steps.empty();
        g.file = path;
      } catch (const json::exception& ex) {
        throw InputError(where + ": " + plain_json_error(ex));
      }
      try {
        gemm_path_spec(g.dtype);
      } catch (const InputError& ex) {
        throw InputError(where + ": " + ex.what());
      }
      if (!(g.ms > 0) || g.m < 1 || g.m_run < g.m || g.n < 1 || g.k < 1) {
        throw InputError(where + ": needs ms > 0, M, N, K >= 1 and M_run >= M");
      }
      out.gemms.push_back(g);
    }
  }
  // The GEMM kernel lists (entries with a dtype): the library's tile, from the name of the kernel
  // that took longest, onto the GEMMs of this file it was listed for.
  if (j.contains("kernels") && j["kernels"].is_array()) {
    using Key = std::tuple<std::string, std::string, std::string, int64_t, int64_t, int64_t>;
    std::map<Key, std::pair<int, int>> tiles;
    for (const auto& e : j["kernels"]) {
      if (!e.is_object() || !e.contains("dtype") || !e.contains("kernels") ||
          !e["kernels"].is_array()) {
        continue;
      }
      std::string name;
      double longest = -1;
      for (const auto& k : e["kernels"]) {
        const double us = k.value("us", 0.0);
        if (k.contains("name") && k["name"].is_string() && us > longest) {
          longest = us;
          name = k["name"].get<std::string>();
        }
      }
      const auto tile = kernel_name_tile(name);
      if (tile.first > 0) {
        tiles[{e.value("model", ""), e.value("name", ""), e.value("dtype", ""),
               e.value("M", int64_t(0)), e.value("N", int64_t(0)), e.value("K", int64_t(0))}] =
            tile;
      }
    }
    for (auto& g : out.gemms) {
      if (g.file != path) continue;
      const auto it = tiles.find({g.model, g.name, g.dtype, g.m, g.n, g.k});
      if (it != tiles.end()) std::tie(g.library_tile_m, g.library_tile_n) = it->second;
    }
  }
}

void read_gemm_list(const std::string& path, Measurements& out) {
  std::string device;
  for (const auto& c : load_gemm_measurements(path, &device)) {
    GemmMeasurement g;
    g.name = c.name;
    g.dtype = "fp16";
    g.m = g.m_run = c.m;
    g.n = c.n;
    g.k = c.k;
    g.ms = c.measured_ms;
    g.file = path;
    out.gemms.push_back(g);
  }
  if (!device.empty()) {
    if (!out.device.empty() && out.device != device) {
      throw InputError(path + ": measured on an " + device + " but the other files on an " +
                       out.device + " (give measurements of one GPU)");
    }
    out.device = device;
  }
}

double clamp(double v, double lo, double hi) {
  return std::max(lo, std::min(hi, v));
}

hw::GemmPathRates& path_entry(hw::AchievableRates& a, const std::string& act,
                              const std::string& weight, const std::string& kernel = "") {
  for (auto& p : a.gemm_paths) {
    if (p.act == act && p.weight == weight && p.kernel == kernel) return p;
  }
  hw::GemmPathRates e;
  e.act = act;
  e.weight = weight;
  e.kernel = kernel;
  a.gemm_paths.push_back(e);
  return a.gemm_paths.back();
}

// The grouped expert GEMM's entry: the MoE reference step runs a 16-bit float step's experts in
// BF16 (model/roofline/cost.cpp).
constexpr char kGroupedAct[] = "bf16", kGroupedWeight[] = "bf16", kGrouped[] = "grouped";

FitParameter grouped_field(const std::string& name, double hw::GemmPathRates::*f, double lo,
                           double hi, bool log_scale) {
  FitParameter p;
  p.name = std::string("gemm_paths[") + kGroupedAct + " x " + kGroupedWeight + " " + kGrouped +
           "]." + name;
  p.get = [f](const hw::AchievableRates& a) {
    const auto* e = a.gemm_path(kGroupedAct, kGroupedWeight, kGrouped);
    return e ? e->*f : 0.0;
  };
  p.set = [f](hw::AchievableRates& a, double v) {
    path_entry(a, kGroupedAct, kGroupedWeight, kGrouped).*f = v;
  };
  p.lo = lo;
  p.hi = hi;
  p.log_scale = log_scale;
  return p;
}

// The (act, weight) names of a dtype path's entry in the `achievable` section.
std::pair<std::string, std::string> path_names(const std::string& dtype) {
  const auto spec = gemm_path_spec(dtype);
  const auto w = llm::parse_weight_format(spec.weights);
  const std::string weight = w.kind == llm::WeightFormatKind::kInt
                                 ? "int" + std::to_string(w.bits)
                                 : std::string(golden::dtype_name(w.dtype));
  return {spec.acts, weight};
}

}  // namespace

StepRequest step_request(const StepMeasurement& s) {
  StepRequest r;
  r.model = s.model;
  r.phase = s.phase;
  r.batch = s.batch;
  r.length = s.length;
  return r;
}

namespace {

double step_ms(const Machine& m, const Measurements& data, const StepMeasurement& s) {
  return estimate(m, data.model(s.model), step_request(s)).layer_ms;
}

Machine machine_with(const hw::GpuConfig& gpu, const hw::AchievableRates& rates) {
  hw::GpuConfig g = gpu;
  g.achievable = rates;
  return Machine(std::move(g));
}

double mean_abs(const std::vector<double>& errors) {
  if (errors.empty()) return 0;
  double s = 0;
  for (double e : errors) s += std::abs(e);
  return s / double(errors.size());
}

double gemm_objective(const hw::GpuConfig& gpu, const hw::AchievableRates& rates,
                      const Measurements& data, const std::vector<size_t>& gemms) {
  const Machine m = machine_with(gpu, rates);
  std::vector<double> e;
  for (size_t i : gemms) {
    const auto& g = data.gemms[i];
    e.push_back(gemm_estimate_ms(m, g) / g.ms - 1);
  }
  return mean_abs(e);
}

FitParameter scalar(const std::string& name, double hw::AchievableRates::*field, double lo,
                    double hi, bool log_scale = false) {
  FitParameter p;
  p.name = name;
  p.get = [field](const hw::AchievableRates& a) { return a.*field; };
  p.set = [field](hw::AchievableRates& a, double v) { a.*field = v; };
  p.lo = lo;
  p.hi = hi;
  p.log_scale = log_scale;
  return p;
}

ErrorSummary summarize(const std::string& group, const std::vector<const CaseResult*>& cases) {
  ErrorSummary s;
  s.group = group;
  s.cases = int(cases.size());
  std::vector<double> in, out, shapes_out, held;
  for (const auto* c : cases) {
    in.push_back(c->error());
    if (c->held_ms > 0) held.push_back(c->held_error());
    if (c->lomo_ms > 0) out.push_back(c->lomo_error());
    if (c->loso_ms > 0) shapes_out.push_back(c->loso_error());
    s.max_abs = std::max(s.max_abs, std::abs(c->error()));
  }
  s.mape = mean_abs(in);
  s.lomo_mape = mean_abs(out);
  s.loso_mape = mean_abs(shapes_out);
  s.held_mape = mean_abs(held);
  return s;
}

std::string format_files(const std::vector<std::string>& files) {
  std::string s;
  for (const auto& f : files) s += (s.empty() ? "" : " ") + f;
  return s;
}

}  // namespace

double gemm_estimate_ms(const Machine& m, const GemmMeasurement& g) {
  return gemm_estimate(m, g).ms;
}

std::pair<int, int> kernel_name_tile(const std::string& name) {
  static const std::regex tile(R"(_(\d+)x(\d+)_\d+x\d+_)");
  std::smatch match;
  if (name.find("cutlass") == std::string::npos || !std::regex_search(name, match, tile)) {
    return {0, 0};
  }
  const int m = std::stoi(match[1].str()), n = std::stoi(match[2].str());
  if (m < 1 || m > 256 || n < 1 || n > 256) return {0, 0};
  return {m, n};
}

std::vector<hw::TileRule> tile_rules_from_names(const std::vector<const GemmMeasurement*>& gemms) {
  std::vector<const GemmMeasurement*> named;
  std::vector<hw::TileRule> rules;
  for (const GemmMeasurement* g : gemms) {
    if (g->library_tile_m == 0) continue;
    named.push_back(g);
    const bool known = std::any_of(rules.begin(), rules.end(), [&](const hw::TileRule& t) {
      return t.tile_m == g->library_tile_m && t.tile_n == g->library_tile_n;
    });
    if (!known) rules.push_back(hw::TileRule{g->library_tile_m, g->library_tile_n, 0, 0});
  }
  if (rules.size() < 2) return {};
  // Largest first (then taller first): the decision list tries the library's big tiles first.
  std::sort(rules.begin(), rules.end(), [](const hw::TileRule& a, const hw::TileRule& b) {
    return std::make_pair(a.tile_m * a.tile_n, a.tile_m) >
           std::make_pair(b.tile_m * b.tile_n, b.tile_m);
  });
  auto mn = [](const GemmMeasurement* g) { return double(g->m_run) * double(g->n); };
  std::vector<double> mns = {1}, ks = {1};
  for (auto& t : rules) {
    t.min_mn = t.min_k = INFINITY;
    for (const GemmMeasurement* g : named) {
      mns.push_back(mn(g));
      ks.push_back(double(g->k));
      if (g->library_tile_m == t.tile_m && g->library_tile_n == t.tile_n) {
        t.min_mn = std::min(t.min_mn, mn(g));
        t.min_k = std::min(t.min_k, double(g->k));
      }
    }
  }
  rules.back().min_mn = rules.back().min_k = 1;  // the last entry is taken when none applies
  std::sort(mns.begin(), mns.end());
  mns.erase(std::unique(mns.begin(), mns.end()), mns.end());
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  auto agree = [&] {
    int n = 0;
    for (const GemmMeasurement* g : named) {
      const hw::TileRule& t = hw::chosen_tile(rules, g->m_run, g->n, g->k);
      n += t.tile_m == g->library_tile_m && t.tile_n == g->library_tile_n;
    }
    return n;
  };
  int best = agree();
  for (int pass = 0; pass < 8; ++pass) {
    const int before = best;
    for (size_t i = 0; i + 1 < rules.size(); ++i) {
      for (auto [field, values] :
           {std::pair{&hw::TileRule::min_mn, &mns}, std::pair{&hw::TileRule::min_k, &ks}}) {
        for (double v : *values) {
          const double was = rules[i].*field;
          rules[i].*field = v;
          const int n = agree();
          if (n > best) {
            best = n;
          } else {
            rules[i].*field = was;
          }
        }
      }
    }
    if (best == before) break;
  }
  return rules;
}

OpCost gemm_estimate(const Machine& m, const GemmMeasurement& g) {
  // The operands of the last kind this thread parsed: a fit estimates thousands of GEMMs of a
  // few kinds, and parsing them each time was a tenth of its time.
  thread_local std::string dtype;
  thread_local int group_size = -1;
  thread_local llm::WeightFormat w;
  thread_local golden::DType a = golden::DType::kFp16;
  if (g.dtype != dtype || g.group_size != group_size) {
    const auto spec = gemm_path_spec(g.dtype);
    std::string weights = spec.weights;
    if (g.dtype == "int4wo" && g.group_size > 0) {
      weights = "int4:g=" + std::to_string(g.group_size);
    }
    w = llm::parse_weight_format(weights);
    a = golden::parse_act_dtype(spec.acts, "GEMM acts");
    dtype = g.dtype;
    group_size = g.group_size;
  }
  return gemm_cost(m, make_gemm(g.m_run, g.n, g.k, w, a));
}

const llm::ModelConfig& Measurements::model(const std::string& name) const {
  for (const auto& m : models) {
    if (m.name == name) return m.config;
  }
  throw std::out_of_range("no model " + name);
}

GemmPathSpec gemm_path_spec(const std::string& dtype) {
  if (dtype == "fp16") return {"fp16", "fp16"};
  if (dtype == "bf16") return {"bf16", "bf16"};
  if (dtype == "int8") return {"int8", "int8"};
  if (dtype == "fp8") return {"fp8e4m3", "fp8e4m3"};
  if (dtype == "int4wo") return {"int4:g=128", "bf16"};
  throw InputError("GEMM dtype '" + dtype +
                   "' is not known (valid: fp16, bf16, int8, fp8, int4wo)");
}

Measurements load_measurements(const std::vector<std::string>& files) {
  if (files.empty()) {
    throw InputError(std::string("--measurements: give at least one file (valid: ") + kValidInputs +
                     ")");
  }
  Measurements out;
  out.files = files;
  for (const auto& path : files) {
    const json j = read_json(path);
    if (!j.is_object()) {
      throw InputError(path + ": a measurement file must be a JSON object (valid: " + kValidInputs +
                       ")");
    }
    if (j.contains("schema")) {
      read_profile(path, j, out);
    } else if (j.contains("gemm")) {
      read_gemm_list(path, out);
    } else {
      throw InputError(path + ": no 'schema' and no 'gemm' field (valid: " + kValidInputs + ")");
    }
  }
  if (out.steps.empty() && out.gemms.empty()) {
    throw InputError(
        "--measurements: " + format_files(files) +
        " hold no measurement (no step, no GEMM): nothing to fit or to check (valid: " +
        kValidInputs + ")");
  }
  return out;
}

std::string layer_family(const llm::ModelConfig& c) {
  if (c.is_mla()) return c.is_moe() ? "MLA + MoE" : "MLA";
  if (c.is_moe()) return c.moe.shared_intermediate > 0 ? "MoE + shared experts" : "MoE";
  int64_t windowed = 0;
  for (int64_t l = 0; l < c.layers; ++l) windowed += c.layer_kind(l).window > 0;
  if (windowed == c.layers && windowed > 0) return "sliding window";
  if (windowed > 0) return "local + global attention";
  return "dense";
}

std::vector<FitParameter> step_parameters(bool moe, bool mla, bool layer_norm) {
  using A = hw::AchievableRates;
  std::vector<FitParameter> p = {
      scalar("dram_bw_fraction", &A::dram_bw_fraction, 0.5, 1.0),
      scalar("tensor_fraction", &A::tensor_fraction, 0.4, 1.0),
      scalar("l2_bw_fraction", &A::l2_bw_fraction, 0.2, 1.0),
      scalar("kernel_fixed_us", &A::kernel_fixed_us, 0.5, 15, true),
      scalar("elementwise_fixed_us", &A::elementwise_fixed_us, 0.2, 8, true),
      scalar("elementwise_bw_fraction", &A::elementwise_bw_fraction, 0.1, 1.0),
      scalar("attention_bw_fraction", &A::attention_bw_fraction, 0.2, 1.0),
      scalar("flash_attention_fraction", &A::flash_attention_fraction, 0.1, 0.9),
      scalar("decode_attention_fraction", &A::decode_attention_fraction, 0.05, 0.9),
      scalar("sm_dram_gbps", &A::sm_dram_gbps, 5, 200, true),
      scalar("overlap_exponent", &A::overlap_exponent, 1, 16, true),
      scalar("throttle_per_efold", &A::throttle_per_efold, 0, 0.3),
      scalar("norm_row_ns_per_element", &A::norm_row_ns_per_element, 1e-3, 10, true),
  };
  // LayerNorm's own row chain where the steps have LayerNorm (else it stays 0: RMSNorm's).
  if (layer_norm) {
    p.push_back(
        scalar("layer_norm_row_ns_per_element", &A::layer_norm_row_ns_per_element, 1e-3, 10, true));
  }
  if (moe) {
    // The grouped kernel's tiles (the efficiency of those under 128 rows and of the larger ones,
    // the largest row tile, the per-tile prologue and epilogue), DRAM feed, launch and group
    // switches; the combine's atomic adds.
    p.push_back(grouped_field("small_tile_fraction", &hw::GemmPathRates::small_tile_fraction, 0.02,
                              1.0, true));
    p.push_back(
        grouped_field("tensor_fraction", &hw::GemmPathRates::tensor_fraction, 0.02, 1.0, true));
    FitParameter rows;
    rows.name = std::string("gemm_paths[") + kGroupedAct + " x " + kGroupedWeight + " " + kGrouped +
                "].max_tile_m";
    rows.get = [](const hw::AchievableRates& a) {
      const auto* e = a.gemm_path(kGroupedAct, kGroupedWeight, kGrouped);
      return e ? double(e->max_tile_m) : 0.0;
    };
    rows.set = [](hw::AchievableRates& a, double v) {
      path_entry(a, kGroupedAct, kGroupedWeight, kGrouped).max_tile_m = int(v);
    };
    rows.choices = {256, 128, 64};
    p.push_back(rows);
    p.push_back(
        grouped_field("dram_bw_fraction", &hw::GemmPathRates::dram_bw_fraction, 0.1, 1.0, false));
    p.push_back(grouped_field("fixed_us", &hw::GemmPathRates::fixed_us, 0.5, 30, true));
    p.push_back(
        grouped_field("tile_overhead_k", &hw::GemmPathRates::tile_overhead_k, 1, 4096, false));
    p.push_back(
        grouped_field("group_switch_us", &hw::GemmPathRates::group_switch_us, 0.01, 30, true));
    p.push_back(scalar("atomic_add_gops", &A::atomic_add_gops, 10, 5000, true));
  }
  if (mla) p.push_back(scalar("unaligned_l2_fraction", &A::unaligned_l2_fraction, 1e-3, 1, true));
  return p;
}

// The smallest row tiles a GEMM path's kernels may have (`tile_m`'s choices).
constexpr std::array<int, 4> kTileRows = {1, 16, 32, 64};

std::vector<FitParameter> path_parameters(const std::string& dtype,
                                          const std::vector<hw::TileRule>& rules) {
  const auto [act, weight] = path_names(dtype);
  const std::string pre = "gemm_paths[" + act + " x " + weight + "].";
  auto field = [&, act = act, weight = weight](const std::string& name,
                                               double hw::GemmPathRates::*f, double lo, double hi,
                                               bool log_scale) {
    FitParameter p;
    p.name = pre + name;
    p.get = [=](const hw::AchievableRates& a) {
      const auto* e = a.gemm_path(act, weight);
      return e ? e->*f : 0.0;
    };
    p.set = [=](hw::AchievableRates& a, double v) { path_entry(a, act, weight).*f = v; };
    p.lo = lo;
    p.hi = hi;
    p.log_scale = log_scale;
    return p;
  };
  // A discrete parameter of the path's kernels: an integer field tried at `choices`.
  auto discrete = [&, act = act, weight = weight](const std::string& name,
                                                  int hw::GemmPathRates::*f,
                                                  std::vector<double> choices) {
    FitParameter p;
    p.name = pre + name;
    p.get = [=](const hw::AchievableRates& a) {
      const auto* e = a.gemm_path(act, weight);
      return e ? double(e->*f) : 0.0;
    };
    p.set = [=](hw::AchievableRates& a, double v) { path_entry(a, act, weight).*f = int(v); };
    p.choices = std::move(choices);
    return p;
  };
  const FitParameter tile = discrete("tile_m", &hw::GemmPathRates::tile_m,
                                     std::vector<double>(kTileRows.begin(), kTileRows.end()));
  const FitParameter split = discrete("max_split_k", &hw::GemmPathRates::max_split_k, {16, 4, 1});
  // The largest row tile of the path's kernels (0: the library's 256): tinygemm repeats its
  // dequantization per m16 tile row, cuBLASLt's INT8 CUTLASS kernels keep 64..128-row tiles.
  const FitParameter max_tile =
      discrete("max_tile_m", &hw::GemmPathRates::max_tile_m, {0, 128, 64, 16, 1});
  // The kernels' kind: tiles of the library's widths or tinygemm's n8 only; stream-K allowed or
  // whole tiles in waves (cuBLASLt's INT8 CUTLASS sm80 kernels).
  FitParameter width = discrete("tile_n", &hw::GemmPathRates::tile_n, {0, 8});
  FitParameter waves = discrete("data_parallel", &hw::GemmPathRates::data_parallel, {0, 1});
  width.kernel_kind = waves.kernel_kind = true;
  std::vector<FitParameter> choice;
  if (!rules.empty()) {
    // The library's tile: the fastest (0) or its heuristic (1), the decision list `rules` whose
    // thresholds (outputs M x N, depth K) and kernels' tensor efficiencies the fit moves; its last
    // entry applies when none does.
    FitParameter p;
    p.name = pre + "tile_choice";
    p.get = [act = act, weight = weight](const hw::AchievableRates& a) {
      const auto* e = a.gemm_path(act, weight);
      return e && !e->tile_choice.empty() ? 1.0 : 0.0;
    };
    p.set = [act = act, weight = weight, rules](hw::AchievableRates& a, double v) {
      auto& list = path_entry(a, act, weight).tile_choice;
      if (v == 0) {
        list.clear();
      } else if (list.empty()) {
        list = rules;
      }
    };
    p.choices = {0, 1};
    p.kernel_kind = true;
    choice.push_back(p);
    for (size_t i = 0; i + 1 < rules.size(); ++i) {
      for (auto [what, f, hi] : {std::tuple{"min_mn", &hw::TileRule::min_mn, 1.1e8},
                                 std::tuple{"min_k", &hw::TileRule::min_k, 1.4e5}}) {
        FitParameter q;
        q.name = pre + "tile_choice[" + std::to_string(i) + "]." + what;
        q.get = [act = act, weight = weight, i, f = f](const hw::AchievableRates& a) {
          const auto* e = a.gemm_path(act, weight);
          return e && i < e->tile_choice.size() ? e->tile_choice[i].*f : 0.0;
        };
        q.set = [act = act, weight = weight, i, f = f](hw::AchievableRates& a, double v) {
          auto& list = path_entry(a, act, weight).tile_choice;
          if (i < list.size()) list[i].*f = v;
        };
        // Thresholds a factor of sqrt(2) apart, 1 (always) and the start's own value.
        q.choices = {1, rules[i].*f};
        for (double v = 1024; v <= hi; v *= std::sqrt(2.0)) q.choices.push_back(std::round(v));
        std::sort(q.choices.begin(), q.choices.end());
        q.choices.erase(std::unique(q.choices.begin(), q.choices.end()), q.choices.end());
        q.with_continuous = true;
        choice.push_back(q);
      }
    }
    for (size_t i = 0; i < rules.size(); ++i) {
      FitParameter q;
      q.name = pre + "tile_choice[" + std::to_string(i) + "].tensor_fraction";
      q.get = [act = act, weight = weight, i](const hw::AchievableRates& a) {
        const auto* e = a.gemm_path(act, weight);
        return e && i < e->tile_choice.size() ? e->tile_choice[i].tensor_fraction : 0.0;
      };
      q.set = [act = act, weight = weight, i](hw::AchievableRates& a, double v) {
        auto& list = path_entry(a, act, weight).tile_choice;
        if (i < list.size()) list[i].tensor_fraction = v;
      };
      q.lo = 0.05;
      q.hi = 1.0;
      choice.push_back(q);
    }
  }
  std::vector<FitParameter> out = {
      field("tensor_fraction", &hw::GemmPathRates::tensor_fraction, 0.005, 1.0, true),
      field("small_tile_fraction", &hw::GemmPathRates::small_tile_fraction, 0.005, 1.0, true),
      field("dram_bw_fraction", &hw::GemmPathRates::dram_bw_fraction, 0.05, 1.0, false),
      field("fixed_us", &hw::GemmPathRates::fixed_us, 0.5, 15, true),
      field("l2_bw_fraction", &hw::GemmPathRates::l2_bw_fraction, 0.1, 1.0, false),
      field("tile_overhead_k", &hw::GemmPathRates::tile_overhead_k, 0, 4096, false),
      tile,
      max_tile,
      split,
      width,
      waves};
  out.insert(out.end(), choice.begin(), choice.end());
  return out;
}

hw::AchievableRates coordinate_search(
    const hw::AchievableRates& start, const std::vector<FitParameter>& params,
    const std::function<double(const hw::AchievableRates&)>& objective, const CalibrateOptions& o) {
  hw::AchievableRates best = start;
  // Start inside the bounds (0 means "GPU-wide value" for path entries: start at mid-range).
  for (const auto& p : params) {
    if (!p.choices.empty()) {
      const double v = p.get(best);
      if (std::find(p.choices.begin(), p.choices.end(), v) == p.choices.end()) {
        p.set(best, p.choices.front());
      }
    } else {
      const double v = p.get(best);
      const double mid = p.log_scale ? std::sqrt(p.lo * p.hi) : 0.5 * (p.lo + p.hi);
      p.set(best, v > 0 || p.lo == 0 ? clamp(v, p.lo, p.hi) : mid);
    }
  }
  // Normalized coordinate of a continuous parameter: 0 at lo, 1 at hi (log or linear).
  auto to_u = [](const FitParameter& p, double v) {
    return p.log_scale ? std::log(v / p.lo) / std::log(p.hi / p.lo) : (v - p.lo) / (p.hi - p.lo);
  };
  auto from_u = [](const FitParameter& p, double u) {
    u = clamp(u, 0, 1);
    return p.log_scale ? p.lo * std::exp(u * std::log(p.hi / p.lo)) : p.lo + u * (p.hi - p.lo);
  };
  double best_f = objective(best);
  // Sweeps over the parameters with steps halving each time (then more at the finest step
  // while they still improve, at most `sweeps` more), each followed by a pattern move along the
  // sweep's net direction (Hooke-Jeeves), which follows valleys of correlated parameters.
  double last_f = best_f;
  for (int sweep = 0; sweep < 2 * o.sweeps; ++sweep) {
    if (sweep >= o.sweeps && !(best_f < last_f * (1 - 1e-4))) break;
    last_f = sweep >= o.sweeps - 1 ? best_f : last_f;
    const double step = 0.5 * std::pow(0.5, std::min(sweep, o.sweeps - 1));
    const hw::AchievableRates sweep_start = best;
    for (const auto& p : params) {
      std::vector<double> tries;
      if (!p.choices.empty()) {
        tries = p.choices;
      } else {
        const double u = to_u(p, p.get(best));
        for (int i = -o.grid; i <= o.grid; ++i) {
          if (i != 0) tries.push_back(from_u(p, u + double(i) / o.grid * step));
        }
      }
      for (double x : tries) {
        hw::AchievableRates trial = best;
        p.set(trial, x);
        const double f = objective(trial);
        if (f < best_f - 1e-12) {
          best_f = f;
          best = trial;
        }
      }
    }
    for (double t : {1.0, 2.0, 4.0, 8.0}) {
      hw::AchievableRates trial = best;
      bool moved = false;
      for (const auto& p : params) {
        if (!p.choices.empty()) continue;
        const double u0 = to_u(p, p.get(sweep_start)), u1 = to_u(p, p.get(best));
        if (u1 == u0) continue;
        p.set(trial, from_u(p, u1 + t * (u1 - u0)));
        moved = true;
      }
      if (!moved) break;
      const double f = objective(trial);
      if (!(f < best_f - 1e-12)) break;
      best_f = f;
      best = trial;
    }
  }
  // Polish the continuous parameters with Nelder-Mead in normalized coordinates, started from
  // a simplex of one coarse step along each axis.
  std::vector<const FitParameter*> cont;
  for (const auto& p : params) {
    if (p.choices.empty()) cont.push_back(&p);
  }
  const size_t n = cont.size();
  if (n == 0 || o.polish_evaluations <= 0) return best;
  auto point = [&](const std::vector<double>& u) {
    hw::AchievableRates a = best;
    for (size_t i = 0; i < n; ++i) cont[i]->set(a, from_u(*cont[i], u[i]));
    return a;
  };
  std::vector<std::vector<double>> x(n + 1, std::vector<double>(n));
  std::vector<double> f(n + 1);
  for (size_t i = 0; i < n; ++i) x[0][i] = clamp(to_u(*cont[i], cont[i]->get(best)), 0, 1);
  f[0] = best_f;
  for (size_t k = 1; k <= n; ++k) {
    x[k] = x[0];
    x[k][k - 1] += x[0][k - 1] < 0.9 ? 0.1 : -0.1;
    f[k] = objective(point(x[k]));
  }
  int evaluations = int(n);
  while (evaluations < o.polish_evaluations) {
    std::vector<size_t> order(n + 1);
    for (size_t i = 0; i <= n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return f[a] < f[b]; });
    const size_t lo = order[0], hi = order[n], second = order[n - 1];
    if (f[hi] - f[lo] < 1e-7) break;
    std::vector<double> c(n, 0.0);
    for (size_t i = 0; i <= n; ++i) {
      if (i == hi) continue;
      for (size_t d = 0; d < n; ++d) c[d] += x[i][d] / double(n);
    }
    auto along = [&](double t) {
      std::vector<double> y(n);
      for (size_t d = 0; d < n; ++d) y[d] = clamp(c[d] + t * (x[hi][d] - c[d]), 0, 1);
      return y;
    };
    auto eval = [&](const std::vector<double>& y) {
      ++evaluations;
      return objective(point(y));
    };
    const auto r = along(-1);
    const double fr = eval(r);
    if (fr < f[lo]) {
      const auto e = along(-2);
      const double fe = eval(e);
      x[hi] = fe < fr ? e : r;
      f[hi] = std::min(fe, fr);
    } else if (fr < f[second]) {
      x[hi] = r;
      f[hi] = fr;
    } else {
      const auto k = along(0.5);
      const double fk = eval(k);
      if (fk < f[hi]) {
        x[hi] = k;
        f[hi] = fk;
      } else {
        for (size_t i = 0; i <= n; ++i) {
          if (i == lo) continue;
          for (size_t d = 0; d < n; ++d) x[i][d] = x[lo][d] + 0.5 * (x[i][d] - x[lo][d]);
          f[i] = eval(x[i]);
        }
      }
    }
  }
  const size_t at = size_t(std::min_element(f.begin(), f.end()) - f.begin());
  if (f[at] < best_f) best = point(x[at]);
  return best;
}

double fit_objective(const hw::GpuConfig& gpu, const hw::AchievableRates& rates,
                     const Measurements& data, const std::vector<size_t>& steps,
                     const std::vector<size_t>& fp16_gemms) {
  const double s = steps.empty() ? 0 : step_objective(gpu, rates, data, steps);
  if (fp16_gemms.empty()) return s;
  const double g = gemm_objective(gpu, rates, data, fp16_gemms);
  if (steps.empty()) return g;
  // Each phase and the GEMMs count alike.
  const bool both =
      std::any_of(steps.begin(), steps.end(),
                  [&](size_t i) { return data.steps[i].phase == llm::Phase::kDecode; }) &&
      std::any_of(steps.begin(), steps.end(),
                  [&](size_t i) { return data.steps[i].phase == llm::Phase::kPrefill; });
  return both ? (2 * s + g) / 3 : (s + g) / 2;
}

double step_objective(const hw::GpuConfig& gpu, const hw::AchievableRates& rates,
                      const Measurements& data, const std::vector<size_t>& steps) {
  const Machine m = machine_with(gpu, rates);
  std::vector<double> decode, prefill;
  for (size_t i : steps) {
    const auto& s = data.steps[i];
    const double e = step_ms(m, data, s) / s.ms - 1;
    (s.phase == llm::Phase::kDecode ? decode : prefill).push_back(e);
  }
  if (decode.empty()) return mean_abs(prefill);
  if (prefill.empty()) return mean_abs(decode);
  return 0.5 * (mean_abs(decode) + mean_abs(prefill));
}

CalibrationResult calibrate(const hw::GpuConfig& gpu, const Measurements& data,
                            const CalibrateOptions& o) {
  CalibrationResult r;
  r.gpu = gpu.name;
  r.data = data;
  r.before = gpu.achievable;
  if (!data.device.empty()) {
    if (!hw::device_is_gpu(data.device, gpu.name)) {
      const std::string builtin = hw::builtin_gpu_of_device(data.device);
      r.device_mismatch = "the measurements are from an " + data.device +
                          " but the fit is for gpu '" + gpu.name + "'" +
                          (builtin.empty() ? "" : " (use --gpu " + builtin + ")");
    }
  }
  std::set<std::string> models_seen;
  for (const auto& s : data.steps) models_seen.insert(s.model);
  for (const auto& g : data.gemms) {
    if (!g.model.empty()) models_seen.insert(g.model);
  }
  const std::vector<std::string> models(models_seen.begin(), models_seen.end());
  for (const auto& f : o.hold_out) {
    if (std::find(data.files.begin(), data.files.end(), f) == data.files.end()) {
      throw InputError("--hold-out: '" + f + "' is not one of the --measurements files (" +
                       format_files(data.files) + ")");
    }
  }
  r.hold_out = o.hold_out;
  auto held_file = [&](const std::string& f) {
    return std::find(o.hold_out.begin(), o.hold_out.end(), f) != o.hold_out.end();
  };

  // Which cases each fit sees: steps (FP16), and each low-bit path's GEMMs; `skip_held`: none of
  // the held-out files'.
  auto step_ids = [&](const std::string& skip, bool skip_held) {
    std::vector<size_t> ids;
    for (size_t i = 0; i < data.steps.size(); ++i) {
      if (data.steps[i].model != skip && !(skip_held && held_file(data.steps[i].file))) {
        ids.push_back(i);
      }
    }
    return ids;
  };
  // The parameters a fit of these steps moves: the MoE, latent-attention and LayerNorm ones
  // only where its steps have such layers (else they stay at their generic start).
  auto params_for = [&](const std::vector<size_t>& ids) {
    bool moe = false, mla = false, layer_norm = false;
    for (size_t i : ids) {
      const auto& c = data.model(data.steps[i].model);
      moe = moe || c.is_moe();
      mla = mla || c.is_mla();
      layer_norm = layer_norm || c.norm == llm::NormKind::kLayerNorm;
    }
    return step_parameters(moe, mla, layer_norm);
  };
  // Every GEMM path but FP16 (the steps' own, fitted with them) has its own entry.
  std::set<std::string> path_dtypes;
  for (const auto& g : data.gemms) {
    if (g.dtype != "fp16") path_dtypes.insert(g.dtype);
  }
  // Leave-one-shape-out: the distinct (N, K) of the GEMMs of profiles, dealt into folds.
  std::map<std::pair<int64_t, int64_t>, int> shape_index;
  for (const auto& g : data.gemms) {
    if (!g.model.empty()) shape_index.emplace(std::make_pair(g.n, g.k), 0);
  }
  {
    int i = 0;
    for (auto& [shape, index] : shape_index) index = i++;
  }
  const int n_shapes = int(shape_index.size());
  const int folds = !o.loso || n_shapes < 2 ? 0
                    : o.shape_folds > 0     ? std::min(o.shape_folds, n_shapes)
                                            : n_shapes;
  auto gemm_fold = [&](const GemmMeasurement& g) {
    if (g.model.empty() || folds == 0) return -1;  // a GEMM-only file's cases are never fitted
    return shape_index.at({g.n, g.k}) % folds;
  };
  auto gemm_ids = [&](const std::string& dtype, const std::string& skip, int skip_fold,
                      bool skip_held) {
    std::vector<size_t> ids;
    for (size_t i = 0; i < data.gemms.size(); ++i) {
      const auto& g = data.gemms[i];
      if (g.dtype != dtype || (!skip.empty() && g.model == skip)) continue;
      if (skip_held && held_file(g.file)) continue;
      if (skip_fold >= 0 && gemm_fold(g) == skip_fold) continue;
      ids.push_back(i);
    }
    return ids;
  };
  const auto step_params = params_for(step_ids("", false));
  // Every fit starts from the same point, whatever the GPU file held: each fitted parameter at
  // its generic default (hw::AchievableRates' initializers; a path's entry absent, so its search
  // starts mid-range). A re-run on a fitted file gives the same fit, and a leave-one-model-out fit
  // cannot inherit anything from the held-out model through a start fitted on all of them.
  hw::AchievableRates start = gpu.achievable;
  {
    const hw::AchievableRates defaults;
    const bool fits_steps =
        !data.steps.empty() || std::any_of(data.gemms.begin(), data.gemms.end(), [](const auto& g) {
          return g.dtype == "fp16" && g.with_steps;
        });
    if (fits_steps) {
      for (const auto& p : step_parameters(true, true, true)) p.set(start, p.get(defaults));
      auto& paths = start.gemm_paths;
      paths.erase(std::remove_if(paths.begin(), paths.end(),
                                 [](const hw::GemmPathRates& e) { return !e.kernel.empty(); }),
                  paths.end());
    }
    for (const auto& dtype : path_dtypes) {
      const auto [act, weight] = path_names(dtype);
      auto& paths = start.gemm_paths;
      paths.erase(std::remove_if(paths.begin(), paths.end(),
                                 [&, act = act, weight = weight](const hw::GemmPathRates& e) {
                                   return e.act == act && e.weight == weight;
                                 }),
                  paths.end());
    }
  }
  // One fit: without the steps and GEMMs of model `skip` (none when empty), without the GEMMs
  // of shape fold `skip_fold` (none when negative), and with `skip_held` without the held-out
  // files' cases.
  auto fit = [&](const std::string& skip, int skip_fold, bool skip_held) {
    hw::AchievableRates a = start;
    const auto ids = step_ids(skip, skip_held);
    const auto params = params_for(ids);
    // FP16 GEMMs of the profiles with steps (the same session as the steps; not those of
    // GEMM-only files or GEMM sweeps: they stay a test) pin the tensor and DRAM parameters the
    // steps share.
    std::vector<size_t> fp16;
    for (size_t i : gemm_ids("fp16", skip, skip_fold, skip_held)) {
      if (data.gemms[i].with_steps) fp16.push_back(i);
    }
    if (!ids.empty() || !fp16.empty()) {
      a = coordinate_search(
          a, params,
          [&](const hw::AchievableRates& x) { return fit_objective(gpu, x, data, ids, fp16); }, o);
    }
    for (const auto& dtype : path_dtypes) {
      const auto gids = gemm_ids(dtype, skip, skip_fold, skip_held);
      if (gids.empty()) continue;
      std::vector<const GemmMeasurement*> seen;
      for (size_t i : gids) seen.push_back(&data.gemms[i]);
      const auto path_params = path_parameters(dtype, tile_rules_from_names(seen));
      auto objective = [&](const hw::AchievableRates& x) {
        return gemm_objective(gpu, x, data, gids);
      };
      // The quick fits below see every third case (all of them when there are few).
      std::vector<size_t> sample;
      for (size_t i = 0; i < gids.size(); ++i) {
        if (gids.size() < 300 || i % 3 == 0) sample.push_back(gids[i]);
      }
      auto quick_objective = [&](const hw::AchievableRates& x) {
        return gemm_objective(gpu, x, data, sample);
      };
      // The discrete parameters (tile rows, K splits) make the objective rugged: a quick fit of
      // the continuous ones for every combination of them, then (the kernels' kind: tile width,
      // waves) a quick fit from the best for each other kind, then the full search from the best.
      std::vector<FitParameter> continuous, discrete, kind;
      for (const auto& p : path_params) {
        (p.choices.empty() || p.with_continuous ? continuous
         : p.kernel_kind                        ? kind
                                                : discrete)
            .push_back(p);
      }
      std::vector<FitParameter> rates, thresholds;
      for (const auto& p : continuous) (p.with_continuous ? thresholds : rates).push_back(p);
      CalibrateOptions quick = o;
      quick.sweeps = 2;
      quick.grid = 4;
      quick.polish_evaluations = 0;
      hw::AchievableRates best = a;
      double best_f = INFINITY;
      std::vector<size_t> pick(discrete.size(), 0);
      while (true) {
        hw::AchievableRates start = a;
        for (size_t i = 0; i < discrete.size(); ++i) {
          discrete[i].set(start, discrete[i].choices[pick[i]]);
        }
        // A largest row tile under the smallest is the smallest: that combination is another's.
        const auto* e = start.gemm_path(path_names(dtype).first, path_names(dtype).second);
        if (!e || e->max_tile_m == 0 || e->max_tile_m >= e->tile_m) {
          const auto trial = coordinate_search(start, continuous, quick_objective, quick);
          const double f = quick_objective(trial);
          if (f < best_f) {
            best_f = f;
            best = trial;
          }
        }
        size_t i = 0;
        while (i < pick.size() && ++pick[i] == discrete[i].choices.size()) pick[i++] = 0;
        if (i == pick.size()) break;
      }
      // The other kernel kinds from the grid's best; a kernel of one tile (tile_n) at each of
      // the smallest row tiles, its largest the same.
      const auto [act, weight] = path_names(dtype);
      std::vector<size_t> kind_pick(kind.size(), 0);
      const hw::AchievableRates grid_best = best;
      while (true) {
        size_t i = 0;
        while (i < kind_pick.size() && ++kind_pick[i] == kind[i].choices.size()) kind_pick[i++] = 0;
        if (i == kind_pick.size()) break;
        hw::AchievableRates start = grid_best;
        for (size_t j = 0; j < kind.size(); ++j) kind[j].set(start, kind[j].choices[kind_pick[j]]);
        const hw::GemmPathRates e = *start.gemm_path(act, weight);
        if (!e.tile_choice.empty() && e.tile_n > 0) continue;  // the tile choice rules
        const std::vector<int> rows = e.tile_n > 0
                                          ? std::vector<int>(kTileRows.begin(), kTileRows.end())
                                          : std::vector<int>{e.tile_m};
        for (int r : rows) {
          hw::AchievableRates trial_start = start;
          auto& t = path_entry(trial_start, act, weight);
          if (e.tile_n > 0) t.tile_m = t.max_tile_m = r;
          auto trial = coordinate_search(trial_start, continuous, quick_objective, quick);
          double f = quick_objective(trial);
          if (!e.tile_choice.empty()) {
            // A tile-choice threshold moves whole groups of GEMMs to another tile, whose rates
            // then change: each threshold tried at every other choice with the rates re-fitted.
            for (const auto& p : thresholds) {
              for (size_t c = 0; c < p.choices.size(); c += 2) {
                hw::AchievableRates moved = trial;
                p.set(moved, p.choices[c]);
                const auto refit = coordinate_search(moved, rates, quick_objective, quick);
                const double f_refit = quick_objective(refit);
                if (f_refit < f) {
                  f = f_refit;
                  trial = refit;
                }
              }
            }
          }
          if (f < best_f) {
            best_f = f;
            best = trial;
          }
        }
      }
      a = coordinate_search(best, path_params, objective, o);
      // A kernel of one tile: its smallest row tile is its largest.
      auto& e = path_entry(a, act, weight);
      if (e.tile_n > 0) e.max_tile_m = e.tile_m;
    }
    return a;
  };

  r.fitted = fit("", -1, false);
  if (!data.steps.empty()) {
    for (const auto& p : step_params) r.parameters.push_back(p.name);
  }
  auto tile_name = [](int m, int n) {
    return m > 0 ? std::to_string(m) + "x" + std::to_string(n) : std::string();
  };
  for (const auto& dtype : path_dtypes) {
    std::vector<const GemmMeasurement*> seen;
    for (size_t i : gemm_ids(dtype, "", -1, false)) seen.push_back(&data.gemms[i]);
    for (const auto& p : path_parameters(dtype, tile_rules_from_names(seen))) {
      r.parameters.push_back(p.name);
    }
  }
  r.fitted.source = "";
  {
    const Machine m = machine_with(gpu, r.fitted);
    const Machine before(gpu);
    const Machine from(machine_with(gpu, start));
    std::vector<double> before_errors, start_errors;
    for (const auto& s : data.steps) {
      CaseResult c;
      c.model = s.model;
      c.phase = std::string(llm::phase_name(s.phase));
      c.what = "step";
      c.batch = s.batch;
      c.length = s.length;
      c.measured_ms = s.ms;
      c.estimated_ms = step_ms(m, data, s);
      c.family = layer_family(data.model(s.model));
      r.steps.push_back(c);
      before_errors.push_back(step_ms(before, data, s) / s.ms - 1);
      start_errors.push_back(step_ms(from, data, s) / s.ms - 1);
    }
    r.before_step_mape = mean_abs(before_errors);
    r.start_step_mape = mean_abs(start_errors);
    for (const auto& g : data.gemms) {
      CaseResult c;
      c.model = g.model;
      c.what = g.dtype;
      c.name = g.name;
      c.m = g.m;
      c.m_run = g.m_run;
      c.n = g.n;
      c.k = g.k;
      c.measured_ms = g.ms;
      const OpCost cost = gemm_estimate(m, g);
      c.estimated_ms = cost.ms;
      c.library_tile = tile_name(g.library_tile_m, g.library_tile_n);
      c.tile = tile_name(cost.tile.tm, cost.tile.tn);
      r.gemms.push_back(c);
    }
  }
  // A case the fit misses by more than kMaxExplainedRatio is a measurement the roofline cannot
  // explain (wrong units, a failed run): refused, naming the worst one, before any file is made.
  {
    const CaseResult* worst = nullptr;
    double worst_ratio = 1;
    for (const auto* cases : {&r.steps, &r.gemms}) {
      for (const CaseResult& c : *cases) {
        const double ratio = std::max(c.estimated_ms / c.measured_ms,
                                      c.measured_ms / std::max(c.estimated_ms, 1e-300));
        if (!(ratio <= worst_ratio)) {
          worst_ratio = ratio;
          worst = &c;
        }
      }
    }
    if (worst && !(worst_ratio <= kMaxExplainedRatio)) {
      const CaseResult& c = *worst;
      const std::string what =
          c.what == "step"
              ? fmt::format("{} {} step (batch {}, length {})", c.model, c.phase, c.batch, c.length)
              : fmt::format("{} GEMM '{}' M={} N={} K={}", c.what, c.name, c.m, c.n, c.k);
      throw InputError(fmt::format(
          "--measurements: the fit cannot explain the data: {} measured {:.4g} ms, the best fit "
          "estimates {:.4g} ms ({:.3g}x apart; at most {:.0f}x is accepted): check its time and "
          "units (ms) and that the run succeeded",
          what, c.measured_ms, c.estimated_ms, worst_ratio, kMaxExplainedRatio));
    }
  }
  // Held-out fits: one per model (leave-one-model-out) and one per shape fold
  // (leave-one-shape-out). They are independent (each builds its own Machines from const inputs):
  // run on `threads` threads; each result lands in its own slot, so the outcome does not depend
  // on the thread count.
  struct HeldOut {
    std::string model;
    int fold = -1;
    bool files = false;  // the fit without the held-out files
  };
  std::vector<HeldOut> jobs;
  if (!o.hold_out.empty()) jobs.push_back({"", -1, true});
  if (o.lomo && models.size() > 1) {
    for (const auto& name : models) jobs.push_back({name, -1, false});
  }
  for (int f = 0; f < folds; ++f) jobs.push_back({"", f, false});
  r.shape_folds = folds;
  if (!jobs.empty()) {
    std::vector<hw::AchievableRates> held_out_fits(jobs.size());
    std::atomic<size_t> next{0};
    std::exception_ptr failure;
    std::mutex failure_mutex;
    auto worker = [&] {
      for (size_t k; (k = next++) < jobs.size();) {
        try {
          held_out_fits[k] = fit(jobs[k].model, jobs[k].fold, jobs[k].files);
        } catch (...) {
          const std::lock_guard<std::mutex> lock(failure_mutex);
          if (!failure) failure = std::current_exception();
        }
      }
    };
    const unsigned hw_threads = std::max(1u, std::thread::hardware_concurrency());
    const size_t n_threads =
        std::min(jobs.size(), size_t(o.threads > 0 ? unsigned(o.threads) : hw_threads));
    std::vector<std::thread> pool;
    for (size_t t = 1; t < n_threads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
    if (failure) std::rethrow_exception(failure);
    for (size_t k = 0; k < jobs.size(); ++k) {
      const Machine m = machine_with(gpu, held_out_fits[k]);
      if (jobs[k].files) {
        for (size_t i = 0; i < data.steps.size(); ++i) {
          if (held_file(data.steps[i].file)) r.steps[i].held_ms = step_ms(m, data, data.steps[i]);
        }
        for (size_t i = 0; i < data.gemms.size(); ++i) {
          if (held_file(data.gemms[i].file)) {
            r.gemms[i].held_ms = gemm_estimate_ms(m, data.gemms[i]);
          }
        }
        continue;
      }
      if (jobs[k].fold >= 0) {
        for (size_t i = 0; i < data.gemms.size(); ++i) {
          if (gemm_fold(data.gemms[i]) == jobs[k].fold) {
            const OpCost cost = gemm_estimate(m, data.gemms[i]);
            r.gemms[i].loso_ms = cost.ms;
            r.gemms[i].loso_tile = tile_name(cost.tile.tm, cost.tile.tn);
          }
        }
        continue;
      }
      const std::string& held_out = jobs[k].model;
      for (size_t i = 0; i < data.steps.size(); ++i) {
        if (data.steps[i].model == held_out) {
          r.steps[i].lomo_ms = step_ms(m, data, data.steps[i]);
        }
      }
      for (size_t i = 0; i < data.gemms.size(); ++i) {
        if (data.gemms[i].model == held_out)
          r.gemms[i].lomo_ms = gemm_estimate_ms(m, data.gemms[i]);
      }
    }
  }
  auto select = [](const std::vector<CaseResult>& cases,
                   const std::function<bool(const CaseResult&)>& keep) {
    std::vector<const CaseResult*> out;
    for (const auto& c : cases) {
      if (keep(c)) out.push_back(&c);
    }
    return out;
  };
  for (const char* phase : {"decode", "prefill"}) {
    auto cases = select(r.steps, [&](const CaseResult& c) { return c.phase == phase; });
    if (!cases.empty()) r.by_phase.push_back(summarize(phase, cases));
  }
  if (!r.steps.empty()) {
    r.by_phase.push_back(summarize("all", select(r.steps, [](const CaseResult&) { return true; })));
  }
  std::vector<std::string> families;
  for (const auto& pm : data.models) {
    auto cases = select(r.steps, [&](const CaseResult& c) { return c.model == pm.name; });
    if (!cases.empty()) r.by_model.push_back(summarize(pm.name, cases));
    const std::string& f = pm.config.model_type;
    if (std::find(families.begin(), families.end(), f) == families.end()) families.push_back(f);
  }
  for (const auto& f : families) {
    auto cases = select(r.steps, [&](const CaseResult& c) {
      return std::any_of(data.models.begin(), data.models.end(), [&](const ProfileModel& pm) {
        return pm.name == c.model && pm.config.model_type == f;
      });
    });
    if (!cases.empty()) r.by_family.push_back(summarize(f.empty() ? "unknown" : f, cases));
  }
  // The layer families and, for every model not dense, its phases.
  std::vector<std::string> layer_families;
  for (const auto& c : r.steps) {
    if (std::find(layer_families.begin(), layer_families.end(), c.family) == layer_families.end()) {
      layer_families.push_back(c.family);
    }
  }
  for (const auto& f : layer_families) {
    for (const char* phase : {"decode", "prefill"}) {
      auto cases =
          select(r.steps, [&](const CaseResult& c) { return c.family == f && c.phase == phase; });
      if (!cases.empty()) r.by_layer_family.push_back(summarize(f + ", " + phase, cases));
    }
  }
  for (const auto& file : data.files) {
    const std::string name = fs::path(file).filename().string();
    for (const char* phase : {"decode", "prefill"}) {
      std::vector<const CaseResult*> cases;
      for (size_t i = 0; i < data.steps.size(); ++i) {
        if (data.steps[i].file == file && r.steps[i].phase == phase) cases.push_back(&r.steps[i]);
      }
      if (!cases.empty()) r.by_file_phase.push_back(summarize(name + ", " + phase, cases));
    }
  }
  for (const auto& pm : data.models) {
    const std::string family = layer_family(pm.config);
    if (family == "dense" || family == "local + global attention") continue;
    for (const char* phase : {"decode", "prefill"}) {
      auto cases = select(
          r.steps, [&](const CaseResult& c) { return c.model == pm.name && c.phase == phase; });
      if (!cases.empty()) r.by_model_phase.push_back(summarize(pm.name + ", " + phase, cases));
    }
  }
  std::vector<std::string> dtypes;
  for (const auto& g : data.gemms) {
    if (std::find(dtypes.begin(), dtypes.end(), g.dtype) == dtypes.end()) {
      dtypes.push_back(g.dtype);
    }
  }
  for (const auto& d : dtypes) {
    r.by_dtype.push_back(
        summarize(d, select(r.gemms, [&](const CaseResult& c) { return c.what == d; })));
    for (const bool large : {false, true}) {
      auto cases = select(r.gemms, [&](const CaseResult& c) {
        return c.what == d && !c.model.empty() && (c.m > 256) == large;
      });
      if (!cases.empty())
        r.by_dtype_m.push_back(summarize(d + (large ? ", M > 256" : ", M <= 256"), cases));
    }
  }
  auto low = [&](const std::string& group, const std::function<bool(const CaseResult&)>& keep) {
    auto cases = select(r.gemms, keep);
    if (!cases.empty()) r.low_bit.push_back(summarize(group, cases));
  };
  for (const auto& d : dtypes) {
    TileAgreement t;
    t.group = d;
    for (const auto& c : r.gemms) {
      if (c.what != d || c.library_tile.empty()) continue;
      ++t.named;
      t.in_sample += c.tile == c.library_tile;
      t.loso += c.loso_tile == c.library_tile;
    }
    if (t.named > 0) r.tile_agreement.push_back(t);
  }
  low("int8 x int8, M < 32 (padded)",
      [](const CaseResult& c) { return c.what == "int8" && c.m < 32; });
  low("int8 x int8, all M", [](const CaseResult& c) { return c.what == "int8"; });
  low("fp8 e4m3, all M", [](const CaseResult& c) { return c.what == "fp8"; });
  low("int4 weight-only, M = 1",
      [](const CaseResult& c) { return c.what == "int4wo" && c.m == 1; });
  low("int4 weight-only, all M", [](const CaseResult& c) { return c.what == "int4wo"; });

  std::string phases;
  for (const auto& p : r.by_phase) {
    if (p.group == "all") continue;
    phases += fmt::format("{}{} {:.1f}% (leave-one-model-out {:.1f}%)", phases.empty() ? "" : ", ",
                          p.group, 100 * p.mape, 100 * p.lomo_mape);
  }
  r.fitted.source = fmt::format(
      "fitted by ltc calibrate on {} ({} steps of {} models, {} GEMMs{}): step MAPE {}; "
      "{} fitted parameters",
      format_files(data.files), data.steps.size(), data.models.size(), data.gemms.size(),
      data.device.empty() ? "" : ", measured on an " + data.device, phases.empty() ? "n/a" : phases,
      fmt::format("{}", r.parameters.size()));
  r.command = "ltc calibrate --gpu " + gpu.name + " --measurements " + format_files(data.files);
  for (const auto& f : o.hold_out) r.command += " --hold-out " + f;
  return r;
}

std::string gpu_file_path(const std::string& name_or_path) {
  std::error_code ec;
  if (fs::is_regular_file(name_or_path, ec)) return name_or_path;
  return config_dir("gpus") + "/" + name_or_path + ".json";
}

std::string calibrated_gpu_json(const std::string& gpu_file, const CalibrationResult& r) {
  const std::string text = read_input_file(gpu_file);
  nlohmann::ordered_json j = parse_json<nlohmann::ordered_json>(text, gpu_file);
  // A largest row tile under the smallest is the smallest (cost.cpp).
  hw::AchievableRates f = r.fitted;
  for (auto& p : f.gemm_paths) {
    if (p.max_tile_m > 0) p.max_tile_m = std::max(p.max_tile_m, p.tile_m);
  }
  const nlohmann::ordered_json a = hw::achievable_json(f);
  j["achievable"] = a;
  return j.dump(1, ' ', true) + "\n";  // ASCII, as the shipped files
}

void to_json(json& j, const CalibrationResult& r) {
  auto summaries = [](const std::vector<ErrorSummary>& v) {
    json a = json::array();
    for (const auto& s : v) {
      a.push_back({{"group", s.group},
                   {"cases", s.cases},
                   {"mape", s.mape},
                   {"lomo_mape", s.lomo_mape},
                   {"loso_mape", s.loso_mape},
                   {"held_mape", s.held_mape},
                   {"max_abs_error", s.max_abs}});
    }
    return a;
  };
  auto cases = [](const std::vector<CaseResult>& v) {
    json a = json::array();
    for (const auto& c : v) {
      json e = {{"model", c.model},
                {"what", c.what},
                {"measured_ms", c.measured_ms},
                {"estimated_ms", c.estimated_ms},
                {"error", c.error()}};
      if (c.what == "step") {
        e["phase"] = c.phase;
        e["family"] = c.family;
        e["batch"] = c.batch;
        e[c.phase == "decode" ? "context" : "seq"] = c.length;
      } else {
        e["name"] = c.name;
        e["M"] = c.m;
        e["M_run"] = c.m_run;
        e["N"] = c.n;
        e["K"] = c.k;
        e["tile"] = c.tile;
        if (!c.library_tile.empty()) e["library_tile"] = c.library_tile;
        if (!c.loso_tile.empty()) e["loso_tile"] = c.loso_tile;
      }
      if (c.lomo_ms > 0) {
        e["lomo_ms"] = c.lomo_ms;
        e["lomo_error"] = c.lomo_error();
      }
      if (c.loso_ms > 0) {
        e["loso_ms"] = c.loso_ms;
        e["loso_error"] = c.loso_error();
      }
      if (c.held_ms > 0) {
        e["held_ms"] = c.held_ms;
        e["held_error"] = c.held_error();
      }
      a.push_back(e);
    }
    return a;
  };
  json agreement = json::array();
  for (const auto& t : r.tile_agreement) {
    agreement.push_back(
        {{"group", t.group}, {"named", t.named}, {"in_sample", t.in_sample}, {"loso", t.loso}});
  }
  hw::GpuConfig g;
  g.achievable = r.fitted;
  json full;
  hw::to_json(full, g);
  j = json{{"gpu", r.gpu},
           {"device", r.data.device},
           {"files", r.data.files},
           {"command", r.command},
           {"parameters", r.parameters},
           {"achievable", full["achievable"]},
           {"before_step_mape", r.before_step_mape},
           {"start_step_mape", r.start_step_mape},
           {"by_phase", summaries(r.by_phase)},
           {"by_model", summaries(r.by_model)},
           {"by_family", summaries(r.by_family)},
           {"by_layer_family", summaries(r.by_layer_family)},
           {"by_model_phase", summaries(r.by_model_phase)},
           {"by_file_phase", summaries(r.by_file_phase)},
           {"hold_out", r.hold_out},
           {"by_dtype", summaries(r.by_dtype)},
           {"by_dtype_m", summaries(r.by_dtype_m)},
           {"shape_folds", r.shape_folds},
           {"low_bit", summaries(r.low_bit)},
           {"tile_agreement", agreement},
           {"steps", cases(r.steps)},
           {"gemms", cases(r.gemms)}};
  if (!r.device_mismatch.empty()) j["device_mismatch"] = r.device_mismatch;
}

namespace {
// A decision list as text: " 128x256 (tensor 0.4595) from M x N >= ... and K >= ...; ... else
// 64x64 (tensor 0.3470)" (what calibrate prints and calibration.md states).
std::string tile_choice_text(const std::vector<hw::TileRule>& rules) {
  std::string s;
  for (size_t i = 0; i < rules.size(); ++i) {
    const hw::TileRule& t = rules[i];
    s += i + 1 < rules.size()
             ? fmt::format(" {}x{} (tensor {:.4f}) from M x N >= {:.0f} and K >= {:.0f};", t.tile_m,
                           t.tile_n, t.tensor_fraction, t.min_mn, t.min_k)
             : fmt::format(" else {}x{} (tensor {:.4f})", t.tile_m, t.tile_n, t.tensor_fraction);
  }
  return s;
}
}  // namespace

std::string format_calibration(const CalibrationResult& r) {
  std::string s = fmt::format("{} fitted on {}{}\n", r.gpu, format_files(r.data.files),
                              r.data.device.empty() ? "" : " (" + r.data.device + ")");
  hw::GpuConfig g;
  g.achievable = r.fitted;
  json full;
  hw::to_json(full, g);
  s += "achievable:\n";
  for (const auto& [key, v] : full["achievable"].items()) {
    if (key == "source" || key == "gemm_paths") continue;
    s += fmt::format("  {:<26} {}\n", key, v.dump());
  }
  for (const auto& p : r.fitted.gemm_paths) {
    s += fmt::format(
        "  gemm path {} x {}{}: tensor_fraction {:.4f} (tiles < 128 rows {:.4f}), "
        "dram_bw_fraction {:.4f}, l2_bw_fraction {:.4f}, fixed_us {:.2f}, tile_m {}..{}, "
        "tile_overhead_k {:.0f}, max_split_k {}, tile_n {}, data_parallel {}{}\n",
        p.act, p.weight, p.kernel.empty() ? "" : " " + p.kernel, p.tensor_fraction,
        p.small_tile_fraction, p.dram_bw_fraction, p.l2_bw_fraction, p.fixed_us, p.tile_m,
        p.max_tile_m > 0 ? std::max(p.max_tile_m, p.tile_m) : 256, p.tile_overhead_k, p.max_split_k,
        p.tile_n, p.data_parallel,
        p.kernel.empty() ? "" : fmt::format(", group_switch_us {:.2f}", p.group_switch_us));
  }
  auto table = [&](const char* title, const std::vector<ErrorSummary>& v) {
    if (v.empty()) return;
    const bool held = !r.hold_out.empty();
    s += fmt::format("{:<32} {:>6} {:>10} {:>10} {:>10} {:>10}{}\n", title, "cases", "MAPE",
                     "LOMO MAPE", "LOSO MAPE", "max |err|", held ? "  held-out file" : "");
    for (const auto& e : v) {
      s += fmt::format(
          "  {:<30} {:>6} {:>9.2f}% {:>9.2f}% {:>9.2f}% {:>9.1f}%{}\n", e.group, e.cases,
          100 * e.mape, 100 * e.lomo_mape, 100 * e.loso_mape, 100 * e.max_abs,
          held && e.held_mape > 0 ? fmt::format(" {:>13.2f}%", 100 * e.held_mape) : std::string());
    }
  };
  table("steps by phase", r.by_phase);
  table("steps by architecture", r.by_family);
  table("steps by layer family", r.by_layer_family);
  table("steps by model and phase", r.by_model_phase);
  table("steps by file and phase", r.by_file_phase);
  table("steps by model", r.by_model);
  table("GEMMs by path", r.by_dtype);
  table("GEMMs by path and M", r.by_dtype_m);
  table("low-bit GEMMs", r.low_bit);
  for (const auto& t : r.tile_agreement) {
    s += fmt::format(
        "{} GEMMs whose kernel names give a tile: {}; the roofline costs that tile for "
        "{} in sample{}\n",
        t.group, t.named, t.in_sample,
        r.shape_folds > 0 ? fmt::format(", {} leave-one-shape-out", t.loso) : "");
  }
  for (const auto& p : r.fitted.gemm_paths) {
    if (p.tile_choice.empty()) continue;
    s += fmt::format("  gemm path {} x {} tile choice:{}\n", p.act, p.weight,
                     tile_choice_text(p.tile_choice));
  }
  if (!r.steps.empty()) {
    s += fmt::format(
        "the GPU file's section: step MAPE {:.2f}%; the search's start (generic defaults): "
        "{:.2f}%\n",
        100 * r.before_step_mape, 100 * r.start_step_mape);
  }
  if (!r.device_mismatch.empty()) s += "note: " + r.device_mismatch + "\n";
  s += "reproduce: " + r.command + "\n";
  return s;
}

}  // namespace ltc::roofline

namespace ltc::roofline {

std::string calibration_markdown(const CalibrationResult& r) {
  std::string s = fmt::format(
      "The roofline's fit to H200 measurements (`{}`, model/roofline/README.md): mean absolute "
      "error of each case's time, in sample (the fit saw it), leave-one-model-out (LOMO: the "
      "fit without that model's steps and GEMMs) and leave-one-shape-out (LOSO: the fit without "
      "that GEMM's (N, K), {} folds of the distinct shapes). {} steps, {} GEMMs.\n",
      r.command, r.shape_folds, r.steps.size(), r.gemms.size());
  auto pct = [](double v) { return fmt::format("{:.2f}%", 100 * v); };
  auto held = [&](double v, bool computed) { return computed ? pct(v) : std::string("-"); };
  auto find = [](const std::vector<ErrorSummary>& v, const std::string& g) -> const ErrorSummary* {
    for (const auto& e : v) {
      if (e.group == g) return &e;
    }
    return nullptr;
  };
  if (!r.by_dtype.empty()) {
    s += "\n## GEMMs by kind\n\n| kind | cases | in-sample | LOMO | LOSO | M <= 256 in / LOSO | "
         "M > 256 in / LOSO | max abs |\n|---|---|---|---|---|---|---|---|\n";
    for (const auto& e : r.by_dtype) {
      auto range = [&](const char* tail) {
        const auto* x = find(r.by_dtype_m, e.group + tail);
        return x ? pct(x->mape) + " / " + held(x->loso_mape, r.shape_folds > 0) : std::string("-");
      };
      s += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {:.1f}% |\n", e.group, e.cases,
                       pct(e.mape), held(e.lomo_mape, e.lomo_mape > 0),
                       held(e.loso_mape, e.loso_mape > 0), range(", M <= 256"), range(", M > 256"),
                       100 * e.max_abs);
    }
  }
  for (const auto& t : r.tile_agreement) {
    s += fmt::format(
        "\n{} GEMMs whose kernel (the file's kernel lists) names its tile: {}; the roofline costs "
        "the library's tile for {} of them in sample{}.\n",
        t.group, t.named, t.in_sample,
        r.shape_folds > 0 ? fmt::format(" and {} leave-one-shape-out", t.loso) : "");
  }
  auto steps_table = [&](const char* title, const char* what, const std::vector<ErrorSummary>& v) {
    if (v.empty()) return;
    s += fmt::format(
        "\n## {}\n\n| {} | steps | in-sample | LOMO | max abs |\n|---|---|---|---|---|\n", title,
        what);
    for (const auto& e : v) {
      s += fmt::format("| {} | {} | {} | {} | {:.1f}% |\n", e.group, e.cases, pct(e.mape),
                       held(e.lomo_mape, e.lomo_mape > 0), 100 * e.max_abs);
    }
  };
  steps_table("Steps by phase", "phase", r.by_phase);
  steps_table("Steps by architecture", "model_type", r.by_family);
  steps_table("Steps by model", "model", r.by_model);
  if (!r.by_layer_family.empty()) {
    const bool with_held = !r.hold_out.empty();
    std::string files;
    for (const auto& f : r.hold_out) files += (files.empty() ? "`" : ", `") + f + "`";
    s += "\n## Steps by layer family\n\nThe layer families of docs/performance-models.md "
         "(MoE, MoE with shared experts, latent attention with MoE, sliding window on every "
         "layer; local + global attention: Gemma-2's alternating layers; dense: every other "
         "model), per phase, per measurement file and per model of the new families";
    if (with_held) {
      s += fmt::format(
          "; held out by construction: the fit without {} predicting its steps (for a file of "
          "new families, the fit on the dense profile alone: the parameters only those steps "
          "identify stay at their generic start)",
          files);
    }
    s += ".\n";
    // One table: its header (first column `what`), then a row per summary.
    auto rows = [&](const char* what, const std::vector<ErrorSummary>& v) {
      if (v.empty()) return;
      s += fmt::format("\n| {} | steps | in-sample | LOMO |{} max abs |\n|---|---|---|---|{}---|\n",
                       what, with_held ? " fit without the file |" : "", with_held ? "---|" : "");
      for (const auto& e : v) {
        s += fmt::format("| {} | {} | {} | {} |", e.group, e.cases, pct(e.mape),
                         held(e.lomo_mape, e.lomo_mape > 0));
        if (with_held)
          s += fmt::format(" {} |", e.held_mape > 0 ? pct(e.held_mape) : std::string("-"));
        s += fmt::format(" {:.1f}% |\n", 100 * e.max_abs);
      }
    };
    rows("family, phase", r.by_layer_family);
    rows("measurement file, phase", r.by_file_phase);
    rows("model, phase", r.by_model_phase);
  }
  if (!r.fitted.gemm_paths.empty()) {
    s += "\n## Fitted GEMM paths\n\n| path | tensor | tiles < 128 rows | DRAM | L2 | fixed us | "
         "tile rows | tile columns | tile overhead (K) | max split-K | schedule |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& p : r.fitted.gemm_paths) {
      s += fmt::format(
          "| {} x {}{} | {:.4f} | {:.4f} | {:.4f} | {:.4f} | {:.2f} | {}..{} | {} | {:.0f} | {} "
          "| {} |\n",
          p.act, p.weight, p.kernel.empty() ? "" : " " + p.kernel, p.tensor_fraction,
          p.small_tile_fraction, p.dram_bw_fraction, p.l2_bw_fraction, p.fixed_us, p.tile_m,
          p.max_tile_m > 0 ? std::max(p.max_tile_m, p.tile_m) : 256,
          p.tile_n > 0 ? std::to_string(p.tile_n) : "64..256", p.tile_overhead_k, p.max_split_k,
          !p.kernel.empty()      ? fmt::format("waves, {:.2f} us a group switch", p.group_switch_us)
          : p.data_parallel == 1 ? "waves"
                                 : "waves or stream-K");
    }
    for (const auto& p : r.fitted.gemm_paths) {
      if (p.tile_choice.empty()) continue;
      s += fmt::format(
          "\nTile choice of {} x {} (the library's heuristic, first that applies):{}.\n", p.act,
          p.weight, tile_choice_text(p.tile_choice));
    }
  }
  return s;
}

}  // namespace ltc::roofline
