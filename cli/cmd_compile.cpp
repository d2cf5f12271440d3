// `ltc compile gemm|model|run|convert`: lower an mpGEMM or a whole model step to an LMMA trace
// (docs/cli.md), run a GEMM trace through the functional interpreter, convert text <-> binary.
#include "cli/command.h"
#include "cli/model_step.h"
#include "cli/options.h"
#include "common/error.h"
#include "compiler/gemm_lowering.h"
#include "compiler/interpreter.h"
#include "compiler/model_lowering.h"
#include "model/golden/gemm.h"
#include "model/hw/gpu.h"
#include "model/llm/graph.h"
#include "model/llm/model_config.h"
#include "traces/trace.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>

namespace ltc::cli {
namespace {

// What the functional interpreter does per second on one core (a GEMM's multiply-adds through
// the warp-by-warp interpretation), for the up-front time estimates.
constexpr double kInterpreterMacsPerS = 1e7;

nlohmann::json summary_json(const traces::Trace& t, const std::string& out) {
  const compiler::TraceSummary s = compiler::summarize(t);
  return {{"out", out},
          {"gpu", t.gpu},
          {"kernels", s.kernels},
          {"static_instructions", s.static_instructions},
          {"warp_instructions", s.warp_instructions},
          {"lmmas", s.lmmas},
          {"mmas", s.mmas}};
}

nlohmann::json tiles_json(const traces::Kernel& k) {
  return {{"kernel", k.name},
          {"grid", {k.grid_x, k.grid_y}},
          {"warps", {k.warps_x, k.warps_y}},
          {"block_tile", k.tiles.block},
          {"warp_tile", k.tiles.warp},
          {"instr", k.tiles.instr},
          {"smem_bytes", k.smem_bytes},
          {"regs_per_thread", k.regs_per_thread}};
}

void print_check(const compiler::GemmCheck& c, uint32_t seed) {
  fmt::print(
      "functional check (seed {}): {} outputs, {} mismatches vs the golden GEMM ({} lmma, "
      "{} tables)\n",
      seed, c.outputs, c.mismatches, c.stats.lmmas, c.stats.tables);
}

// What --gpu-set says of a field the compiler does not read for this trace.
constexpr const char* kTraceUnchanged =
    "trace (the compiler does not read it here; the trace does not carry the GPU";

struct CompileGemmFlags {
  int64_t m = 0, n = 0, k = 0;
  std::string weights, acts;  // empty: gemm_precision_defaults (the GPU's tensor precision)
  std::string gpu = "a100-lut4x", out;
  std::string gpu_set;  // --gpu-set path=value,...
  std::string path;     // "", "lut", "mac"
  int64_t group = 0;
  int stages = 0;
  bool quantize_tables = false, verify = false, json = false;
  uint32_t seed = 1;
  double max_macs = 2e8;
  const CLI::App* sub = nullptr;  // for the defaults it took
};

// The functional interpreter's budget: GEMMs above it are refused up front (--verify, compile
// run) instead of running for minutes; `flag` names the flag that raises it.
void check_interpreter_budget(const std::string& what, double macs, double max_macs,
                              const std::string& flag) {
  if (macs > max_macs) {
    throw InputError(fmt::format(
        "{}: {} has M*N*K = {:.3g} multiply-adds, above the interpreter's budget {:.3g} "
        "(about {:.0f} s at ~{:.0g} per second; raise {} to run it anyway)",
        flag, what, macs, max_macs, macs / kInterpreterMacsPerS, kInterpreterMacsPerS, flag));
  }
  // Operands and results as doubles: A (m x k), W (n x k), Y (m x n) are each <= M*N*K.
  const double bytes = 3.0 * 8.0 * macs;
  const double phys = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
  if (phys > 0 && bytes > 0.5 * phys) {
    throw InputError(
        fmt::format("{}: {} may need up to {:.3g} GB of operands, more than half of "
                    "this machine's {:.3g} GB",
                    flag, what, bytes / 1e9, phys / 1e9));
  }
}

// --group, of compile gemm and compile model: the scale group of integer weights.
FlagRules& group_rule(FlagRules& rules, const std::string& weights) {
  return rules.flags({"--group"}, "with integer weights (int1..int8, ternary, binary)",
                     "float weights have no quantization group", [weights] {
                       return llm::parse_weight_format(weights, "--weights").is_low_bit();
                     });
}

void run_gemm(CompileGemmFlags o) {
  golden::check_gemm_extents(o.m, o.n, o.k);
  check_output_path(o.out, "--out", {o.gpu});
  const hw::GpuConfig base = hw::load_gpu(o.gpu);
  nlohmann::json defaults = defaults_taken(o.sub, {"--gpu", "--group", "--stages"});
  const std::string why = gemm_precision_defaults(
      o.gpu_set.empty() ? base : hw::with_overrides(base, o.gpu_set), o.weights, o.acts, defaults);
  FlagRules rules(o.sub);
  rules.flags({"--seed", "--max-macs"}, "with --verify",
              "only --verify runs the functional interpreter", [&o] { return o.verify; });
  group_rule(rules, o.weights).check();
  compiler::GemmSpec s;
  s.name = "gemm";
  s.m = o.m;
  s.n = o.n;
  s.k = o.k;
  s.weights = llm::parse_weight_format(o.weights, "--weights");
  s.act = golden::parse_act_dtype(o.acts, "--acts");
  // The group of --weights int4:g=128, unless --group says otherwise; both given must agree.
  s.group_size = o.group;
  if (s.weights.group_size > 0) {
    if (o.group > 0 && o.group != s.weights.group_size) {
      throw InputError("--group: " + std::to_string(o.group) + " contradicts --weights " +
                       o.weights + " (give the group once)");
    }
    s.group_size = s.weights.group_size;
  }
  s.quantize_tables = o.quantize_tables;
  s.stages = o.stages;
  if (o.path == "lut") {
    s.path = traces::GemmPath::kLut;
  } else if (o.path == "mac") {
    s.path = traces::GemmPath::kMma;
  } else if (!o.path.empty()) {
    throw InputError("--path: '" + o.path + "' (valid: lut, mac)");
  }
  if (o.verify) {
    check_interpreter_budget("this GEMM", double(o.m) * double(o.n) * double(o.k), o.max_macs,
                             "--max-macs");
  }
  // Each --gpu-set field must change the trace the compiler writes.
  const hw::GpuConfig gpu = apply_gpu_set(
      base, o.gpu_set,
      [&](const hw::GpuConfig& g) { return traces::write_text(compiler::compile_gemm(s, g)); },
      kTraceUnchanged);
  const traces::Trace t = compiler::compile_gemm(s, gpu);
  const bool lut = t.kernels.back().gemm.path == traces::GemmPath::kLut;
  if (o.quantize_tables && !lut) {
    throw InputError(
        "--quantize-tables: applies to the LUT path only; this GEMM was lowered to "
        "the MAC path (mma has no tables)");
  }

  traces::write_trace_file(t, o.out);
  nlohmann::json j = summary_json(t, o.out);
  j["tiles"] = tiles_json(t.kernels.back());
  j["defaults"] = defaults;
  if (!why.empty()) j["precision_default"] = why;
  j["gpu"] = gpu.name;
  if (!o.gpu_set.empty()) j["gpu_set"] = o.gpu_set;
  bool failed = false;
  if (o.verify) {
    const compiler::GemmCheck c = compiler::check_gemm_trace(t, o.seed);
    j["verify"] = {{"seed", o.seed}, {"outputs", c.outputs}, {"mismatches", c.mismatches}};
    failed = c.mismatches != 0;
    if (!o.json) print_check(c, o.seed);
  }
  if (o.json) {
    fmt::print("{}\n", j.dump());
  } else {
    const auto& k = t.kernels.back();
    fmt::print("wrote {}: {} path, {} kernels, {} static / {} warp instructions, {} lmma, {} mma\n",
               o.out, lut ? "lut" : "mac", j["kernels"].get<uint64_t>(),
               j["static_instructions"].get<uint64_t>(), j["warp_instructions"].get<uint64_t>(),
               j["lmmas"].get<uint64_t>(), j["mmas"].get<uint64_t>());
    fmt::print(
        "tiles: block [{},{},{}] warp [{},{},{}] instr [{},{},{}] grid {}x{} smem {} B regs {}\n",
        k.tiles.block[0], k.tiles.block[1], k.tiles.block[2], k.tiles.warp[0], k.tiles.warp[1],
        k.tiles.warp[2], k.tiles.instr[0], k.tiles.instr[1], k.tiles.instr[2], k.grid_x, k.grid_y,
        k.smem_bytes, k.regs_per_thread);
    if (!o.gpu_set.empty()) fmt::print("gpu {} with --gpu-set {}\n", gpu.name, o.gpu_set);
    fmt::print("{}", defaults_line(j["defaults"], why));
  }
  if (failed) set_exit_code(kExitFailed);
}

struct CompileModelFlags {
  std::string model, phase = "decode", weights = "fp16", acts = "fp16", gpu = "a100-lut4x", out;
  std::string expert_load = "uniform";
  std::string gpu_set;  // --gpu-set path=value,...
  int64_t batch = 1, context = kDefaultContext, seq = 0, group = 0;
  bool no_fuse = false, quantize_tables = false, json = false;
  const CLI::App* sub = nullptr;  // for the defaults it took
};

void run_model(const CompileModelFlags& o) {
  check_output_path(o.out, "--out", {o.model, o.gpu});
  const llm::ModelConfig model = load_model_reporting(o.model);
  const llm::StepConfig step =
      step_from_flags(model, o.phase, o.batch, o.context, o.seq, o.weights, o.acts, o.expert_load);
  compiler::ModelLoweringOptions opt;
  opt.fuse_precompute = !o.no_fuse;
  opt.quantize_tables = o.quantize_tables;
  opt.group_size = o.group;
  const hw::GpuConfig gpu = apply_gpu_set(
      hw::load_gpu(o.gpu), o.gpu_set,
      [&](const hw::GpuConfig& g) {
        return traces::write_text(compiler::compile_model(model, step, g, opt));
      },
      kTraceUnchanged);
  if ((o.quantize_tables || o.no_fuse) && !(gpu.has_lut_tensor() && step.weights.is_low_bit())) {
    throw InputError(std::string(o.quantize_tables ? "--quantize-tables" : "--no-fuse") +
                     ": applies to LUT tables only; gpu '" + gpu.name + "' runs " +
                     step.weights.name() + " weights without them");
  }
  const traces::Trace t = compiler::compile_model(model, step, gpu, opt);
  traces::write_trace_file(t, o.out);
  nlohmann::json j = summary_json(t, o.out);
  j["model"] = o.model;
  j["phase"] = o.phase;
  j["defaults"] = defaults_taken(
      o.sub, {"--phase", "--batch", "--context", "--weights", "--acts", "--gpu", "--group"});
  j["gpu"] = gpu.name;
  if (!o.gpu_set.empty()) j["gpu_set"] = o.gpu_set;
  if (o.json) {
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print(
        "wrote {}: {} {} step, {} kernels, {} static / {} warp instructions, {} lmma, {} mma\n",
        o.out, o.model, o.phase, j["kernels"].get<uint64_t>(),
        j["static_instructions"].get<uint64_t>(), j["warp_instructions"].get<uint64_t>(),
        j["lmmas"].get<uint64_t>(), j["mmas"].get<uint64_t>());
    if (!o.gpu_set.empty()) fmt::print("gpu {} with --gpu-set {}\n", gpu.name, o.gpu_set);
    fmt::print("{}", defaults_line(j["defaults"]));
  }
}

struct CompileRunFlags {
  std::string file;
  uint32_t seed = 1;
  double max_macs = 5e7;
  bool json = false;
};

void run_trace(const CompileRunFlags& o) {
  const traces::Trace t = traces::read_trace_file(o.file);
  nlohmann::json j = summary_json(t, o.file);
  j.erase("out");
  j["file"] = o.file;
  int gemms = 0;
  for (const auto& k : t.kernels) gemms += k.gemm.m > 0;
  bool failed = false;
  double total_macs = 0;
  for (const auto& k : t.kernels) {
    if (k.gemm.m <= 0) continue;
    const double macs = double(std::max<int64_t>(k.gemm.batch, 1)) * double(k.gemm.m) *
                        double(k.gemm.n) * double(k.gemm.k);
    // What the interpreter will execute: the program's LMMAs (a loop edited to billions of trips
    // runs them all, whatever the gemm record says), at least the record's M*N*K.
    const double executed = double(k.blocks()) * double(k.warps_per_block()) *
                            traces::expanded_sum(k.program, [](const traces::Instr& in) {
                              const golden::LmmaShape& s = in.lmma.shape;
                              return in.op == traces::Opcode::kLmma ? double(s.m) * s.n * s.k : 0.0;
                            });
    // A single GEMM is the point of the run: refuse it rather than skip it.
    if (gemms == 1 || macs <= o.max_macs) {
      check_interpreter_budget("kernel '" + k.name + "'", std::max(macs, executed), o.max_macs,
                               "--max-macs");
      total_macs += macs;
    }
  }
  if (progress_enabled() && total_macs > kInterpreterMacsPerS) {
    fmt::print(stderr, "compile run: {:.3g} multiply-adds to interpret, about {:.0f} s\n",
               total_macs, total_macs / kInterpreterMacsPerS);
  }
  if (gemms == 1) {
    const compiler::GemmCheck c = compiler::check_gemm_trace(t, o.seed);
    j["verify"] = {{"seed", o.seed}, {"outputs", c.outputs}, {"mismatches", c.mismatches}};
    failed = c.mismatches != 0;
    if (!o.json) print_check(c, o.seed);
  } else if (gemms > 1) {
    // A model trace: each distinct LUT GEMM kernel on its own, tables from its producer.
    nlohmann::json list = nlohmann::json::array();
    uint64_t mismatches = 0;
    traces::GemmProgress progress;
    if (progress_enabled()) {
      progress = [](const traces::KernelCheck& kc, size_t i, size_t n) {
        fmt::print(stderr, "\rcompile run: GEMM {}/{} {}{}", i + 1, n, kc.kernel,
                   i + 1 == n ? "\n" : "   ");
      };
    }
    for (const auto& kc : compiler::check_trace_gemms(t, o.seed, o.max_macs, progress)) {
      list.push_back({{"kernel", kc.kernel},
                      {"skipped", kc.skipped},
                      {"outputs", kc.check.outputs},
                      {"mismatches", kc.check.mismatches}});
      mismatches += kc.check.mismatches;
      if (!o.json) {
        if (kc.skipped) {
          fmt::print("{}: skipped (M*N*K above --max-macs)\n", kc.kernel);
        } else {
          fmt::print("{}: {} outputs, {} mismatches vs golden lut_gemm\n", kc.kernel,
                     kc.check.outputs, kc.check.mismatches);
        }
      }
    }
    j["verify"] = {{"seed", o.seed}, {"kernels", list}, {"mismatches", mismatches}};
    failed = mismatches != 0;
  }
  if (o.json) {
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print("{}: valid trace for {}, {} kernels, {} warp instructions{}\n", o.file, t.gpu,
               j["kernels"].get<uint64_t>(), j["warp_instructions"].get<uint64_t>(),
               gemms ? "" : " (no LUT GEMM kernel: nothing to execute functionally)");
  }
  if (failed) set_exit_code(kExitFailed);
}

CommandRegistrar reg{
    50, [](CLI::App& app) {
      CLI::App* compile = app.add_subcommand("compile", "Lower GEMMs and LLM steps to LMMA traces");
      compile->require_subcommand(1);
      set_examples(compile, {"ltc compile gemm --m 16 --n 4096 --k 4096 --out gemm.lmt",
                             "ltc compile model --model llama2-7b --out decode.ltcb"});

      auto g = std::make_shared<CompileGemmFlags>();
      CLI::App* gemm =
          compile->add_subcommand("gemm", "One (mp)GEMM Y[M,N] = A[M,K] W[N,K]^T -> trace");
      gemm->add_option("--m", g->m, "rows of A (tokens), 1..2^31-1")->required();
      gemm->add_option("--n", g->n, "output channels, 1..2^31-1")->required();
      gemm->add_option("--k", g->k, "input channels, 1..2^31-1")->required();
      gemm->add_option("--weights", g->weights,
                       std::string("int1..int8, ternary, binary, binary:kb=..,g=..,s=..; --path "
                                   "mac also fp16, bf16, fp8e4m3, fp8e5m2; ") +
                           kGemmPrecisionHelp);
      gemm->add_option("--acts", g->acts,
                       std::string("int8, fp16, bf16, fp8e4m3, fp8e5m2; ") + kGemmPrecisionHelp);
      add_gpu_option(gemm, g->gpu)->capture_default_str();
      add_gpu_set_option(gemm, g->gpu_set, "trace");
      gemm->add_option("--path", g->path,
                       "lut (LMMA kernels) or mac (mma: dense, or dequantize-then-MAC); default: "
                       "lut on GPUs with LUT tensor cores and low-bit weights, else mac");
      gemm->add_option("--stages", g->stages,
                       "cp.async pipeline depth, 2..16 (default: the tiling's choice)")
          ->check(in_range(2, 16));
      gemm->add_option("--group", g->group,
                       "weight quantization group, 0..2^31-1 (0: per channel, or --weights "
                       "int4:g=G)")
          ->capture_default_str()
          ->check(in_range(0, 2147483647));
      gemm->add_flag("--quantize-tables", g->quantize_tables, "INT8 tables (q8 LMMAs)");
      gemm->add_option("--out", g->out, "trace file (.ltcb: binary, else text)")->required();
      gemm->add_flag("--verify", g->verify,
                     "run the trace in the functional interpreter on random data");
      gemm->add_option("--seed", g->seed, "seed of --verify")->capture_default_str();
      gemm->add_option("--max-macs", g->max_macs,
                       "--verify refuses a larger M*N*K up front (the interpreter's budget)")
          ->capture_default_str()
          ->check(in_range(1, 1e18));
      gemm->add_flag("--json", g->json, "print one JSON object");
      set_examples(gemm, {"ltc compile gemm --m 16 --n 4096 --k 4096 --weights int2 --acts int8 "
                          "--gpu a100-lut4x --out gemm.lmt --verify",
                          "ltc compile gemm --m 256 --n 4096 --k 4096 --weights int4:g=128 --acts "
                          "fp16 --gpu a100 --out gemm.ltcb"});
      g->sub = gemm;
      gemm->callback([g] { run_gemm(*g); });

      auto m = std::make_shared<CompileModelFlags>();
      CLI::App* model = compile->add_subcommand("model", "A whole decode or prefill step -> trace");
      add_model_option(model, m->model)->required();
      model->add_option("--phase", m->phase, "decode or prefill")->capture_default_str();
      model->add_option("--batch", m->batch, "sequences (B)")->capture_default_str();
      model
          ->add_option("--context", m->context,
                       "decode: tokens in the KV cache (L); prefill: sequence length if no --seq")
          ->capture_default_str();
      model->add_option("--seq", m->seq, "prefill only: tokens per sequence (S)");
      model->add_option("--expert-load", m->expert_load, kExpertLoadHelp)->capture_default_str();
      model->add_option("--weights", m->weights, "fp16, int1..int8, ternary, binary")
          ->capture_default_str();
      model->add_option("--acts", m->acts, "int8, fp16, bf16, fp8e4m3, fp8e5m2")
          ->capture_default_str();
      add_gpu_option(model, m->gpu)->capture_default_str();
      add_gpu_set_option(model, m->gpu_set, "trace");
      model
          ->add_option("--group", m->group, "weight quantization group, 0..2^31-1 (0: per channel)")
          ->capture_default_str()
          ->check(in_range(0, 2147483647));
      model->add_flag("--no-fuse", m->no_fuse, "separate table-precompute kernels (no fusion)");
      model->add_flag("--quantize-tables", m->quantize_tables, "INT8 tables (q8 LMMAs)");
      model->add_option("--out", m->out, "trace file (.ltcb: binary, else text)")->required();
      model->add_flag("--json", m->json, "print one JSON object");
      set_examples(model, {"ltc compile model --model llama2-7b --phase decode --batch 8 "
                           "--context 1024 --out decode.ltcb",
                           "ltc compile model --model bitnet-b1.58-3b --phase prefill --seq 512 "
                           "--gpu a100-lut8x --out prefill.lmt --json"});
      m->sub = model;
      model->callback([m, model] {
        FlagRules rules(model);
        group_rule(rules, m->weights).check();
        run_model(*m);
      });

      auto r = std::make_shared<CompileRunFlags>();
      CLI::App* run = compile->add_subcommand(
          "run",
          "Read a trace; run its LUT GEMM in the functional interpreter vs the golden model");
      run->add_option("file", r->file, "trace (text or binary)")->required();
      run->add_option("--seed", r->seed, "seed of the random operands")->capture_default_str();
      run->add_option("--max-macs", r->max_macs,
                      "the interpreter's budget: a model trace's larger GEMM kernels are "
                      "skipped, a single-GEMM trace above it is refused")
          ->capture_default_str()
          ->check(in_range(1, 1e18));
      run->add_flag("--json", r->json, "print one JSON object");
      set_examples(run, {"ltc compile run traces/examples/gemm-m3n100k70-int2-int8.lmt",
                         "ltc compile run decode.ltcb --max-macs 1e8 --json"});
      run->callback([r] { run_trace(*r); });

      auto c = std::make_shared<std::pair<std::string, std::string>>();
      CLI::App* conv = compile->add_subcommand(
          "convert", "Convert a trace between text and binary (.ltcb) forms");
      conv->add_option("in", c->first, "input trace")->required();
      conv->add_option("out", c->second, "output trace (.ltcb: binary, else text)")->required();
      set_examples(conv, {"ltc compile convert gemm.lmt gemm.ltcb"});
      conv->callback([c] {
        const traces::Trace t = traces::read_trace_file(c->first);
        check_output_path(c->second, "OUT", {c->first});
        traces::write_trace_file(t, c->second);
      });
    }};

}  // namespace
}  // namespace ltc::cli
