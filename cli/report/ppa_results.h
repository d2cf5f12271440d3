// The PPA results files: the ratios and crossovers of `ltc sweep` against the LUT Tensor Core
// paper (docs/results/ppa.md) and the ledger's steps (docs/results/ppa-ledger.md) as Markdown,
// written by `ltc sweep SPEC|ledger --out DIR --markdown FILE` (from the points it runs or, with
// --report-only, from those already in DIR). Each starts with the command that regenerates it;
// tests/cli/bench_models_test.cpp checks the checked-in files against these heads.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace ltc::report {

// `sweeps`: one object per sweep, as `ltc sweep --json` prints it (sweep, title, library,
// activity_timing, points, rows: the spec's rows (a point may stand in several), rows_ok: those
// whose point is in the store, ratios, crossovers).
std::string ppa_markdown(const nlohmann::json& sweeps);
// `ledger`: synth::to_json of the ledger's result (steps, paper).
std::string ledger_markdown(const nlohmann::json& ledger);

}  // namespace ltc::report
