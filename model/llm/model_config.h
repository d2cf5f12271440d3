// A decoder-only transformer's shape: what the operator graph (graph.h), the compiler's model
// lowering and the roofline all read. Built-in models are Hugging Face config.json files under
// configs/models/<name>.json, read by the same loader as a user's config.json.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <string_view>
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
  int64_t parallel_norms = 1;         // parallel_attention: norms per layer (1 or 2)
  int64_t rotary_dim = 0;             // RoPE models: rotated dims of each head (Phi-2: 0.4 x 80)
  bool post_norms = false;            // Gemma-2: RMSNorms on the attention and FFN outputs
  bool ffn_implicit = false;          // the config gives no FFN width: 4 x hidden assumed
  std::vector<std::string> warnings;  // what the loader ignored or assumed (never silent)
  // Fields the config does not give, with the value the loader took ("head_dim = hidden_size /
  // num_attention_heads"): `ltc show model` lists them.
  std::vector<std::string> defaulted;

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
  int64_t layer_parameters() const;      // one decoder layer
  int64_t head_parameters() const;       // final norm + untied LM head
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
// model cannot shape are errors, details it ignores (sliding window, rope scaling) are warnings.
ModelConfig load_model(std::string_view name_or_path);
// `source` names the input in error messages.
ModelConfig model_from_hf_config(const nlohmann::json& j, const std::string& source);

}  // namespace ltc::llm
