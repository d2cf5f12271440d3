// Energy of a simulated run, computed after it from its counters (sim/stats.h) and the GPU's
// energy figures (hw::EnergyFigures, each naming its source): tensor cores per op issued (padding
// included: the tile computes the padded rows; LUT tiles at the PPA flow's figure for the trace's
// precision), CUDA cores per thread op, shared memory, L1, L2
// and DRAM per byte moved, static power over the time taken. A part whose figure the GPU file
// lacks is left out and listed in `unknown`, never guessed. docs/energy.md says what is charged
// and why.
#pragma once

#include "model/hw/gpu.h"
#include "sim/stats.h"
#include "traces/trace.h"

#include <nlohmann/json_fwd.hpp>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace ltc::sim {

// The figures one run is charged with, resolved from the GPU. The LUT tile's: the GPU file's
// energy.lut entry (the PPA flow's pJ per op) for the tile that runs the trace's lmma precision
// (hw::GpuConfig::lut_tile of their activations and weight planes, the table as the lmma names
// it), divided by its weight planes; without a trace, with lmma instructions of several
// precisions, or without an entry for the tile, the stated fallback: tensor_power_w_per_sm over
// one SM's share of the W1 rate, the roofline's figure. lmma_source says which, and why.
struct EnergyCoefficients {
  double mma_pj_per_op = 0, lmma_pj_per_plane_op = 0, cuda_pj_per_op = 0;
  double smem_pj_per_byte = 0, l1_pj_per_byte = 0, l2_pj_per_byte = 0, dram_pj_per_byte = 0;
  double static_w = 0;
  std::string lmma_tile;    // the energy.lut entry's tile id; empty: the fallback
  std::string lmma_source;  // where lmma_pj_per_plane_op comes from
  std::string source;       // the GPU file's energy.source and DRAM figure
};
EnergyCoefficients energy_coefficients(const hw::GpuConfig& gpu,
                                       const traces::Trace* trace = nullptr);

struct Energy {
  double tensor_j = 0, cuda_j = 0, smem_j = 0, l1_j = 0, l2_j = 0, dram_j = 0, static_j = 0;
  double lmma_j = 0;  // the LUT tiles' share of tensor_j (the rest: MAC tensor cores)
  double time_s = 0;
  std::vector<std::string> unknown;  // parts charged nothing for want of a figure ("static")
  double dynamic_j() const { return tensor_j + cuda_j + smem_j + l1_j + l2_j + dram_j; }
  double total_j() const { return dynamic_j() + static_j; }
  double average_w() const { return time_s > 0 ? total_j() / time_s : 0; }
  // Whether part `name` ("mma", "lmma", "dram", ...) was left out for want of a figure.
  bool is_unknown(std::string_view name) const {
    return std::find(unknown.begin(), unknown.end(), name) != unknown.end();
  }
};

// One kernel (or a sum of kernels with their summed time): the parts its counters used.
Energy kernel_energy(const KernelStats& k, const EnergyCoefficients& c);
// The whole run: its kernels, the gaps between them (static power only) and the L2's dirty lines
// written back at the end (RunStats::end_writeback_bytes, as DRAM writes).
Energy run_energy(const RunStats& r, const EnergyCoefficients& c);

void to_json(nlohmann::json& j, const Energy& e);
void to_json(nlohmann::json& j, const EnergyCoefficients& c);

}  // namespace ltc::sim
