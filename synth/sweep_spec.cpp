// Sweep specs: a JSON spec's grids expanded to design points (or `ltc sim` runs), their store
// keys, and plot entries (format: synth/sweeps/README.md).
#include "synth/sweep.h"

#include "common/error.h"
#include "common/file_io.h"
#include "common/json_fields.h"
#include "model/golden/dtype.h"
#include "model/hw/gpu.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <regex>
#include <set>

namespace ltc::synth {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* kConfigKeys[] = {
    "design", "m", "n", "k", "act", "wbits", "weight", "table", "acc", "out", "pipeline_stages"};

// The fields a spec may have (README.md#format); any other is refused, naming the file and key.
const char* kSpecKeys[] = {"name",
                           "title",
                           "description",
                           "tool",
                           "clock_ns",
                           "activity",
                           "cycles",
                           "seed",
                           "library",
                           "activity_timing",
                           "operand_storage",
                           "grid",
                           "where",
                           "store",
                           "plots",
                           "ratios",
                           "crossovers",
                           "gpu",
                           "gpu_set"};

// A string field of the spec, or "" when absent.
std::string string_field(const json& j, const char* key, const std::string& origin) {
  if (!j.contains(key)) return "";
  if (!j[key].is_string() || j[key].get<std::string>().empty()) {
    throw InputError(origin + ": '" + std::string(key) + "' must be a non-empty string");
  }
  return j[key].get<std::string>();
}

// `gpu` with the overrides `gpu_set`, errors named `where`.
hw::GpuConfig point_gpu(const json& p, const std::string& gpu_set_key, const std::string& where) {
  try {
    const hw::GpuConfig g = hw::load_gpu(p.at("gpu").get<std::string>());
    return gpu_set_key.empty() || !p.contains(gpu_set_key)
               ? g
               : hw::with_overrides(g, p[gpu_set_key].get<std::string>());
  } catch (const InputError& e) {
    throw InputError(where + ": point " + p.dump() + ": " + e.what());
  }
}

// The spec's `gpu` and `gpu_set` as defaults of every point (a point's own gpu wins; its
// overrides follow the spec's, so they win where both set a field), under the grid's spelling
// of the overrides (`gpu_set`, or the ltc sim flag `gpu-set`).
void apply_spec_gpu(json& p, const std::string& gpu, const std::string& gpu_set,
                    const std::string& set_key, const std::string& where) {
  const std::string other = set_key == "gpu_set" ? "gpu-set" : "gpu_set";
  if (p.contains(other)) {
    throw InputError(where + ": '" + other + "' is not this grid's key: " +
                     (set_key == "gpu_set" ? "a PPA grid, like the spec, takes 'gpu_set'"
                                           : "a sim grid's keys are ltc sim flags ('gpu-set'); "
                                             "the spec-level key is 'gpu_set'"));
  }
  if (p.contains("gpu") && !p["gpu"].is_string()) {
    throw InputError(where + ": 'gpu' must be a string (a built-in GPU or a GPU JSON path)");
  }
  if (p.contains(set_key) && !p[set_key].is_string()) {
    throw InputError(where + ": '" + set_key + "' must be a string (path=value[,path=value...])");
  }
  if (!gpu.empty() && !p.contains("gpu")) p["gpu"] = gpu;
  if (!gpu_set.empty()) {
    p[set_key] = p.contains(set_key) ? gpu_set + "," + p[set_key].get<std::string>() : gpu_set;
  }
}

// A PPA point with a `gpu`: the GPU's LUT tile (hw::GpuConfig::lut_tile, after `gpu_set`) at the
// point's `act` and `wbits`, each defaulting to the tile's own; the tile's shape goes into the
// point (m, n, k) for `where` filters and rows.
hw::TensorCoreConfig gpu_point(json& p, const std::string& where) {
  for (const char* key :
       {"design", "m", "n", "k", "shape", "weight", "table", "acc", "out", "pipeline_stages"}) {
    if (p.contains(key)) {
      throw InputError(where + ": '" + key +
                       "' with 'gpu': the GPU's LUT tile (lut_tensor.core) fixes it; change it "
                       "with gpu_set lut_tensor.core.<field>=V");
    }
  }
  const hw::GpuConfig g = point_gpu(p, "gpu_set", where);
  try {
    if (!g.has_lut_tensor()) {
      throw InputError("gpu '" + g.name +
                       "' has no LUT tensor cores (no lut_tensor section): a PPA point with "
                       "'gpu' synthesizes its LUT tile");
    }
    const hw::TensorCoreConfig& core = g.lut_tensor->core;
    const golden::DType act =
        p.contains("act") ? golden::parse_act_dtype(p["act"].get<std::string>(), "act") : core.act;
    const int wbits = p.contains("wbits") ? p["wbits"].get<int>() : core.wbits;
    const hw::TensorCoreConfig c = g.lut_tile(act, wbits);
    p["m"] = c.shape.m;
    p["n"] = c.shape.n;
    p["k"] = c.shape.k;
    return c;
  } catch (const InputError& e) {
    throw InputError(where + ": point " + p.dump() + ": " + e.what());
  } catch (const json::exception& e) {
    throw InputError(where + ": point " + p.dump() + ": " + plain_json_error(e));
  }
}

// Cartesian product of a grid object: list values expand, scalars stay.
std::vector<json> expand_grid(const json& grid, const std::string& where) {
  if (!grid.is_object()) throw InputError(where + ": a grid entry must be an object");
  std::vector<json> out = {json::object()};
  for (const auto& [key, value] : grid.items()) {
    if (key == "where") continue;
    const json values = value.is_array() ? value : json::array({value});
    if (values.empty()) throw InputError(where + ": '" + key + "' has an empty list");
    std::vector<json> next;
    for (const auto& partial : out) {
      for (const auto& v : values) {
        json p = partial;
        p[key] = v;
        next.push_back(p);
      }
    }
    out = std::move(next);
  }
  return out;
}

// "m2n64k4" -> m, n, k.
void apply_shape(json& p, const std::string& where) {
  if (!p.contains("shape")) return;
  static const std::regex kShape(R"(m([0-9]+)n([0-9]+)k([0-9]+))");
  std::smatch m;
  const std::string s = p["shape"].get<std::string>();
  if (!std::regex_match(s, m, kShape)) {
    throw InputError(where + ": shape '" + s + "' is not of the form m<M>n<N>k<K>");
  }
  p["m"] = std::stoi(m[1]);
  p["n"] = std::stoi(m[2]);
  p["k"] = std::stoi(m[3]);
}

bool passes_where(const json& p, const json& where) {
  if (where.is_null()) return true;
  if (where.contains("mnk")) {
    const int mnk = p.at("m").get<int>() * p.at("n").get<int>() * p.at("k").get<int>();
    if (mnk != where["mnk"].get<int>()) return false;
  }
  for (const auto& [key, value] : where.items()) {
    if (key == "mnk") continue;
    if (key == "k_max" && p.at("k").get<int>() > value.get<int>()) return false;
    if (key == "k_min" && p.at("k").get<int>() < value.get<int>()) return false;
  }
  return true;
}

// A sim spec's grid keys are `ltc sim` flags ("model": "x" -> --model x, true -> a bare flag,
// "file" -> the trace argument), except "label", which only names rows. A value naming an
// existing file (trace, config.json, GPU JSON) is made absolute: each run has its own folder.
void parse_sim_points(const json& j, const std::string& origin, const std::string& gpu,
                      const std::string& gpu_set, SweepSpec& s) {
  std::set<std::string> ids;
  for (size_t g = 0; g < j["grid"].size(); ++g) {
    const std::string where = fmt::format("{}: grid[{}]", origin, g);
    for (auto p : expand_grid(j["grid"][g], where)) {
      apply_spec_gpu(p, gpu, gpu_set, "gpu-set", where);
      // Overrides are checked here, naming the file and key, not first in each run.
      if (p.contains("gpu-set") && p.contains("gpu")) point_gpu(p, "gpu-set", where);
      SweepPoint pt;
      pt.params = p;
      std::string file;
      for (const auto& [key, value] : p.items()) {
        if (key == "label") continue;
        if (key == "json") throw InputError(where + ": 'json' is implied (records are JSON)");
        if (value.is_object() || value.is_array() || value.is_null()) {
          throw InputError(where + ": '" + key + "' must be a string, number or boolean");
        }
        std::string text = value.is_string() ? value.get<std::string>() : value.dump();
        std::error_code ec;
        if (value.is_string() && fs::is_regular_file(text, ec)) {
          text = fs::absolute(text).lexically_normal().string();
        }
        if (key == "file") {
          file = text;
        } else if (value.is_boolean()) {
          if (value.get<bool>()) pt.sim_args.push_back("--" + key);
        } else {
          pt.sim_args.push_back("--" + key);
          pt.sim_args.push_back(text);
        }
      }
      if (!file.empty()) pt.sim_args.insert(pt.sim_args.begin(), file);
      if (file.empty() && !p.contains("model")) {
        throw InputError(where + ": point " + p.dump() +
                         ": a sim point needs 'file' (a trace) or 'model' (see ltc sim --help)");
      }
      for (const auto& a : pt.sim_args) pt.id += (pt.id.empty() ? "" : " ") + a;
      if (!ids.insert(pt.id).second) continue;  // the same run twice
      s.points.push_back(std::move(pt));
    }
  }
  if (s.points.empty()) throw InputError(origin + ": the grid expands to no simulation");
}

}  // namespace

SweepSpec SweepSpec::parse(const json& j, const std::string& origin) {
  if (!j.is_object()) throw InputError(origin + ": a sweep spec is a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (std::find_if(std::begin(kSpecKeys), std::end(kSpecKeys),
                     [&key](const char* k) { return key == k; }) == std::end(kSpecKeys)) {
      std::string valid;
      for (const char* k : kSpecKeys) valid += (valid.empty() ? "" : ", ") + std::string(k);
      throw InputError(origin + ": unknown field '" + key + "' (valid: " + valid + ")");
    }
  }
  const std::string gpu = string_field(j, "gpu", origin);
  const std::string gpu_set = string_field(j, "gpu_set", origin);
  SweepSpec s;
  s.raw = j;
  s.name = j.value("name", fs::path(origin).stem().string());
  check_file_name(s.name, origin + ": field 'name'");
  s.title = j.value("title", s.name);
  s.description = j.value("description", "");
  s.clock_ns = j.value("clock_ns", 0.0);
  if (s.clock_ns < 0)
    throw InputError(origin + ": clock_ns must be >= 0 (0: each point's own maximum)");
  const std::string act = j.value("activity", "measured");
  if (act == "measured")
    s.activity = ActivityMode::kMeasured;
  else if (act == "assumed")
    s.activity = ActivityMode::kAssumed;
  else
    throw InputError(origin + ": activity '" + act + "' (valid: measured, assumed)");
  s.cycles = j.value("cycles", 0);
  if (s.cycles < 0) throw InputError(origin + ": cycles must be >= 1 (or 0: auto by netlist size)");
  s.seed = j.value("seed", 1);
  s.library = j.value("library", std::string("osu018"));
  try {
    cell_library(s.library);
  } catch (const InputError& e) {
    throw InputError(origin + ": library: " + e.what());
  }
  s.timing = parse_delay_model(j.value("activity_timing", std::string("zero")),
                               origin + ": activity_timing");
  s.operand_storage = j.value("operand_storage", false);
  s.tool = j.value("tool", "ppa");
  if (s.tool != "ppa" && s.tool != "sim") {
    throw InputError(origin + ": tool '" + s.tool + "' (valid: ppa, sim)");
  }
  if (!j.contains("grid") || !j["grid"].is_array() || j["grid"].empty()) {
    throw InputError(origin + ": 'grid' must be a non-empty list of parameter grids");
  }
  if (s.tool == "sim") {
    parse_sim_points(j, origin, gpu, gpu_set, s);
    if (j.contains("plots")) s.plots = j["plots"];
    if (j.contains("ratios")) s.ratios = j["ratios"];
    for (const auto& p : s.plots) parse_plot(p);
    return s;
  }
  for (size_t g = 0; g < j["grid"].size(); ++g) {
    const std::string where = fmt::format("{}: grid[{}]", origin, g);
    const json& grid = j["grid"][g];
    for (auto p : expand_grid(grid, where)) {
      apply_spec_gpu(p, gpu, gpu_set, "gpu_set", where);
      std::optional<hw::TensorCoreConfig> from_gpu;
      if (p.contains("gpu")) {
        from_gpu = gpu_point(p, where);
      } else if (p.contains("gpu_set")) {
        throw InputError(where + ": 'gpu_set' needs 'gpu' (the GPU whose LUT tile it changes)");
      } else {
        apply_shape(p, where);
        for (const char* req : {"design", "m", "n", "k", "act"}) {
          if (!p.contains(req)) throw InputError(where + ": missing '" + req + "'");
        }
      }
      if (!passes_where(p, grid.value("where", json())) ||
          !passes_where(p, j.value("where", json()))) {
        continue;
      }
      SweepPoint pt;
      pt.params = p;
      if (from_gpu) {
        pt.config = *from_gpu;
        pt.id = pt.config.id();
        s.points.push_back(std::move(pt));
        continue;
      }
      json cj = json::object();
      for (const char* key : kConfigKeys) {
        if (p.contains(key)) cj[key] = p[key];
      }
      try {
        hw::from_json(cj, pt.config);
        pt.config.validate();
        pt.id = pt.config.id();
      } catch (const InputError& e) {
        throw InputError(where + ": point " + p.dump() + ": " + e.what());
      } catch (const json::exception& e) {
        throw InputError(where + ": point " + p.dump() + ": " + e.what());
      }
      s.points.push_back(std::move(pt));
    }
  }
  if (s.points.empty()) throw InputError(origin + ": the grid expands to no design point");
  if (j.contains("plots")) s.plots = j["plots"];
  if (j.contains("ratios")) s.ratios = j["ratios"];
  for (const auto& p : s.plots) parse_plot(p);  // validates
  return s;
}

SweepSpec SweepSpec::load(const std::string& path) {
  std::string text;
  try {
    text = read_input_file(path);
  } catch (const InputError& e) {
    throw InputError("sweep spec " + std::string(e.what()) + " (a JSON file, or a built-in name: " +
                     [] {
                       std::string s;
                       for (const auto& n : builtin_names()) s += (s.empty() ? "" : ", ") + n;
                       return s;
                     }() +
                     ")");
  }
  return parse(parse_json(text, path), path);
}

std::vector<std::string> SweepSpec::builtin_names() {
  return {"dp-k", "dp4", "wbits", "dse"};
}

std::string SweepSpec::builtin_path(const std::string& name) {
  return std::string(LTC_SOURCE_DIR) + "/synth/sweeps/" + name + ".json";
}

std::string point_key(const SweepSpec& spec, const hw::TensorCoreConfig& c,
                      const std::string& rtl_hash) {
  // The activity's netlist simulator and the kept hierarchy are part of the key: a store written
  // with iverilog's activities or another hierarchy is not mixed with this flow's results.
  std::string hier;
  for (const auto& m : kept_modules(c, PpaOptions{})) hier += (hier.empty() ? "" : "+") + m;
  // So are the mapping and the power model (issue #14): results of the older flow are not reused.
  // The library and the activity's delay model are named when they are not the flow's first
  // (osu018, zero delay), so stores written before them stay valid.
  const PpaOptions flow;
  return fmt::format(
      "{}|clock={}|activity={}|cycles={}|seed={}|rtl={}|netsim=ltc|hier={}|map=D{}|fanout={}|"
      "power=per-net{}{}",
      c.id(), spec.clock_ns, spec.activity == ActivityMode::kMeasured ? "measured" : "assumed",
      spec.cycles, spec.seed, rtl_hash, hier.empty() ? "flat" : hier, flow.delay_target_ps,
      flow.max_fanout, spec.library == "osu018" ? std::string() : "|lib=" + spec.library,
      spec.timing == DelayModel::kZero ? std::string()
                                       : std::string("|timing=") + delay_model_name(spec.timing));
}

PlotSpec parse_plot(const json& j) {
  if (!j.is_object() || !j.contains("x") || !j.contains("y") || !j["x"].is_string() ||
      !j["y"].is_string()) {
    throw InputError("plot: needs at least 'x' and 'y' (column names)");
  }
  PlotSpec p;
  p.x = j["x"];
  p.y = j["y"];
  p.file = j.value("file", "");
  p.title = j.value("title", p.y + " vs " + p.x);
  p.y_label = j.value("y_label", p.y);
  if (j.contains("series")) p.series = j["series"].get<std::vector<std::string>>();
  p.filter = j.value("filter", json::object());
  p.log_y = j.value("log_y", false);
  p.bars = j.value("bars", false);
  return p;
}

}  // namespace ltc::synth
