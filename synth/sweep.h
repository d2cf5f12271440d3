// Design-space sweeps: a JSON spec expands to design points, each run through the PPA flow in
// parallel, each result stored (JSON lines: parameters, tool versions, RTL hash, results or the
// error) in a store that a rerun resumes from. Spec format: synth/sweeps/README.md.
#pragma once

#include "model/hw/tensor_core.h"
#include "synth/ppa.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace ltc::synth {

struct SweepPoint {
  nlohmann::json params;  // the grid values as written (e.g. wbits for a MAC point)
  hw::TensorCoreConfig config;
};

struct SweepSpec {
  std::string name, title, description;
  double clock_ns = 0;  // 0: each point at its own maximum clock
  ActivityMode activity = ActivityMode::kMeasured;
  int cycles = 0;  // activity cycles; 0: auto by netlist size
  uint64_t seed = 1;
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

// JSON-lines results store, rewritten atomically (temp file + rename) on every put: a killed sweep
// leaves either the old or the new file, never half a record.
class ResultStore {
 public:
  explicit ResultStore(std::string path);  // loads the records already there
  bool has(const std::string& key) const;
  const nlohmann::json* get(const std::string& key) const;
  void put(const nlohmann::json& record);  // record["key"] identifies it
  size_t size() const;
  std::vector<nlohmann::json> records() const;

 private:
  std::string path_;
  mutable std::mutex mu_;
  std::vector<nlohmann::json> records_;
  std::map<std::string, size_t> index_;
};

struct SweepOptions {
  std::string out_dir;
  int jobs = 1;
  bool retry_failed = false;  // rerun points whose stored record is an error
  bool keep_work = false;     // keep netlists and simulation files of finished points
  bool progress = false;      // progress lines on stderr
  int limit = 0;              // run at most this many new points (0: all); for benchmarks
  bool report_only = false;   // run nothing: write the reports from the store as it is
  double tool_timeout_s = 3600;
  // The flow run per point; tests substitute their own. Default: run_ppa(config, options).
  std::function<PpaResult(const hw::TensorCoreConfig&, const PpaOptions&)> runner;
  // The RTL hash per point (part of the store key). Default: design_source(config).source_hash().
  std::function<std::string(const hw::TensorCoreConfig&)> rtl_hash;
};

struct SweepSummary {
  int points = 0;  // distinct design points in the spec
  int reused = 0;  // already in the store
  int ran = 0, ok = 0, failed = 0;
  double seconds = 0;
  nlohmann::json ratios;           // computed ratios vs the paper's
  nlohmann::json crossovers;       // where design a stops beating design b along x
  std::vector<std::string> files;  // CSV, SVGs, summary
};

SweepSummary run_sweep(const SweepSpec& spec, const SweepOptions& opt);

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
