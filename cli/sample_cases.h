// The cases `ltc bench sim --only sample` measures sampled against full simulation on: single
// GEMMs and whole model steps, read from JSON (the built-in sets in configs/sampling/, a user's
// own with --cases; configs/sampling/README.md gives the format).
#pragma once

#include "model/hw/gpu.h"
#include "traces/trace.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ltc::cli {

struct SampleCase {
  std::string name, gpu;
  // A GEMM: m, n, k (path "" for the compiler's choice, "lut" or "mac", as `ltc compile gemm
  // --path`); a step: model (built-in or a config.json path), phase ("decode" / "prefill"), batch,
  // length (context or prompt).
  int64_t m = 0, n = 0, k = 0;
  std::string path;
  std::string model, phase;
  int64_t batch = 1, length = 0;
  std::string weights, acts;
  bool is_step() const { return !model.empty(); }
};

// The cases of a sampling-bench file. Every field is checked here, GPUs, models and formats
// loaded, so a bad case fails before any simulation: InputError naming the file, the case's index
// and name, the field and what is valid.
std::vector<SampleCase> load_sample_cases(const std::string& path);

// The trace of one case, compiled for `gpu` (the case's GPU, loaded).
traces::Trace compile_case(const SampleCase& c, const hw::GpuConfig& gpu);

}  // namespace ltc::cli
