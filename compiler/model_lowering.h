// Model lowering: one decode or prefill step of a model (the model/llm step graph) becomes an LMMA
// trace. Every graph op of every decoder layer has its kernels named "L<layer>.<op>" or
// "L<layer>.<op>.<part>" (likewise "embedding.<op>", "head.<op>"): an op's time is the sum of
// the kernels whose name is the op's or starts with it plus "." (a launch group's GEMM carries
// its members' time too). Each op's kernels move the graph op's bytes (unique bytes touched;
// a launch group's, its members' together; tests/compiler/model_lowering_test.cpp):
//   norms, residual, FFN activation, embedding: one block per token, 16-byte vectors per thread
//     (512 B per warp access); a norm reduces in registers + shared memory; a fused precompute
//     stores the next mpGEMM's tables instead of the activations.
//   rope: q and k rotated in one kernel, q written in the attention layout and k straight into
//     the K cache (the K half of the cache append).
//   attention: .kv_append (the new V rows, and K rows for models without RoPE, into the cache);
//     decode: split-KV (flash-decoding) kernel over (splits, seq x KV head) + .combine (the keys
//     no split took, then the partial rows merged); causal prefill: FlashAttention-2 blocks of
//     paired query tiles p and T-1-p (T+1 key tiles each, the exact causal triangle).
//   linears: one GEMM per launch group (llm::Op::launch_with: QKV and gate+up run as one GEMM
//     named after the group's first op, N concatenated, as the roofline costs them): LUT mpGEMMs
//     (".lmma"; tables from a fused producer or "<op>.precompute") on LUT GPUs with low-bit
//     weights, else MMA GEMMs (compiler/gemm_lowering.h). A grouped (MoE expert) GEMM is one
//     batched kernel, the experts its grid z, with one precompute over every expert's rows when
//     unfused (multi-basis binary LUT weights: one LUT mpGEMM per expert, ".e<i>").
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

// The graph op a kernel of compile_model runs: "L3.q_proj.lmma" -> "q_proj", "head.lm_head" ->
// "lm_head" (a launch group's GEMM names its first op).
std::string kernel_graph_op(const std::string& kernel);

struct TraceSummary {
  uint64_t kernels = 0;
  uint64_t static_instructions = 0;  // lines of warp programs
  uint64_t warp_instructions = 0;    // after loop expansion, summed over every warp of the grid
  uint64_t lmmas = 0, mmas = 0;      // executed over the whole grid
};
TraceSummary summarize(const traces::Trace& t);

}  // namespace ltc::compiler
