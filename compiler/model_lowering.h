// Model lowering: one decode or prefill step of a model (the model/llm step graph) becomes an LMMA
// trace: every operator of every decoder layer a kernel named "L<layer>.<op>", plus the
// embedding and the head. Low-bit linear layers on a LUT GPU are LUT mpGEMMs whose tables come
// from a precompute kernel or, with fusion, from the preceding norm / FFN activation kernel
// (which then stores tables instead of activations); o_proj's tables always need their own
// kernel. Attention is one flash-style MMA kernel per step over the KV cache; dense linears
// (the LM head, or every linear on a GPU without LUT cores) are MMA kernels.
#pragma once

#include "model/hw/gpu.h"
#include "model/llm/graph.h"
#include "traces/trace.h"

#include <cstdint>
#include <string>

namespace ltc::compiler {

struct ModelLoweringOptions {
  bool fuse_precompute = true;   // false: a precompute kernel before every mpGEMM input
  bool quantize_tables = false;  // int8 tables (q8 LMMAs)
  int64_t group_size = 0;        // weight quantization group; 0 = per output channel
};

// Throws InputError for a bad step or a GPU / format mismatch. `step.precompute` is set from
// the options and the GPU (tables only on LUT GPUs with low-bit weights).
traces::Trace compile_model(const llm::ModelConfig& model, llm::StepConfig step,
                            const hw::GpuConfig& gpu, const ModelLoweringOptions& options = {});

struct TraceSummary {
  uint64_t kernels = 0;
  uint64_t static_instructions = 0;  // lines of warp programs
  uint64_t warp_instructions = 0;    // after loop expansion, summed over every warp of the grid
  uint64_t lmmas = 0, mmas = 0;      // executed over the whole grid
};
TraceSummary summarize(const traces::Trace& t);

}  // namespace ltc::compiler
