#include "model/llm/graph.h"

#include "common/error.h"
#include "common/int_math.h"

#include <string>

namespace ltc::llm {
namespace {

// FLOPs per element of the CUDA-core operators (order of magnitude: reductions, rsqrt, exp).
constexpr double kRmsNormFlops = 4, kLayerNormFlops = 7, kRopeFlops = 3, kSiluFlops = 5,
                 kGeluFlops = 8, kReluFlops = 1;

// precompute()'s answer under PrecomputeMode::kInKernel: the GEMM builds its own tables.
constexpr char kInKernelTables[] = "(in kernel)";

class GraphBuilder {
 public:
  GraphBuilder(const ModelConfig& m, const StepConfig& s) : m_(m), s_(s) {
    hb_ = dtype_bytes(s.hidden);
    rows_ = s.rows();
  }

  StepGraph build() {
    StepGraph g;
    g.model = m_;
    g.step = s_;
    g.layers = m_.layers;
    build_embedding(g.embedding);
    build_layer(g.layer);
    build_head(g.head);
    for (auto* ops : {&g.embedding, &g.layer, &g.head}) {
      for (Op& op : *ops) assign_launches(op);
    }
    return g;
  }

 private:
  bool lut() const { return s_.precompute != PrecomputeMode::kNone && s_.weights.is_low_bit(); }
  bool fused() const { return s_.precompute == PrecomputeMode::kFused; }
  bool in_kernel() const { return s_.precompute == PrecomputeMode::kInKernel; }
  int bases() const {
    return s_.weights.kind == WeightFormatKind::kMultiBasisBinary ? s_.weights.bases : 1;
  }

  // Op::launches and Op::moved_bytes under the step's KernelPlan.
  void assign_launches(Op& op) const {
    const bool reference = s_.kernels == KernelPlan::kReference;
    op.launches = 1;
    op.moved_bytes = op.bytes();
    if (!op.fused_into.empty() || !op.launch_with.empty()) {
      op.launches = 0;
      return;
    }
    switch (op.kind) {
      case OpKind::kRope:
        if (reference) {
          // On q and k each: x*cos, rotate_half (neg of one half, cat), *sin, add, five kernels
          // moving 10 elements per rotated element (the op counts 2); partial rotary adds one
          // cat of both parts.
          const double rotated = double(op.elements), pass = double(op.passthrough_elements);
          const bool partial = pass > 0;
          op.moved_bytes = hb_ * (10.0 * rotated + (partial ? 2.0 * (rotated + pass) : 0.0));
          op.launches = partial ? 12 : 10;
        }
        break;
      case OpKind::kActivation:
        // Gated: act(gate) then * up, two kernels moving 10 elements per output, not 6.
        if (reference && op.read_bytes > 1.5 * op.write_bytes) {
          op.moved_bytes = op.bytes() * 10.0 / 6.0;
          op.launches = 2;
        }
        break;
      case OpKind::kAttention:
        // Reference: SDPA's kernel and its second (split-KV reduce or statistics memset), the K
        // and V cache copies. Compiled: the KV append, then the attention kernel (a decode that
        // splits the KV cache adds its combine: the cost models count it where they split).
        op.launches = reference ? 4 : 2;
        break;
      default:
        break;
    }
  }

  Op norm(const std::string& name, int64_t rows) const {
    Op op;
    op.name = name;
    op.kind = OpKind::kNorm;
    op.elements = rows * m_.hidden;
    const bool ln = m_.norm == NormKind::kLayerNorm;
    op.flops = double(op.elements) * (ln ? kLayerNormFlops : kRmsNormFlops);
    op.weight_bytes = double(ln ? 2 : 1) * m_.hidden * hb_;
    op.read_bytes = double(op.elements) * hb_;
    op.write_bytes = double(op.elements) * hb_;
    return op;
  }

  // Appends a precompute for the `cols`-wide output of `producer` (the last op in `ops`) when the
  // step uses tables; returns its name ("" without tables).
  std::string precompute(std::vector<Op>& ops, const std::string& name, int64_t cols,
                         bool fusable) const {
    if (!lut()) return "";
    if (in_kernel()) return kInKernelTables;
    Op op;
    op.name = name;
    op.kind = OpKind::kTablePrecompute;
    const int64_t tables = rows_ * ceil_div(cols, s_.lut_k) * bases();
    op.elements = tables * (int64_t(1) << (s_.lut_k - 1));
    op.flops = double(op.elements);  // one add per entry (each entry extends a smaller one)
    op.write_bytes = s_.table_bytes(rows_, cols) * bases();
    if (fused() && fusable) {
      Op& producer = ops.back();
      op.fused_into = producer.name;
      producer.write_bytes = 0;  // the producer writes tables instead of activations
    } else {
      op.read_bytes = double(rows_) * cols * hb_;
    }
    ops.push_back(op);
    return name;
  }

  Op linear(const std::string& name, int64_t rows, int64_t n, int64_t k, bool low_bit,
            const std::string& tables, bool bias) const {
    Op op;
    op.name = name;
    op.kind = OpKind::kLinear;
    op.gemm = {1, rows, n, k};
    op.low_bit = low_bit;
    op.flops = 2.0 * rows * n * k;
    const double bpw =
        low_bit ? s_.weights.bits_per_weight()
                : (s_.weights.is_low_bit() ? golden::dtype_bits(s_.hidden) : s_.weights.bits);
    op.weight_bytes = double(n) * k * bpw / 8 + (bias ? n * hb_ : 0.0);
    if (tables == kInKernelTables) {
      op.reads_tables = true;
      op.builds_tables = true;
      op.read_bytes = double(rows) * k * dtype_bytes(s_.acts);
    } else if (!tables.empty()) {
      op.reads_tables = true;
      op.table_from = tables;
      op.read_bytes = s_.table_bytes(rows, k) * bases();
    } else {
      op.read_bytes =
          double(rows) * k * (low_bit || !s_.weights.is_low_bit() ? dtype_bytes(s_.acts) : hb_);
    }
    op.write_bytes = double(rows) * n * hb_;
    return op;
  }

  Op elementwise(const std::string& name, OpKind kind, int64_t elements, int inputs,
                 double flops_per_element) const {
    Op op;
    op.name = name;
    op.kind = kind;
    op.elements = elements;
    op.flops = elements * flops_per_element;
    op.read_bytes = double(elements) * inputs * hb_;
    op.write_bytes = double(elements) * hb_;
    return op;
  }

  void build_embedding(std::vector<Op>& ops) const {
    Op op = elementwise("embedding", OpKind::kEmbedding, rows_ * m_.hidden, 1, 0);
    if (m_.position == PositionKind::kLearned) {
      op.read_bytes *= 2;  // token row + position row
      op.flops = double(op.elements);
    }
    ops.push_back(op);
    if (m_.embedding_norm) {
      Op n = norm("embedding_norm", rows_);
      ops.push_back(n);
    }
  }

  void build_layer(std::vector<Op>& ops) const {
    const bool low = s_.weights.is_low_bit();
    const bool qkv_bias = m_.linear_bias || m_.qkv_bias;
    const bool parallel = m_.parallel_attention;
    ops.push_back(norm("attn_norm", rows_));
    const std::string qkv_tables = precompute(ops, "attn_precompute", m_.hidden, true);
    ops.push_back(linear("q_proj", rows_, m_.q_dim(), m_.hidden, low, qkv_tables, qkv_bias));
    ops.push_back(linear("k_proj", rows_, m_.kv_dim(), m_.hidden, low, qkv_tables, qkv_bias));
    ops.back().launch_with = "q_proj";
    ops.push_back(linear("v_proj", rows_, m_.kv_dim(), m_.hidden, low, qkv_tables, qkv_bias));
    ops.back().launch_with = "q_proj";
    if (m_.position == PositionKind::kRope) {
      const int64_t heads = m_.heads + m_.kv_heads;
      Op rope = elementwise("rope", OpKind::kRope, rows_ * heads * m_.rotary_dims(), 1, kRopeFlops);
      rope.passthrough_elements = rows_ * heads * (m_.head_dim - m_.rotary_dims());
      rope.read_bytes += double(rope.passthrough_elements) * hb_;
      rope.write_bytes += double(rope.passthrough_elements) * hb_;
      ops.push_back(rope);
    }
    ops.push_back(attention());
    const std::string o_tables = precompute(ops, "o_precompute", m_.q_dim(), false);
    ops.push_back(linear("o_proj", rows_, m_.hidden, m_.q_dim(), low, o_tables, m_.linear_bias));
    if (m_.post_norms) ops.push_back(norm("post_attn_norm", rows_));
    std::string ffn_tables = qkv_tables;  // parallel with one norm: the FFN reads attn_norm's
    if (!parallel) {
      ops.push_back(elementwise("attn_residual", OpKind::kResidual, rows_ * m_.hidden, 2, 1));
    }
    if (!parallel || m_.parallel_norms > 1) {
      ops.push_back(norm("ffn_norm", rows_));
      ffn_tables = precompute(ops, "ffn_precompute", m_.hidden, true);
    }
    const bool gated = m_.ffn == FfnKind::kGated;
    if (gated) {
      ops.push_back(
          linear("gate_proj", rows_, m_.intermediate, m_.hidden, low, ffn_tables, m_.linear_bias));
    }
    ops.push_back(
        linear("up_proj", rows_, m_.intermediate, m_.hidden, low, ffn_tables, m_.linear_bias));
    if (gated) ops.back().launch_with = "gate_proj";
    const std::string& a = m_.activation;
    const double act_flops = a.find("relu") != std::string::npos   ? kReluFlops
                             : a.find("gelu") != std::string::npos ? kGeluFlops
                                                                   : kSiluFlops;
    ops.push_back(elementwise("ffn_act", OpKind::kActivation, rows_ * m_.intermediate,
                              gated ? 2 : 1, act_flops + (gated ? 1 : 0)));
    const std::string down_tables = precompute(ops, "down_precompute", m_.intermediate, true);
    ops.push_back(
        linear("down_proj", rows_, m_.hidden, m_.intermediate, low, down_tables, m_.linear_bias));
    if (m_.post_norms) ops.push_back(norm("post_ffn_norm", rows_));
    if (parallel) {
      // Attention branch + MLP branch, then + the layer input.
      ops.push_back(elementwise("attn_residual", OpKind::kResidual, rows_ * m_.hidden, 2, 1));
    }
    ops.push_back(elementwise("ffn_residual", OpKind::kResidual, rows_ * m_.hidden, 2, 1));
  }

  Op attention() const {
    Op op;
    op.name = "attention";
    op.kind = OpKind::kAttention;
    AttentionShape& a = op.attention;
    a.batch = s_.batch;
    a.heads = m_.heads;
    a.kv_heads = m_.kv_heads;
    a.head_dim = m_.head_dim;
    a.q_len = s_.new_tokens();
    a.kv_len = s_.kv_length();
    a.causal = s_.phase == Phase::kPrefill;
    // Query-key pairs actually computed: all in decode, the lower triangle in prefill.
    const double pairs =
        a.causal ? double(a.q_len) * (a.q_len + 1) / 2 : double(a.q_len) * a.kv_len;
    op.flops = 4.0 * a.batch * a.heads * a.head_dim * pairs;
    op.elements = int64_t(a.batch * a.heads * pairs);  // scores through softmax
    op.read_bytes = double(rows_) * m_.q_dim() * hb_;
    op.write_bytes = double(rows_) * m_.q_dim() * hb_;
    const double kv_row = 2.0 * m_.kv_dim() * hb_;  // K and V of one token
    op.kv_bytes = double(a.batch) * a.kv_len * kv_row + double(rows_) * kv_row;  // read + append
    return op;
  }

  void build_head(std::vector<Op>& ops) const {
    const int64_t last = s_.batch;  // logits of the last token of each sequence
    ops.push_back(norm("final_norm", last));
    Op head = linear("lm_head", last, m_.vocab, m_.hidden,
                     s_.quantize_head && s_.weights.is_low_bit(), "", false);
    if (!head.low_bit) {
      head.weight_bytes = double(m_.vocab) * m_.hidden * hb_;
      head.read_bytes = double(last) * m_.hidden * hb_;
    }
    ops.push_back(head);
  }

  const ModelConfig& m_;
  const StepConfig& s_;
  double hb_ = 2;
  int64_t rows_ = 1;
};

double sum_flops(const std::vector<Op>& ops) {
  double f = 0;
  for (const auto& op : ops) f += op.flops;
  return f;
}
double sum_bytes(const std::vector<Op>& ops) {
  double b = 0;
  for (const auto& op : ops) b += op.bytes();
  return b;
}

}  // namespace

std::string_view phase_name(Phase p) {
  return p == Phase::kDecode ? "decode" : "prefill";
}

Phase parse_phase(std::string_view s, std::string_view what) {
  if (s == "decode") return Phase::kDecode;
  if (s == "prefill") return Phase::kPrefill;
  throw InputError(std::string(what) + ": '" + std::string(s) + "' (valid: decode, prefill)");
}

std::string_view op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::kEmbedding:
      return "embedding";
    case OpKind::kNorm:
      return "norm";
    case OpKind::kTablePrecompute:
      return "precompute";
    case OpKind::kLinear:
      return "linear";
    case OpKind::kRope:
      return "rope";
    case OpKind::kAttention:
      return "attention";
    case OpKind::kActivation:
      return "activation";
    case OpKind::kResidual:
      return "residual";
  }
  return "?";
}

namespace {

// Batch and token counts far above any deployment that keep every row count (batch x tokens),
// KV-cache size and attention tile loop inside int64 and fast.
void check_step_extent(const char* flag, int64_t v, int64_t lo, int64_t hi) {
  if (v < lo || v > hi) {
    throw InputError(std::string(flag) + ": " + std::to_string(v) + " is out of range (valid: " +
                     std::to_string(lo) + " .. " + std::to_string(hi) + ")");
  }
}

}  // namespace

StepConfig StepConfig::decode(int64_t batch, int64_t context) {
  check_step_extent("--batch", batch, 1, kMaxStepBatch);
  check_step_extent("--context", context, 0, kMaxStepTokens);
  StepConfig s;
  s.phase = Phase::kDecode;
  s.batch = batch;
  s.context = context;
  s.seq = 1;
  return s;
}

StepConfig StepConfig::prefill(int64_t batch, int64_t seq) {
  check_step_extent("--batch", batch, 1, kMaxStepBatch);
  check_step_extent("--seq", seq, 1, kMaxStepTokens);
  StepConfig s;
  s.phase = Phase::kPrefill;
  s.batch = batch;
  s.context = 0;
  s.seq = seq;
  return s;
}

golden::DType StepConfig::table_dtype() const {
  return golden::lut_table_dtype(acts, quantize_tables);
}

double StepConfig::table_bytes(int64_t rows, int64_t k_cols) const {
  const int64_t tables = rows * ceil_div(k_cols, lut_k);
  double per_table = double(int64_t(1) << (lut_k - 1)) * dtype_bytes(table_dtype());
  if (quantize_tables) per_table += 4;  // fp32 scale
  return tables * per_table;
}

void StepConfig::validate() const {
  if (batch < 1) throw InputError("--batch: " + std::to_string(batch) + " must be >= 1");
  if (phase == Phase::kDecode && context < 0) {
    throw InputError("--context: " + std::to_string(context) + " must be >= 0");
  }
  if (phase == Phase::kPrefill && seq < 1) {
    throw InputError("--seq: " + std::to_string(seq) + " must be >= 1");
  }
  if (lut_k < 1 || lut_k > 8) throw InputError("lut_k: " + std::to_string(lut_k) + " (valid 1..8)");
}

double StepGraph::layer_flops() const {
  return sum_flops(layer);
}

double StepGraph::total_flops() const {
  return sum_flops(embedding) + layers * sum_flops(layer) + sum_flops(head);
}

double StepGraph::total_bytes() const {
  return sum_bytes(embedding) + layers * sum_bytes(layer) + sum_bytes(head);
}

const Op* StepGraph::find(std::string_view name) const {
  for (const auto* list : {&embedding, &layer, &head}) {
    for (const auto& op : *list) {
      if (op.name == name) return &op;
    }
  }
  return nullptr;
}

std::string_view kernel_plan_name(KernelPlan p) {
  return p == KernelPlan::kCompiled ? "compiled" : "reference";
}

KernelPlan parse_kernel_plan(std::string_view s, std::string_view what) {
  if (s == "reference") return KernelPlan::kReference;
  if (s == "compiled") return KernelPlan::kCompiled;
  throw InputError(std::string(what) + ": unknown kernel plan '" + std::string(s) +
                   "' (valid: reference, compiled)");
}

StepGraph build_step_graph(const ModelConfig& model, const StepConfig& step) {
  model.validate();
  step.validate();
  return GraphBuilder(model, step).build();
}

}  // namespace ltc::llm
