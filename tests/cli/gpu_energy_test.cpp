// The LUT tile's energy per op from the PPA flow to the simulator: `ltc ppa --gpu` synthesizes a
// GPU's own tile, `ltc gpu-energy` turns its record into the GPU file's energy.lut entry (checked
// against the record's own figures and, scaled, against classical scaling by hand), and `ltc sim`
// charges a GEMM of that precision at it. A small LUT tile (M1N4K4, assumed activity), synthesized
// twice, keeps the flow to seconds.
#include "tests/cli/cli_run.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace ltc {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::CliRun;
using test_support::run;

using test_support::expect_bad_input;

fs::path scratch() {
  return test_support::scratch_dir("gpu_energy");
}

std::string write_file(const std::string& name, const std::string& text) {
  return test_support::write_file(scratch(), name, text);
}

json json_of(const std::string& args) {
  const CliRun r = run(args);
  EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
  return r.code == 0 ? json::parse(r.out) : json();
}

// The A100-LUT-4X with an M1N4K4 LUT tile (int8 activations, 2 weight planes).
std::string tiny_gpu() {
  return write_file("tiny-lut.json", R"({"base": "a100-lut4x", "name": "tiny-lut",
    "lut_tensor": {"core": {"design": "lut", "m": 1, "n": 4, "k": 4, "act": "int8", "wbits": 2}}})");
}

// `ltc ppa --gpu tiny-lut --activity assumed --json`, run once per process.
const std::string& tiny_record() {
  static const std::string out = [] {
    const CliRun r = run("ppa --gpu " + tiny_gpu() + " --activity assumed --json");
    EXPECT_EQ(r.code, 0) << r.err;
    return r.out;
  }();
  return out;
}

TEST(PpaGpu, SynthesizesTheGpusTileAndNamesTheGpuAndOverrides) {
  const std::string gpu = tiny_gpu();
  const json j = json::parse(tiny_record());
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["id"], "lut-m1n4k4-int8-w2-tint16-int32");
  EXPECT_EQ(j["gpu"], "tiny-lut");
  EXPECT_EQ(j["gpu_set"], "");
  EXPECT_EQ(j["defaults"]["--acts"], "int8");  // the tile's own precision, stated
  EXPECT_EQ(j["defaults"]["--weights"], "int2");
  EXPECT_DOUBLE_EQ(j["ops_per_cycle"].get<double>(), 2.0 * 1 * 4 * 4 / 2);
  // --gpu-set changes the tile; a field the tile does not read is refused.
  const CliRun text =
      run("ppa --gpu " + gpu + " --activity assumed --gpu-set lut_tensor.core.k=2 --acts fp16");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("lut-m1n4k2-fp16-w2-fp32"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("tiny-lut's LUT tile (lut_tensor.core), overrides: --gpu-set "
                          "lut_tensor.core.k=2"),
            std::string::npos)
      << text.out;
  expect_bad_input("ppa --gpu " + gpu + " --gpu-set sms=10", "field 'sms' changes nothing");
  expect_bad_input("ppa --gpu a100", "has no LUT tensor cores");
  expect_bad_input("ppa --gpu " + gpu + " --acts fp32", "--acts");
  fs::remove_all(scratch());
}

TEST(GpuEnergy, EntriesAreThePpaFlowsFigureAndTheSimulatorChargesThem) {
  const std::string gpu = tiny_gpu();
  const json rec = json::parse(tiny_record());
  // A results-store record of a MAC tile, not one of the GPU's LUT tiles: skipped and counted.
  const std::string mac =
      R"({"config": {"design": "mac", "m": 1, "n": 4, "k": 4, "act": "int8"}, "status": "ok", )"
      R"("result": {"power_mw": 1, "internal_mw": 1, "switching_mw": 0, "clock_ns": 1, )"
      R"("ops_per_cycle": 32, "area_um2": 1, "delay_ns": 1}})"
      "\n";
  const std::string records = write_file("ppa.jsonl", tiny_record() + mac);

  const std::string out = (scratch() / "tiny-lut-energy.json").string();
  const json g =
      json_of("gpu-energy --gpu " + gpu + " --ppa " + records + " --out " + out + " --json");
  ASSERT_EQ(g["entries"].size(), 1u);
  EXPECT_EQ(g["other_tiles"], 1);
  const double pj = rec["power_mw"].get<double>() * rec["clock_ns"].get<double>() /
                    rec["ops_per_cycle"].get<double>();
  bool found = false;
  for (const auto& e : g["entries"]) {
    if (e["tile"] != "lut-m1n4k4-int8-w2-tint16-int32") continue;
    found = true;
    EXPECT_NEAR(e["pj_per_op"].get<double>(), pj, 1e-12 * pj);
    EXPECT_NEAR(e["pj_per_op"].get<double>(), 1 / rec["tops_per_w"].get<double>(), 1e-9 * pj);
    EXPECT_NE(e["source"].get<std::string>().find(records + ":1"), std::string::npos);
  }
  EXPECT_TRUE(found) << g.dump();
  EXPECT_EQ(g["records"], 2);

  // A results-store record of the same run reads the same; scaled to 45 nm at 0.9 V, the dynamic
  // energy x (45/180) x (0.9/1.8)^2 (classical scaling, leakage left out).
  json store = {{"config", rec["config"]}, {"status", "ok"}, {"result", rec}};
  const std::string stored = write_file("results.jsonl", store.dump() + "\n");
  const json s = json_of("gpu-energy --gpu " + gpu + " --ppa " + stored +
                         " --scale-to-nm 45 --scale-vdd 0.9 --json");
  ASSERT_EQ(s["entries"].size(), 1u);
  const double dynamic = (rec["internal_mw"].get<double>() + rec["switching_mw"].get<double>()) *
                         rec["clock_ns"].get<double>() / rec["ops_per_cycle"].get<double>();
  EXPECT_NEAR(s["entries"][0]["pj_per_op"].get<double>(), dynamic * 0.25 * 0.25, 1e-9 * dynamic);

  // ltc show gpu lists the entry whole, with its source.
  const CliRun show = run("show gpu " + out);
  EXPECT_NE(show.out.find("lut-m1n4k4-int8-w2-tint16-int32"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("PPA flow (osu018"), std::string::npos) << show.out;

  // The written file is a GPU whose W_INT2 A_INT8 GEMMs the simulator charges at the entry.
  const std::string trace = (scratch() / "g.lmt").string();
  const json c =
      json_of("compile gemm --m 16 --n 64 --k 64 --gpu " + out + " --out " + trace + " --json");
  EXPECT_EQ(c["defaults"]["--weights"], "int2");  // the GPU's tile precision
  const json sim = json_of("sim " + trace + " --gpu " + out + " --json");
  const json& coef = sim["energy"]["coefficients"];
  EXPECT_EQ(coef["lmma_tile"], "lut-m1n4k4-int8-w2-tint16-int32");
  EXPECT_NEAR(coef["lmma_pj_per_plane_op"].get<double>(), pj / 2, 1e-9 * pj);
  double plane_ops = 0;
  for (const auto& k : sim["kernels"]) plane_ops += k["lmma_plane_ops"].get<double>();
  ASSERT_GT(plane_ops, 0);
  EXPECT_NEAR(sim["energy"]["lmma_j"].get<double>(), plane_ops * pj / 2 * 1e-12,
              1e-6 * plane_ops * pj * 1e-12);

  // Bad input: nothing of the GPU's tile, the GPU file as the output, a GPU without LUT cores,
  // scaling half given.
  expect_bad_input("gpu-energy --gpu " + gpu + " --ppa " + write_file("mac.jsonl", mac),
                   "no result for a LUT tile");
  expect_bad_input("gpu-energy --gpu " + gpu + " --ppa " + records + " --out " + gpu,
                   "is the input file");
  expect_bad_input("gpu-energy --gpu a100 --ppa " + records, "has no LUT tensor cores");
  expect_bad_input("gpu-energy --gpu " + gpu + " --ppa " + records + " --scale-to-nm 7",
                   "--scale-to-nm N --scale-vdd V");
  expect_bad_input("gpu-energy --gpu " + gpu + " --ppa " + records + " " + records,
                   "a second result for tile");
  fs::remove_all(scratch());
}

}  // namespace
}  // namespace ltc
