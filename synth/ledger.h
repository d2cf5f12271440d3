// The PPA ledger (issue #49): the DP4 comparison of the paper (LUT W_INTn A_FP16 against the MAC
// W_FP16 A_FP16, M = N = 1, K = 4) taken from the flow's first setup to the paper's one cause at a
// time, each step keeping the ones before it:
//   0 osu018       OSU 0.18 um, zero-delay activity, FP32 accumulation (the flow's first setup)
//   1 library      NanGate 45 nm instead (cell_library.h)
//   2 glitches     timed activity with the liberty's delays: every transition counts
//   3 accumulator  FP16 accumulation in both designs, as the paper's RTL
//   4 node         the step-3 figures scaled to 28 nm 0.9 V (ppa.h scale_to_node)
// and after each: MAC / LUT energy per operation at W1, LUT / MAC compute density (operations per
// cycle per mm^2) at W1, and the largest W up to which the W-bit LUT's energy per operation stays
// below the MAC's (W = 1..max_wbits), beside the paper's 15.45x, 18.1x and "all W". The crossover
// is found by bisection over W (W1 and max_wbits first), which assumes the bit-serial LUT's energy
// per operation grows with W (each weight plane is one more tile cycle per operation); with
// `all_wbits` every W runs. Every point runs through run_sweep into one results store, so a rerun
// reuses what it has.
#pragma once

#include "synth/sweep.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace ltc::synth {

struct LedgerOptions {
  std::string out_dir;  // the results store (results.jsonl) and ledger.csv / ledger.json
  int jobs = 1;
  bool progress = false;
  bool report_only = false;  // run nothing: the table from the store as it is
  double tool_timeout_s = 3600;
  int max_wbits = 8;
  bool all_wbits = false;               // every W = 1..max_wbits, not only the bisection's
  double node_nm = 28, node_vdd = 0.9;  // step 4's target (the paper's TSMC 28 nm at 0.9 V)
  // The flow run per point (SweepOptions::runner); tests substitute their own.
  std::function<PpaResult(const hw::TensorCoreConfig&, const PpaOptions&)> runner;
  std::function<std::string(const hw::TensorCoreConfig&)> rtl_hash;  // SweepOptions::rtl_hash
};

struct LedgerStep {
  std::string name, change;  // "library", "NanGate 45 nm instead of OSU 0.18 um"
  std::string library, acc;  // cell_library.h name; "fp32" or "fp16"
  DelayModel timing = DelayModel::kZero;
  double scale_nm = 0, scale_vdd = 0;  // > 0: the figures scaled to this node
  // Results (NaN when a point is missing or failed).
  double mac_pj = 0, lut_pj = 0;            // energy per operation at W1 (own fmax)
  double energy_ratio = 0;                  // MAC / LUT
  double mac_density = 0, lut_density = 0;  // ops per cycle per mm^2
  double density_ratio = 0;                 // LUT / MAC
  int crossover_w = 0;              // LUT below MAC in energy per op up to this W (0: not even W1)
  std::vector<double> lut_pj_by_w;  // W = 1..max_wbits
  double mac_glitch = 0, lut_glitch = 0;  // timed / zero-delay energy per op - 1 (timed steps)
  double lut_tops_mm2_1ghz = 0, mac_tops_mm2_1ghz = 0;  // density at 1 GHz (TOPS/mm^2)
  int failed = 0;  // points of this step that failed or are missing
};

struct LedgerResult {
  std::vector<LedgerStep> steps;
  int points = 0, reused = 0, ran = 0, failed = 0;
  double seconds = 0;
  std::vector<std::string> files;  // ledger.csv, ledger.json
};

// The paper's figures the ledger compares with (docs/published-figures.md#ppa).
inline constexpr double kPaperEnergyRatio = 15.45, kPaperDensityRatio = 18.1;
inline constexpr double kPaperLutTopsMm2 = 61.55, kPaperMacTopsMm2 = 3.39;

// The sweep spec of one step: the MAC and the LUT at each of `wbits`.
SweepSpec ledger_spec(const LedgerStep& step, const std::vector<int>& wbits);
std::vector<LedgerStep> ledger_steps(const LedgerOptions& opt);

// Runs (or resumes) every step's points and fills the table. Throws InputError on bad options.
LedgerResult run_ledger(const LedgerOptions& opt);

nlohmann::json to_json(const LedgerResult& r);

}  // namespace ltc::synth
