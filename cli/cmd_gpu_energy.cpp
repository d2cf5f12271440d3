// `ltc gpu-energy`: a GPU file's LUT-tile energy per op (energy.lut, hw::LutTileEnergy) from the
// PPA flow's results, never typed by hand: each `ltc ppa --json` record (or `ltc sweep` results
// store record) of one of the GPU's LUT tiles (hw::GpuConfig::lut_tile: its core at an activation
// type and weight width) becomes the entry for that tile, its pJ per op the flow's power x clock /
// ops per cycle (1 / TOPS/W), optionally at another node (synth::scale_to_node), its source
// naming the record. The simulator charges the entry of the trace's precision (sim/energy.h,
// docs/energy.md).
#include "cli/command.h"
#include "cli/options.h"
#include "common/error.h"
#include "common/file_io.h"
#include "common/json_fields.h"
#include "model/golden/dtype.h"
#include "model/hw/gpu.h"
#include "synth/cell_library.h"
#include "synth/ppa.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <memory>
#include <sstream>

namespace ltc::cli {
namespace {

struct GpuEnergyFlags {
  std::string gpu;
  std::vector<std::string> ppa;
  double scale_nm = 0, scale_vdd = 0;
  std::string out;
  bool json = false;
};

struct Entry {
  hw::LutTileEnergy e;
  std::string where;  // file:line of the record
};

// A record's PPA result and configuration: an `ltc ppa --json` object (the result's fields at the
// top, "config" beside them) or a results-store line ({"config", "status", "result"}). nullopt
// for a store record of a failed point.
std::optional<std::pair<nlohmann::json, hw::TensorCoreConfig>> ppa_record(
    const nlohmann::json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("config")) {
    throw InputError(where +
                     ": not a PPA result (an `ltc ppa --json` object or an `ltc sweep` "
                     "results.jsonl record, each with 'config')");
  }
  if (j.contains("status") && j["status"] != "ok") return std::nullopt;
  const nlohmann::json& r = j.contains("result") ? j["result"] : j;
  hw::TensorCoreConfig c;
  try {
    hw::from_json(j["config"], c);
    c.validate();
  } catch (const InputError& e) {
    throw InputError(where + ": config: " + e.what());
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where + ": config: " + plain_json_error(e));
  }
  for (const char* f : {"power_mw", "internal_mw", "switching_mw", "clock_ns", "ops_per_cycle",
                        "area_um2", "delay_ns"}) {
    if (!r.contains(f) || !r[f].is_number()) {
      throw InputError(where + ": result field '" + f + "' is missing or not a number");
    }
  }
  if (!(r["clock_ns"].get<double>() > 0) || !(r["ops_per_cycle"].get<double>() > 0) ||
      !(r["power_mw"].get<double>() > 0)) {
    throw InputError(where + ": result: clock_ns, ops_per_cycle and power_mw must be > 0");
  }
  return std::pair{r, c};
}

// The entry of one record: pJ per op at the record's node, or scaled to --scale-to-nm.
hw::LutTileEnergy entry_of(const nlohmann::json& r, const hw::TensorCoreConfig& c,
                           const GpuEnergyFlags& o, const std::string& where) {
  const std::string lib_name = r.value("lib", std::string("osu018"));
  const synth::CellLibrary& lib = synth::cell_library(lib_name);
  const double ops = r["ops_per_cycle"].get<double>();
  hw::LutTileEnergy e;
  e.tile = c.id();
  std::string scaled;
  if (o.scale_nm > 0) {
    synth::PpaResult p;
    p.area_um2 = r["area_um2"].get<double>();
    p.delay_ns = r["delay_ns"].get<double>();
    p.clock_ns = r["clock_ns"].get<double>();
    p.internal_mw = r["internal_mw"].get<double>();
    p.switching_mw = r["switching_mw"].get<double>();
    p.ops_per_cycle = ops;
    const synth::ScaledFigures f =
        synth::scale_to_node(p, synth::NodeScaling{lib.node_nm, lib.vdd, o.scale_nm, o.scale_vdd});
    e.pj_per_op = f.power_mw * f.clock_ns / ops;  // mW x ns = pJ per cycle
    scaled = "; scaled: " + f.model;
  } else {
    e.pj_per_op = r["power_mw"].get<double>() * r["clock_ns"].get<double>() / ops;
  }
  e.source = fmt::format(
      "PPA flow ({}): {:.6g} mW at {:.6g} ns, {:g} ops/cycle, activity {}, power {}; {}{}",
      lib.description, r["power_mw"].get<double>(), r["clock_ns"].get<double>(), ops,
      r.contains("activity") && r["activity"].is_object()
          ? r["activity"].value("kind", std::string("?"))
          : r.value("activity_kind", std::string("?")),
      r.value("power_model", std::string("?")), where, scaled);
  return e;
}

void run(const GpuEnergyFlags& o) {
  if (o.scale_nm < 0 || (o.scale_nm > 0 && o.scale_vdd <= 0) ||
      (o.scale_nm == 0 && o.scale_vdd != 0)) {
    throw InputError(
        "--scale-to-nm N --scale-vdd V: both > 0 together (e.g. --scale-to-nm 7 "
        "--scale-vdd 0.75), or neither");
  }
  const auto chain = hw::gpu_file_chain(o.gpu);
  const std::string gpu_file = chain.front().first;
  std::vector<std::string> inputs = o.ppa;
  inputs.push_back(gpu_file);
  if (!o.out.empty()) check_output_path(o.out, "--out", inputs);
  const hw::GpuConfig gpu = hw::load_gpu(o.gpu);
  if (!gpu.has_lut_tensor()) {
    throw InputError("--gpu: gpu '" + gpu.name +
                     "' has no LUT tensor cores (no lut_tensor section): its energy.lut "
                     "entries would apply to no tile");
  }
  std::map<std::string, Entry> entries;
  int records = 0, failed = 0, other = 0;
  for (const std::string& path : o.ppa) {
    std::istringstream lines(read_input_file(path));
    int n = 0;
    for (std::string line; std::getline(lines, line);) {
      ++n;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const std::string where = fmt::format("{}:{}", path, n);
      const auto rec = ppa_record(parse_json(line, where), where);
      ++records;
      if (!rec) {
        ++failed;
        continue;
      }
      const auto& [r, c] = *rec;
      // One of the GPU's LUT tiles: its core at this record's activations and weight planes.
      bool ours = false;
      try {
        hw::TensorCoreConfig tile = gpu.lut_tile(c.act, c.wbits);
        tile.table = c.table;
        ours = c.design != hw::TensorCoreDesign::kMac && tile.id() == c.id();
      } catch (const InputError&) {
        ours = false;  // activations the GPU's tables do not take
      }
      if (!ours) {
        ++other;
        continue;
      }
      Entry e{entry_of(r, c, o, where), where};
      const auto it = entries.find(e.e.tile);
      if (it != entries.end()) {
        throw InputError(where + ": a second result for tile " + e.e.tile +
                         " (the first: " + it->second.where +
                         "); give one result per tile (e.g. one library's results store)");
      }
      entries.emplace(e.e.tile, e);
    }
  }
  if (entries.empty()) {
    throw InputError(fmt::format(
        "--ppa: no result for a LUT tile of gpu '{}' ({} at an activation of lut_tensor.acts) "
        "among {} records ({} failed, {} other tiles); run e.g. ltc ppa --gpu {} --json",
        gpu.name, gpu.lut_tensor->core.id(), records, failed, other, o.gpu));
  }

  // The GPU's own file as written (its base not merged), energy.lut entries replaced by tile.
  nlohmann::ordered_json file =
      parse_json<nlohmann::ordered_json>(read_input_file(gpu_file), gpu_file);
  nlohmann::ordered_json& lut = file["energy"]["lut"];
  if (!lut.is_array()) lut = nlohmann::ordered_json::array();
  for (const auto& [tile, e] : entries) {
    nlohmann::ordered_json row = {
        {"tile", e.e.tile}, {"pj_per_op", e.e.pj_per_op}, {"source", e.e.source}};
    bool replaced = false;
    for (auto& old : lut) {
      if (old.value("tile", std::string()) == tile) {
        old = row;
        replaced = true;
      }
    }
    if (!replaced) lut.push_back(row);
  }
  const std::string text = file.dump(1) + "\n";
  // The new file loads as a GPU where it is written (its base resolved from that folder).
  try {
    hw::parse_gpu_json(text, o.out.empty() ? gpu_file : o.out);
  } catch (const InputError& e) {
    throw InputError("--out: the GPU file would not load there: " + std::string(e.what()) +
                     " (a relative base resolves from the file's folder)");
  }
  if (!o.out.empty()) write_text_atomic(o.out, text);

  if (o.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& [tile, e] : entries) {
      rows.push_back({{"tile", tile}, {"pj_per_op", e.e.pj_per_op}, {"source", e.e.source}});
    }
    fmt::print("{}\n", nlohmann::json{{"gpu", gpu.name},
                                      {"gpu_file", gpu_file},
                                      {"entries", rows},
                                      {"records", records},
                                      {"failed_records", failed},
                                      {"other_tiles", other},
                                      {"out", o.out.empty() ? nlohmann::json(nullptr)
                                                            : nlohmann::json(o.out)}}
                           .dump());
    return;
  }
  fmt::print("gpu {} ({}): {} LUT tile entries from {} PPA records ({} failed, {} other tiles)\n",
             gpu.name, gpu_file, entries.size(), records, failed, other);
  for (const auto& [tile, e] : entries) {
    fmt::print("  {:<40} {:.6g} pJ/op  {}\n", tile, e.e.pj_per_op, e.e.source);
  }
  if (o.out.empty()) {
    fmt::print("(no --out: nothing written)\n");
  } else {
    fmt::print("wrote {}\n", o.out);
  }
}

CommandRegistrar reg{
    63, [](CLI::App& app) {
      auto o = std::make_shared<GpuEnergyFlags>();
      CLI::App* sub = app.add_subcommand(
          "gpu-energy",
          "Write a GPU file's LUT-tile energy per op (energy.lut) from PPA flow results");
      add_gpu_option(sub, o->gpu, "the GPU whose file gets the entries: ")->required();
      sub->add_option("--ppa", o->ppa,
                      "PPA results: files of `ltc ppa --json` lines or an `ltc sweep` "
                      "results.jsonl; records of the GPU's LUT tiles become entries, others "
                      "are counted and skipped")
          ->required();
      sub->add_option("--scale-to-nm", o->scale_nm,
                      "the entries at this node, scaled from the records' library by classical "
                      "scaling (ltc ppa --scale-to-nm; needs --scale-vdd); default: the "
                      "library's node");
      sub->add_option("--scale-vdd", o->scale_vdd, "supply voltage at --scale-to-nm (V)");
      sub->add_option("--out", o->out,
                      "write the GPU file (as written, its base not merged) with the entries "
                      "replaced by tile; default: print them only");
      sub->add_flag("--json", o->json, "print one JSON object");
      set_examples(sub, {"ltc ppa --gpu a100-lut4x --json > lut4x-ppa.jsonl",
                         "ltc gpu-energy --gpu a100-lut4x --ppa lut4x-ppa.jsonl --scale-to-nm 7 "
                         "--scale-vdd 0.75 --out my-lut4x.json",
                         "ltc gpu-energy --gpu a100-lut4x --ppa DIR/ppa/dse/results.jsonl"});
      sub->callback([o] { run(*o); });
    }};

}  // namespace
}  // namespace ltc::cli
