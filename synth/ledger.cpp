#include "synth/ledger.h"

#include "common/error.h"
#include "common/file_io.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

namespace ltc::synth {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A row's result as the PpaResult fields scale_to_node reads.
PpaResult result_of(const json& row) {
  PpaResult r;
  r.area_um2 = row.value("area_um2", 0.0);
  r.delay_ns = row.value("delay_ns", 0.0);
  r.clock_ns = row.value("clock_ns", 0.0);
  r.internal_mw = row.value("internal_mw", 0.0);
  r.switching_mw = row.value("switching_mw", 0.0);
  r.ops_per_cycle = row.value("ops_per_cycle", 0.0);
  return r;
}

double ratio(double a, double b) {
  return std::isfinite(a) && std::isfinite(b) && b > 0 ? a / b : kNaN;
}

}  // namespace

std::vector<LedgerStep> ledger_steps(const LedgerOptions& opt) {
  auto step = [](const char* name, const char* change, const char* library, const char* acc,
                 DelayModel timing) {
    LedgerStep st;
    st.name = name;
    st.change = change;
    st.library = library;
    st.acc = acc;
    st.timing = timing;
    return st;
  };
  std::vector<LedgerStep> s = {
      step("osu018", "the flow's first setup: OSU 0.18 um, zero-delay activity, FP32 accumulation",
           "osu018", "fp32", DelayModel::kZero),
      step("library", "NanGate 45 nm Open Cell Library instead of OSU 0.18 um", "nangate45", "fp32",
           DelayModel::kZero),
      step("glitches", "timed activity (liberty delays): glitches counted", "nangate45", "fp32",
           DelayModel::kLiberty),
      step("accumulator", "FP16 accumulation in both designs (the paper's RTL)", "nangate45",
           "fp16", DelayModel::kLiberty)};
  s.push_back(s[3]);
  s[4].name = "node";
  s[4].change = fmt::format(
      "scaled to {:g} nm {:g} V (classical scaling of dynamic energy: ratios move only by the "
      "leakage it leaves out)",
      opt.node_nm, opt.node_vdd);
  s[4].scale_nm = opt.node_nm;
  s[4].scale_vdd = opt.node_vdd;
  return s;
}

SweepSpec ledger_spec(const LedgerStep& step, const std::vector<int>& wbits_list) {
  const json wbits = wbits_list;
  const json j = {
      {"name", "ledger-" + step.library + "-" + delay_model_name(step.timing) + "-" + step.acc},
      {"title", "PPA ledger step: " + step.change},
      {"clock_ns", 0},
      {"activity", "measured"},
      {"cycles", 200},
      {"library", step.library},
      {"activity_timing", delay_model_name(step.timing)},
      {"grid",
       {{{"label", "MAC"},
         {"design", "mac"},
         {"m", 1},
         {"n", 1},
         {"k", 4},
         {"act", "fp16"},
         {"acc", step.acc}},
        {{"label", "LUT"},
         {"design", "lut"},
         {"m", 1},
         {"n", 1},
         {"k", 4},
         {"act", "fp16"},
         {"acc", step.acc},
         {"wbits", wbits}}}}};
  return SweepSpec::parse(j, "ledger");
}

LedgerResult run_ledger(const LedgerOptions& opt) {
  if (opt.out_dir.empty()) throw InputError("--out: an output directory is required");
  if (opt.max_wbits < 1 || opt.max_wbits > 8) {
    throw InputError(
        fmt::format("ledger: max_wbits {} is out of range (valid: 1..8)", opt.max_wbits));
  }
  const auto t0 = std::chrono::steady_clock::now();
  LedgerResult res;
  res.steps = ledger_steps(opt);
  SweepOptions so;
  so.out_dir = opt.out_dir;
  so.jobs = opt.jobs;
  so.progress = opt.progress;
  so.report_only = opt.report_only;
  so.tool_timeout_s = opt.tool_timeout_s;
  so.runner = opt.runner;
  so.rtl_hash = opt.rtl_hash;
  const LedgerStep* unscaled = nullptr;
  std::vector<json> rows;
  for (auto& step : res.steps) {
    if (step.scale_nm <= 0) {
      // The MAC, W1 and the widest W, then bisection between the widest W known below the MAC
      // and the narrowest known not below (or every W).
      std::set<int> ws = {1, opt.max_wbits};
      if (opt.all_wbits) {
        for (int w = 1; w <= opt.max_wbits; ++w) ws.insert(w);
      }
      SweepSummary sum;
      int step_ran = 0;
      for (;;) {
        sum = run_sweep(ledger_spec(step, std::vector<int>(ws.begin(), ws.end())), so);
        step_ran += sum.ran;
        double mac = kNaN;
        std::map<int, double> lut;
        for (const auto& row : sum.rows) {
          if (row.value("status", "") != "ok") continue;
          if (row.value("design", "") == "mac") mac = row.value("pj_per_op", kNaN);
          if (row.value("design", "") == "lut")
            lut[row.value("wbits", 0)] = row.value("pj_per_op", kNaN);
        }
        int below = 0, above = opt.max_wbits + 1;
        for (const auto& [w, pj] : lut) {
          if (!(std::isfinite(pj) && std::isfinite(mac))) continue;
          if (pj < mac) {
            below = std::max(below, w);
          } else {
            above = std::min(above, w);
          }
        }
        if (!std::isfinite(mac) || lut.size() + 1 < sum.rows.size() || above - below <= 1 ||
            below >= above) {
          break;
        }
        const int mid = (below + std::min(above, opt.max_wbits + 1)) / 2;
        if (ws.count(mid)) break;
        ws.insert(mid);
      }
      res.points += sum.points;
      res.ran += step_ran;
      res.reused += sum.points - step_ran;
      res.failed += sum.failed;
      rows = sum.rows;
      unscaled = &step;
    }
    // The node step rescales the rows of the step before it.
    std::vector<double> lut(opt.max_wbits, kNaN);
    step.mac_pj = step.lut_pj = step.mac_density = step.lut_density = kNaN;
    double mac_zero = kNaN, lut_zero = kNaN;
    step.failed = 0;
    for (const auto& row : rows) {
      if (row.value("status", "") != "ok") {
        ++step.failed;
        continue;
      }
      double pj = row.value("pj_per_op", kNaN);
      double density = row.value("ops_per_cycle_per_mm2", kNaN);
      const double zero = row.value("pj_per_op_zero_delay", pj);
      if (step.scale_nm > 0) {
        NodeScaling ns;
        const CellLibrary& lib = cell_library(step.library);
        ns.from_nm = lib.node_nm;
        ns.from_vdd = lib.vdd;
        ns.to_nm = step.scale_nm;
        ns.to_vdd = step.scale_vdd;
        const PpaResult r = result_of(row);
        const ScaledFigures f = scale_to_node(r, ns);
        pj = f.power_mw * f.clock_ns / r.ops_per_cycle;  // dynamic energy per op (mW ns = pJ)
        density = r.ops_per_cycle / (f.area_um2 * 1e-6);
      }
      const std::string design = row.value("design", "");
      if (design == "mac") {
        step.mac_pj = pj;
        step.mac_density = density;
        mac_zero = zero;
      } else if (design == "lut") {
        const int w = row.value("wbits", 0);
        if (w >= 1 && w <= opt.max_wbits) lut[w - 1] = pj;
        if (w == 1) {
          step.lut_pj = pj;
          step.lut_density = density;
          lut_zero = zero;
        }
      }
    }
    step.lut_pj_by_w = lut;
    step.energy_ratio = ratio(step.mac_pj, step.lut_pj);
    step.density_ratio = ratio(step.lut_density, step.mac_density);
    // The widest W below the MAC with every measured narrower W below it too (W not run are
    // skipped: the bisection measured W + 1 of the answer).
    step.crossover_w = 0;
    for (int w = 1; w <= opt.max_wbits && std::isfinite(step.mac_pj); ++w) {
      if (!std::isfinite(lut[w - 1])) continue;
      if (lut[w - 1] >= step.mac_pj) break;
      step.crossover_w = w;
    }
    if (step.timing == DelayModel::kZero) {
      step.mac_glitch = step.lut_glitch = 0;
    } else if (step.scale_nm <= 0) {
      step.mac_glitch = ratio(step.mac_pj, mac_zero) - 1;
      step.lut_glitch = ratio(step.lut_pj, lut_zero) - 1;
    } else if (unscaled) {
      step.mac_glitch = unscaled->mac_glitch;
      step.lut_glitch = unscaled->lut_glitch;
    }
    step.lut_tops_mm2_1ghz = step.lut_density / 1e3;  // ops/cycle/mm^2 x 1e9 / 1e12
    step.mac_tops_mm2_1ghz = step.mac_density / 1e3;
  }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // ledger.csv and ledger.json beside the store.
  std::string csv =
      "step,change,library,activity,acc,mac_pj_per_op,lut_pj_per_op,energy_mac_over_lut,"
      "density_lut_over_mac,lut_energy_below_mac_up_to_w,lut_tops_mm2_1ghz,mac_tops_mm2_1ghz,"
      "mac_glitch,lut_glitch\n";
  for (const auto& s : res.steps) {
    csv += fmt::format(
        "{},\"{}\",{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{},{:.6g},{:.6g},{:.4g},{:.4g}\n", s.name,
        s.change, s.library, delay_model_name(s.timing), s.acc, s.mac_pj, s.lut_pj, s.energy_ratio,
        s.density_ratio, s.crossover_w, s.lut_tops_mm2_1ghz, s.mac_tops_mm2_1ghz, s.mac_glitch,
        s.lut_glitch);
  }
  fs::create_directories(opt.out_dir);
  write_text_atomic(opt.out_dir + "/ledger.csv", csv);
  write_text_atomic(opt.out_dir + "/ledger.json", to_json(res).dump(2) + "\n");
  res.files = {opt.out_dir + "/ledger.csv", opt.out_dir + "/ledger.json"};
  return res;
}

json to_json(const LedgerResult& r) {
  auto num = [](double v) { return std::isfinite(v) ? json(v) : json(); };
  json steps = json::array();
  for (const auto& s : r.steps) {
    json by_w = json::array();
    for (double v : s.lut_pj_by_w) by_w.push_back(num(v));
    steps.push_back({{"step", s.name},
                     {"change", s.change},
                     {"library", s.library},
                     {"activity_timing", delay_model_name(s.timing)},
                     {"acc", s.acc},
                     {"scale_nm", s.scale_nm},
                     {"mac_pj_per_op", num(s.mac_pj)},
                     {"lut_pj_per_op", num(s.lut_pj)},
                     {"lut_pj_per_op_by_wbits", by_w},
                     {"energy_mac_over_lut", num(s.energy_ratio)},
                     {"density_lut_over_mac", num(s.density_ratio)},
                     {"lut_energy_below_mac_up_to_w", s.crossover_w},
                     {"lut_tops_mm2_1ghz", num(s.lut_tops_mm2_1ghz)},
                     {"mac_tops_mm2_1ghz", num(s.mac_tops_mm2_1ghz)},
                     {"mac_glitch", num(s.mac_glitch)},
                     {"lut_glitch", num(s.lut_glitch)},
                     {"failed", s.failed}});
  }
  return {{"steps", steps},
          {"paper",
           {{"energy_mac_over_lut", kPaperEnergyRatio},
            {"density_lut_over_mac", kPaperDensityRatio},
            {"lut_tops_mm2_1ghz", kPaperLutTopsMm2},
            {"mac_tops_mm2_1ghz", kPaperMacTopsMm2},
            {"lut_energy_below_mac", "all W"}}},
          {"points", r.points},
          {"reused", r.reused},
          {"ran", r.ran},
          {"failed", r.failed},
          {"seconds", r.seconds}};
}

}  // namespace ltc::synth
