// The results files of `ltc bench sim` (docs/results/sim*.md): each of its runs' JSON as Markdown,
// written by `--markdown FILE`. One function per run: the simulator's speed (the default run), the
// H200 GEMMs against their measurements (--only h200), the speed per host thread count
// (--threads), sampled against full simulation (--only sample), the paper's kernel experiment
// (--only paper) and the compiled MoE and sliding-window steps against their H200 reference steps
// (--only moe). Each starts with the command that
// regenerates it; tests/cli/bench_models_test.cpp checks the checked-in files against these heads.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace ltc::report {

// A ratio as "0.9x", "4.2x", "36x": one decimal below 10 (a sampled run slower than its full run
// reads 0.9x, not 0x).
std::string times(double r);

// `runs`: the default run's JSON array (workload, cycles, wall_s, warp_instructions, ...).
std::string sim_speed_markdown(const nlohmann::json& runs);
// The --threads JSON array: per workload its runs (threads, wall_s, speedup, speedup_vs_baseline).
std::string sim_threads_markdown(const nlohmann::json& workloads);
// The --only h200 JSON object (gemms, mape, wall_s).
std::string sim_h200_markdown(const nlohmann::json& result);
// The --only sample JSON object (cases, the summary, by_kind, by_method when --per-kernel).
std::string sim_sample_markdown(const nlohmann::json& result);
// The --only paper JSON object (report::to_json of the kernel experiment).
std::string sim_paper_markdown(const nlohmann::json& result);
// The --only moe JSON object (steps, the mean errors, wall_s).
std::string sim_moe_markdown(const nlohmann::json& result);

}  // namespace ltc::report
