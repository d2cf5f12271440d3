// Design-space sweeps: a JSON spec expands to design points, each run through the PPA flow (or,
// for a spec with "tool": "sim", each an `ltc sim` run) by an executor (synth/executor.h: on this
// machine or as Slurm job arrays), each result stored (JSON lines: parameters, tool versions, RTL
// hash, results or the error) in a store that a rerun resumes from. Spec format:
// synth/sweeps/README.md.
#pragma once

#include "model/hw/tensor_core.h"
#include "synth/executor.h"
#include "synth/ppa.h"
#include "synth/result_store.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ltc::synth {

struct SweepPoint {
  nlohmann::json params;        // the grid values as written (e.g. wbits for a MAC point)
  std::string id;               // same id, same run: config.id(), or for a sim point its flags
  hw::TensorCoreConfig config;  // PPA points
  std::vector<std::string> sim_args;  // sim points: `ltc sim` arguments (without --json)
};

struct SweepSpec {
  std::string name, title, description;
  std::string tool = "ppa";  // "ppa": points through the PPA flow; "sim": `ltc sim` runs
  double clock_ns = 0;       // 0: each point at its own maximum clock
  ActivityMode activity = ActivityMode::kMeasured;
  int cycles = 0;  // activity cycles; 0: auto by netlist size
  uint64_t seed = 1;
  std::string library = "osu018";  // cell_library.h; `ltc sweep --lib` overrides the spec's
  // The activity's delay model (gatesim.h): "zero", "unit" or "liberty" (glitches counted);
  // `ltc sweep --activity-timing` overrides the spec's "activity_timing".
  DelayModel timing = DelayModel::kZero;
  // Also measure the area of one operand register bit (register_bit_area_um2) and report each
  // point's operand storage (TensorCoreConfig::operand_bits) as registers beside the tile:
  // operand_area_um2, area_with_operands_um2, area_iso_with_operands_um2.
  bool operand_storage = false;
  std::vector<SweepPoint> points;
  nlohmann::json plots = nlohmann::json::array();   // see README.md
  nlohmann::json ratios = nlohmann::json::array();  // see README.md
  nlohmann::json raw;

  // Throws InputError naming the file and the field.
  static SweepSpec parse(const nlohmann::json& j, const std::string& origin);
  static SweepSpec load(const std::string& path);
  // Built-in specs by name ("dp-k", "dp4", "wbits", "dse") from synth/sweeps/<name>.json.
  static std::vector<std::string> builtin_names();
  static std::string builtin_path(const std::string& name);
};

// The key a result is stored under: same key, same result.
std::string point_key(const SweepSpec& spec, const hw::TensorCoreConfig& c,
                      const std::string& rtl_hash);

struct SweepOptions {
  std::string out_dir;
  int jobs = 1;
  bool retry_failed = false;  // rerun points whose stored record is an error
  bool keep_work = false;     // keep netlists and simulation files of finished points
  bool progress = false;      // progress lines on stderr
  int limit = 0;              // run at most this many new points (0: all); for benchmarks
  bool report_only = false;   // run nothing: write the reports from the store as it is
  double tool_timeout_s = 3600;
  // Where the points run (null: LocalExecutor with `jobs`); SlurmExecutor for a cluster.
  std::shared_ptr<SweepExecutor> executor;
  // The ltc binary sim points run (default: this one, /proc/self/exe).
  std::string ltc_binary;
  // Host threads each sim point's `ltc sim` runs on (--threads; its results do not depend on
  // it), unless the point's own arguments name --threads.
  int sim_threads = 1;
  // The flow run per point; tests substitute their own. Default: run_ppa(config, options).
  std::function<PpaResult(const hw::TensorCoreConfig&, const PpaOptions&)> runner;
  // The RTL hash per point (part of the store key). Default: design_source(config).source_hash().
  std::function<std::string(const hw::TensorCoreConfig&)> rtl_hash;
};

// One plot of a sweep spec ("plots": see README.md), drawn by the DSE report: lines (numeric x)
// or grouped bars (categorical x), one series per distinct value of the series columns.
struct PlotSpec {
  std::string file, title, x, y, y_label;
  std::vector<std::string> series;  // columns whose values name a series
  nlohmann::json filter;            // only rows matching these column values
  bool log_y = false;
  bool bars = false;  // categorical x
};

// Throws InputError when `j` lacks x or y.
PlotSpec parse_plot(const nlohmann::json& j);

// True when `row` has every (column, value) of `filter` (value may be a list of allowed values).
bool row_matches(const nlohmann::json& row, const nlohmann::json& filter);

struct SweepSummary {
  int points = 0;  // distinct design points in the spec
  int reused = 0;  // already in the store
  int ran = 0, ok = 0, failed = 0;
  int resubmitted = 0;  // Slurm: tasks submitted again after ending without a record
  double seconds = 0;
  nlohmann::json ratios;             // computed ratios vs the paper's
  nlohmann::json crossovers;         // where design a stops beating design b along x
  std::vector<std::string> files;    // CSV, summary
  std::vector<nlohmann::json> rows;  // one per spec point (sweep_rows), for plots and reports
};

SweepSummary run_sweep(const SweepSpec& spec, const SweepOptions& opt);

// Runs one task's job (what run_sweep hands its executor, and what a Slurm array task runs):
// {"kind": "ppa", ...} through run_ppa (or `ppa_runner` when set), {"kind": "sim", ...} as an
// `ltc sim --json` child process. Returns its record; a failing point gives status "error".
nlohmann::json run_sweep_task(
    const nlohmann::json& job,
    const std::function<PpaResult(const hw::TensorCoreConfig&, const PpaOptions&)>& ppa_runner =
        nullptr);

// The running ltc binary (/proc/self/exe), which sim tasks and Slurm tasks run.
std::string self_binary();

// UTC time as ISO 8601 (2026-12-01T20:00:00Z): a store record's "finished".
std::string record_timestamp();

// One row per spec point: its params, derived columns (shape, mnk) and the stored result.
// `register_bit_area_um2` > 0 adds the operand-storage columns.
std::vector<nlohmann::json> sweep_rows(const SweepSpec& spec, const ResultStore& store,
                                       const std::map<std::string, std::string>& keys,
                                       double register_bit_area_um2 = 0);
std::string rows_csv(const std::vector<nlohmann::json>& rows);
// The ratios of the spec over `rows` (each {name, metric, value, paper, num, den}).
nlohmann::json compute_ratios(const nlohmann::json& ratio_specs,
                              const std::vector<nlohmann::json>& rows);

// For each {name, metric, x, a, b}: the largest x up to which a's metric stays below b's, and
// b/a at every x.
nlohmann::json compute_crossovers(const nlohmann::json& crossover_specs,
                                  const std::vector<nlohmann::json>& rows);

}  // namespace ltc::synth
