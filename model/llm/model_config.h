// A decoder-only transformer's shape: what the operator graph (graph.h), the compiler's model
// lowering and the roofline all read. Built-in models are Hugging Face config.json files under
// configs/models/<name>.json, read by the same loader as a user's config.json.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ltc::llm {

enum class FfnKind : uint8_t {
  kGated,  // down(act(gate(x)) * up(x)): LLaMA, Mistral, Qwen, BitNet
  kPlain,  // fc2(act(fc1(x))): OPT, BLOOM, GPT-2, GPT-NeoX
};
enum class NormKind : uint8_t { kRmsNorm, kLayerNorm };
enum class PositionKind : uint8_t {
  kRope,     // rotary on q and k (an elementwise op per layer)
  kLearned,  // absolute position table added at the embedding (OPT, GPT-2)
  kAlibi,    // bias inside attention, no extra op (BLOOM)
};

// Mixture-of-experts FFN (Mixtral, Qwen2-MoE / Qwen3-MoE, DeepSeek-V2/V3): a router picks
// `top_k` of `experts` routed experts per token; shared experts see every token.
struct MoeConfig {
  int64_t experts = 0;       // routed experts (0: every layer has a dense FFN)
  int64_t top_k = 0;         // num_experts_per_tok
  int64_t intermediate = 0;  // one routed expert's FFN width (moe_intermediate_size)
  // Shared experts' FFN, all of them as one gated FFN: Qwen2-MoE's
  // shared_expert_intermediate_size, DeepSeek's n_shared_experts x moe_intermediate_size.
  int64_t shared_intermediate = 0;
  bool shared_gate = false;         // Qwen2-MoE: sigmoid(shared_expert_gate(x)) scales it (N = 1)
  bool norm_topk = false;           // the top-k weights renormalized to sum to 1 (norm_topk_prob)
  std::string scoring = "softmax";  // router scores: softmax (or sigmoid: DeepSeek-V3)
  int64_t first_dense = 0;          // DeepSeek's first_k_dense_replace: leading dense layers
  // Layer l is MoE when (l + layer_phase) % layer_freq == 0: DeepSeek's moe_layer_freq
  // (phase 0), Qwen-MoE's decoder_sparse_step (phase 1).
  int64_t layer_freq = 1, layer_phase = 0;
  std::vector<int64_t> dense_layers;  // Qwen-MoE's mlp_only_layers
};

// Multi-head latent attention (DeepSeek-V2/V3): K and V come from a per-token latent of
// kv_lora_rank (cached with the decoupled RoPE key of qk_rope_dim); queries optionally through
// a q_lora_rank bottleneck.
struct MlaConfig {
  int64_t kv_lora_rank = 0;  // 0: not MLA
  int64_t q_lora_rank = 0;   // 0: q_proj straight from hidden
  int64_t qk_nope_dim = 0, qk_rope_dim = 0, v_head_dim = 0;
};

// What differs between decoder layers: FFN kind and attention span.
struct LayerKind {
  bool moe = false;    // routed experts instead of the dense FFN
  int64_t window = 0;  // sliding-window attention over this many keys; 0: the whole context
  bool operator==(const LayerKind& o) const { return moe == o.moe && window == o.window; }
};

struct ModelConfig {
  std::string name;          // built-in name, or the config's path
  std::string model_type;    // Hugging Face model_type ("llama", "opt", "bloom", ...)
  int64_t hidden = 0;        // d_model
  int64_t layers = 0;        // decoder layers
  int64_t heads = 0;         // query heads
  int64_t kv_heads = 0;      // key/value heads (GQA / MQA when < heads)
  int64_t head_dim = 0;      // per head; hidden / heads unless the config says otherwise
  int64_t intermediate = 0;  // FFN inner width
  int64_t vocab = 0;
  int64_t max_positions = 0;
  FfnKind ffn = FfnKind::kGated;
  std::string activation = "silu";  // hidden_act / activation_function
  NormKind norm = NormKind::kRmsNorm;
  PositionKind position = PositionKind::kRope;
  int64_t learned_positions = 0;  // rows of the learned position table (OPT: max + 2)
  bool tied_embeddings = false;   // LM head shares the embedding matrix
  bool linear_bias = false;       // every linear layer has a bias (OPT, BLOOM)
  bool qkv_bias = false;          // only q/k/v have biases (Qwen2)
  bool embedding_norm = false;    // a LayerNorm right after the embedding (BLOOM)
  // Attention and MLP read the same normed input and their outputs are added to the residual
  // together (Phi, Falcon-7B, GPT-J, GPT-NeoX): one norm per layer, or two (Falcon's new
  // decoder architecture: one for each branch).
  bool parallel_attention = false;
  int64_t parallel_norms = 1;  // parallel_attention: norms per layer (1 or 2)
  int64_t rotary_dim = 0;      // RoPE models: rotated dims of each head (Phi-2: 0.4 x 80)
  bool post_norms = false;     // Gemma-2: RMSNorms on the attention and FFN outputs
  bool ffn_implicit = false;   // the config gives no FFN width: 4 x hidden assumed
  MoeConfig moe;
  MlaConfig mla;
  // Sliding-window attention: window size and, per layer, whether it applies (Gemma-2's
  // alternating local / global layers, Qwen2's layers from max_window_layers on); empty with a
  // window: every layer. The cache keeps only the window (a rolling buffer, as Mistral's
  // reference implementation does).
  int64_t sliding_window = 0;
  std::vector<bool> sliding_layers;
  std::vector<std::string> warnings;  // what the loader ignored or assumed (never silent)
  // Fields the config does not give, with the value the loader took ("head_dim = hidden_size /
  // num_attention_heads"): `ltc show model` lists them.
  std::vector<std::string> defaulted;

  bool is_mla() const { return mla.kv_lora_rank > 0; }
  bool is_moe() const { return moe.experts > 0; }
  LayerKind layer_kind(int64_t layer) const;
  // The layer kinds in order of first appearance, with how many layers each has.
  std::vector<std::pair<LayerKind, int64_t>> layer_kinds() const;
  // KV-cache elements one token adds to one layer: K and V (2 x kv_dim), or MLA's latent and
  // RoPE key (kv_lora_rank + qk_rope_dim).
  int64_t kv_elements_per_token() const;
  // KV-cache elements of one sequence whose cache covers `tokens` tokens, over all layers
  // (sliding-window layers keep at most their window).
  double kv_cache_elements(int64_t tokens) const;

  int64_t q_dim() const { return heads * head_dim; }
  int64_t kv_dim() const { return kv_heads * head_dim; }
  // Norms in one decoder layer: 2 (pre-attention, pre-FFN), parallel_norms with parallel
  // attention, + 2 post-norms (Gemma-2).
  int64_t layer_norms() const;
  // Rotated dims per head: rotary_dim, or the whole head when unset (0).
  int64_t rotary_dims() const { return rotary_dim > 0 ? rotary_dim : head_dim; }

  // Parameters, by the same accounting as PyTorch's sum(p.numel()): weights, biases, norm
  // parameters, embeddings, the LM head unless tied.
  int64_t embedding_parameters() const;  // token (+ learned position) embeddings
  int64_t layer_parameters() const;      // one decoder layer (the first)
  int64_t layer_parameters(int64_t layer) const;
  int64_t attention_parameters() const;    // one layer's attention (projections, MLA's norms)
  int64_t ffn_parameters(bool moe) const;  // one layer's FFN: dense, or router + all experts
  int64_t head_parameters() const;         // final norm + untied LM head
  int64_t parameters() const;
  // Parameters of the linear layers in all decoder layers (the low-bit part of a quantized model).
  int64_t linear_weight_parameters() const;

  // Throws InputError naming the field when a size is missing or inconsistent.
  void validate() const;
};

// Built-in names ("llama2-7b", ...), from the files under configs/models/.
std::vector<std::string> builtin_model_names();
// A built-in name or the path of a Hugging Face config.json. Throws InputError naming the model
// or file (and the built-in names) when it cannot be read; MoE and other architectures this
// model cannot shape are errors naming the field, details it ignores (rope scaling) are warnings.
ModelConfig load_model(std::string_view name_or_path);
// `source` names the input in error messages.
ModelConfig model_from_hf_config(const nlohmann::json& j, const std::string& source);

}  // namespace ltc::llm
