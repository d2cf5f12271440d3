// run_sweep: plans the points a store lacks, hands them to an executor, and writes the CSV and
// the summary (ratios and crossovers against the paper).
#include "synth/sweep.h"

#include "common/error.h"
#include "common/file_io.h"
#include "common/hash.h"
#include "common/process.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <map>

namespace ltc::synth {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  return out;
}

// The tasks a sweep still has to run: one per distinct point (a MAC point at several weight
// widths is one netlist) whose key the store lacks (or holds as an error, with retry_failed).
struct SweepPlan {
  std::map<std::string, std::string> keys;  // point id -> store key
  std::vector<SweepTask> todo;
  int reused = 0;  // distinct points already in the store (keys.size() in all)
};

json sim_job(const SweepPoint& pt, const std::string& key, const SweepSpec& spec,
             const SweepOptions& opt, const std::string& ltc, const std::string& out_abs) {
  return {{"kind", "sim"},
          {"key", key},
          {"id", pt.id},
          {"sweep", spec.name},
          {"args", pt.sim_args},
          {"threads", opt.sim_threads},
          {"ltc", ltc},
          {"timeout_s", opt.tool_timeout_s},
          {"workdir", out_abs + "/work/sim-" + fnv1a_hex(pt.id)}};
}

json ppa_job(const SweepPoint& pt, const std::string& key, const SweepSpec& spec,
             const SweepOptions& opt, const std::string& out_abs) {
  return {{"kind", "ppa"},
          {"key", key},
          {"sweep", spec.name},
          {"config", pt.config},
          {"clock_ns", spec.clock_ns},
          {"activity", spec.activity == ActivityMode::kMeasured ? "measured" : "assumed"},
          {"cycles", spec.cycles},
          {"seed", spec.seed},
          {"library", spec.library},
          {"activity_timing", delay_model_name(spec.timing)},
          {"timeout_s", opt.tool_timeout_s},
          {"keep_work", opt.keep_work},
          {"workdir", out_abs + "/work/" + sanitize(pt.id)}};
}

SweepPlan plan_sweep(const SweepSpec& spec, const SweepOptions& opt, const ResultStore& store,
                     const std::string& ltc) {
  const std::string out_abs = fs::absolute(opt.out_dir).lexically_normal().string();
  std::string ltc_fingerprint;  // sim points: results depend on the simulator's code
  if (spec.tool == "sim") {
    try {
      ltc_fingerprint = fnv1a_hex(read_text(ltc));
    } catch (const std::exception&) {
      throw InputError("ltc binary " + ltc + " cannot be read (sim points run it)");
    }
  }
  SweepPlan plan;
  for (const auto& pt : spec.points) {
    if (plan.keys.count(pt.id)) continue;
    std::string key;
    json job;
    if (spec.tool == "sim") {
      key = fmt::format("sim|{}|ltc={}", pt.id, ltc_fingerprint);
      job = sim_job(pt, key, spec, opt, ltc, out_abs);
    } else {
      std::string hash = "unknown";
      try {
        hash = opt.rtl_hash ? opt.rtl_hash(pt.config) : design_source(pt.config).source_hash();
      } catch (const std::exception&) {
        // The point fails when it runs, with the reason in its record.
      }
      key = point_key(spec, pt.config, hash);
      job = ppa_job(pt, key, spec, opt, out_abs);
    }
    plan.keys[pt.id] = key;
    const json* rec = store.get(key);
    if (rec && (rec->value("status", "") == "ok" || !opt.retry_failed)) {
      ++plan.reused;
      continue;
    }
    plan.todo.push_back({key, pt.id, job});
  }
  if (opt.limit > 0 && static_cast<int>(plan.todo.size()) > opt.limit) plan.todo.resize(opt.limit);
  if (opt.report_only) plan.todo.clear();
  return plan;
}

// Operand storage: the area of one register bit, measured once and kept in the store. Returns
// 0 when the store lacks it and report_only forbids measuring it.
double operand_register_bit(const SweepSpec& spec, const SweepOptions& opt, ResultStore& store) {
  const CellLibrary& lib = cell_library(spec.library);
  const std::string key = fmt::format("operand-register-bit|liberty={}|yosys={}", lib.liberty,
                                      tool_versions().value("yosys", ""));
  const json* rec = store.get(key);
  if (rec && rec->value("status", "") == "ok") {
    return (*rec)["result"].value("area_per_bit_um2", 0.0);
  }
  if (opt.report_only) return 0;
  double reg_bit = 0;
  json r = {{"key", key}, {"id", "operand-register-bit"}, {"sweep", spec.name}};
  try {
    reg_bit =
        register_bit_area_um2(lib, opt.out_dir + "/work/operand-register", opt.tool_timeout_s);
    r["status"] = "ok";
    r["result"] = {{"area_per_bit_um2", reg_bit}};
  } catch (const std::exception& e) {
    r["status"] = "error";
    r["error"] = e.what();
  }
  r["finished"] = record_timestamp();
  store.put(r);
  return reg_bit;
}

// CSV and summary.json (ratios vs the paper); plots are drawn by the DSE report.
void write_sweep_outputs(const SweepSpec& spec, const SweepOptions& opt, const ResultStore& store,
                         const std::map<std::string, std::string>& keys, double reg_bit,
                         SweepSummary& sum) {
  const auto rows = sweep_rows(spec, store, keys, reg_bit);
  const std::string csv = opt.out_dir + "/" + spec.name + ".csv";
  write_text_atomic(csv, rows_csv(rows));
  sum.files.push_back(csv);
  sum.ratios = compute_ratios(spec.ratios, rows);
  sum.crossovers = compute_crossovers(spec.raw.value("crossovers", json::array()), rows);
  sum.rows = rows;
  int pending = 0, errors = 0;
  for (const auto& r : rows) {
    pending += r["status"] == "pending";
    errors += r["status"] == "error";
  }
  json summary = {{"sweep", spec.name},           {"title", spec.title},     {"points", sum.points},
                  {"reused", sum.reused},         {"ran", sum.ran},          {"ok", sum.ok},
                  {"failed", sum.failed},         {"rows_pending", pending}, {"rows_error", errors},
                  {"seconds", sum.seconds},       {"jobs", opt.jobs},        {"ratios", sum.ratios},
                  {"crossovers", sum.crossovers}, {"tools", tool_versions()}};
  if (spec.operand_storage) {
    summary["operand_register"] = {
        {"area_per_bit_um2", reg_bit},
        {"how", "64-bit register with load enable synthesized by the same Yosys flow"}};
  }
  const std::string sj = opt.out_dir + "/" + spec.name + "-summary.json";
  write_text_atomic(sj, summary.dump(2) + "\n");
  sum.files.push_back(sj);
}

}  // namespace

SweepSummary run_sweep(const SweepSpec& spec, const SweepOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  if (opt.out_dir.empty()) throw InputError("--out: an output directory is required");
  if (opt.jobs < 1) throw InputError("-j: at least one job");
  fs::create_directories(opt.out_dir);
  // One process per store: a second one (a Slurm submitter, a local run) would overwrite records
  // the first puts, and submit or run the same points again.
  const FileLock lock(opt.out_dir + "/.lock", "--out " + opt.out_dir);
  // Temp files of a store write that was killed before its rename.
  for (const auto& e : fs::directory_iterator(opt.out_dir)) {
    if (e.path().filename().string().find(".tmp.") != std::string::npos) fs::remove(e.path());
  }
  ResultStore store(opt.out_dir + "/results.jsonl");
  // Records Slurm tasks wrote after their submitter was gone (synth/executor.h).
  collect_task_records(opt.out_dir, store);
  const std::string ltc = opt.ltc_binary.empty() ? self_binary() : opt.ltc_binary;

  const SweepPlan plan = plan_sweep(spec, opt, store, ltc);
  SweepSummary sum;
  sum.points = static_cast<int>(plan.keys.size());
  sum.reused = plan.reused;
  if (!plan.todo.empty()) {
    const auto executor = opt.executor ? opt.executor : std::make_shared<LocalExecutor>(opt.jobs);
    const auto runner = [&opt](const SweepTask& t) { return run_sweep_task(t.job, opt.runner); };
    const ExecutorRun er = executor->run(plan.todo, runner, store, opt.out_dir, opt.progress);
    sum.ok = er.ok;
    sum.failed = er.failed;
    sum.resubmitted = er.resubmitted;
  }
  sum.ran = static_cast<int>(plan.todo.size());

  const double reg_bit =
      spec.operand_storage && spec.tool == "ppa" ? operand_register_bit(spec, opt, store) : 0;
  sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  write_sweep_outputs(spec, opt, store, plan.keys, reg_bit, sum);
  return sum;
}

}  // namespace ltc::synth
