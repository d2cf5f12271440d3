// `ltc calibrate`: fit a GPU's `achievable` section (model/hw/gpu.h) to profiler measurements
// (tools/profile-gpu, schema ltc-gpu-profile/1; or a GEMM-only file as
// configs/calibration/h200-gemm.json) and measure the roofline's error on them: in sample, and
// leave-one-model-out (fit on every model but one, estimate that one).
//
// What is fitted is a handful of physical parameters, never a correction per point: achievable
// DRAM and L2 bandwidth, tensor efficiency, fixed cost per kernel class, compute/memory overlap,
// FlashAttention efficiency (decode steps and prefill steps, FP16), and per low-bit GEMM path
// (INT8 x INT8, FP8, weight-only INT4) its tensor efficiency, DRAM efficiency and the smallest M
// its kernels' tiles cover. The search is a bounded coordinate search (calibrate.cpp).
#pragma once

#include "model/hw/gpu.h"
#include "model/llm/graph.h"
#include "model/llm/model_config.h"
#include "model/roofline/estimate.h"
#include "model/roofline/machine.h"

#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ltc::roofline {

// One measured decode or prefill step of the reference step (issue #17; time per layer).
struct StepMeasurement {
  std::string model;  // profile model name
  llm::Phase phase = llm::Phase::kDecode;
  int64_t batch = 1;
  int64_t length = 0;  // decode: context L; prefill: sequence S
  double ms = 0;       // per decoder layer
  std::string file{};  // the measurement file it came from
};

// One measured GEMM Y[M,N] = X[M,K] W[N,K]^T on one path.
struct GemmMeasurement {
  std::string model;                       // "" for a GEMM-only file
  std::string name;                        // "qkv", "o", "gate_up", "down", or the file's name
  std::string dtype;                       // "fp16", "bf16", "int8", "fp8", "int4wo"
  int64_t m = 0, m_run = 0, n = 0, k = 0;  // m_run: the M the kernel ran (padded for int8/fp8)
  int group_size = 0;                      // int4wo: scale group
  // Measured in the session of a profile's steps (its file holds steps): FP16 ones enter the step
  // fit; those of GEMM-only files and GEMM sweeps are checked against it.
  bool with_steps = false;
  double ms = 0;
  std::string file{};  // the measurement file it came from
  // The tile of the kernel the library ran, from its name in the file's kernel lists (CUTLASS's
  // "_<rows>x<columns>_<K>x<stages>_"); 0 x 0 when not listed or not named so.
  int library_tile_m = 0, library_tile_n = 0;
};

struct ProfileModel {
  std::string name;
  llm::ModelConfig config;
};

// Everything read from one or more measurement files.
struct Measurements {
  std::vector<std::string> files;
  std::string device;  // the GPU the files were measured on ("NVIDIA H200"), "" if not given
  std::vector<ProfileModel> models;
  std::vector<StepMeasurement> steps;
  std::vector<GemmMeasurement> gemms;
  const llm::ModelConfig& model(const std::string& name) const;  // throws std::out_of_range
};

// Reads the files; throws InputError naming the file, the entry and what is valid (missing
// file, invalid JSON, unknown schema, a model config that disagrees with the shape the profile
// recorded). Model configs named by a profile ("source") are found relative to the working
// directory, the repository (config_dir()/..), or the profile's directory.
Measurements load_measurements(const std::vector<std::string>& files);

// The GEMM problem and measured-kernel M a measurement stands for (act/weight formats of its
// dtype path: int8 x int8, fp8e4m3 x fp8e4m3, bf16 x int4:g=G, ...).
struct GemmPathSpec {
  std::string weights, acts;
};
GemmPathSpec gemm_path_spec(const std::string& dtype);  // throws InputError on an unknown dtype
// The roofline's time of a measured GEMM on `m`: its dtype path's problem at the M its kernel ran.
double gemm_estimate_ms(const Machine& m, const GemmMeasurement& g);
OpCost gemm_estimate(const Machine& m, const GemmMeasurement& g);  // with the tile it runs
// The tile a kernel name gives: CUTLASS's "..._128x64_128x3_..." is {128, 64}; {0, 0} for a name
// without one (cuBLAS's nvjet kernels, tinygemm, ...).
std::pair<int, int> kernel_name_tile(const std::string& name);
// The library's tile choice as a decision list (hw::TileRule) that picks the named tile of the
// most `gemms` with one (GemmMeasurement::library_tile_m): the named tiles largest first, each
// chosen from the fewest outputs M x N and the least K it was named at, those thresholds then
// moved one at a time to the measured value that agrees with more names. Empty when the GEMMs
// name fewer than two tiles.
std::vector<hw::TileRule> tile_rules_from_names(const std::vector<const GemmMeasurement*>& gemms);
// The roofline request of a measured step: its model, phase, batch and length (the reference
// kernel plan, as measured).
StepRequest step_request(const StepMeasurement& s);

// A parameter the fit may move: a number inside hw::AchievableRates, its bounds, and whether
// the search steps it on a log scale.
struct FitParameter {
  std::string name;  // "dram_bw_fraction", "gemm_paths[int8 x int8].tensor_fraction", ...
  std::function<double(const hw::AchievableRates&)> get;
  std::function<void(hw::AchievableRates&, double)> set;
  double lo = 0, hi = 0;
  bool log_scale = false;
  std::vector<double> choices;  // a discrete parameter: the values tried (else lo..hi)
  // A discrete parameter of the kernels' kind (tile width, waves): a GEMM path's fit tries its
  // choices from the best point of the other discrete parameters' grid, not across that grid.
  bool kernel_kind = false;
  // A discrete parameter the search moves one at a time with the continuous ones (all its
  // choices tried each sweep), not tried as a grid with the others (a tile-choice threshold).
  bool with_continuous = false;
};

// One estimated case: a step (model, phase, batch, length) or a GEMM (dtype, shape).
struct CaseResult {
  std::string model, phase, what;  // what: "step" or the GEMM dtype
  int64_t batch = 0, length = 0;   // steps
  std::string name;                // GEMMs: name
  int64_t m = 0, m_run = 0, n = 0, k = 0;
  double measured_ms = 0;
  double estimated_ms = 0;  // with the fit on all models
  double lomo_ms = 0;       // with the fit on all models but this one (0 when not computed)
  double loso_ms = 0;  // GEMMs: with the fit that never saw this (N, K) shape (0: not computed)
  // With the fit that never saw this case's file (CalibrateOptions::hold_out; 0: not computed).
  double held_ms = 0;
  std::string family;  // steps: the layer family (layer_family)
  // GEMMs: the tile of the library's kernel (GemmMeasurement::library_tile_m, "" when unknown), the
  // tile the roofline costs with the fit on all models and with the leave-one-shape-out fit.
  std::string library_tile, tile, loso_tile;
  double error() const { return (estimated_ms - measured_ms) / measured_ms; }
  double held_error() const { return (held_ms - measured_ms) / measured_ms; }
  double lomo_error() const { return (lomo_ms - measured_ms) / measured_ms; }
  double loso_error() const { return (loso_ms - measured_ms) / measured_ms; }
};

// Mean absolute percentage errors (fractions) over a set of cases.
struct ErrorSummary {
  std::string group;  // "decode", "prefill", a model name, a GEMM dtype
  int cases = 0;
  double mape = 0, lomo_mape = 0, max_abs = 0;
  double loso_mape = 0;  // GEMMs: leave-one-shape-out (0 when not computed)
  double held_mape = 0;  // by the fit without the held-out files (0 when not computed)
};

// How often the roofline costs the tile the library ran, over the GEMMs of one dtype path whose
// kernel names give a tile.
struct TileAgreement {
  std::string group;  // the GEMM dtype
  int named = 0;      // GEMMs with a named tile
  int in_sample = 0;  // of those, the fit on all models costs that tile
  int loso = 0;       // the leave-one-shape-out fit (0 when not computed)
};

// The most a fitted case's estimate may differ from its measurement, as a ratio either way, before
// calibrate() refuses the data as unexplainable: the committed H200 fit's worst case is 20% off
// (model/roofline/README.md), so a case 3x off is a wrong measurement (units, a failed run).
inline constexpr double kMaxExplainedRatio = 3.0;

struct CalibrateOptions {
  bool lomo = true;  // leave-one-model-out fits (one per model)
  // Leave-one-shape-out for GEMMs: every GEMM estimated by a fit that never saw its (N, K), in
  // `shape_folds` folds of the distinct shapes (shape i in fold i mod folds; 0: one fold per
  // shape).
  bool loso = true;
  int shape_folds = 8;
  int sweeps = 5;  // coordinate-search sweeps over all parameters
  int grid = 6;    // points tried per parameter and sweep, each side of the current value
  int polish_evaluations = 400;  // Nelder-Mead polish of the continuous parameters (0: none)
  int threads = 0;  // leave-one-model-out fits run in parallel (0: one per hardware thread)
  // Measurement files (of those loaded) held out by construction: one more fit without any of
  // their cases predicts them (CaseResult::held_ms), beside the fit on everything.
  std::vector<std::string> hold_out;
};

struct CalibrationResult {
  std::string gpu;
  Measurements data;
  hw::AchievableRates fitted;
  hw::AchievableRates before;           // the GPU file's section
  std::vector<std::string> parameters;  // what the fit moved
  std::vector<CaseResult> steps;        // every step case
  std::vector<CaseResult> gemms;        // every GEMM case
  std::vector<ErrorSummary> by_phase;   // decode, prefill, all
  std::vector<ErrorSummary> by_model;   // steps per model
  std::vector<ErrorSummary> by_family;  // steps per architecture (the configs' model_type)
  // Steps per layer family (layer_family) and phase: "MoE, decode", ...
  std::vector<ErrorSummary> by_layer_family;
  // Steps per model and phase ("mixtral-8x7b, prefill"), of the models of the held-out files.
  std::vector<ErrorSummary> by_model_phase;
  std::vector<ErrorSummary> by_file_phase;  // steps per measurement file and phase
  std::vector<std::string> hold_out;        // CalibrateOptions::hold_out
  std::vector<ErrorSummary> by_dtype;       // GEMMs per dtype path
  std::vector<ErrorSummary> by_dtype_m;     // GEMMs per dtype path, M <= 256 and M > 256
  // Low-bit GEMMs the issue names: int8 at M < 32 (padded kernels), fp8, int4wo at M = 1.
  std::vector<ErrorSummary> low_bit;
  std::vector<TileAgreement> tile_agreement;  // per dtype path with named kernel tiles
  double before_step_mape = 0;                // the GPU file's section on the same steps
  double start_step_mape = 0;   // where every fit's search starts (generic defaults) on them
  int shape_folds = 0;          // leave-one-shape-out folds used (0: not computed)
  std::string device_mismatch;  // set when the files were measured on another GPU
  std::string command;          // the `ltc calibrate` command that reproduces it
};

// What a decoder layer's operators are, for the error tables: "dense", "MoE", "MoE + shared
// experts", "MLA + MoE" (latent attention), "sliding window" (every layer), "local + global
// attention" (some layers windowed).
std::string layer_family(const llm::ModelConfig& c);

// The step and low-bit parameters the fit moves (the GEMM paths of `data`'s dtypes). With MoE
// steps: the grouped expert GEMM's rates and the combine's atomic rate; with latent-attention
// steps: the alignment-1 GEMM efficiency of its reference decode; with LayerNorm steps: its
// norm's own row chain.
std::vector<FitParameter> step_parameters(bool moe = false, bool mla = false,
                                          bool layer_norm = false);
// With `rules` (tile_rules_from_names): also whether the path's kernels pick their tile by that
// decision list or the fastest (a kernel-kind choice), and its thresholds.
std::vector<FitParameter> path_parameters(const std::string& dtype,
                                          const std::vector<hw::TileRule>& rules = {});

// Minimizes `objective` over `params` from `start` by bounded coordinate search; returns the
// best section found. Deterministic.
hw::AchievableRates coordinate_search(
    const hw::AchievableRates& start, const std::vector<FitParameter>& params,
    const std::function<double(const hw::AchievableRates&)>& objective, const CalibrateOptions& o);

// Mean absolute percentage error of the roofline on `steps` (both phases weighted equally when
// both are present) on `gpu` with `rates`.
double step_objective(const hw::GpuConfig& gpu, const hw::AchievableRates& rates,
                      const Measurements& data, const std::vector<size_t>& steps);

// What the step fit minimizes: the step objective and the MAPE of the FP16 GEMMs `fp16_gemms`,
// weighted as a third phase.
double fit_objective(const hw::GpuConfig& gpu, const hw::AchievableRates& rates,
                     const Measurements& data, const std::vector<size_t>& steps,
                     const std::vector<size_t>& fp16_gemms);

// Fits what `data` identifies (none of it for a GEMM-only file: then every case is checked
// against the GPU file's own section) and estimates every case. Throws InputError naming the
// case when one is more than kMaxExplainedRatio off after the fit.
CalibrationResult calibrate(const hw::GpuConfig& gpu, const Measurements& data,
                            const CalibrateOptions& o = {});

// The GPU file's text (`gpu_file`, JSON) with only its `achievable` section replaced by the
// fit; `source` says what it was fitted on and the errors reached. Key order and every other
// section are kept as they are.
std::string calibrated_gpu_json(const std::string& gpu_file, const CalibrationResult& r);
// The file a GPU name or path stands for (configs/gpus/<name>.json for a built-in name).
std::string gpu_file_path(const std::string& name_or_path);

// Per-case measured vs estimated and the error summaries, as one JSON object (what
// `ltc calibrate --json` prints and a report can plot).
void to_json(nlohmann::json& j, const CalibrationResult& r);
std::string format_calibration(const CalibrationResult& r);
// The errors as the Markdown results file (docs/results/calibration.md, `ltc calibrate
// --markdown`): GEMMs per kind and M range, steps per phase, architecture and model, each in
// sample and held out, and the fitted GEMM paths.
std::string calibration_markdown(const CalibrationResult& r);

}  // namespace ltc::roofline
