// What it costs: the tile-level roofline. An operator is a grid of tiles laid in waves over the
// SMs; a tile takes the larger of its tensor-core time and its operand time from L2; the
// operator takes its waves, overlapped with its DRAM traffic (unique bytes at packed size over
// achievable bandwidth, limited by how many SMs are pulling), plus a fixed per-kernel cost.
// Memory-bound CUDA-core operators (norms, RoPE, activations, residuals, table precompute) cost
// their bytes over achievable bandwidth plus per-kernel fixed cost; fused ones add no kernel.
#pragma once

#include "model/llm/graph.h"
#include "model/roofline/machine.h"
#include "model/roofline/workload.h"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace ltc::roofline {

struct TileChoice {
  int tm = 0, tn = 0;  // output tile (rows x columns) of one thread block
  int split_k = 1;
  int64_t tiles = 0;      // thread blocks in the grid
  int64_t waves = 0;      // ceil(tiles / SMs)
  bool stream_k = false;  // K loops dealt evenly over the SMs instead of whole tiles in waves
};

struct OpCost {
  std::string name;
  std::string kind;  // llm op kind, or "gemm"
  double ms = 0;
  // "dram", "l2", "compute", "dequant", "tables", "cuda", "atomics", "fixed", "fused"
  std::string bound;
  double flops = 0;
  double bytes = 0;            // DRAM bytes (unique, packed)
  int kernels = 0;             // launches under CUDA graphs (0: fused into its producer)
  std::string execution_path;  // "lut int8 x int2 (2 planes)", "cuda cores", ... (JSON key "unit")
  TileChoice tile;             // tensor-core operators
  double compute_ms = 0;       // the parts the roofline overlapped
  double memory_ms = 0;        // DRAM (and, for a compiled LUT kernel, L2) traffic
  double tensor_busy_s = 0;    // tensor-core time at peak rate (for energy)
};

// One (mp)GEMM as a standalone kernel.
OpCost gemm_cost(const Machine& m, const GemmProblem& g);

// The absorbed MLA decode's batched GEMMs of the reference step, in the roofline's orientation (m
// rows: the heads): a score [m x k] x [k x n] against the cached latents or RoPE keys (n = L + 1,
// k their width), or the value [m x k] x [k x n] of the probabilities against the latents (k = L +
// 1, n the latent width). Where a row of L + 1 halves is not 16-byte aligned, cuBLAS (sm90) runs
// alignment-1 tensor-op GEMMs, or, for few heads and a large batch x length, its strided-batched
// GEMV kernels (gemmSN) on the CUDA cores: latent_gemmsn says where, as the H100 sweep
// configs/calibration/h100-latent-gemms.json lists them (every GEMM of it over 10 us; the H200
// takes the same kernels, configs/calibration/h200-moe-kernels.json), and latent_gemmsn_s what
// one costs, fitted to that sweep's gemmSN times (model/roofline/README.md).
enum class LatentGemm { kScore, kValue };
bool latent_gemmsn(LatentGemm layout, int64_t batch, int64_t m, int64_t n, int64_t k);
double latent_gemmsn_s(const Machine& m, LatentGemm layout, int64_t batch, int64_t rows, int64_t n,
                       int64_t k);

// Decoder layers of another kind than the step's main one (llm::StepGraph::other_layers).
struct LayerGroupCost {
  std::string kind;  // "dense FFN, full attention", ...
  int64_t count = 0;
  double ms = 0;  // one layer
  std::vector<OpCost> ops;
};

struct StepEstimate {
  std::string model, gpu, phase;
  int64_t batch = 0, context = 0, seq = 0, layers = 0;
  std::string weights, acts, precompute;
  std::vector<OpCost> embedding, layer, head;
  double layer_ms = 0;     // one decoder layer of the main kind (`layers` of them)
  std::string layer_kind;  // that kind, in words
  std::vector<LayerGroupCost> other_layers;
  std::string routing;    // MoE models: the expert routing assumed (llm::StepGraph::routing)
  double latency_ms = 0;  // embedding + every layer + head
  double tokens_per_s = 0;
  // Energies are unknown (JSON null, "unknown" in text) when the GPU file gives no power figure
  // for the unit that runs the linear layers or no DRAM pJ/byte; never a silent 0.
  double tensor_energy_j = 0;  // whole step: tensor-core power x busy time at peak
  double dram_energy_j = 0;    // whole step: DRAM bytes x pJ/byte
  double energy_mj_per_token = 0;
  bool tensor_energy_known = false;
  bool dram_energy_known = false;
  // How the linear layers' path was chosen when the user left it to the tool (--precompute
  // unset on a LUT GPU): both paths estimated, the faster kept; empty otherwise.
  std::string path_choice;
  // Device memory the step needs: weights at their stored size (a tied LM head once) plus the
  // KV cache after the step (activations ignored), against the GPU's DRAM capacity.
  double memory_gb = 0;
  bool fits_memory = true;
  // The tensor core running the linear layers (paper Table III): peak for this precision, area
  // and power of all SMs' tensor cores. 0 when unknown: the GPU file does not give them, or gives
  // them for the other unit (a LUT GPU's figures are its LUT cores', not its MAC cores').
  std::string tensor_unit;
  double tensor_peak_tops = 0;
  double tensor_area_mm2 = 0;
  double tensor_power_w = 0;
  double tensor_tops_per_mm2 = 0;
  double tensor_tops_per_w = 0;
};

// "MoE FFN, sliding window 4096", "dense FFN, full attention".
std::string layer_kind_name(const llm::LayerKind& k);

OpCost op_cost(const Machine& m, const llm::Op& op, const llm::StepConfig& step);
StepEstimate estimate_step(const Machine& m, const llm::StepGraph& graph);

void to_json(nlohmann::json& j, const TileChoice& t);
void to_json(nlohmann::json& j, const OpCost& c);
void to_json(nlohmann::json& j, const LayerGroupCost& g);
void to_json(nlohmann::json& j, const StepEstimate& e);

}  // namespace ltc::roofline
