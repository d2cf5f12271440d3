#include "model/llm/graph.h"

#include "common/error.h"
#include "common/int_math.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

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
    if (m.is_moe()) routing_ = routing_stats(rows_, m.moe.experts, m.moe.top_k, s.expert_load);
  }

  StepGraph build() {
    StepGraph g;
    g.model = m_;
    g.step = s_;
    build_embedding(g.embedding);
    build_head(g.head);
    const auto kinds = m_.layer_kinds();
    size_t primary = 0;
    for (size_t i = 1; i < kinds.size(); ++i) {
      if (kinds[i].second > kinds[primary].second) primary = i;
    }
    std::vector<int> group_of_kind(kinds.size());
    for (size_t i = 0; i < kinds.size(); ++i) {
      std::vector<Op> ops;
      build_layer(ops, kinds[i].first);
      if (i == primary) {
        g.layer = std::move(ops);
        g.layers = kinds[i].second;
        g.layer_kind = kinds[i].first;
        group_of_kind[i] = 0;
      } else {
        g.other_layers.push_back(LayerGroup{kinds[i].first, kinds[i].second, std::move(ops)});
        group_of_kind[i] = int(g.other_layers.size());
      }
    }
    for (int64_t l = 0; l < m_.layers; ++l) {
      const LayerKind k = m_.layer_kind(l);
      for (size_t i = 0; i < kinds.size(); ++i) {
        if (kinds[i].first == k) g.layer_group.push_back(group_of_kind[i]);
      }
    }
    for (auto* ops : {&g.embedding, &g.layer, &g.head}) {
      for (Op& op : *ops) assign_launches(op);
    }
    for (auto& grp : g.other_layers) {
      for (Op& op : grp.ops) assign_launches(op);
    }
    if (m_.is_moe()) g.routing = routing_note();
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
        // splits the KV cache adds its combine: the cost models count it where they split; a
        // banded prefill runs its causal head apart).
        op.launches = reference ? 4 : op.attention.banded() ? 3 : 2;
        // MLA's reference (docs/performance-models.md): decode copies the latent and RoPE key
        // into their caches, scores as two matmuls (latent and RoPE parts), their add, the
        // scale, softmax in FP32, the cast back, the values matmul (the roofline adds the
        // split-K reduce kernels of those matmuls); prefill copies both, concatenates the query
        // and the key parts, SDPA (two kernels), its output made contiguous.
        if (reference && m_.is_mla()) op.launches = op.attention.latent ? 9 : 7;
        // Those prefill copies are kernels of their own beside SDPA's, each an eager strided
        // copy (CatArrayBatchedCopy, the output's direct copy): the key's nope part and the RoPE
        // key broadcast to every head into one [rows, heads, nope + rope] key, the same for the
        // query, and the output [heads, rows, v] made [rows, heads * v].
        if (reference && m_.is_mla() && !op.attention.latent) {
          const MlaConfig& a = m_.mla;
          const double rows = double(op.attention.batch) * op.attention.q_len;
          const double per_head = double(a.qk_nope_dim + (a.qk_nope_dim + a.qk_rope_dim) +
                                         2 * (a.qk_nope_dim + a.qk_rope_dim) + 2 * a.v_head_dim);
          op.moved_bytes +=
              hb_ * rows * (double(op.attention.heads) * per_head + double(a.qk_rope_dim));
        }
        // A prompt longer than the window: K and V repeated to every query head (no GQA with
        // an explicit mask), then SDPA with the banded mask.
        if (reference && op.attention.past_window() && op.attention.kv_heads < op.attention.heads) {
          op.launches += 2;
          op.moved_bytes += 2.0 * double(op.attention.batch) * op.attention.q_len *
                            double(op.attention.heads + op.attention.kv_heads) *
                            op.attention.head_dim * hb_;
        }
        break;
      case OpKind::kLinear:
        // The compiler lowers a grouped (MoE expert) GEMM as one batched kernel, the experts its
        // grid z (LUT or MMA), but a multi-basis binary LUT mpGEMM as one kernel per active
        // expert; the reference step's grouped GEMM is one launch.
        if (!reference && op.gemm.batch > 1 && op.reads_tables &&
            s_.weights.kind == WeightFormatKind::kMultiBasisBinary) {
          op.launches = int(op.gemm.batch);
        }
        break;
      case OpKind::kRouting:
        if (reference) routing_launches(op);
        break;
      default:
        break;
    }
  }

  // The MoE routing ops' kernels in the reference step, as its kernel lists show them
  // (configs/calibration/h200-moe-profile.json, docs/performance-models.md), and the bytes they
  // move (ids and counts as int64, routing weights in FP32 until cast back).
  void routing_launches(Op& op) const {
    const MoeConfig& e = m_.moe;
    const double rows = double(rows_), pairs = double(rows_ * e.top_k), h = double(m_.hidden);
    const double experts = double(e.experts);
    if (op.name == "router_topk") {
      // softmax (or sigmoid) in FP32, topk (its select and its sort of the k winners), and
      // when renormalized the sum and the divide.
      op.launches = 3 + (e.norm_topk ? 2 : 0);
      op.moved_bytes = rows * experts * (hb_ + 8) + pairs * 12 + (e.norm_topk ? pairs * 12 : 0);
    } else if (op.name == "moe_dispatch") {
      // argsort (three copies, the index fill, the sort), the count (zeros, ones, scatter_add_),
      // order // k, the row gather, its cast to the experts' dtype, cumsum (two kernels), the
      // offsets' cast: 14 kernels; the rows are read and written twice.
      op.launches = 14;
      op.moved_bytes = 4.0 * pairs * h * hb_ + 80 * pairs + 16 * experts;
    } else if (op.name == "moe_combine") {
      // The expert rows cast back, the routing weights gathered and cast, the weighted rows,
      // a zeroed output, index_add_ into it (atomic adds), + the shared expert's output (+ its
      // sigmoid gate and multiply in Qwen2-MoE).
      const bool shared = e.shared_intermediate > 0;
      op.launches = 6 + (shared ? 1 : 0) + (e.shared_gate ? 2 : 0);
      op.moved_bytes = pairs * h * 5 * hb_ + pairs * 24 + rows * h * 2 * hb_ +
                       (shared ? 3 * rows * h * hb_ : 0) +
                       (e.shared_gate ? 2 * rows * h * hb_ + 3 * rows * hb_ : 0);
      op.atomic_adds = int64_t(pairs * h);
    }
  }

  Op norm(const std::string& name, int64_t rows, int64_t cols = 0) const {
    if (cols == 0) cols = m_.hidden;
    Op op;
    op.name = name;
    op.kind = OpKind::kNorm;
    op.elements = rows * cols;
    op.row_elements = cols;
    const bool ln = m_.norm == NormKind::kLayerNorm;
    op.layer_norm = ln;
    op.flops = double(op.elements) * (ln ? kLayerNormFlops : kRmsNormFlops);
    op.weight_bytes = double(ln ? 2 : 1) * cols * hb_;
    op.read_bytes = double(op.elements) * hb_;
    op.write_bytes = double(op.elements) * hb_;
    return op;
  }

  // Appends a precompute for the `cols`-wide output of `producer` (the last op in `ops`) when the
  // step uses tables; returns its name ("" without tables).
  std::string precompute(std::vector<Op>& ops, const std::string& name, int64_t cols, bool fusable,
                         int64_t rows = 0) const {
    if (!lut()) return "";
    if (in_kernel()) return kInKernelTables;
    if (rows == 0) rows = rows_;
    Op op;
    op.name = name;
    op.kind = OpKind::kTablePrecompute;
    const int64_t tables = rows * ceil_div(cols, s_.lut_k) * bases();
    op.elements = tables * (int64_t(1) << (s_.lut_k - 1));
    op.flops = double(op.elements);  // one add per entry (each entry extends a smaller one)
    op.write_bytes = s_.table_bytes(rows, cols) * bases();
    if (fused() && fusable) {
      Op& producer = ops.back();
      op.fused_into = producer.name;
      producer.write_bytes = 0;  // the producer writes tables instead of activations
    } else {
      op.read_bytes = double(rows) * cols * hb_;
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

  void build_layer(std::vector<Op>& ops, const LayerKind& kind) const {
    const bool low = s_.weights.is_low_bit();
    const bool qkv_bias = m_.linear_bias || m_.qkv_bias;
    const bool parallel = m_.parallel_attention;
    ops.push_back(norm("attn_norm", rows_));
    const std::string qkv_tables = precompute(ops, "attn_precompute", m_.hidden, true);
    if (m_.is_mla()) {
      build_mla(ops, qkv_tables);
    } else {
      ops.push_back(linear("q_proj", rows_, m_.q_dim(), m_.hidden, low, qkv_tables, qkv_bias));
      ops.push_back(linear("k_proj", rows_, m_.kv_dim(), m_.hidden, low, qkv_tables, qkv_bias));
      ops.back().launch_with = "q_proj";
      ops.push_back(linear("v_proj", rows_, m_.kv_dim(), m_.hidden, low, qkv_tables, qkv_bias));
      ops.back().launch_with = "q_proj";
      if (m_.position == PositionKind::kRope) {
        const int64_t heads = m_.heads + m_.kv_heads;
        Op rope =
            elementwise("rope", OpKind::kRope, rows_ * heads * m_.rotary_dims(), 1, kRopeFlops);
        rope.passthrough_elements = rows_ * heads * (m_.head_dim - m_.rotary_dims());
        rope.read_bytes += double(rope.passthrough_elements) * hb_;
        rope.write_bytes += double(rope.passthrough_elements) * hb_;
        ops.push_back(rope);
      }
      ops.push_back(attention(kind.window));
      const std::string o_tables = precompute(ops, "o_precompute", m_.q_dim(), false);
      ops.push_back(linear("o_proj", rows_, m_.hidden, m_.q_dim(), low, o_tables, m_.linear_bias));
    }
    if (m_.post_norms) ops.push_back(norm("post_attn_norm", rows_));
    std::string ffn_tables = qkv_tables;  // parallel with one norm: the FFN reads attn_norm's
    if (!parallel) {
      ops.push_back(elementwise("attn_residual", OpKind::kResidual, rows_ * m_.hidden, 2, 1));
    }
    if (kind.moe) {
      build_moe(ops);
    } else {
      if (!parallel || m_.parallel_norms > 1) {
        ops.push_back(norm("ffn_norm", rows_));
        ffn_tables = precompute(ops, "ffn_precompute", m_.hidden, true);
      }
      const bool gated = m_.ffn == FfnKind::kGated;
      if (gated) {
        ops.push_back(linear("gate_proj", rows_, m_.intermediate, m_.hidden, low, ffn_tables,
                             m_.linear_bias));
      }
      ops.push_back(
          linear("up_proj", rows_, m_.intermediate, m_.hidden, low, ffn_tables, m_.linear_bias));
      if (gated) ops.back().launch_with = "gate_proj";
      ops.push_back(elementwise("ffn_act", OpKind::kActivation, rows_ * m_.intermediate,
                                gated ? 2 : 1, act_flops() + (gated ? 1 : 0)));
      const std::string down_tables = precompute(ops, "down_precompute", m_.intermediate, true);
      ops.push_back(
          linear("down_proj", rows_, m_.hidden, m_.intermediate, low, down_tables, m_.linear_bias));
    }
    if (m_.post_norms) ops.push_back(norm("post_ffn_norm", rows_));
    if (parallel) {
      // Attention branch + MLP branch, then + the layer input.
      ops.push_back(elementwise("attn_residual", OpKind::kResidual, rows_ * m_.hidden, 2, 1));
    }
    ops.push_back(elementwise("ffn_residual", OpKind::kResidual, rows_ * m_.hidden, 2, 1));
  }

  double act_flops() const {
    const std::string& a = m_.activation;
    return a.find("relu") != std::string::npos   ? kReluFlops
           : a.find("gelu") != std::string::npos ? kGeluFlops
                                                 : kSiluFlops;
  }

  // A routed-expert GEMM: the token-expert pairs routed to the experts a batch touches, as one
  // grouped GEMM of (active experts) x (pairs / active rows) x n x k. Weights: the touched
  // experts' (expected count, fractional); FLOPs: every pair's.
  Op grouped_linear(const std::string& name, int64_t n, int64_t k,
                    const std::string& tables) const {
    const int64_t pairs = rows_ * m_.moe.top_k;
    Op op = linear(name, pairs, n, k, s_.weights.is_low_bit(), tables, false);
    const int64_t groups = std::clamp<int64_t>(std::llround(routing_.active), 1, m_.moe.experts);
    op.gemm = {groups, ceil_div(pairs, groups), n, k};
    op.weight_bytes = routing_.active * double(n) * k * s_.weights.bits_per_weight() / 8;
    op.grouped = true;
    op.group_tokens = rows_;
    op.group_pick = expert_pick(m_.moe.experts, m_.moe.top_k, s_.expert_load);
    return op;
  }

  Op routing_op(const std::string& name, int64_t elements, double flops, double read,
                double write) const {
    Op op;
    op.name = name;
    op.kind = OpKind::kRouting;
    op.elements = elements;
    op.flops = flops;
    op.read_bytes = read;
    op.write_bytes = write;
    return op;
  }

  // MoE FFN (after the attention residual): ffn_norm -> router (dense GEMM, N = experts) ->
  // router_topk (scores, top-k, renormalization) -> moe_dispatch (token rows gathered in expert
  // order; writes the experts' tables when fused) -> expert_gate_proj + expert_up_proj (grouped)
  // -> expert_act -> expert_down_proj (grouped) [-> shared expert: shared_gate_proj +
  // shared_up_proj -> shared_act -> shared_down_proj (+ Qwen2-MoE's shared_expert_gate, N = 1)]
  // -> moe_combine (the top-k outputs weighted and summed per token, + the shared expert).
  void build_moe(std::vector<Op>& ops) const {
    const MoeConfig& e = m_.moe;
    const bool low = s_.weights.is_low_bit();
    const int64_t pairs = rows_ * e.top_k;
    const bool shared = e.shared_intermediate > 0;
    ops.push_back(norm("ffn_norm", rows_));
    const size_t norm_at = ops.size() - 1;
    std::string shared_tables;
    if (shared) {
      shared_tables = precompute(ops, "shared_precompute", m_.hidden, true);
      // The router and the dispatch still read the norm's activations.
      ops[norm_at].write_bytes = double(rows_) * m_.hidden * hb_;
    }
    ops.push_back(linear("router", rows_, e.experts, m_.hidden, false, "", false));
    // Scores (softmax or sigmoid) over the experts, top-k, renormalization: ids (int32) and
    // weights per pair.
    ops.push_back(routing_op(
        "router_topk", rows_ * e.experts,
        double(rows_) * e.experts * (kSiluFlops + 1) + (e.norm_topk ? 2.0 * double(pairs) : 0.0),
        double(rows_) * e.experts * hb_, double(pairs) * (hb_ + 4)));
    ops.push_back(routing_op("moe_dispatch", pairs * m_.hidden, 0,
                             double(rows_) * m_.hidden * hb_ + double(pairs) * 4,
                             double(pairs) * m_.hidden * hb_));
    const std::string expert_tables = precompute(ops, "expert_precompute", m_.hidden, true, pairs);
    ops.push_back(grouped_linear("expert_gate_proj", e.intermediate, m_.hidden, expert_tables));
    ops.push_back(grouped_linear("expert_up_proj", e.intermediate, m_.hidden, expert_tables));
    ops.back().launch_with = "expert_gate_proj";
    ops.push_back(
        elementwise("expert_act", OpKind::kActivation, pairs * e.intermediate, 2, act_flops() + 1));
    const std::string down_tables =
        precompute(ops, "expert_down_precompute", e.intermediate, true, pairs);
    ops.push_back(grouped_linear("expert_down_proj", m_.hidden, e.intermediate, down_tables));
    if (shared) {
      ops.push_back(linear("shared_gate_proj", rows_, e.shared_intermediate, m_.hidden, low,
                           shared_tables, false));
      ops.push_back(linear("shared_up_proj", rows_, e.shared_intermediate, m_.hidden, low,
                           shared_tables, false));
      ops.back().launch_with = "shared_gate_proj";
      ops.push_back(elementwise("shared_act", OpKind::kActivation, rows_ * e.shared_intermediate, 2,
                                act_flops() + 1));
      const std::string sd_tables =
          precompute(ops, "shared_down_precompute", e.shared_intermediate, true);
      ops.push_back(linear("shared_down_proj", rows_, m_.hidden, e.shared_intermediate, low,
                           sd_tables, false));
      if (e.shared_gate) {
        ops.push_back(linear("shared_expert_gate", rows_, 1, m_.hidden, false, "", false));
      }
    }
    // Per token: the k expert rows times their weights, summed (+ the shared expert's row,
    // scaled by its sigmoid gate in Qwen2-MoE).
    const double shared_read =
        shared ? double(rows_) * m_.hidden * hb_ + (e.shared_gate ? double(rows_) * hb_ : 0) : 0;
    ops.push_back(routing_op("moe_combine", rows_ * m_.hidden,
                             double(rows_) * m_.hidden * (2.0 * double(e.top_k) + (shared ? 2 : 0)),
                             double(pairs) * double(m_.hidden + 1) * hb_ + shared_read,
                             double(rows_) * m_.hidden * hb_));
  }

  // Multi-head latent attention (DeepSeek-V2): q_proj (or q_a_proj -> q_a_norm -> q_b_proj) and
  // kv_a_proj_with_mqa (latent + RoPE key, one launch with the first query GEMM) -> kv_a_norm ->
  // rope (query and key RoPE parts). Decode, absorbed: q_absorb (each head's nope query through
  // its W_UK into the latent space) -> attention over the cached latents (one shared K/V row of
  // kv_lora_rank + rope per token) -> v_absorb (W_UV per head) -> o_proj. Prefill, naive:
  // kv_b_proj up-projects keys and values -> multi-head attention; the latent is cached.
  // W_UK and W_UV (kv_b_proj's halves) run absorbed as batched GEMMs in the activation dtype.
  void build_mla(std::vector<Op>& ops, const std::string& qkv_tables) const {
    const MlaConfig& a = m_.mla;
    const bool low = s_.weights.is_low_bit();
    const int64_t q_out = m_.heads * (a.qk_nope_dim + a.qk_rope_dim);
    const int64_t latent = a.kv_lora_rank + a.qk_rope_dim;
    const std::string first = a.q_lora_rank > 0 ? "q_a_proj" : "q_proj";
    if (a.q_lora_rank > 0) {
      ops.push_back(linear("q_a_proj", rows_, a.q_lora_rank, m_.hidden, low, qkv_tables, false));
    } else {
      ops.push_back(linear("q_proj", rows_, q_out, m_.hidden, low, qkv_tables, false));
    }
    ops.push_back(linear("kv_a_proj", rows_, latent, m_.hidden, low, qkv_tables, false));
    ops.back().launch_with = first;
    if (a.q_lora_rank > 0) {
      ops.push_back(norm("q_a_norm", rows_, a.q_lora_rank));
      const std::string t = precompute(ops, "q_b_precompute", a.q_lora_rank, true);
      ops.push_back(linear("q_b_proj", rows_, q_out, a.q_lora_rank, low, t, false));
    }
    ops.push_back(norm("kv_a_norm", rows_, a.kv_lora_rank));
    const bool decode = s_.phase == Phase::kDecode;
    if (!decode) {
      const std::string t = precompute(ops, "kv_b_precompute", a.kv_lora_rank, false);
      ops.push_back(linear("kv_b_proj", rows_, m_.heads * (a.qk_nope_dim + a.v_head_dim),
                           a.kv_lora_rank, low, t, false));
    }
    ops.push_back(
        elementwise("rope", OpKind::kRope, rows_ * (m_.heads + 1) * a.qk_rope_dim, 1, kRopeFlops));
    auto absorbed = [&](const std::string& name, int64_t n, int64_t k) {
      Op op = linear(name, rows_, n, k, false, "", false);
      op.gemm.batch = m_.heads;
      op.flops *= double(m_.heads);
      op.weight_bytes = double(m_.heads) * n * k * hb_;
      op.read_bytes = double(rows_) * m_.heads * k * hb_;
      op.write_bytes = double(rows_) * m_.heads * n * hb_;
      return op;
    };
    if (decode) ops.push_back(absorbed("q_absorb", a.kv_lora_rank, a.qk_nope_dim));
    ops.push_back(mla_attention());
    if (decode) ops.push_back(absorbed("v_absorb", a.v_head_dim, a.kv_lora_rank));
    const int64_t o_in = m_.heads * a.v_head_dim;
    const std::string o_tables = precompute(ops, "o_precompute", o_in, false);
    ops.push_back(linear("o_proj", rows_, m_.hidden, o_in, low, o_tables, false));
  }

  // The attention op of this step: its sequences, query heads and lengths; the caller sets the
  // widths, the KV heads and the work.
  Op attention_op() const {
    Op op;
    op.name = "attention";
    op.kind = OpKind::kAttention;
    AttentionShape& a = op.attention;
    a.batch = s_.batch;
    a.heads = m_.heads;
    a.q_len = s_.new_tokens();
    a.kv_len = s_.kv_length();
    a.causal = s_.phase == Phase::kPrefill;
    return op;
  }

  Op mla_attention() const {
    const MlaConfig& m = m_.mla;
    Op op = attention_op();
    AttentionShape& a = op.attention;
    const double latent_row = double(m.kv_lora_rank + m.qk_rope_dim) * hb_;
    if (!a.causal) {
      // Absorbed: every head's query (latent + rope) against the shared cached latent rows.
      a.kv_heads = 1;
      a.head_dim = m.kv_lora_rank + m.qk_rope_dim;
      a.v_head_dim = m.kv_lora_rank;
      a.latent = true;
      op.kv_bytes = double(a.batch) * a.kv_len * latent_row + double(rows_) * latent_row;
    } else {
      a.kv_heads = m_.heads;
      a.head_dim = m.qk_nope_dim + m.qk_rope_dim;
      a.v_head_dim = m.v_head_dim;
      // The up-projected keys and values of the new tokens, and the latents appended.
      op.kv_bytes = double(rows_) * m_.heads * double(a.head_dim + a.v_head_dim) * hb_ +
                    double(rows_) * latent_row;
    }
    op.flops = 2.0 * a.batch * a.heads * a.pairs() * double(a.head_dim + a.v_dim());
    op.elements = int64_t(double(a.batch * a.heads) * a.pairs());
    op.read_bytes = double(rows_) * a.heads * a.head_dim * hb_;
    op.write_bytes = double(rows_) * a.heads * a.v_dim() * hb_;
    return op;
  }

  Op attention(int64_t window) const {
    Op op = attention_op();
    AttentionShape& a = op.attention;
    a.kv_heads = m_.kv_heads;
    a.head_dim = m_.head_dim;
    a.window = window;
    // Decode reads the window's keys only (the rolling cache keeps no more).
    if (!a.causal && window > 0) a.kv_len = std::min(a.kv_len, window);
    op.flops = 4.0 * a.batch * a.heads * a.head_dim * a.pairs();
    op.elements = int64_t(double(a.batch * a.heads) * a.pairs());  // scores through softmax
    op.read_bytes = double(rows_) * m_.q_dim() * hb_;
    op.write_bytes = double(rows_) * m_.q_dim() * hb_;
    const double kv_row = 2.0 * m_.kv_dim() * hb_;  // K and V of one token
    op.kv_bytes = double(a.batch) * a.kv_len * kv_row + double(rows_) * kv_row;  // read + append
    return op;
  }

  std::string routing_note() const {
    const RoutingStats& r = routing_;
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "%s routing: %.2f +- %.2f of %lld experts active, %.1f token-expert pairs each "
                  "on average; tokens %lld, top-%lld",
                  s_.expert_load.name.c_str(), r.active, r.active_sd,
                  static_cast<long long>(m_.moe.experts), r.assignments / r.active,
                  static_cast<long long>(rows_), static_cast<long long>(m_.moe.top_k));
    std::string note = buf;
    if (!s_.expert_load.share.empty()) {
      std::snprintf(buf, sizeof buf, " (the most loaded expert: %.1f pairs)", r.max_tokens);
      note += buf;
    }
    return note;
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
  RoutingStats routing_;
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
    case OpKind::kRouting:
      return "routing";
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

double AttentionShape::pairs() const {
  if (!causal) return double(q_len) * double(kv_len);
  const double q = double(q_len);
  if (!past_window()) return q * (q + 1) / 2;
  const double w = double(window);  // the first w queries see a growing prefix, the rest w keys
  return w * (w + 1) / 2 + (q - w) * w;
}

const std::vector<Op>& StepGraph::ops_of_layer(int64_t l) const {
  const int g = layer_group.at(size_t(l));
  return g == 0 ? layer : other_layers[size_t(g - 1)].ops;
}

double StepGraph::layer_flops() const {
  return sum_flops(layer);
}

double StepGraph::total_flops() const {
  double f = sum_flops(embedding) + double(layers) * sum_flops(layer) + sum_flops(head);
  for (const auto& g : other_layers) f += double(g.count) * sum_flops(g.ops);
  return f;
}

double StepGraph::total_bytes() const {
  double b = sum_bytes(embedding) + double(layers) * sum_bytes(layer) + sum_bytes(head);
  for (const auto& g : other_layers) b += double(g.count) * sum_bytes(g.ops);
  return b;
}

const Op* StepGraph::find(std::string_view name) const {
  for (const auto* list : {&embedding, &layer, &head}) {
    for (const auto& op : *list) {
      if (op.name == name) return &op;
    }
  }
  for (const auto& g : other_layers) {
    for (const auto& op : g.ops) {
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
  if (!model.is_moe() && step.expert_load.name != "uniform") {
    throw InputError("--expert-load: " + model.name +
                     " has no routed experts (the flag applies to mixture-of-experts models)");
  }
  if (model.is_moe() && !step.expert_load.share.empty() &&
      int64_t(step.expert_load.share.size()) != model.moe.experts) {
    throw InputError("--expert-load: " + std::to_string(step.expert_load.share.size()) +
                     " expert loads for " + model.name + "'s " + std::to_string(model.moe.experts) +
                     " routed experts");
  }
  return GraphBuilder(model, step).build();
}

}  // namespace ltc::llm
