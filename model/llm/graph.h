// The per-layer operator dataflow graph of one model step (decode or prefill), shared by the
// compiler's model lowering and the tile-level roofline: one list of operators, each with its
// GEMM shape or element count, FLOPs and bytes by precision.
//
// Graph of one decoder layer (pre-norm; names follow Hugging Face modules):
//   attn_norm [-> attn_precompute] -> q_proj, k_proj, v_proj -> rope (RoPE models, on the
//   rotary dims of each head) -> attention (QK^T, softmax, PV over the KV cache, appends the new
//   K/V) [-> o_precompute] -> o_proj [-> post_attn_norm (Gemma-2)] -> attn_residual -> ffn_norm
//   [-> ffn_precompute] -> gate_proj + up_proj (gated) or up_proj (plain, OPT's fc1) -> ffn_act
//   (act(gate) * up, or act(up)) [-> down_precompute] -> down_proj (OPT's fc2)
//   [-> post_ffn_norm (Gemma-2)] -> ffn_residual
// Parallel attention and MLP (ModelConfig::parallel_attention: Phi, Falcon, GPT-J): the FFN
// reads attn_norm's output (no ffn_norm unless the model has two parallel norms), and both
// residual adds (attention branch + MLP branch, + the layer input) come after down_proj.
// Before it: embedding (token lookup, + learned positions, + embedding norm). After the last
// layer: final_norm -> lm_head (on the last token of each sequence).
//
// mpGEMMs (low-bit weights on a LUT tensor core) are split into a table-precompute operator
// (kTablePrecompute, CUDA cores: reads activations, writes half tables) and the LUT mpGEMM, which
// reads tables instead of activations. With fusion the precompute is done by the producer
// (the norm or the FFN activation): the precompute op stays in the list with `fused_into` naming
// that producer and only its extra work (no activation read, no launch), and the producer writes
// tables instead of activations. o_proj's input comes out of attention and is never fused.
// PrecomputeMode::kInKernel has no precompute op: every mpGEMM reads activations and builds its
// tables itself (Op::builds_tables); the cost model charges the redundant CUDA-core work.
#pragma once

#include "model/golden/dtype.h"
#include "model/llm/model_config.h"
#include "model/llm/precision.h"
#include "model/llm/routing.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ltc::llm {

enum class Phase : uint8_t { kDecode, kPrefill };
std::string_view phase_name(Phase p);  // "decode", "prefill"
Phase parse_phase(std::string_view s, std::string_view what = "--phase");

enum class PrecomputeMode : uint8_t {
  kNone,      // no tables: dense or dequantize-then-MAC GEMMs read activations
  kSeparate,  // a table-precompute kernel before every mpGEMM input
  kFused,     // precompute fused into the preceding norm / activation where the graph allows
  kInKernel,  // conventional LUT-GEMM practice: each mpGEMM reads activations and builds its
              // tables inside the kernel, per warp, redundantly across the warps and thread
              // blocks that share an activation tile (no precompute op in the graph)
};

// Which kernels run a step's operators: the list both performance models read (Op::launches,
// Op::moved_bytes), decided here once.
enum class KernelPlan : uint8_t {
  // The reference step the roofline is calibrated on (docs/performance-models.md): Hugging Face
  // eager PyTorch with SDPA, e.g. RoPE as five elementwise kernels on q and on k moving 10
  // elements per rotated element, the gated activation as two kernels, attention as four launches.
  kReference,
  // The compiler's kernels (compiler/model_lowering.h): one fused kernel per operator, attention
  // as its KV append plus split-KV decode and combine (decode) or one FlashAttention kernel.
  kCompiled,
};
std::string_view kernel_plan_name(KernelPlan p);  // "reference", "compiled"
KernelPlan parse_kernel_plan(std::string_view s, std::string_view what = "--kernels");

struct StepConfig {
  Phase phase = Phase::kDecode;
  int64_t batch = 1;     // sequences
  int64_t context = 0;   // decode: tokens already in the KV cache (L); prefill: ignored (0)
  int64_t seq = 1;       // prefill: tokens per sequence (S); decode: 1
  WeightFormat weights;  // linear layers of the decoder
  golden::DType acts = golden::DType::kFp16;    // GEMM activation operand
  golden::DType hidden = golden::DType::kFp16;  // stored activations between ops, KV cache
  PrecomputeMode precompute = PrecomputeMode::kNone;
  int lut_k = 4;                 // activations per table (tensor-core K)
  bool quantize_tables = false;  // int8 table entries + one fp32 scale per table
  bool quantize_head = false;    // lm_head uses `weights` too (default: stays in `hidden`)
  KernelPlan kernels = KernelPlan::kReference;
  ExpertLoad expert_load;  // MoE layers: how tokens spread over the routed experts

  // Both throw InputError naming --batch, --context or --seq outside 1..kMaxStepBatch and
  // 0 (decode context) or 1 (prefill seq) .. kMaxStepTokens.
  static constexpr int64_t kMaxStepBatch = int64_t{1} << 20;
  static constexpr int64_t kMaxStepTokens = int64_t{1} << 24;
  static StepConfig decode(int64_t batch, int64_t context);  // B sequences, L cached tokens
  static StepConfig prefill(int64_t batch, int64_t seq);     // B sequences of S tokens
  // Table entry dtype: int8 when quantized, int16 for int activations (exact), else the acts.
  golden::DType table_dtype() const;
  // Bytes of the half tables for `rows` x `k_cols` activations (per weight basis).
  double table_bytes(int64_t rows, int64_t k_cols) const;
  // Rows every GEMM of a decoder layer processes: batch x new tokens.
  int64_t rows() const { return batch * new_tokens(); }
  // Tokens this step processes per sequence (1 in decode, S in prefill).
  int64_t new_tokens() const { return phase == Phase::kDecode ? 1 : seq; }
  // KV length attention reads per sequence: L + 1 in decode, S in prefill.
  int64_t kv_length() const { return phase == Phase::kDecode ? context + 1 : seq; }
  void validate() const;  // InputError naming the flag
};

enum class OpKind : uint8_t {
  kEmbedding,        // gather of token rows (+ positions)
  kNorm,             // RMSNorm / LayerNorm over hidden
  kTablePrecompute,  // half tables for an mpGEMM input (CUDA cores)
  kLinear,           // Y[M,N] = X[M,K] W[N,K]^T: weight GEMM (low-bit or dense)
  kRope,             // rotary embedding on q and k
  kAttention,        // softmax(Q K^T / sqrt(d)) V over the KV cache, flash-style, one kernel
  kActivation,       // FFN activation (x gated product)
  kResidual,         // elementwise add
  kRouting,          // MoE: router top-k, token dispatch to experts, weighted combine
};
std::string_view op_kind_name(OpKind k);

struct GemmShape {
  int64_t batch = 1;  // independent GEMMs of this shape (attention: sequences x heads)
  int64_t m = 0, n = 0, k = 0;
};

// kAttention: the two batched GEMMs are QK^T [q_len x kv_len x head_dim] and
// PV [q_len x head_dim x kv_len], per (sequence, head).
// head_dim is the query/key width; v_head_dim the value width (MLA: 0 means head_dim).
struct AttentionShape {
  int64_t batch = 0, heads = 0, kv_heads = 0, head_dim = 0;
  int64_t q_len = 0;    // new tokens per sequence
  int64_t kv_len = 0;   // keys per sequence (cache + new; decode: at most the window)
  bool causal = false;  // prefill: query i sees keys <= i (FLOPs count only the visible half)
  int64_t v_head_dim = 0;
  int64_t window = 0;   // sliding window: query i sees keys i - window + 1 .. i; 0: all
  bool latent = false;  // MLA decode: K and V are one cached latent row (kv_heads 1)
  int64_t v_dim() const { return v_head_dim > 0 ? v_head_dim : head_dim; }
  // A prefill whose sliding window ends more than its causal head before the prompt does: the
  // compiled plan runs it as a band of equal windows plus that causal head, in 64-key tiles
  // (kBandTile; compiler/model_lowering.cpp). The head is the window's tiles rounded up to even.
  static constexpr int64_t kBandTile = 64;
  int64_t band_window_tiles() const { return (window - 1 + kBandTile - 1) / kBandTile; }
  int64_t band_head_tiles() const { return band_window_tiles() + band_window_tiles() % 2; }
  // A prefill whose prompt runs past its sliding window (the reference's SDPA takes an explicit
  // banded mask).
  bool past_window() const { return causal && window > 0 && window < q_len; }
  bool banded() const {
    return past_window() && band_head_tiles() < (q_len + kBandTile - 1) / kBandTile;
  }
  // Query-key pairs computed per (sequence, head): all in decode, the causal (banded) triangle
  // in prefill.
  double pairs() const;
  GemmShape score() const { return {batch * heads, q_len, kv_len, head_dim}; }
  GemmShape value() const { return {batch * heads, q_len, v_dim(), kv_len}; }
};

struct Op {
  std::string name;  // "q_proj", "attn_norm", ...
  OpKind kind = OpKind::kNorm;
  GemmShape gemm;              // kLinear: the weight GEMM (batch 1); else zeros
  bool low_bit = false;        // kLinear with low-bit weights (mpGEMM)
  bool reads_tables = false;   // kLinear fed by a precompute op (LUT tensor core)
  std::string table_from;      // kLinear: the precompute op whose tables it reads
  bool builds_tables = false;  // kLinear, PrecomputeMode::kInKernel: reads activations and builds
                               // its tables itself (reads_tables is true, table_from empty)
  AttentionShape attention;    // kAttention
  int64_t elements = 0;        // elementwise ops: output elements; precompute: table entries
  int64_t row_elements = 0;    // kNorm: elements of one normalized row (its reduction)
  bool layer_norm = false;     // kNorm: LayerNorm (mean and variance, a bias), else RMSNorm
  double flops = 0;            // multiply-add = 2; precompute counts one add per entry
  double weight_bytes = 0;     // weights (+ scales) read once per op
  double read_bytes = 0;       // activations / tables read
  double write_bytes = 0;      // activations / tables written
  double kv_bytes = 0;         // KV cache read + appended (attention)
  std::string fused_into;      // non-empty: this op runs inside that producer (no own launch)
  // kLinear: the GEMM this one shares its input with and runs in one launch with, its weight
  // concatenated along N (k_proj, v_proj -> q_proj; up_proj -> gate_proj): the reference step's
  // fused QKV and gate+up linears (model/roofline/README.md). Empty: its own launch (or the
  // first of its group).
  std::string launch_with;
  int64_t passthrough_elements = 0;  // kRope: q/k elements outside the rotary dims (copied)
  bool grouped = false;  // kLinear: a routed-expert GEMM, one group of rows per active expert
  // kLinear grouped: the tokens routed and each routed expert's probability of being picked by
  // one (llm::expert_pick): how the rows spread over the groups (llm::group_row_tiles).
  int64_t group_tokens = 0;
  std::vector<double> group_pick;
  // Under the reference plan: elements the op adds into its output with atomics (the MoE
  // combine's index_add_ of the expert rows back to token order).
  int64_t atomic_adds = 0;
  // Under the step's KernelPlan: kernels the op launches (0: fused into its producer, or a
  // member of a launch group) and bytes they move (its unique bytes, plus the intermediates an
  // eager reference writes and reads back). Linear ops' GEMM kernels are the roofline's to tile
  // (split-K adds a reduce kernel there).
  int launches = 1;
  double moved_bytes = 0;
  bool tensor_core() const { return kind == OpKind::kLinear || kind == OpKind::kAttention; }
  double bytes() const { return weight_bytes + read_bytes + write_bytes + kv_bytes; }
};

// Decoder layers of one kind (ModelConfig::layer_kind): same operators.
struct LayerGroup {
  LayerKind kind;
  int64_t count = 0;
  std::vector<Op> ops;
};

struct StepGraph {
  ModelConfig model;
  StepConfig step;
  std::vector<Op> embedding;  // once per step, before the layers
  std::vector<Op> layer;      // one decoder layer of the most common kind (all, when alike)
  std::vector<Op> head;       // once per step, after the layers
  int64_t layers = 0;         // layers of that kind
  LayerKind layer_kind;
  // The other layer kinds (DeepSeek's dense first layers, Gemma-2's global layers), and each
  // decoder layer's group: 0 is `layer`, i > 0 is other_layers[i - 1].
  std::vector<LayerGroup> other_layers;
  std::vector<int> layer_group;
  // MoE models: the routing the expert GEMMs assume ("uniform: 7.7 +- 0.4 of 8 experts
  // active, 2 tokens each"), per MoE layer kind; empty for dense models.
  std::string routing;

  const std::vector<Op>& ops_of_layer(int64_t l) const;
  int64_t all_layers() const { return int64_t(layer_group.size()); }
  double layer_flops() const;
  double total_flops() const;  // embedding + every layer + head
  double total_bytes() const;
  const Op* find(std::string_view name) const;  // any list; nullptr if absent
};

// Throws InputError on an invalid step.
StepGraph build_step_graph(const ModelConfig& model, const StepConfig& step);

}  // namespace ltc::llm
