// `ltc bench compile`: how fast a whole model step compiles and how big its trace is
// (target for LLaMA2-70B decode, batch 1, context 4096, W_INT2 A_INT8 on a100-lut4x: < 10 s and
// < 50 MB).
#include "cli/command.h"
#include "cli/model_step.h"
#include "cli/options.h"
#include "compiler/model_lowering.h"
#include "model/hw/gpu.h"
#include "model/llm/graph.h"
#include "model/llm/model_config.h"
#include "traces/trace.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace ltc::cli {
namespace {

struct BenchCompileFlags {
  std::string model = "llama2-70b", weights = "int2", acts = "int8", gpu = "a100-lut4x";
  int64_t batch = 1, context = 4096;
  bool json = false;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void run(const BenchCompileFlags& o) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  const llm::ModelConfig model = load_model_reporting(o.model);
  const llm::StepConfig step =
      step_from_flags(model, "decode", o.batch, o.context, 0, o.weights, o.acts);
  const hw::GpuConfig gpu = hw::load_gpu(o.gpu);
  const traces::Trace t = compiler::compile_model(model, step, gpu);
  const double compile_s = seconds_since(t0);
  auto t1 = clock::now();
  const std::string text = traces::write_text(t);
  const double write_text_s = seconds_since(t1);
  t1 = clock::now();
  const std::string bin = traces::write_binary(t);
  const double write_binary_s = seconds_since(t1);
  t1 = clock::now();
  const traces::Trace back = traces::read_text(text, "bench.lmt");
  const double read_text_s = seconds_since(t1);
  t1 = clock::now();
  const traces::Trace back_bin = traces::read_binary(bin, "bench.ltcb");
  const double read_binary_s = seconds_since(t1);
  if (!(back == t) || !(back_bin == t)) set_exit_code(kExitFailed);
  const compiler::TraceSummary s = compiler::summarize(t);
  const double total_s = compile_s + write_text_s;
  nlohmann::json j = {{"model", o.model},
                      {"phase", "decode"},
                      {"batch", o.batch},
                      {"context", o.context},
                      {"weights", o.weights},
                      {"acts", o.acts},
                      {"gpu", o.gpu},
                      {"compile_s", compile_s},
                      {"compile_and_write_text_s", total_s},
                      {"write_binary_s", write_binary_s},
                      {"read_text_s", read_text_s},
                      {"read_binary_s", read_binary_s},
                      {"text_bytes", text.size()},
                      {"binary_bytes", bin.size()},
                      {"kernels", s.kernels},
                      {"static_instructions", s.static_instructions},
                      {"warp_instructions", s.warp_instructions},
                      {"lmmas", s.lmmas},
                      {"mmas", s.mmas},
                      {"round_trip_ok", back == t && back_bin == t},
                      {"targets", {{"time_s", 10}, {"size_mb", 50}}}};
  if (o.json) {
    fmt::print("{}\n", j.dump());
    return;
  }
  fmt::print("compile {} decode (batch {}, context {}, W {} A {}) on {}:\n", o.model, o.batch,
             o.context, o.weights, o.acts, o.gpu);
  fmt::print("  compile {:.3f} s, + write text {:.3f} s (target < 10 s)\n", compile_s,
             write_text_s);
  fmt::print("  trace: text {:.2f} MB, binary {:.2f} MB (target < 50 MB)\n", text.size() / 1e6,
             bin.size() / 1e6);
  fmt::print("  read back: text {:.3f} s, binary {:.3f} s, round trip {}\n", read_text_s,
             read_binary_s, back == t && back_bin == t ? "identical" : "DIFFERS");
  fmt::print(
      "  {} kernels, {} static instructions, {:.3g} warp instructions, {:.3g} lmma, {:.3g} mma\n",
      s.kernels, s.static_instructions, double(s.warp_instructions), double(s.lmmas),
      double(s.mmas));
}

CommandRegistrar reg{
    91, [](CLI::App& app) {
      auto o = std::make_shared<BenchCompileFlags>();
      CLI::App* sub = bench_command(app).add_subcommand(
          "compile", "Compile time and trace size of a whole decode step (default LLaMA2-70B)");
      add_model_option(sub, o->model)->capture_default_str();
      sub->add_option("--batch", o->batch, "sequences")->capture_default_str();
      sub->add_option("--context", o->context, "tokens in the KV cache")->capture_default_str();
      sub->add_option("--weights", o->weights, "fp16, int1..int8, ternary, binary")
          ->capture_default_str();
      sub->add_option("--acts", o->acts, "int8, fp16, bf16, fp8e4m3, fp8e5m2")
          ->capture_default_str();
      add_gpu_option(sub, o->gpu)->capture_default_str();
      sub->add_flag("--json", o->json, "print one JSON object");
      set_examples(sub,
                   {"ltc bench compile", "ltc bench compile --model llama2-7b --batch 16 --json"});
      sub->callback([o] { run(*o); });
    }};

}  // namespace
}  // namespace ltc::cli
