// libFuzzer target for the two JSON loaders a user feeds by hand: the GPU description
// (hw::parse_gpu_json) and the Hugging Face model config (llm::model_from_hf_config). The first
// byte picks the loader, the rest is the file. Every input must load or throw InputError; a GPU
// that loads writes back to JSON that loads to the same JSON; a model that loads gives a decode
// and a prefill graph whose sizes stay finite. No crash, hang or sanitizer report (signed
// overflow in a size product included).
#include "common/error.h"
#include "model/hw/gpu.h"
#include "model/llm/graph.h"
#include "model/llm/model_config.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

void fuzz_gpu(std::string_view text) {
  try {
    const ltc::hw::GpuConfig g = ltc::hw::parse_gpu_json(text, "fuzz");
    nlohmann::json j = g;
    const ltc::hw::GpuConfig back = ltc::hw::parse_gpu_json(j.dump(), "fuzz.back");
    if (nlohmann::json(back) != nlohmann::json(g)) std::abort();
    if (!(g.lut_tops("int8", 2) >= 0) || !(g.mac_tops("fp16", "fp16") > 0)) std::abort();
  } catch (const ltc::InputError&) {
  }
}

void fuzz_model(std::string_view text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    return;  // load_model reports these (syntax, number overflow) as InputError itself
  }
  try {
    const ltc::llm::ModelConfig m = ltc::llm::model_from_hf_config(j, "fuzz");
    if (m.parameters() <= 0) std::abort();
    for (const auto& step :
         {ltc::llm::StepConfig::decode(8, 4096), ltc::llm::StepConfig::prefill(2, 2048)}) {
      const ltc::llm::StepGraph g = ltc::llm::build_step_graph(m, step);
      if (!std::isfinite(g.total_flops()) || !std::isfinite(g.total_bytes())) std::abort();
    }
  } catch (const ltc::InputError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    fuzz_gpu(text);
  } else {
    fuzz_model(text);
  }
  return 0;
}
