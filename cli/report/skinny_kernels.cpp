#include "cli/report/skinny_kernels.h"

#include "common/error.h"
#include "compiler/gemm_lowering.h"
#include "model/hw/gpu.h"
#include "model/llm/graph.h"
#include "model/llm/model_config.h"
#include "sim/simulator.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <map>

namespace ltc::report {
namespace {

// The decoder's linear layers as launched: each launch group (llm::Op::launch_with) one GEMM
// with its members' N concatenated.
struct LinearLaunch {
  std::string name;
  int64_t n = 0, k = 0;
};

std::vector<LinearLaunch> linear_launches(const llm::ModelConfig& model, int64_t rows) {
  const llm::StepGraph g = build_step_graph(model, llm::StepConfig::decode(rows, 1024));
  std::vector<LinearLaunch> out;
  std::map<std::string, size_t> group;
  for (const llm::Op& op : g.layer) {
    if (op.kind != llm::OpKind::kLinear) continue;
    const std::string& leader = op.launch_with.empty() ? op.name : op.launch_with;
    auto it = group.find(leader);
    if (it == group.end()) {
      group[leader] = out.size();
      out.push_back({op.name, op.gemm.n, op.gemm.k});
    } else {
      out[it->second].name += "+" + op.name;
      out[it->second].n += op.gemm.n;
    }
  }
  return out;
}

}  // namespace

std::vector<SkinnyCase> skinny_cases(const SkinnyOptions& o) {
  for (int w : o.widths) {
    if (!((w >= 1 && w <= 8) || w == 16)) {
      throw InputError("--wbits: " + std::to_string(w) + " (valid: 1..8 integer codes, 16 fp16)");
    }
  }
  for (int64_t m : o.rows) {
    if (m < 1 || m > 16) throw InputError("--m: " + std::to_string(m) + " (valid: 1..16)");
  }
  std::vector<SkinnyCase> cases;
  for (const std::string& gpu : o.gpus) {
    hw::load_gpu(gpu);  // an unknown GPU fails before any simulation
    for (const std::string& name : o.models) {
      llm::ModelConfig model;
      try {
        model = llm::load_model(name);
      } catch (const InputError& e) {
        throw InputError(std::string("--model: ") + e.what());
      }
      for (int64_t m : o.rows) {
        for (const LinearLaunch& l : linear_launches(model, m)) {
          for (int w : o.widths) cases.push_back({name, l.name, gpu, m, l.n, l.k, w});
        }
      }
    }
  }
  return cases;
}

SkinnyResult run_skinny_case(const SkinnyCase& c) {
  const auto t0 = std::chrono::steady_clock::now();
  const hw::GpuConfig gpu = hw::load_gpu(c.gpu);
  compiler::GemmSpec spec;
  spec.m = c.m;
  spec.n = c.n;
  spec.k = c.k;
  spec.act = golden::DType::kFp16;
  spec.weights = llm::parse_weight_format(c.wbits == 16 ? "fp16" : "int" + std::to_string(c.wbits));
  const traces::Trace t = compiler::compile_gemm(spec, gpu);
  const traces::Kernel& gk = t.kernels.back();  // the GEMM (after a table precompute)
  SkinnyResult r;
  r.c = c;
  const bool lut = gk.gemm.path == traces::GemmPath::kLut;
  r.path = lut ? "lut" : c.wbits == 16 ? "fp16" : "dequant";
  r.block = fmt::format("{}x{}x{}", gk.tiles.block[0], gk.tiles.block[1], gk.tiles.block[2]);
  r.warp = fmt::format("{}x{}x{}", gk.tiles.warp[0], gk.tiles.warp[1], gk.tiles.warp[2]);
  r.k_slices = traces::kernel_k_slices(gk).slices;
  r.blocks = gk.blocks();
  sim::SimOptions so;
  so.kernel = gk.name;
  const sim::RunStats rs = sim::simulate(t, gpu, so);
  const sim::KernelStats& ks = rs.kernels.back();
  r.cycles = ks.cycles;
  r.time_us = ks.time_ms() * 1e3;
  // Compulsory bytes: packed weights, per-channel fp16 scale and zero point, the activations
  // (fp16) or their half tables (2^(K-1) fp16 entries per K activations), fp16 outputs.
  const double m = double(c.m), n = double(c.n), k = double(c.k);
  const double weights = n * k * c.wbits / 8.0, scales = c.wbits == 16 ? 0.0 : n * 4.0;
  double acts = m * k * 2.0;
  if (lut) {
    const auto& shape = gpu.lut_tensor->core.shape;
    acts = m * std::ceil(k / shape.k) * shape.half_table_size() * 2.0;
  }
  r.bytes = weights + scales + acts + m * n * 2.0;
  r.dram_read_bytes = double(ks.mem.dram_read_bytes);
  r.gbps = r.time_us > 0 ? r.bytes / (r.time_us * 1e3) : 0.0;
  r.fraction = r.gbps / gpu.dram_sim_gbps();
  r.occupancy = ks.achieved_occupancy();
  r.binding_stall = std::string(sim::stall_name(ks.binding_stall()));
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

nlohmann::json to_json(const SkinnyResult& r) {
  return {{"gpu", r.c.gpu},
          {"model", r.c.model},
          {"layer", r.c.layer},
          {"m", r.c.m},
          {"n", r.c.n},
          {"k", r.c.k},
          {"wbits", r.c.wbits},
          {"path", r.path},
          {"block", r.block},
          {"warp", r.warp},
          {"k_slices", r.k_slices},
          {"blocks", r.blocks},
          {"cycles", r.cycles},
          {"time_us", r.time_us},
          {"bytes", r.bytes},
          {"dram_read_bytes", r.dram_read_bytes},
          {"gbps", r.gbps},
          {"fraction_of_dram", r.fraction},
          {"meets_target", r.meets()},
          {"occupancy", r.occupancy},
          {"binding_stall", r.binding_stall},
          {"wall_s", r.wall_s}};
}

SkinnyResult skinny_from_json(const nlohmann::json& j) {
  SkinnyResult r;
  r.c = {j.at("model"), j.at("layer"), j.at("gpu"), j.at("m"), j.at("n"), j.at("k"), j.at("wbits")};
  r.path = j.at("path");
  r.block = j.at("block");
  r.warp = j.at("warp");
  r.k_slices = j.at("k_slices");
  r.blocks = j.at("blocks");
  r.cycles = j.at("cycles");
  r.time_us = j.at("time_us");
  r.bytes = j.at("bytes");
  r.dram_read_bytes = j.at("dram_read_bytes");
  r.gbps = j.at("gbps");
  r.fraction = j.at("fraction_of_dram");
  r.occupancy = j.at("occupancy");
  r.binding_stall = j.at("binding_stall");
  r.wall_s = j.at("wall_s");
  return r;
}

std::string skinny_markdown(const std::vector<SkinnyResult>& rows) {
  std::string s = fmt::format(
      "Skinny GEMM kernels in the cycle-level simulator: the bytes each must move over its time, "
      "against the GPU's DRAM streaming bandwidth (target {:.0f}%); `stall` is the binding "
      "stall of a kernel under the target.\n\n",
      kSkinnyBandwidthTarget * 100);
  std::map<std::string, std::pair<int, int>> met;  // gpu -> (meeting, all)
  std::map<std::string, const SkinnyResult*> lowest;
  for (const auto& r : rows) {
    auto& [ok, all] = met[r.c.gpu];
    ok += r.meets() ? 1 : 0;
    ++all;
    auto& low = lowest[r.c.gpu];
    if (!low || r.fraction < low->fraction) low = &r;
  }
  s += "| GPU | cases at target | lowest |\n|---|---|---|\n";
  for (const auto& [gpu, c] : met) {
    const SkinnyResult* low = lowest[gpu];
    s += fmt::format("| {} | {} of {} | {:.1f}% ({} {} M={} W{}, {}) |\n", gpu, c.first, c.second,
                     low->fraction * 100, low->c.model, low->c.layer, low->c.m, low->c.wbits,
                     low->binding_stall);
  }
  s += "\n| GPU | model | layer | M | N | K | W | path | block (slices) | time us | GB/s | "
       "% DRAM | stall |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    s += fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} ({}) | {:.2f} | {:.0f} | {:.1f} "
        "| {} |\n",
        r.c.gpu, r.c.model, r.c.layer, r.c.m, r.c.n, r.c.k, r.c.wbits, r.path, r.block, r.k_slices,
        r.time_us, r.gbps, r.fraction * 100, r.meets() ? "" : r.binding_stall);
  }
  return s;
}

}  // namespace ltc::report
