#include "synth/sweep.h"

#include "common/error.h"
#include "common/file_io.h"
#include "common/hash.h"
#include "common/process.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

namespace ltc::synth {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* kConfigKeys[] = {
    "design", "m", "n", "k", "act", "wbits", "weight", "table", "acc", "out", "pipeline_stages"};

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

std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  return out;
}

std::string now_iso() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

void remove_bulky_files(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const std::string ext = e.path().extension().string();
    if (ext == ".v" || ext == ".vvp" || ext == ".hex" || ext == ".vcd" ||
        name == "yosys.log.full" || name.rfind("outputs", 0) == 0) {
      fs::remove(e.path(), ec);
    }
  }
}

// A sim spec's grid keys are `ltc sim` flags ("model": "x" -> --model x, true -> a bare flag,
// "file" -> the trace argument), except "label", which only names rows. A value naming an
// existing file (trace, config.json, GPU JSON) is made absolute: each run has its own folder.
void parse_sim_points(const json& j, const std::string& origin, SweepSpec& s) {
  std::set<std::string> ids;
  for (size_t g = 0; g < j["grid"].size(); ++g) {
    const std::string where = fmt::format("{}: grid[{}]", origin, g);
    for (const auto& p : expand_grid(j["grid"][g], where)) {
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
  SweepSpec s;
  s.raw = j;
  s.name = j.value("name", fs::path(origin).stem().string());
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
  s.operand_storage = j.value("operand_storage", false);
  s.tool = j.value("tool", "ppa");
  if (s.tool != "ppa" && s.tool != "sim") {
    throw InputError(origin + ": tool '" + s.tool + "' (valid: ppa, sim)");
  }
  if (!j.contains("grid") || !j["grid"].is_array() || j["grid"].empty()) {
    throw InputError(origin + ": 'grid' must be a non-empty list of parameter grids");
  }
  if (s.tool == "sim") {
    parse_sim_points(j, origin, s);
    if (j.contains("plots")) s.plots = j["plots"];
    if (j.contains("ratios")) s.ratios = j["ratios"];
    for (const auto& p : s.plots) parse_plot(p);
    return s;
  }
  for (size_t g = 0; g < j["grid"].size(); ++g) {
    const std::string where = fmt::format("{}: grid[{}]", origin, g);
    const json& grid = j["grid"][g];
    for (auto p : expand_grid(grid, where)) {
      apply_shape(p, where);
      for (const char* req : {"design", "m", "n", "k", "act"}) {
        if (!p.contains(req)) throw InputError(where + ": missing '" + req + "'");
      }
      if (!passes_where(p, grid.value("where", json())) ||
          !passes_where(p, j.value("where", json()))) {
        continue;
      }
      json cj = json::object();
      for (const char* key : kConfigKeys) {
        if (p.contains(key)) cj[key] = p[key];
      }
      SweepPoint pt;
      pt.params = p;
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
    text = read_text(path);
  } catch (const std::exception&) {
    throw InputError("sweep spec " + path + " cannot be read (a JSON file, or a built-in name: " +
                     [] {
                       std::string s;
                       for (const auto& n : builtin_names()) s += (s.empty() ? "" : ", ") + n;
                       return s;
                     }() +
                     ")");
  }
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(path + ": not valid JSON: " + e.what());
  }
  return parse(j, path);
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
  const PpaOptions flow;
  return fmt::format(
      "{}|clock={}|activity={}|cycles={}|seed={}|rtl={}|netsim=ltc|hier={}|map=D{}|fanout={}|"
      "power=per-net",
      c.id(), spec.clock_ns, spec.activity == ActivityMode::kMeasured ? "measured" : "assumed",
      spec.cycles, spec.seed, rtl_hash, hier.empty() ? "flat" : hier, flow.delay_target_ps,
      flow.max_fanout);
}

namespace {

// Sim rows: the grid values, id, status, and the run's scalar figures (cycles, time_ms, ...).
std::vector<json> sim_rows(const SweepSpec& spec, const ResultStore& store,
                           const std::map<std::string, std::string>& keys) {
  std::vector<json> rows;
  for (const auto& pt : spec.points) {
    json row = pt.params;
    row["id"] = pt.id;
    const auto it = keys.find(pt.id);
    const json* rec = it == keys.end() ? nullptr : store.get(it->second);
    if (!rec) {
      row["status"] = "pending";
    } else if (rec->value("status", "") != "ok") {
      row["status"] = "error";
      row["error"] = rec->value("error", "");
    } else {
      row["status"] = "ok";
      for (const auto& [k, v] : (*rec)["result"].items()) {
        if (v.is_primitive() && !row.contains(k)) row[k] = v;
      }
      row["kernels"] = (*rec)["result"].value("kernels", json::array()).size();
      row["seconds"] = rec->value("seconds", 0.0);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

std::vector<json> sweep_rows(const SweepSpec& spec, const ResultStore& store,
                             const std::map<std::string, std::string>& keys,
                             double register_bit_area_um2) {
  std::vector<json> rows;
  if (spec.tool == "sim") return sim_rows(spec, store, keys);
  for (const auto& pt : spec.points) {
    json row = pt.params;
    row.erase("where");
    const auto& c = pt.config;
    row["id"] = c.id();
    row["design"] = std::string(hw::design_name(c.design));
    row["m"] = c.shape.m;
    row["n"] = c.shape.n;
    row["k"] = c.shape.k;
    row["shape"] = c.shape.name();
    row["mnk"] = c.shape.m * c.shape.n * c.shape.k;
    row["act"] = std::string(golden::dtype_name(c.act));
    if (!row.contains("wbits")) row["wbits"] = c.wbits;
    const auto it = keys.find(c.id());
    const json* rec = it == keys.end() ? nullptr : store.get(it->second);
    if (!rec) {
      row["status"] = "pending";
    } else if (rec->value("status", "") != "ok") {
      row["status"] = "error";
      row["error"] = rec->value("error", "");
    } else {
      row["status"] = "ok";
      const json& r = (*rec)["result"];
      for (const char* f : {"area_um2", "delay_ns", "fmax_mhz", "clock_ns", "power_mw",
                            "internal_mw", "switching_mw", "leakage_mw", "ops_per_cycle", "tops",
                            "tops_per_mm2", "tops_per_w", "cells", "flip_flops"}) {
        row[f] = r.at(f);
      }
      row["area_x_power"] = r["area_um2"].get<double>() * r["power_mw"].get<double>();
      // At equal throughput: a W-bit bit-serial design needs W copies to match one MAC array.
      const double iso = 2.0 * c.shape.m * c.shape.n * c.shape.k / r["ops_per_cycle"].get<double>();
      row["area_iso_um2"] = r["area_um2"].get<double>() * iso;
      // Clock-free density: operations per cycle per mm^2 (TOPS/mm^2 at f = this x f / 1e12).
      row["ops_per_cycle_per_mm2"] =
          r["ops_per_cycle"].get<double>() / (r["area_um2"].get<double>() * 1e-6);
      row["pj_per_op"] =
          r["tops_per_w"].get<double>() > 0 ? 1.0 / r["tops_per_w"].get<double>() : 0.0;
      // Area x power at equal clock and throughput (clock-free): area_iso x energy per op.
      row["area_x_energy"] = row["area_iso_um2"].get<double>() * row["pj_per_op"].get<double>();
      row["power_iso_mw"] = r["power_mw"].get<double>() * iso;
      row["area_x_power_iso"] =
          row["area_iso_um2"].get<double>() * row["power_iso_mw"].get<double>();
      // OpenSTA's average-activity power beside the per-net figure (issue #14), when recorded.
      if (r.contains("power_avg_activity_mw")) {
        row["power_avg_activity_mw"] = r["power_avg_activity_mw"];
        row["pj_per_op_avg_activity"] = r["power_avg_activity_mw"].get<double>() *
                                        r["clock_ns"].get<double>() /
                                        r["ops_per_cycle"].get<double>();
        row["input_switching_mw"] = r.value("input_switching_mw", 0.0);
        row["fanout_buffers"] = r.value("fanout_buffers", 0);
      }
      row["activity_nets"] = r["activity"]["nets"];
      row["activity_input"] = r["activity"]["input"];
      row["seconds"] = r["seconds"].value("total", 0.0);
      if (register_bit_area_um2 > 0) {
        const double bits = static_cast<double>(c.operand_bits());
        row["operand_bits"] = bits;
        row["operand_area_um2"] = bits * register_bit_area_um2;
        row["area_with_operands_um2"] =
            r["area_um2"].get<double>() + row["operand_area_um2"].get<double>();
        row["area_iso_with_operands_um2"] = row["area_with_operands_um2"].get<double>() * iso;
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string rows_csv(const std::vector<json>& rows) {
  // The leading columns that some row has (a sim batch has no design, shape, ...), then the rest.
  std::vector<std::string> cols;
  for (const char* c :
       {"id", "design", "shape", "m", "n", "k", "act", "wbits", "label", "status"}) {
    if (std::any_of(rows.begin(), rows.end(), [c](const json& r) { return r.contains(c); }))
      cols.push_back(c);
  }
  std::set<std::string> seen(cols.begin(), cols.end());
  for (const auto& r : rows) {
    for (const auto& [k, v] : r.items()) {
      if (!seen.count(k)) {
        seen.insert(k);
        cols.push_back(k);
      }
    }
  }
  auto cell = [](const json& v) -> std::string {
    if (v.is_null()) return "";
    if (v.is_string()) {
      std::string s = v.get<std::string>();
      if (s.find_first_of(",\"\n") == std::string::npos) return s;
      std::string q = "\"";
      for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
      return q + "\"";
    }
    if (v.is_number_float()) return fmt::format("{:.6g}", v.get<double>());
    return v.dump();
  };
  std::string out;
  for (size_t i = 0; i < cols.size(); ++i) out += (i ? "," : "") + cols[i];
  out += "\n";
  for (const auto& r : rows) {
    for (size_t i = 0; i < cols.size(); ++i) {
      out += (i ? "," : "") + (r.contains(cols[i]) ? cell(r[cols[i]]) : std::string());
    }
    out += "\n";
  }
  return out;
}

json compute_ratios(const json& ratio_specs, const std::vector<json>& rows) {
  json out = json::array();
  for (const auto& rs : ratio_specs) {
    const std::string metric = rs.at("metric");
    const std::string reduce = rs.value("reduce", "first");
    auto pick = [&](const json& filter, std::string* id) -> std::optional<double> {
      std::optional<double> best;
      for (const auto& r : rows) {
        if (r.value("status", "") != "ok" || !row_matches(r, filter) || !r.contains(metric))
          continue;
        const double v = r[metric].get<double>();
        if (!best || (reduce == "min" && v < *best) || (reduce == "max" && v > *best)) {
          best = v;
          *id = r["id"];
        }
        if (reduce == "first") break;
      }
      return best;
    };
    json o = {{"name", rs.value("name", metric)}, {"metric", metric}};
    std::string num_id, den_id;
    const auto num = pick(rs.at("num"), &num_id);
    const auto den = pick(rs.at("den"), &den_id);
    if (num && den && *den != 0) {
      o["value"] = *num / *den;
      o["num_id"] = num_id;
      o["den_id"] = den_id;
    } else {
      o["value"] = nullptr;
    }
    if (rs.contains("paper")) o["paper"] = rs["paper"];
    if (rs.contains("note")) o["note"] = rs["note"];
    out.push_back(o);
  }
  return out;
}

json compute_crossovers(const json& specs, const std::vector<json>& rows) {
  json out = json::array();
  for (const auto& cs : specs) {
    const std::string metric = cs.at("metric"), x = cs.at("x");
    std::map<double, double> a, b;  // x -> metric (first matching row)
    for (const auto& r : rows) {
      if (r.value("status", "") != "ok" || !r.contains(x) || !r.contains(metric)) continue;
      const double xv = r[x].get<double>(), v = r[metric].get<double>();
      if (row_matches(r, cs.at("a")) && !a.count(xv)) a[xv] = v;
      if (row_matches(r, cs.at("b")) && !b.count(xv)) b[xv] = v;
    }
    json per_x = json::array();
    json wins_up_to = nullptr;
    bool still = true;
    for (const auto& [xv, av] : a) {
      if (!b.count(xv)) continue;
      per_x.push_back({{x, xv}, {"a", av}, {"b", b[xv]}, {"b_over_a", b[xv] / av}});
      if (still && av < b[xv]) {
        wins_up_to = xv;
      } else {
        still = false;
      }
    }
    json o = {{"name", cs.value("name", metric)},
              {"metric", metric},
              {"x", x},
              {"a_below_b_up_to", wins_up_to},
              {"points", per_x}};
    if (cs.contains("paper")) o["paper"] = cs["paper"];
    out.push_back(o);
  }
  return out;
}

SweepSummary run_sweep(const SweepSpec& spec, const SweepOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  if (opt.out_dir.empty()) throw InputError("--out: an output directory is required");
  if (opt.jobs < 1) throw InputError("-j: at least one job");
  fs::create_directories(opt.out_dir);
  // One process per store: a second one (a Slurm submitter, a local run) would overwrite records
  // the first puts, and submit or run the same points again.
  const FileLock lock(opt.out_dir + "/.lock", "--out " + opt.out_dir);
  // Temp files of a store write that was killed before its rename.
  for (const auto& e : fs::directory_iterator(opt.out_dir)) {
    if (e.path().filename().string().find(".tmp.") != std::string::npos) fs::remove(e.path());
  }
  ResultStore store(opt.out_dir + "/results.jsonl");
  // Records Slurm tasks wrote after their submitter was gone (synth/executor.h).
  collect_task_records(opt.out_dir, store);
  const std::string out_abs = fs::absolute(opt.out_dir).lexically_normal().string();
  const std::string ltc = opt.ltc_binary.empty() ? self_binary() : opt.ltc_binary;

  // Distinct design points (a MAC point at several weight widths is one netlist).
  std::map<std::string, std::string> keys;  // point id -> store key
  std::vector<SweepTask> todo;
  SweepSummary sum;
  std::string ltc_fingerprint;  // sim points: results depend on the simulator's code
  if (spec.tool == "sim") {
    try {
      ltc_fingerprint = fnv1a_hex(read_text(ltc));
    } catch (const std::exception&) {
      throw InputError("ltc binary " + ltc + " cannot be read (sim points run it)");
    }
  }
  for (const auto& pt : spec.points) {
    if (keys.count(pt.id)) continue;
    std::string key;
    json job;
    if (spec.tool == "sim") {
      key = fmt::format("sim|{}|ltc={}", pt.id, ltc_fingerprint);
      job = {{"kind", "sim"},
             {"key", key},
             {"id", pt.id},
             {"sweep", spec.name},
             {"args", pt.sim_args},
             {"ltc", ltc},
             {"timeout_s", opt.tool_timeout_s},
             {"workdir", out_abs + "/work/sim-" + fnv1a_hex(pt.id)}};
    } else {
      std::string hash = "unknown";
      try {
        hash = opt.rtl_hash ? opt.rtl_hash(pt.config) : design_source(pt.config).source_hash();
      } catch (const std::exception&) {
        // The point fails when it runs, with the reason in its record.
      }
      key = point_key(spec, pt.config, hash);
      job = {{"kind", "ppa"},
             {"key", key},
             {"sweep", spec.name},
             {"config", pt.config},
             {"clock_ns", spec.clock_ns},
             {"activity", spec.activity == ActivityMode::kMeasured ? "measured" : "assumed"},
             {"cycles", spec.cycles},
             {"seed", spec.seed},
             {"timeout_s", opt.tool_timeout_s},
             {"keep_work", opt.keep_work},
             {"workdir", out_abs + "/work/" + sanitize(pt.id)}};
    }
    keys[pt.id] = key;
    ++sum.points;
    const json* rec = store.get(key);
    if (rec && (rec->value("status", "") == "ok" || !opt.retry_failed)) {
      ++sum.reused;
      continue;
    }
    todo.push_back({key, pt.id, job});
  }
  if (opt.limit > 0 && static_cast<int>(todo.size()) > opt.limit) todo.resize(opt.limit);
  if (opt.report_only) todo.clear();

  if (!todo.empty()) {
    const auto executor = opt.executor ? opt.executor : std::make_shared<LocalExecutor>(opt.jobs);
    const auto runner = [&opt](const SweepTask& t) { return run_sweep_task(t.job, opt.runner); };
    const ExecutorRun er = executor->run(todo, runner, store, opt.out_dir, opt.progress);
    sum.ok = er.ok;
    sum.failed = er.failed;
    sum.resubmitted = er.resubmitted;
  }
  sum.ran = static_cast<int>(todo.size());

  // Operand storage: the area of one register bit, measured once and kept in the store.
  double reg_bit = 0;
  json reg_record;
  if (spec.operand_storage && spec.tool == "ppa") {
    const std::string key = fmt::format("operand-register-bit|liberty={}|yosys={}", kDefaultLiberty,
                                        tool_versions().value("yosys", ""));
    const json* rec = store.get(key);
    if (rec && rec->value("status", "") == "ok") {
      reg_bit = (*rec)["result"].value("area_per_bit_um2", 0.0);
    } else if (!opt.report_only) {
      json r = {{"key", key}, {"id", "operand-register-bit"}, {"sweep", spec.name}};
      try {
        reg_bit = register_bit_area_um2(kDefaultLiberty, opt.out_dir + "/work/operand-register",
                                        opt.tool_timeout_s);
        r["status"] = "ok";
        r["result"] = {{"area_per_bit_um2", reg_bit}};
      } catch (const std::exception& e) {
        r["status"] = "error";
        r["error"] = e.what();
      }
      r["finished"] = now_iso();
      store.put(r);
    }
    reg_record = {{"area_per_bit_um2", reg_bit},
                  {"how", "64-bit register with load enable synthesized by the same Yosys flow"}};
  }

  // Reports: CSV and summary.json (ratios vs the paper); plots are drawn by the DSE report.
  const auto rows = sweep_rows(spec, store, keys, reg_bit);
  const std::string csv = opt.out_dir + "/" + spec.name + ".csv";
  write_text_atomic(csv, rows_csv(rows));
  sum.files.push_back(csv);
  sum.ratios = compute_ratios(spec.ratios, rows);
  sum.crossovers = compute_crossovers(spec.raw.value("crossovers", json::array()), rows);
  sum.rows = rows;
  sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int pending = 0, errors = 0;
  for (const auto& r : rows) {
    pending += r["status"] == "pending";
    errors += r["status"] == "error";
  }
  json summary = {{"sweep", spec.name},           {"title", spec.title},     {"points", sum.points},
                  {"reused", sum.reused},         {"ran", sum.ran},          {"ok", sum.ok},
                  {"failed", sum.failed},         {"rows_pending", pending}, {"rows_error", errors},
                  {"seconds", sum.seconds},       {"jobs", opt.jobs},        {"ratios", sum.ratios},
                  {"crossovers", sum.crossovers}, {"tools", tool_versions()}};
  if (spec.operand_storage) summary["operand_register"] = reg_record;
  const std::string sj = opt.out_dir + "/" + spec.name + "-summary.json";
  write_text_atomic(sj, summary.dump(2) + "\n");
  sum.files.push_back(sj);
  return sum;
}

std::string self_binary() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("ltc") : p.string();
}

json run_sweep_task(
    const json& job,
    const std::function<PpaResult(const hw::TensorCoreConfig&, const PpaOptions&)>& ppa_runner) {
  const std::string kind = job.value("kind", "");
  json rec = {{"key", job.at("key")}, {"sweep", job.value("sweep", "")}};
  const auto ts = std::chrono::steady_clock::now();
  if (kind == "ppa") {
    const hw::TensorCoreConfig config = job.at("config").get<hw::TensorCoreConfig>();
    PpaOptions po;
    po.clock_ns = job.value("clock_ns", 0.0);
    po.activity = job.value("activity", "measured") == "measured" ? ActivityMode::kMeasured
                                                                  : ActivityMode::kAssumed;
    po.sim.cycles = job.value("cycles", 0);
    po.sim.seed = job.value("seed", uint64_t{1});
    po.tool_timeout_s = job.value("timeout_s", 3600.0);
    po.workdir = job.at("workdir").get<std::string>();
    rec = {{"key", job.at("key")},  {"id", config.id()},       {"config", config},
           {"sweep", rec["sweep"]}, {"clock_ns", po.clock_ns}, {"tools", tool_versions()},
           {"finished", ""}};
    try {
      fs::remove_all(po.workdir);
      const PpaResult r = ppa_runner ? ppa_runner(config, po) : run_ppa(config, po);
      rec["status"] = "ok";
      rec["rtl_hash"] = r.rtl_hash;
      rec["result"] = r;
      if (!job.value("keep_work", false)) remove_bulky_files(po.workdir);
    } catch (const std::exception& e) {
      rec["status"] = "error";
      rec["error"] = e.what();
    }
  } else if (kind == "sim") {
    // A child process: the simulator is not linked into the PPA library, and one simulation's
    // SystemC kernel per process is what `ltc sim` assumes.
    rec["id"] = job.at("id");
    rec["args"] = job.at("args");
    const std::string workdir = job.at("workdir");
    std::vector<std::string> argv = {job.at("ltc").get<std::string>(), "sim"};
    for (const auto& a : job.at("args")) argv.push_back(a.get<std::string>());
    argv.push_back("--json");
    try {
      fs::create_directories(workdir);
      const ProcessResult pr =
          run_process(argv, workdir, workdir + "/sim.log", job.value("timeout_s", 3600.0));
      json result;
      std::istringstream lines(pr.log);
      for (std::string line; std::getline(lines, line);) {
        if (!line.empty() && line[0] == '{') result = json::parse(line, nullptr, false);
      }
      if (pr.timed_out) {
        throw std::runtime_error(fmt::format("ltc sim timed out after {} s (log {}/sim.log)",
                                             job.value("timeout_s", 3600.0), workdir));
      }
      if (pr.exit_code != 0 || !result.is_object()) {
        std::string last;
        std::istringstream again(pr.log);
        for (std::string line; std::getline(again, line);) {
          if (!line.empty()) last = line;
        }
        throw std::runtime_error(
            fmt::format("ltc sim exited {}: {} (log {}/sim.log)", pr.exit_code, last, workdir));
      }
      rec["status"] = "ok";
      rec["result"] = result;
    } catch (const std::exception& e) {
      rec["status"] = "error";
      rec["error"] = e.what();
    }
  } else {
    throw InputError("sweep task: kind '" + kind + "' (valid: ppa, sim)");
  }
  rec["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - ts).count();
  rec["finished"] = now_iso();
  return rec;
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

bool row_matches(const json& row, const json& filter) {
  if (!filter.is_object()) return true;
  for (const auto& [key, want] : filter.items()) {
    if (!row.contains(key)) return false;
    const json& have = row[key];
    if (want.is_array()) {
      if (std::find(want.begin(), want.end(), have) == want.end()) return false;
    } else if (have != want) {
      return false;
    }
  }
  return true;
}

}  // namespace ltc::synth
