#include "synth/sweep.h"

#include "model/golden/error.h"
#include "synth/plot.h"
#include "synth/process.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

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
  if (!j.contains("grid") || !j["grid"].is_array() || j["grid"].empty()) {
    throw InputError(origin + ": 'grid' must be a non-empty list of parameter grids");
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
  return fmt::format("{}|clock={}|activity={}|cycles={}|seed={}|rtl={}|netsim=ltc|hier={}", c.id(),
                     spec.clock_ns,
                     spec.activity == ActivityMode::kMeasured ? "measured" : "assumed", spec.cycles,
                     spec.seed, rtl_hash, hier.empty() ? "flat" : hier);
}

ResultStore::ResultStore(std::string path) : path_(std::move(path)) {
  std::ifstream in(path_);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    try {
      json r = json::parse(line);
      if (!r.contains("key")) continue;
      const std::string key = r["key"];
      if (index_.count(key)) {
        records_[index_[key]] = std::move(r);
      } else {
        index_[key] = records_.size();
        records_.push_back(std::move(r));
      }
    } catch (const json::exception&) {
      // Never written by us (writes are atomic); skip rather than lose the rest.
    }
  }
}

bool ResultStore::has(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  return index_.count(key) != 0;
}

const json* ResultStore::get(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = index_.find(key);
  return it == index_.end() ? nullptr : &records_[it->second];
}

void ResultStore::put(const json& record) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string key = record.at("key");
  if (index_.count(key)) {
    records_[index_[key]] = record;
  } else {
    index_[key] = records_.size();
    records_.push_back(record);
  }
  std::string text;
  for (const auto& r : records_) text += r.dump() + "\n";
  write_text_atomic(path_, text);
}

size_t ResultStore::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return records_.size();
}

std::vector<json> ResultStore::records() const {
  std::lock_guard<std::mutex> lock(mu_);
  return records_;
}

std::vector<json> sweep_rows(const SweepSpec& spec, const ResultStore& store,
                             const std::map<std::string, std::string>& keys,
                             double register_bit_area_um2) {
  std::vector<json> rows;
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
  std::vector<std::string> cols = {"id", "design", "shape", "m",     "n",
                                   "k",  "act",    "wbits", "label", "status"};
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
  // Temp files of a store write that was killed before its rename.
  for (const auto& e : fs::directory_iterator(opt.out_dir)) {
    if (e.path().filename().string().find(".tmp.") != std::string::npos) fs::remove(e.path());
  }
  ResultStore store(opt.out_dir + "/results.jsonl");

  // Distinct design points (a MAC point at several weight widths is one netlist).
  std::map<std::string, std::string> keys;  // config id -> store key
  std::vector<std::pair<hw::TensorCoreConfig, std::string>> todo;
  SweepSummary sum;
  for (const auto& pt : spec.points) {
    const std::string id = pt.config.id();
    if (keys.count(id)) continue;
    std::string hash = "unknown";
    try {
      hash = opt.rtl_hash ? opt.rtl_hash(pt.config) : design_source(pt.config).source_hash();
    } catch (const std::exception&) {
      // The point fails when it runs, with the reason in its record.
    }
    const std::string key = point_key(spec, pt.config, hash);
    keys[id] = key;
    ++sum.points;
    const json* rec = store.get(key);
    if (rec && (rec->value("status", "") == "ok" || !opt.retry_failed)) {
      ++sum.reused;
      continue;
    }
    todo.emplace_back(pt.config, key);
  }
  if (opt.limit > 0 && static_cast<int>(todo.size()) > opt.limit) todo.resize(opt.limit);
  if (opt.report_only) todo.clear();

  std::atomic<size_t> next{0};
  std::atomic<int> ok{0}, failed{0};
  std::mutex log_mu;
  auto worker = [&] {
    for (;;) {
      const size_t i = next++;
      if (i >= todo.size()) return;
      const auto& [config, key] = todo[i];
      PpaOptions po;
      po.clock_ns = spec.clock_ns;
      po.activity = spec.activity;
      po.sim.cycles = spec.cycles;
      po.sim.seed = spec.seed;
      po.tool_timeout_s = opt.tool_timeout_s;
      po.workdir = opt.out_dir + "/work/" + sanitize(config.id());
      json rec = {{"key", key},         {"id", config.id()},         {"config", config},
                  {"sweep", spec.name}, {"clock_ns", spec.clock_ns}, {"tools", tool_versions()},
                  {"finished", ""}};
      const auto ts = std::chrono::steady_clock::now();
      std::string status;
      try {
        fs::remove_all(po.workdir);
        const PpaResult r = opt.runner ? opt.runner(config, po) : run_ppa(config, po);
        rec["status"] = "ok";
        rec["rtl_hash"] = r.rtl_hash;
        rec["result"] = r;
        ++ok;
        status = fmt::format("ok  area {:.0f} um2, {:.3f} ns, {:.3f} mW", r.area_um2, r.delay_ns,
                             r.power_mw);
        if (!opt.keep_work) remove_bulky_files(po.workdir);
      } catch (const std::exception& e) {
        rec["status"] = "error";
        rec["error"] = e.what();
        ++failed;
        status = std::string("FAILED: ") + e.what();
      }
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - ts).count();
      rec["seconds"] = secs;
      rec["finished"] = now_iso();
      store.put(rec);
      if (opt.progress) {
        std::lock_guard<std::mutex> lock(log_mu);
        fmt::print(stderr, "[{}/{}] {} {:.1f} s: {}\n", ok + failed, todo.size(), config.id(), secs,
                   status);
      }
    }
  };
  std::vector<std::thread> threads;
  const int n = std::min<int>(opt.jobs, std::max<size_t>(todo.size(), 1));
  for (int t = 0; t < n; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  sum.ran = static_cast<int>(todo.size());
  sum.ok = ok;
  sum.failed = failed;

  // Operand storage: the area of one register bit, measured once and kept in the store.
  double reg_bit = 0;
  json reg_record;
  if (spec.operand_storage) {
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

  // Reports: CSV, one SVG per plot, summary.json (ratios vs the paper).
  const auto rows = sweep_rows(spec, store, keys, reg_bit);
  const std::string csv = opt.out_dir + "/" + spec.name + ".csv";
  write_text_atomic(csv, rows_csv(rows));
  sum.files.push_back(csv);
  for (size_t i = 0; i < spec.plots.size(); ++i) {
    const PlotSpec ps = parse_plot(spec.plots[i]);
    const std::string name = spec.plots[i].value("file", fmt::format("{}-{}", spec.name, i + 1));
    const std::string svg = opt.out_dir + "/" + name + ".svg";
    write_text_atomic(svg, svg_plot(ps, rows));
    sum.files.push_back(svg);
  }
  sum.ratios = compute_ratios(spec.ratios, rows);
  sum.crossovers = compute_crossovers(spec.raw.value("crossovers", json::array()), rows);
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

}  // namespace ltc::synth
