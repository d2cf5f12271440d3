// Sweep tables: one row per point from the store, its CSV, and the ratios and crossovers a spec
// compares with the paper's.
#include "synth/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

namespace ltc::synth {

using nlohmann::json;

namespace {

// The point's stored record when it finished ok; sets the row's status ("pending", "error" with
// the error, or "ok").
const json* stored_result(const ResultStore& store, const std::map<std::string, std::string>& keys,
                          const std::string& id, json& row) {
  const auto it = keys.find(id);
  const json* rec = it == keys.end() ? nullptr : store.get(it->second);
  if (!rec) {
    row["status"] = "pending";
    return nullptr;
  }
  if (rec->value("status", "") != "ok") {
    row["status"] = "error";
    row["error"] = rec->value("error", "");
    return nullptr;
  }
  row["status"] = "ok";
  return rec;
}

// Sim rows: the grid values, id, status, and the run's scalar figures (cycles, time_ms, ...).
std::vector<json> sim_rows(const SweepSpec& spec, const ResultStore& store,
                           const std::map<std::string, std::string>& keys) {
  std::vector<json> rows;
  for (const auto& pt : spec.points) {
    json row = pt.params;
    row["id"] = pt.id;
    if (const json* rec = stored_result(store, keys, pt.id, row)) {
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
    if (const json* rec = stored_result(store, keys, c.id(), row)) {
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
      row["library"] = r.value("lib", std::string("osu018"));
      row["activity_timing"] = r.value("activity_timing", std::string("zero"));
      if (r.contains("power_zero_delay_mw")) {
        // The same power model on the zero-delay toggles (equal to pj_per_op without timing).
        row["pj_per_op_zero_delay"] = r["power_zero_delay_mw"].get<double>() *
                                      r["clock_ns"].get<double>() /
                                      r["ops_per_cycle"].get<double>();
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
