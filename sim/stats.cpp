#include "sim/stats.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace ltc::sim {

std::string_view stall_name(Stall s) {
  switch (s) {
    case Stall::kNoWarp:
      return "no_warp";
    case Stall::kBarrier:
      return "barrier";
    case Stall::kAsyncWait:
      return "async_wait";
    case Stall::kFragments:
      return "scoreboard_fragments";
    case Stall::kAccumulator:
      return "scoreboard_accumulator";
    case Stall::kValues:
      return "scoreboard_values";
    case Stall::kUnitBusy:
      break;
  }
  if (int(s) >= int(Stall::kUnitBusy) && int(s) < kStallKinds) {
    return kUnits[size_t(int(s) - int(Stall::kUnitBusy))].busy_name;
  }
  return "?";
}

KernelStats& KernelStats::operator+=(const KernelStats& o) {
  for_each_counter([](auto& a, const auto& b) { a += b; }, *this, o);
  return *this;
}

double KernelStats::tensor_utilization() const {
  const double denom = double(cycles) * double(tensor_cores);
  return denom > 0 ? double(tensor_busy_cycles) / denom : 0;
}

uint64_t KernelStats::warp_instructions() const {
  uint64_t n = 0;
  for (auto c : issued) n += c;
  return n;
}

Stall KernelStats::binding_stall() const {
  size_t best = 0;
  for (size_t i = 1; i < stall_cycles.size(); ++i) {
    if (stall_cycles[i] > stall_cycles[best]) best = i;
  }
  return Stall(best);
}

double KernelStats::achieved_occupancy() const {
  const double denom = double(cycles) * double(sms) * double(max_warps_per_sm);
  return denom > 0 ? double(warp_cycles) / denom : 0;
}

KernelStats RunStats::total() const {
  KernelStats t;
  t.name = "total";
  t.cycles = cycles;
  for (const auto& k : kernels) {
    t += k;
    t.tensor_cores = k.tensor_cores;
    t.sms = k.sms;
    t.max_warps_per_sm = k.max_warps_per_sm;
  }
  t.mem.dram_write_bytes += end_writeback_bytes;
  const double ms = time_ms();
  t.clock_ghz = ms > 0 ? double(cycles) / (ms * 1e6) : clock_ghz;
  return t;
}

double RunStats::time_ms() const {
  double ms = 0;
  int64_t kernel_cycles = 0;
  for (const auto& k : kernels) {
    ms += k.time_ms();
    kernel_cycles += k.cycles;
  }
  if (clock_ghz > 0) ms += double(std::max<int64_t>(cycles - kernel_cycles, 0)) / (clock_ghz * 1e6);
  return ms;
}

void to_json(nlohmann::json& j, const KernelStats& k) {
  using nlohmann::json;
  const double secs = k.time_ms() * 1e-3;
  json issued = json::object();
  for (int op = 1; op <= traces::kOpcodeCount; ++op) {
    const auto o = traces::Opcode(op);
    if (o == traces::Opcode::kLoop || o == traces::Opcode::kEndLoop) continue;
    issued[std::string(traces::opcode_name(o))] = k.issued[size_t(op)];
  }
  json stalls = json::object();
  for (int s = 0; s < kStallKinds; ++s) {
    stalls[std::string(stall_name(Stall(s)))] = k.stall_cycles[size_t(s)];
  }
  const MemoryStats& m = k.mem;
  auto rate = [&](uint64_t hits, uint64_t all) { return all ? double(hits) / double(all) : 0.0; };
  auto gbps = [&](uint64_t bytes) { return secs > 0 ? double(bytes) / secs / 1e9 : 0.0; };
  j = json{{"name", k.name},
           {"gemm", k.gemm},
           {"start_cycle", k.start_cycle},
           {"cycles", k.cycles},
           {"time_ms", secs * 1e3},
           {"clock_ghz", k.clock_ghz},
           {"blocks", k.blocks},
           {"warps", k.warps},
           {"blocks_per_sm", k.blocks_per_sm},
           {"block_residency_cycles",
            k.timed_blocks ? double(k.timed_block_cycles) / double(k.timed_blocks) : 0.0},
           {"occupancy_limit", k.occupancy_limit},
           {"achieved_occupancy", k.achieved_occupancy()},
           {"instructions", issued},
           {"simt_instructions", k.simt_instructions},
           {"thread_ops", k.thread_ops},
           {"tensor_ops", k.tensor_ops},
           {"lmma_ops", k.lmma_ops},
           {"lmma_plane_ops", k.lmma_plane_ops},
           {"tensor_tops", secs > 0 ? double(k.tensor_ops) / secs / 1e12 : 0.0},
           {"tensor_utilization", k.tensor_utilization()},
           {"issue_cycles", k.issue_cycles},
           {"stall_cycles", stalls},
           {"memory",
            {{"smem_bytes", m.smem_bytes},
             {"smem_wavefronts", m.smem_wavefronts},
             {"bank_conflict_cycles", m.bank_conflict_cycles},
             {"l1_hit_rate", rate(m.l1_hit_sectors, m.l1_sectors)},
             {"l1_sectors", m.l1_sectors},
             {"l2_hit_rate", rate(m.l2_hit_sectors, m.l2_sectors)},
             {"l2_read_bytes", m.l2_read_bytes},
             {"l2_write_bytes", m.l2_write_bytes},
             {"l2_gbps", gbps(m.l2_read_bytes + m.l2_write_bytes)},
             {"dram_read_bytes", m.dram_read_bytes},
             {"dram_write_bytes", m.dram_write_bytes},
             {"multicast_bytes", m.multicast_bytes},
             {"dram_gbps", gbps(m.dram_read_bytes + m.dram_write_bytes)}}}};
  if (!k.sample.method.empty()) {
    const SampleInfo& s = k.sample;
    json sj = {{"method", s.method},
               {"runs", s.runs},
               {"simulated_instructions", s.simulated_instructions},
               {"error_mean", s.error_mean},
               {"error_max", s.error_max}};
    if (!s.repeats.empty()) sj["repeats"] = s.repeats;
    if (s.loop_trips > 0) {
      sj["loop_trips"] = s.loop_trips;
      sj["loop_trips_run"] = {s.loop_trips_run[0], s.loop_trips_run[1]};
    }
    if (s.waves > 0) {
      sj["waves"] = s.waves;
      sj["waves_run"] = s.waves_run;
    }
    if (s.slice > 1) sj["slice"] = s.slice;
    j["sample"] = sj;
  }
}

void to_json(nlohmann::json& j, const RunStats& r) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& k : r.kernels) {
    nlohmann::json kj;
    to_json(kj, k);
    kernels.push_back(kj);
  }
  nlohmann::json total;
  to_json(total, r.total());
  // The GEMM kernels alone (the linear layers of a model step), each at its own clock.
  int64_t gemm_cycles = 0;
  double gemm_ms = 0;
  for (const auto& k : r.kernels) {
    if (!k.gemm) continue;
    gemm_cycles += k.cycles;
    gemm_ms += k.time_ms();
  }
  j = nlohmann::json{{"cycles", r.cycles},       {"time_ms", r.time_ms()},
                     {"clock_ghz", r.clock_ghz}, {"interrupted", r.interrupted},
                     {"wall_s", r.wall_s},       {"gemm_cycles", gemm_cycles},
                     {"gemm_time_ms", gemm_ms},  {"kernels", kernels},
                     {"total", total},           {"end_writeback_bytes", r.end_writeback_bytes}};
  if (!r.sample_method.empty()) {
    j["sample"] = {{"method", r.sample_method},
                   {"simulated_instructions", r.sample_simulated_instructions},
                   {"error_expected", r.sample_error_expected},
                   {"error_max", r.sample_error_max}};
  }
  if (r.host.on) {
    j["host_profile"] = {
        {"quanta", r.host.quanta},         {"batches", r.host.batches},
        {"batch_s", r.host.batch_s},       {"serial_s", r.host.serial_s(r.wall_s)},
        {"l2_chain_s", r.host.l2_chain_s}, {"l2_serve_s", r.host.l2_serve_s},
        {"l2_wait_s", r.host.l2_wait_s},   {"thread_busy_s", r.host.thread_busy_s}};
  }
  if (r.rtl_tile_lmmas > 0) {
    j["rtl"] = {{"tile_lmmas", r.rtl_tile_lmmas},
                {"tile_cycles", r.rtl_tile_cycles},
                {"computed_lmmas", r.rtl_computed_lmmas}};
  }
  if (r.functional) {
    nlohmann::json checks = nlohmann::json::array();
    for (const auto& c : r.functional_checks) {
      checks.push_back({{"kernel", c.kernel},
                        {"skipped", c.skipped},
                        {"outputs", c.outputs},
                        {"mismatches", c.mismatches}});
    }
    j["functional"] = {{"outputs", r.functional_outputs},
                       {"mismatches", r.functional_mismatches},
                       {"gemms", checks}};
  }
}

}  // namespace ltc::sim
