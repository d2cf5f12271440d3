#include "sim/energy.h"

#include "common/error.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <map>

namespace ltc::sim {

namespace {

// The lmma instructions' precisions in `t`: "act wN table" -> one of them.
std::map<std::string, traces::LmmaOp> lmma_precisions(const traces::Trace& t) {
  std::map<std::string, traces::LmmaOp> out;
  for (const auto& k : t.kernels) {
    for (const auto& in : k.program) {
      if (in.op != traces::Opcode::kLmma) continue;
      const traces::LmmaOp& op = in.lmma;
      out.emplace(fmt::format("{} w{} table {}", golden::dtype_name(op.act), op.wbits,
                              golden::dtype_name(op.table())),
                  op);
    }
  }
  return out;
}

// The fallback LUT figure: one SM's tensor power over its share of the W1 rate (W x s / (op/s) =
// J per op), the rate at which a tile retires one op per weight plane. 0 when the GPU lacks either.
void power_fallback(const hw::GpuConfig& gpu, const std::string& why, EnergyCoefficients& c) {
  if (!gpu.has_lut_tensor() || gpu.tensor_power_w_per_sm <= 0 || gpu.lut_tensor->w1_tops <= 0) {
    c.lmma_source = why + "; no tensor_power_w_per_sm either: LUT tile energy unknown";
    return;
  }
  const double plane_ops_per_s_per_sm = gpu.lut_tensor->w1_tops * 1e12 / double(gpu.sms);
  c.lmma_pj_per_plane_op = gpu.tensor_power_w_per_sm / plane_ops_per_s_per_sm * 1e12;
  c.lmma_source = fmt::format(
      "{}; fallback: tensor_power_w_per_sm {:g} W over one SM's W1 rate {:.4g} TOP/s (the "
      "roofline's figure)",
      why, gpu.tensor_power_w_per_sm, plane_ops_per_s_per_sm / 1e12);
}

}  // namespace

EnergyCoefficients energy_coefficients(const hw::GpuConfig& gpu, const traces::Trace* trace) {
  const hw::EnergyFigures& f = gpu.energy;
  EnergyCoefficients c;
  c.mma_pj_per_op = f.mma_pj_per_op;
  c.cuda_pj_per_op = f.cuda_pj_per_op;
  c.smem_pj_per_byte = f.smem_pj_per_byte;
  c.l1_pj_per_byte = f.l1_pj_per_byte;
  c.l2_pj_per_byte = f.l2_pj_per_byte;
  c.dram_pj_per_byte = gpu.dram_pj_per_byte;
  c.static_w = f.static_w;
  c.source = f.source;
  if (!gpu.has_lut_tensor()) return c;
  if (trace == nullptr) {
    power_fallback(gpu, "no trace to take the lmma precision from", c);
    return c;
  }
  const auto precisions = lmma_precisions(*trace);
  if (precisions.empty()) return c;  // no lmma: the LUT figure charges nothing
  if (precisions.size() > 1) {
    std::string list;
    for (const auto& [name, op] : precisions) list += (list.empty() ? "" : ", ") + name;
    power_fallback(gpu, "the trace's lmma instructions have several precisions (" + list + ")", c);
    return c;
  }
  const traces::LmmaOp& op = precisions.begin()->second;
  hw::TensorCoreConfig tile;
  try {
    tile = gpu.lut_tile(op.act, op.wbits);
    tile.table = op.table();
    tile.validate();
  } catch (const InputError& e) {
    power_fallback(gpu, e.what(), c);
    return c;
  }
  const hw::LutTileEnergy* entry = f.lut_entry(tile.id());
  if (entry == nullptr) {
    power_fallback(gpu, "no energy.lut entry for tile " + tile.id() + " in the GPU file", c);
    return c;
  }
  c.lmma_tile = entry->tile;
  c.lmma_pj_per_plane_op = entry->pj_per_op / op.wbits;
  c.lmma_source = fmt::format("energy.lut entry {}: {:.4g} pJ per op over {} weight planes ({})",
                              entry->tile, entry->pj_per_op, op.wbits, entry->source);
  return c;
}

Energy kernel_energy(const KernelStats& k, const EnergyCoefficients& c) {
  constexpr double kPj = 1e-12;
  Energy e;
  e.time_s = k.time_ms() * 1e-3;
  auto part = [&](double& out, double amount, double pj, const char* name) {
    if (amount <= 0) return;
    if (pj <= 0) {
      e.unknown.push_back(name);
      return;
    }
    out += amount * pj * kPj;
  };
  part(e.lmma_j, double(k.lmma_plane_ops), c.lmma_pj_per_plane_op, "lmma");
  e.tensor_j = e.lmma_j;
  part(e.tensor_j, double(k.tensor_ops - k.lmma_ops), c.mma_pj_per_op, "mma");
  part(e.cuda_j, double(k.thread_ops), c.cuda_pj_per_op, "cuda");
  part(e.smem_j, double(k.mem.smem_bytes), c.smem_pj_per_byte, "smem");
  part(e.l1_j, 32.0 * double(k.mem.l1_sectors), c.l1_pj_per_byte, "l1");
  part(e.l2_j, double(k.mem.l2_read_bytes + k.mem.l2_write_bytes), c.l2_pj_per_byte, "l2");
  part(e.dram_j, double(k.mem.dram_read_bytes + k.mem.dram_write_bytes), c.dram_pj_per_byte,
       "dram");
  part(e.static_j, e.time_s, c.static_w * 1e12, "static");
  return e;
}

Energy run_energy(const RunStats& r, const EnergyCoefficients& c) {
  // total(): every kernel's counters and the end write-back, over the run's time (gaps included).
  return kernel_energy(r.total(), c);
}

void to_json(nlohmann::json& j, const Energy& e) {
  j = nlohmann::json{
      {"tensor_j", e.tensor_j},     {"lmma_j", e.lmma_j},     {"cuda_j", e.cuda_j},
      {"smem_j", e.smem_j},         {"l1_j", e.l1_j},         {"l2_j", e.l2_j},
      {"dram_j", e.dram_j},         {"static_j", e.static_j}, {"total_j", e.total_j()},
      {"average_w", e.average_w()}, {"unknown", e.unknown}};
}

void to_json(nlohmann::json& j, const EnergyCoefficients& c) {
  j = nlohmann::json{{"mma_pj_per_op", c.mma_pj_per_op},
                     {"lmma_pj_per_plane_op", c.lmma_pj_per_plane_op},
                     {"cuda_pj_per_op", c.cuda_pj_per_op},
                     {"smem_pj_per_byte", c.smem_pj_per_byte},
                     {"l1_pj_per_byte", c.l1_pj_per_byte},
                     {"l2_pj_per_byte", c.l2_pj_per_byte},
                     {"dram_pj_per_byte", c.dram_pj_per_byte},
                     {"static_w", c.static_w},
                     {"lmma_tile", c.lmma_tile},
                     {"lmma_source", c.lmma_source},
                     {"source", c.source}};
}

}  // namespace ltc::sim
