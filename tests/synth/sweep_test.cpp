// The sweep engine: spec expansion, the resumable results store, failed points, reports (CSV,
// SVG, ratios, crossovers). A stand-in runner keeps these tests independent of tool run times.
#include "synth/sweep.h"
#include "common/error.h"
#include "common/file_io.h"
#include "synth/yosys_flow.h"
#include "synth_test_util.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ltc::synth {
namespace {

using nlohmann::json;
using test::scratch_dir;

json tiny_spec() {
  return json::parse(R"({
    "name": "tiny", "clock_ns": 10, "activity": "assumed",
    "grid": [
      {"label": "LUT", "design": "lut", "m": 1, "n": [1, 2], "k": 4, "act": "int8", "wbits": [1, 2]},
      {"label": "MAC", "design": "mac", "m": 1, "n": 1, "k": 4, "act": "int8", "wbits": [1, 2]}
    ],
    "plots": [{"x": "wbits", "y": "area_um2", "series": ["label", "n"]}],
    "ratios": [{"name": "mac/lut area", "metric": "area_um2",
                "num": {"design": "mac"}, "den": {"design": "lut", "n": 1, "wbits": 1}, "paper": 3}]
  })");
}

// Area = 100 * n * k (+ 300 for MAC), power = area / 100; fails for ids in `fail`.
struct FakeRunner {
  std::atomic<int> calls{0};
  std::string fail;
  PpaResult operator()(const hw::TensorCoreConfig& c, const PpaOptions& o) {
    ++calls;
    if (!fail.empty() && c.id() == fail) throw std::runtime_error("yosys failed: fake");
    PpaResult r;
    r.id = c.id();
    r.area_um2 = 100.0 * c.shape.n * c.shape.k + (c.design == hw::TensorCoreDesign::kMac ? 300 : 0);
    r.power_mw = r.area_um2 / 100;
    r.delay_ns = 2;
    r.clock_ns = o.clock_ns;
    r.ops_per_cycle = c.ops_per_cycle();
    r.tops = r.ops_per_cycle / r.clock_ns / 1000;
    r.tops_per_mm2 = r.tops / (r.area_um2 * 1e-6);
    r.tops_per_w = r.tops / (r.power_mw * 1e-3);
    return r;
  }
};

SweepOptions options(const std::string& dir, FakeRunner& fake, int jobs = 2) {
  SweepOptions o;
  o.out_dir = dir;
  o.jobs = jobs;
  o.runner = [&fake](const hw::TensorCoreConfig& c, const PpaOptions& p) { return fake(c, p); };
  o.rtl_hash = [](const hw::TensorCoreConfig&) { return std::string("0123456789abcdef"); };
  return o;
}

TEST(SweepSpec, GridExpandsToTheCartesianProduct) {
  const SweepSpec s = SweepSpec::parse(tiny_spec(), "tiny.json");
  EXPECT_EQ(s.points.size(), 6u);  // LUT 2 n x 2 wbits + MAC 2 wbits
  EXPECT_EQ(s.points[0].config.id(), "lut-m1n1k4-int8-w1-tint16-int32");
  EXPECT_DOUBLE_EQ(s.clock_ns, 10);
}

TEST(SweepSpec, WhereKeepsOnlyShapesOfTheGivenVolume) {
  const SweepSpec s = SweepSpec::parse(
      json::parse(R"({"grid": [{"design": "lut", "m": [1, 2, 4], "n": [8, 16, 32, 64],
                     "k": [2, 4], "act": "fp16", "where": {"mnk": 128}}]})"),
      "x.json");
  // m*n*k = 128: (1,64,2) (2,32,2) (4,16,2) (1,32,4) (2,16,4) (4,8,4).
  EXPECT_EQ(s.points.size(), 6u);
  for (const auto& p : s.points) {
    EXPECT_EQ(p.config.shape.m * p.config.shape.n * p.config.shape.k, 128);
  }
}

// The InputError a spec text raises as "bad.json", or "no error".
std::string msg(const char* text) {
  try {
    SweepSpec::parse(json::parse(text), "bad.json");
  } catch (const InputError& e) {
    return std::string(e.what());
  }
  return std::string("no error");
}

TEST(SweepSpec, BadSpecsNameTheProblem) {
  EXPECT_NE(msg(R"({"grid": []})").find("grid"), std::string::npos);
  EXPECT_NE(msg(R"({"grid": [{"design": "lut", "m": 1, "n": 1, "act": "fp16"}]})").find("'k'"),
            std::string::npos);
  EXPECT_NE(
      msg(R"({"grid": [{"design": "foo", "m": 1, "n": 1, "k": 4, "act": "fp16"}]})").find("foo"),
      std::string::npos);
  EXPECT_NE(msg(R"({"activity": "guess", "grid": [{"design": "lut", "m": 1, "n": 1, "k": 4,
                "act": "fp16"}]})")
                .find("activity"),
            std::string::npos);
  EXPECT_THROW(SweepSpec::load("/nonexistent/spec.json"), InputError);
  // A number past double's range: the file's InputError, not nlohmann's out_of_range.
  const std::string overflow =
      (std::filesystem::temp_directory_path() / "ltc_sweep_overflow.json").string();
  std::ofstream(overflow) << R"({"grid": [{"design": "lut", "m": 1e999}]})";
  EXPECT_THROW(SweepSpec::load(overflow), InputError);
  std::filesystem::remove(overflow);
}

TEST(SweepSpec, AGpuPointIsThatGpusLutTileAfterItsOverrides) {
  // A100-LUT-4X's tile: lut M2N64K4, int8 activations (int16 table, int32 accumulator), 2 planes.
  const SweepSpec s = SweepSpec::parse(json::parse(R"({"gpu": "a100-lut4x", "grid": [
      {"label": "own"},
      {"label": "fp16", "act": "fp16", "wbits": [1, 4]},
      {"label": "k8", "gpu_set": "lut_tensor.core.k=8", "wbits": 1}]})"),
                                       "gpu.json");
  ASSERT_EQ(s.points.size(), 4u);
  EXPECT_EQ(s.points[0].id, "lut-m2n64k4-int8-w2-tint16-int32");
  EXPECT_EQ(s.points[1].id, "lut-m2n64k4-fp16-w1-fp32");
  EXPECT_EQ(s.points[2].id, "lut-m2n64k4-fp16-w4-fp32");
  EXPECT_EQ(s.points[3].id, "lut-m2n64k8-int8-w1-tint16-int32");
  // The rows name the GPU and its overrides.
  EXPECT_EQ(s.points[3].params["gpu"], "a100-lut4x");
  EXPECT_EQ(s.points[3].params["gpu_set"], "lut_tensor.core.k=8");
  EXPECT_EQ(s.points[3].params["k"], 8);
  // The spec's overrides come first, a point's after them (so the point's win).
  const SweepSpec both =
      SweepSpec::parse(json::parse(R"({"gpu": "a100-lut4x", "gpu_set": "lut_tensor.core.k=8",
                      "grid": [{"gpu_set": "lut_tensor.core.k=2"}]})"),
                       "both.json");
  EXPECT_EQ(both.points[0].id, "lut-m2n64k2-int8-w2-tint16-int32");
  EXPECT_EQ(both.points[0].params["gpu_set"], "lut_tensor.core.k=8,lut_tensor.core.k=2");
  // A sim spec's gpu and gpu_set become each run's --gpu and --gpu-set.
  const SweepSpec sim = SweepSpec::parse(
      json::parse(R"({"tool": "sim", "gpu": "a100-lut4x", "gpu_set": "sm.l2_slices=40",
                      "grid": [{"model": "llama2-7b", "gpu-set": "lut_tensor.core.k=8"}]})"),
      "sim.json");
  const auto& args = sim.points[0].sim_args;
  const auto at = std::find(args.begin(), args.end(), "--gpu-set");
  ASSERT_NE(at, args.end());
  EXPECT_EQ(*(at + 1), "sm.l2_slices=40,lut_tensor.core.k=8");
  EXPECT_NE(std::find(args.begin(), args.end(), "a100-lut4x"), args.end());
}

TEST(SweepSpec, UnknownFieldsAndGpuOverridesAreRefusedNamingTheFileAndKey) {
  const std::string typo =
      msg(R"({"clok_ns": 5, "grid": [{"design": "lut", "m": 1, "n": 1, "k": 4, "act": "fp16"}]})");
  EXPECT_NE(typo.find("bad.json: unknown field 'clok_ns'"), std::string::npos) << typo;
  const std::string field =
      msg(R"({"gpu": "a100-lut4x", "grid": [{"gpu_set": "lut_tensor.core.q=1"}]})");
  EXPECT_NE(field.find("bad.json: grid[0]"), std::string::npos) << field;
  EXPECT_NE(field.find("lut_tensor.core.q"), std::string::npos) << field;
  const std::string sim_field = msg(
      R"({"tool": "sim", "grid": [{"model": "llama2-7b", "gpu": "a100", "gpu-set": "no_such=1"}]})");
  EXPECT_NE(sim_field.find("bad.json: grid[0]"), std::string::npos) << sim_field;
  EXPECT_NE(sim_field.find("no_such"), std::string::npos) << sim_field;
  EXPECT_NE(msg(R"({"gpu": "a100-lut4x", "grid": [{"m": 4}]})").find("'m' with 'gpu'"),
            std::string::npos);
  EXPECT_NE(msg(R"({"grid": [{"gpu": "a100"}]})").find("no LUT tensor cores"), std::string::npos);
  EXPECT_NE(msg(R"({"grid": [{"design": "lut", "m": 1, "n": 1, "k": 4, "act": "fp16",
                             "gpu_set": "sms=1"}]})")
                .find("'gpu_set' needs 'gpu'"),
            std::string::npos);
  EXPECT_NE(msg(R"({"gpu": "a100-lut4x", "grid": [{"gpu-set": "sms=1"}]})").find("'gpu-set'"),
            std::string::npos);
  EXPECT_NE(msg(R"({"tool": "sim", "grid": [{"model": "llama2-7b", "gpu_set": "sms=1"}]})")
                .find("'gpu_set' is not this grid's key"),
            std::string::npos);
}

TEST(SweepSpec, BuiltinSpecsParse) {
  for (const auto& name : SweepSpec::builtin_names()) {
    const SweepSpec s = SweepSpec::load(SweepSpec::builtin_path(name));
    EXPECT_EQ(s.name, name);
    EXPECT_FALSE(s.points.empty()) << name;
    EXPECT_FALSE(s.plots.empty()) << name;
  }
  // dp-k: K = 1..8 for INT8 and FP16 activations.
  EXPECT_EQ(SweepSpec::load(SweepSpec::builtin_path("dp-k")).points.size(), 16u);
  // Every spec shipped beside them (the slices, the simulator's GPU DSE) passes the same checks:
  // no unknown field, every GPU override valid.
  int specs = 0;
  for (const auto& f : std::filesystem::directory_iterator(
           std::filesystem::path(SweepSpec::builtin_path("dp4")).parent_path())) {
    if (f.path().extension() != ".json") continue;
    EXPECT_NO_THROW(SweepSpec::load(f.path().string())) << f.path();
    ++specs;
  }
  EXPECT_GE(specs, 8);
}

TEST(Sweep, RunsEveryDistinctPointOnceAndWritesReports) {
  const auto dir = scratch_dir("");
  FakeRunner fake;
  const SweepSpec spec = SweepSpec::parse(tiny_spec(), "tiny.json");
  const SweepSummary s = run_sweep(spec, options(dir, fake));
  // The MAC point is one circuit for both weight widths: 4 LUT + 1 MAC.
  EXPECT_EQ(s.points, 5);
  EXPECT_EQ(fake.calls, 5);
  EXPECT_EQ(s.ok, 5);
  EXPECT_EQ(ResultStore(dir + "/results.jsonl").size(), 5u);
  // MAC area 100*1*4 + 300 = 700 over LUT n1 area 400.
  ASSERT_EQ(s.ratios.size(), 1u);
  EXPECT_DOUBLE_EQ(s.ratios[0]["value"].get<double>(), 700.0 / 400.0);
  const std::string csv = read_text(dir + "/tiny.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 7);  // header + 6 spec points
  EXPECT_EQ(s.rows.size(), 6u);                            // the rows the report plots
}

TEST(Sweep, ResumesWithoutRedoingFinishedPoints) {
  const auto dir = scratch_dir("");
  const SweepSpec spec = SweepSpec::parse(tiny_spec(), "tiny.json");
  FakeRunner first;
  SweepOptions o = options(dir, first, 1);
  o.limit = 2;  // as if killed after two points
  EXPECT_EQ(run_sweep(spec, o).ran, 2);
  FakeRunner second;
  const SweepSummary s = run_sweep(spec, options(dir, second));
  EXPECT_EQ(s.reused, 2);
  EXPECT_EQ(s.ran, 3);
  EXPECT_EQ(second.calls, 3);
  FakeRunner third;
  EXPECT_EQ(run_sweep(spec, options(dir, third)).ran, 0);
  EXPECT_EQ(third.calls, 0);
}

TEST(Sweep, ChangedRtlInvalidatesStoredPoints) {
  const auto dir = scratch_dir("");
  const SweepSpec spec = SweepSpec::parse(tiny_spec(), "tiny.json");
  FakeRunner a, b;
  run_sweep(spec, options(dir, a));
  SweepOptions o = options(dir, b);
  o.rtl_hash = [](const hw::TensorCoreConfig&) { return std::string("fedcba9876543210"); };
  EXPECT_EQ(run_sweep(spec, o).ran, 5);
}

TEST(Sweep, FailedPointIsRecordedAndDoesNotStopTheSweep) {
  const auto dir = scratch_dir("");
  const SweepSpec spec = SweepSpec::parse(tiny_spec(), "tiny.json");
  FakeRunner fake;
  fake.fail = "lut-m1n2k4-int8-w1-tint16-int32";
  const SweepSummary s = run_sweep(spec, options(dir, fake));
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.ok, 4);
  bool found = false;
  for (const auto& r : ResultStore(dir + "/results.jsonl").records()) {
    if (r["id"] == fake.fail) {
      found = true;
      EXPECT_EQ(r["status"], "error");
      EXPECT_NE(r["error"].get<std::string>().find("fake"), std::string::npos);
    }
  }
  EXPECT_TRUE(found);
  // A rerun keeps the failure unless asked to retry it.
  FakeRunner again;
  EXPECT_EQ(run_sweep(spec, options(dir, again)).ran, 0);
  SweepOptions retry = options(dir, again);
  retry.retry_failed = true;
  EXPECT_EQ(run_sweep(spec, retry).ran, 1);
}

// An executor that runs the tasks in order and remembers what it was given.
struct RecordingExecutor : SweepExecutor {
  std::vector<SweepTask> seen;
  std::string name() const override { return "recording"; }
  ExecutorRun run(const std::vector<SweepTask>& tasks, const TaskRunner& runner, ResultStore& store,
                  const std::string&, bool) override {
    ExecutorRun r;
    for (const auto& t : tasks) {
      seen.push_back(t);
      const json rec = runner(t);
      (rec["status"] == "ok" ? r.ok : r.failed)++;
      store.put(rec);
    }
    return r;
  }
};

TEST(SweepExecutor, GetsEachMissingPointOnceAsASelfContainedJob) {
  const auto dir = scratch_dir("");
  const SweepSpec spec = SweepSpec::parse(tiny_spec(), "tiny.json");
  FakeRunner fake;
  SweepOptions o = options(dir, fake);
  o.limit = 2;
  run_sweep(spec, o);  // the local executor runs two
  auto ex = std::make_shared<RecordingExecutor>();
  o.limit = 0;
  o.executor = ex;
  const SweepSummary s = run_sweep(spec, o);
  EXPECT_EQ(s.reused, 2);
  ASSERT_EQ(ex->seen.size(), 3u);
  EXPECT_EQ(s.ok, 3);
  for (const auto& t : ex->seen) {
    EXPECT_EQ(t.job["kind"], "ppa");
    EXPECT_EQ(t.job["key"], t.key);
    EXPECT_EQ(t.job["config"].get<hw::TensorCoreConfig>().id(), t.id);
    EXPECT_EQ(t.job["clock_ns"], 10.0);
    EXPECT_EQ(t.job["activity"], "assumed");
    EXPECT_TRUE(std::filesystem::path(t.job["workdir"].get<std::string>()).is_absolute());
  }
  EXPECT_EQ(ResultStore(dir + "/results.jsonl").size(), 5u);
}

TEST(SweepExecutor, RecordsWrittenByTasksJoinTheStoreOnTheNextRun) {
  // What a Slurm task does after its submitter was killed: run from the manifest, write its
  // record into <out>/records/; the next run takes it instead of running the point again.
  const auto dir = scratch_dir("");
  const SweepSpec spec = SweepSpec::parse(tiny_spec(), "tiny.json");
  FakeRunner fake;
  SweepOptions o = options(dir, fake);
  o.limit = 1;
  struct Capture : RecordingExecutor {
    ExecutorRun run(const std::vector<SweepTask>& tasks, const TaskRunner&, ResultStore&,
                    const std::string&, bool) override {
      seen = tasks;
      return {};
    }
  };
  auto capture = std::make_shared<Capture>();
  o.executor = capture;
  run_sweep(spec, o);
  ASSERT_EQ(capture->seen.size(), 1u);
  const SweepTask t = capture->seen[0];
  const std::string manifest = dir + "/batch.json";
  std::ofstream(manifest) << json{{"format", "ltc-sweep-batch/1"},
                                  {"out_dir", dir},
                                  {"tasks", json::array({json{
                                                {"key", t.key}, {"id", t.id}, {"job", t.job}}})}}
                                 .dump();
  const json rec = run_manifest_task(manifest, 0, [&](const SweepTask& task) {
    return run_sweep_task(
        task.job, [&](const hw::TensorCoreConfig& c, const PpaOptions& p) { return fake(c, p); });
  });
  EXPECT_EQ(rec["status"], "ok");
  EXPECT_TRUE(std::filesystem::exists(task_record_path(dir, t.key)));

  FakeRunner later;
  SweepOptions again = options(dir, later);
  const SweepSummary s = run_sweep(spec, again);
  EXPECT_EQ(s.reused, 1);
  EXPECT_EQ(s.ran, 4);
  EXPECT_EQ(later.calls, 4);
  EXPECT_FALSE(std::filesystem::exists(task_record_path(dir, t.key)));  // moved into the store
  EXPECT_EQ(ResultStore(dir + "/results.jsonl").get(t.key)->at("result")["area_um2"],
            rec["result"]["area_um2"]);
}

TEST(SweepExecutor, ManifestTaskIndexOutOfRangeNamesTheRange) {
  const auto dir = scratch_dir("");
  std::ofstream(dir + "/batch.json") << json{
      {"format", "ltc-sweep-batch/1"},
      {"out_dir", dir},
      {"tasks", json::array({{}})}}.dump();
  try {
    run_manifest_task(dir + "/batch.json", 3, [](const SweepTask&) { return json(); });
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tasks 0..0"), std::string::npos) << e.what();
  }
  std::ofstream(dir + "/other.json") << "{}";
  EXPECT_THROW(run_manifest_task(dir + "/other.json", 0, [](const SweepTask&) { return json(); }),
               InputError);
}

TEST(SlurmExecutor, WithoutSbatchOnPathSaysWhatIsMissing) {
  const auto dir = scratch_dir("");
  const char* old_path = std::getenv("PATH");
  const std::string saved = old_path ? old_path : "";
  ::setenv("PATH", dir.c_str(), 1);
  const SweepSpec spec = SweepSpec::parse(tiny_spec(), "tiny.json");
  FakeRunner fake;
  SweepOptions o = options(dir, fake);
  o.executor = std::make_shared<SlurmExecutor>(SlurmOptions{});
  std::string what;
  try {
    run_sweep(spec, o);
  } catch (const InputError& e) {
    what = e.what();
  }
  ::setenv("PATH", saved.c_str(), 1);
  EXPECT_NE(what.find("sbatch is not on PATH"), std::string::npos) << what;
  EXPECT_EQ(fake.calls, 0);
}

TEST(SlurmExecutor, TemplateWithoutCommandLineIsRejected) {
  const auto dir = scratch_dir("");
  std::ofstream(dir + "/site.sh") << "#!/bin/bash\n#SBATCH --account=x\n";
  SlurmOptions so;
  so.sbatch_template = dir + "/site.sh";
  try {
    SlurmExecutor ex(so);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("{command}"), std::string::npos) << e.what();
  }
}

TEST(SweepSpec, SimGridKeysBecomeSimFlags) {
  const SweepSpec s = SweepSpec::parse(json::parse(R"({
    "name": "decode", "tool": "sim",
    "grid": [{"label": "LUT", "model": "tiny", "gpu": "a100-lut4x", "batch": [1, 8],
              "functional": true, "per-kernel": false}]
  })"),
                                       "decode.json");
  EXPECT_EQ(s.tool, "sim");
  ASSERT_EQ(s.points.size(), 2u);
  // Keys in the order nlohmann::json keeps them (sorted); "label" only names the row.
  EXPECT_EQ(s.points[0].sim_args, (std::vector<std::string>{"--batch", "1", "--functional", "--gpu",
                                                            "a100-lut4x", "--model", "tiny"}));
  EXPECT_EQ(s.points[1].id, "--batch 8 --functional --gpu a100-lut4x --model tiny");
  // A relative trace path becomes absolute: each run has its own work folder.
  const std::string trace = "traces/examples/gemm-m3n100k70-int2-int8.lmt";
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(LTC_SOURCE_DIR);
  const SweepSpec t =
      SweepSpec::parse(json{{"tool", "sim"}, {"grid", json::array({{{"file", trace}}})}}, "t.json");
  std::filesystem::current_path(cwd);
  EXPECT_EQ(t.points[0].sim_args,
            (std::vector<std::string>{std::string(LTC_SOURCE_DIR) + "/" + trace}));
  auto msg = [](const char* text) {
    try {
      SweepSpec::parse(json::parse(text), "x.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(msg(R"({"tool": "sim", "grid": [{"gpu": "a100"}]})").find("'model'"),
            std::string::npos);
  EXPECT_NE(msg(R"({"tool": "synth", "grid": [{"gpu": "a100"}]})").find("valid: ppa, sim"),
            std::string::npos);
  EXPECT_NE(msg(R"({"tool": "sim", "grid": [{"model": "m", "batch": {"a": 1}}]})").find("'batch'"),
            std::string::npos);
}

// A sim point's `ltc sim` gets the sweep's threads per point (SweepOptions::sim_threads) unless
// its own arguments name --threads. (A stand-in ltc prints its arguments as its JSON.)
TEST(SweepTask, SimPointsRunOnTheSweepsThreadsUnlessTheyNameTheirOwn) {
  const auto dir = scratch_dir("");
  const std::string ltc = dir + "/ltc";
  std::ofstream(ltc) << "#!/bin/sh\necho \"{\\\"argv\\\": \\\"$*\\\"}\"\n";
  std::filesystem::permissions(ltc, std::filesystem::perms::owner_all);
  auto argv = [&](const std::vector<std::string>& args) {
    const json rec = run_sweep_task({{"kind", "sim"},
                                     {"key", "k"},
                                     {"id", "p"},
                                     {"sweep", "s"},
                                     {"args", args},
                                     {"threads", 3},
                                     {"ltc", ltc},
                                     {"timeout_s", 30},
                                     {"workdir", dir + "/w"}});
    EXPECT_EQ(rec.value("status", ""), "ok") << rec.dump();
    return rec.value("result", json::object()).value("argv", std::string());
  };
  EXPECT_EQ(argv({"t.lmt"}), "sim t.lmt --threads 3 --json --yes");
  EXPECT_EQ(argv({"t.lmt", "--threads", "5"}), "sim t.lmt --threads 5 --json --yes");
}

TEST(Sweep, SecondProcessOnOneStoreIsRefusedNamingTheHolder) {
  const auto dir = scratch_dir("");
  const FileLock held(dir + "/.lock", "--out " + dir);  // as a running ltc sweep holds it
  FakeRunner fake;
  try {
    run_sweep(SweepSpec::parse(tiny_spec(), "tiny.json"), options(dir, fake));
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("another ltc process"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("pid " + std::to_string(::getpid())), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(fake.calls, 0);
}

TEST(ResultStore, IgnoresATornLineAndRewritesAtomically) {
  const auto dir = scratch_dir("");
  const std::string path = dir + "/results.jsonl";
  std::ofstream(path) << R"({"key": "a", "status": "ok"})"
                      << "\n"
                      << R"({"key": "b", "sta)";
  ResultStore store(path);
  EXPECT_EQ(store.size(), 1u);
  store.put({{"key", "c"}, {"status", "ok"}});
  EXPECT_EQ(ResultStore(path).size(), 2u);
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos);
  }
}

TEST(Reports, CsvQuotesCommasAndQuotes) {
  const std::string csv = rows_csv({json{{"id", "x"}, {"error", "a, \"b\""}}});
  EXPECT_NE(csv.find("\"a, \"\"b\"\"\""), std::string::npos);
}

TEST(Reports, CrossoverIsTheLastWidthWhereAStaysBelowB) {
  std::vector<json> rows;
  for (int w = 1; w <= 4; ++w) {
    rows.push_back({{"status", "ok"}, {"design", "a"}, {"wbits", w}, {"area", 10.0 * w}});
    rows.push_back({{"status", "ok"}, {"design", "b"}, {"wbits", w}, {"area", 25.0}});
  }
  const json c = compute_crossovers(json::array({{{"metric", "area"},
                                                  {"x", "wbits"},
                                                  {"a", {{"design", "a"}}},
                                                  {"b", {{"design", "b"}}}}}),
                                    rows);
  EXPECT_EQ(c[0]["a_below_b_up_to"].get<double>(), 2);  // 10, 20 < 25; 30 is not
  EXPECT_DOUBLE_EQ(c[0]["points"][0]["b_over_a"].get<double>(), 2.5);
}

TEST(Reports, PlotSpecNeedsXAndYAndFilterSelectsRows) {
  EXPECT_THROW(parse_plot(json{{"x", "label"}}), InputError);
  const PlotSpec p = parse_plot(
      json{{"x", "label"}, {"y", "y"}, {"series", {"act"}}, {"filter", {{"act", {"fp8"}}}}});
  EXPECT_EQ(p.series, std::vector<std::string>{"act"});
  EXPECT_TRUE(row_matches(json{{"label", "LUT"}, {"act", "fp8"}}, p.filter));
  EXPECT_FALSE(row_matches(json{{"label", "LUT"}, {"act", "fp16"}}, p.filter));
}

TEST(OperandStorage, BitsFollowTheSpecFormulas) {
  using hw::TensorCoreConfig;
  using hw::TensorCoreDesign;
  // LUT M2N64K4 FP16 W2: tables 2 * 2^3 * 16 = 256, weights 4 * 64 * 2 = 512.
  EXPECT_EQ(TensorCoreConfig::make(TensorCoreDesign::kLut, {2, 64, 4}, golden::DType::kFp16, 2)
                .operand_bits(),
            256 + 512);
  // INT8 activations: int16 tables. M8N16K4 W1: 8 * 8 * 16 + 4 * 16 = 1088.
  EXPECT_EQ(TensorCoreConfig::make(TensorCoreDesign::kLut, {8, 16, 4}, golden::DType::kInt8, 1)
                .operand_bits(),
            1088);
  // MAC FP16 M2N64K4: activations 2 * 4 * 16, weights 4 * 64 * 16.
  EXPECT_EQ(TensorCoreConfig::make(TensorCoreDesign::kMac, {2, 64, 4}, golden::DType::kFp16, 1)
                .operand_bits(),
            128 + 4096);
}

TEST(OperandStorage, RegisterBitIsAFlopWithLoadEnable) {
  const double a = register_bit_area_um2(cell_library("osu018"), scratch_dir(""));
  // osu018: DFFPOSX1 is 96 um^2; the hold mux adds a few gates, less than a second flop.
  EXPECT_GT(a, 96.0);
  EXPECT_LT(a, 192.0);
}

TEST(OperandStorage, SweepAddsRegistersToEachPointOnce) {
  const auto dir = scratch_dir("");
  json j = tiny_spec();
  j["operand_storage"] = true;
  FakeRunner fake;
  const SweepSpec spec = SweepSpec::parse(j, "tiny.json");
  run_sweep(spec, options(dir, fake));
  const json summary = json::parse(read_text(dir + "/tiny-summary.json"));
  const double bit = summary["operand_register"]["area_per_bit_um2"].get<double>();
  EXPECT_GT(bit, 96.0);
  // Resumed: the register bit is not synthesized again (its record is reused).
  std::filesystem::remove_all(dir + "/work");
  run_sweep(spec, options(dir, fake));
  EXPECT_FALSE(std::filesystem::exists(dir + "/work/operand-register"));
  const std::string csv = read_text(dir + "/tiny.csv");
  // lut-m1n2k4-int8-w2: tables 1 * 8 * 16 = 128, weights 4 * 2 * 2 = 16; tile area 800.
  const std::string id = "lut-m1n2k4-int8-w2-tint16-int32";
  const auto line_start = csv.find(id);
  ASSERT_NE(line_start, std::string::npos);
  const std::string header = csv.substr(0, csv.find('\n'));
  const std::string line = csv.substr(line_start, csv.find('\n', line_start) - line_start);
  auto column = [](const std::string& text, int i) {
    std::stringstream in(text);
    std::string c;
    for (int k = 0; k <= i && std::getline(in, c, ','); ++k) {
    }
    return c;
  };
  int col = -1;
  {
    std::stringstream in(header);
    std::string c;
    for (int i = 0; std::getline(in, c, ','); ++i) {
      if (c == "area_with_operands_um2") col = i;
    }
  }
  ASSERT_GE(col, 0) << header;
  EXPECT_NEAR(std::stod(column(line, col)), 800 + 144 * bit, 1e-3 * (800 + 144 * bit)) << line;
}

}  // namespace
}  // namespace ltc::synth
