#include "model/llm/model_config.h"

#include "common/config_dir.h"
#include "common/error.h"
#include "common/file_io.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>

namespace ltc::llm {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// First key present among `keys` (Hugging Face configs name the same field differently per
// architecture), as a positive integer; 0 when absent.
int64_t int_field(const json& j, std::initializer_list<const char*> keys, const std::string& src) {
  for (const char* key : keys) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_number_integer() || it->get<int64_t>() < 0 ||
        it->get<int64_t>() > (int64_t{1} << 40)) {
      throw InputError(src + ": field '" + key + "' must be an integer in 0..2^40");
    }
    return it->get<int64_t>();
  }
  return 0;
}

std::string string_field(const json& j, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    auto it = j.find(key);
    if (it != j.end() && it->is_string()) return it->get<std::string>();
  }
  return "";
}

bool bool_field(const json& j, const char* key, bool fallback) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

bool present_int(const json& j, const char* key) {
  return j.contains(key) && !j.at(key).is_null();
}

bool one_of(const std::string& s, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return s == n; });
}

std::vector<int64_t> int_list(const json& j, const char* key, const std::string& src) {
  std::vector<int64_t> v;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return v;
  if (!it->is_array()) throw InputError(src + ": field '" + key + "' must be a list of integers");
  for (const auto& e : *it) {
    if (!e.is_number_integer() || e.get<int64_t>() < 0) {
      throw InputError(src + ": field '" + key + "' must be a list of integers >= 0");
    }
    v.push_back(e.get<int64_t>());
  }
  return v;
}

// Mixture-of-experts fields (Hugging Face names per architecture): every one that changes the
// work is read; what would change it in a way the graph does not model is refused by name.
void read_moe(const json& j, const std::string& src, ModelConfig& c) {
  const std::string& type = c.model_type;
  MoeConfig& m = c.moe;
  m.experts = int_field(j, {"num_local_experts", "num_experts", "n_routed_experts"}, src);
  if (m.experts <= 1) {
    m.experts = 0;
    return;
  }
  m.top_k = int_field(j, {"num_experts_per_tok", "top_k"}, src);
  if (m.top_k < 1 || m.top_k > m.experts) {
    throw InputError(src + ": field 'num_experts_per_tok' must be in 1.." +
                     std::to_string(m.experts) + " (the routed experts) for a MoE model");
  }
  // Mixtral and OLMoE give the expert width as intermediate_size; the others have dense layers
  // of intermediate_size and experts of moe_intermediate_size.
  const bool expert_width_is_intermediate = type == "mixtral" || type == "olmoe";
  m.intermediate =
      expert_width_is_intermediate ? c.intermediate : int_field(j, {"moe_intermediate_size"}, src);
  if (m.intermediate <= 0) {
    throw InputError(src +
                     ": field 'moe_intermediate_size' is missing or not positive (model_type '" +
                     type + "')");
  }
  // MixtralSparseMoeBlock always renormalizes the top-k weights; the others say.
  m.norm_topk = type == "mixtral" || bool_field(j, "norm_topk_prob", false);
  if (type == "qwen2_moe") {
    m.shared_intermediate = int_field(j, {"shared_expert_intermediate_size"}, src);
    m.shared_gate = m.shared_intermediate > 0;  // Qwen2MoeSparseMoeBlock.shared_expert_gate
  } else if (type == "deepseek_v2" || type == "deepseek_v3") {
    m.shared_intermediate = int_field(j, {"n_shared_experts"}, src) * m.intermediate;
    m.first_dense = int_field(j, {"first_k_dense_replace"}, src);
    m.layer_freq = std::max<int64_t>(1, int_field(j, {"moe_layer_freq"}, src));
    m.scoring = string_field(j, {"scoring_func"});
    if (m.scoring.empty()) m.scoring = "softmax";
    if (m.scoring != "softmax" && m.scoring != "sigmoid") {
      throw InputError(src + ": field 'scoring_func' is '" + m.scoring +
                       "' (valid: softmax, sigmoid)");
    }
    const std::string method = string_field(j, {"topk_method"});
    const int64_t groups = int_field(j, {"n_group"}, src);
    if (!method.empty() && method != "greedy" && groups > 1) {
      c.warnings.push_back(src + ": topk_method '" + method + "' (n_group " +
                           std::to_string(groups) +
                           ") is modelled as a top-k over all experts: the group pre-selection's "
                           "few elementwise kernels are not counted");
    }
  } else if (present_int(j, "shared_expert_intermediate_size")) {
    throw InputError(src + ": field 'shared_expert_intermediate_size' on model_type '" + type +
                     "' is not modelled (that architecture has no shared expert)");
  }
  if (type == "qwen2_moe" || type == "qwen3_moe") {
    m.layer_freq = std::max<int64_t>(1, int_field(j, {"decoder_sparse_step"}, src));
    m.layer_phase = 1;
    m.dense_layers = int_list(j, "mlp_only_layers", src);
  }
  if (c.ffn != FfnKind::kGated) {
    throw InputError(src +
                     ": a MoE model with a plain (non-gated) FFN is not modelled (model_type '" +
                     type + "')");
  }
}

// Multi-head latent attention (DeepSeek-V2/V3, MiniCPM3): the latent and RoPE-key widths.
void read_mla(const json& j, const std::string& src, ModelConfig& c) {
  MlaConfig& a = c.mla;
  a.kv_lora_rank = int_field(j, {"kv_lora_rank"}, src);
  if (a.kv_lora_rank == 0) {
    if (int_field(j, {"q_lora_rank"}, src) > 0) {
      throw InputError(src + ": field 'q_lora_rank' without 'kv_lora_rank' is not modelled");
    }
    return;
  }
  a.q_lora_rank = int_field(j, {"q_lora_rank"}, src);
  a.qk_nope_dim = int_field(j, {"qk_nope_head_dim"}, src);
  a.qk_rope_dim = int_field(j, {"qk_rope_head_dim"}, src);
  a.v_head_dim = int_field(j, {"v_head_dim"}, src);
  if (a.v_head_dim == 0 && c.model_type == "minicpm3" && c.heads > 0) {
    // MiniCPM3's config has no v_head_dim: its attention takes hidden_size / heads.
    a.v_head_dim = c.hidden / c.heads;
    c.defaulted.push_back("v_head_dim = hidden_size / num_attention_heads = " +
                          std::to_string(a.v_head_dim) + " (MiniCPM3's rule)");
  }
  for (auto [field, v] :
       {std::pair{"qk_nope_head_dim", a.qk_nope_dim}, std::pair{"qk_rope_head_dim", a.qk_rope_dim},
        std::pair{"v_head_dim", a.v_head_dim}}) {
    if (v <= 0) {
      throw InputError(src + ": multi-head latent attention (kv_lora_rank " +
                       std::to_string(a.kv_lora_rank) + ") needs field '" + field + "' > 0");
    }
  }
  // Every head has its own query and its own K / V from the latent: kv_heads = heads; a query
  // head is nope + rope wide, RoPE on its rope part.
  c.kv_heads = c.heads;
  c.head_dim = a.qk_nope_dim + a.qk_rope_dim;
  c.rotary_dim = a.qk_rope_dim;
  c.defaulted.erase(std::remove_if(c.defaulted.begin(), c.defaulted.end(),
                                   [](const std::string& d) {
                                     return d.rfind("head_dim", 0) == 0 ||
                                            d.rfind("num_key_value_heads", 0) == 0;
                                   }),
                    c.defaulted.end());
}

// Sliding-window attention: the window and which layers use it.
void read_sliding_window(const json& j, const std::string& src, ModelConfig& c) {
  auto it = j.find("sliding_window");
  const bool have = it != j.end() && !it->is_null() && !(it->is_boolean() && !it->get<bool>());
  std::vector<std::string> types;
  if (j.contains("layer_types") && !j["layer_types"].is_null()) {
    if (!j["layer_types"].is_array()) {
      throw InputError(src + ": field 'layer_types' must be a list of strings");
    }
    for (const auto& t : j["layer_types"]) {
      const std::string s = t.is_string() ? t.get<std::string>() : "";
      if (s != "sliding_attention" && s != "full_attention") {
        throw InputError(src + ": field 'layer_types' has '" + (t.is_string() ? s : t.dump()) +
                         "' (modelled: sliding_attention, full_attention)");
      }
      types.push_back(s);
    }
    if (int64_t(types.size()) != c.layers) {
      throw InputError(src + ": field 'layer_types' has " + std::to_string(types.size()) +
                       " entries for " + std::to_string(c.layers) + " num_hidden_layers");
    }
  }
  if (!have) {
    if (std::find(types.begin(), types.end(), "sliding_attention") != types.end()) {
      throw InputError(src +
                       ": field 'layer_types' names sliding_attention layers but "
                       "'sliding_window' is not given");
    }
    return;
  }
  if (!it->is_number_integer() || it->get<int64_t>() < 1) {
    throw InputError(src + ": field 'sliding_window' must be a positive integer or null");
  }
  // Qwen2 / Qwen-MoE carry a sliding_window they do not use unless use_sliding_window is true.
  if (j.contains("use_sliding_window") && !bool_field(j, "use_sliding_window", false)) return;
  c.sliding_window = it->get<int64_t>();
  if (!types.empty()) {
    for (const auto& t : types) c.sliding_layers.push_back(t == "sliding_attention");
  } else if (c.model_type == "gemma2") {
    // Gemma2DecoderLayer: is_sliding = not layer_idx % 2.
    for (int64_t l = 0; l < c.layers; ++l) c.sliding_layers.push_back(l % 2 == 0);
  } else if (const int64_t pattern = int_field(j, {"sliding_window_pattern"}, src); pattern > 0) {
    // Gemma-3: every pattern-th layer is global.
    for (int64_t l = 0; l < c.layers; ++l) c.sliding_layers.push_back((l + 1) % pattern != 0);
  } else if (j.contains("use_sliding_window")) {
    // Qwen2: the layers from max_window_layers on use the window.
    const int64_t from = int_field(j, {"max_window_layers"}, src);
    for (int64_t l = 0; l < c.layers; ++l) c.sliding_layers.push_back(l >= from);
  }
}

}  // namespace

int64_t ModelConfig::embedding_parameters() const {
  int64_t p = vocab * hidden + learned_positions * hidden;
  if (embedding_norm) p += 2 * hidden;
  return p;
}

int64_t ModelConfig::attention_parameters() const {
  if (is_mla()) {
    const MlaConfig& a = mla;
    const int64_t q_out = heads * (a.qk_nope_dim + a.qk_rope_dim);
    const int64_t q = a.q_lora_rank > 0
                          ? hidden * a.q_lora_rank + a.q_lora_rank + a.q_lora_rank * q_out
                          : hidden * q_out;
    const int64_t kv = hidden * (a.kv_lora_rank + a.qk_rope_dim) + a.kv_lora_rank +
                       a.kv_lora_rank * heads * (a.qk_nope_dim + a.v_head_dim);
    return q + kv + heads * a.v_head_dim * hidden;
  }
  int64_t attn = hidden * q_dim() + 2 * hidden * kv_dim() + q_dim() * hidden;
  if (linear_bias) attn += q_dim() + 2 * kv_dim() + hidden;
  if (qkv_bias && !linear_bias) attn += q_dim() + 2 * kv_dim();
  return attn;
}

int64_t ModelConfig::ffn_parameters(bool moe_layer) const {
  const int64_t ffn_mats = ffn == FfnKind::kGated ? 3 : 2;
  if (moe_layer) {
    return hidden * moe.experts + moe.experts * 3 * hidden * moe.intermediate +
           3 * hidden * moe.shared_intermediate + (moe.shared_gate ? hidden : 0);
  }
  int64_t mlp = ffn_mats * hidden * intermediate;
  if (linear_bias) mlp += (ffn_mats - 1) * intermediate + hidden;
  return mlp;
}

int64_t ModelConfig::layer_parameters(int64_t layer) const {
  const int64_t norm_params = norm == NormKind::kLayerNorm ? 2 * hidden : hidden;
  return layer_norms() * norm_params + attention_parameters() +
         ffn_parameters(layer_kind(layer).moe);
}

int64_t ModelConfig::layer_parameters() const {
  return layer_parameters(0);
}

int64_t ModelConfig::layer_norms() const {
  return (parallel_attention ? parallel_norms : 2) + (post_norms ? 2 : 0);
}

int64_t ModelConfig::head_parameters() const {
  const int64_t final_norm = norm == NormKind::kLayerNorm ? 2 * hidden : hidden;
  return final_norm + (tied_embeddings ? 0 : vocab * hidden);
}

int64_t ModelConfig::parameters() const {
  int64_t p = embedding_parameters() + head_parameters();
  for (int64_t l = 0; l < layers; ++l) p += layer_parameters(l);
  return p;
}

int64_t ModelConfig::linear_weight_parameters() const {
  // Low-bit linear weights: every projection and expert; the router and Qwen2-MoE's
  // shared-expert gate stay in the activation dtype (as the graph builds them).
  int64_t attn = 2 * hidden * q_dim() + 2 * hidden * kv_dim();
  if (is_mla()) {
    const MlaConfig& a = mla;
    const int64_t q_out = heads * (a.qk_nope_dim + a.qk_rope_dim);
    attn = (a.q_lora_rank > 0 ? hidden * a.q_lora_rank + a.q_lora_rank * q_out : hidden * q_out) +
           hidden * (a.kv_lora_rank + a.qk_rope_dim) +
           a.kv_lora_rank * heads * (a.qk_nope_dim + a.v_head_dim) + heads * a.v_head_dim * hidden;
  }
  const int64_t ffn_mats = ffn == FfnKind::kGated ? 3 : 2;
  int64_t p = 0;
  for (int64_t l = 0; l < layers; ++l) {
    p += attn + (layer_kind(l).moe
                     ? 3 * hidden * (moe.experts * moe.intermediate + moe.shared_intermediate)
                     : ffn_mats * hidden * intermediate);
  }
  return p;
}

LayerKind ModelConfig::layer_kind(int64_t layer) const {
  LayerKind k;
  if (moe.experts > 0) {
    const bool listed_dense = std::find(moe.dense_layers.begin(), moe.dense_layers.end(), layer) !=
                              moe.dense_layers.end();
    // Qwen-MoE: (l + 1) % decoder_sparse_step == 0; DeepSeek: l % moe_layer_freq == 0 from
    // layer first_k_dense_replace on.
    k.moe = !listed_dense && layer >= moe.first_dense &&
            (layer + moe.layer_phase) % std::max<int64_t>(1, moe.layer_freq) == 0;
  }
  if (sliding_window > 0) {
    const bool sliding =
        sliding_layers.empty() || (layer < int64_t(sliding_layers.size()) && sliding_layers[layer]);
    k.window = sliding ? sliding_window : 0;
  }
  return k;
}

std::vector<std::pair<LayerKind, int64_t>> ModelConfig::layer_kinds() const {
  std::vector<std::pair<LayerKind, int64_t>> kinds;
  for (int64_t l = 0; l < layers; ++l) {
    const LayerKind k = layer_kind(l);
    auto it = std::find_if(kinds.begin(), kinds.end(), [&](const auto& e) { return e.first == k; });
    if (it == kinds.end()) {
      kinds.emplace_back(k, 1);
    } else {
      ++it->second;
    }
  }
  return kinds;
}

int64_t ModelConfig::kv_elements_per_token() const {
  return is_mla() ? mla.kv_lora_rank + mla.qk_rope_dim : 2 * kv_dim();
}

double ModelConfig::kv_cache_elements(int64_t tokens) const {
  double e = 0;
  for (const auto& [kind, count] : layer_kinds()) {
    const int64_t kept = kind.window > 0 ? std::min(tokens, kind.window) : tokens;
    e += double(count) * double(kept) * double(kv_elements_per_token());
  }
  return e;
}

void ModelConfig::validate() const {
  auto need = [&](const char* field, int64_t v) {
    if (v <= 0) throw InputError(name + ": '" + field + "' is missing or not positive");
  };
  need("hidden_size", hidden);
  need("num_hidden_layers", layers);
  need("num_attention_heads", heads);
  need("num_key_value_heads", kv_heads);
  need("head_dim", head_dim);
  need("intermediate_size", intermediate);
  need("vocab_size", vocab);
  // Upper bounds far above any real model that keep parameter counts (layers x hidden x
  // intermediate, ...) inside int64 arithmetic.
  auto at_most = [&](const char* field, int64_t v, int64_t hi) {
    if (v > hi) {
      throw InputError(name + ": '" + field + "' is " + std::to_string(v) + " (valid: at most " +
                       std::to_string(hi) + ")");
    }
  };
  at_most("hidden_size", hidden, int64_t{1} << 20);
  at_most("num_hidden_layers", layers, 4096);
  at_most("num_attention_heads", heads, int64_t{1} << 16);
  at_most("head_dim", head_dim, int64_t{1} << 16);
  at_most("num_attention_heads x head_dim", q_dim(), int64_t{1} << 22);
  at_most("intermediate_size", intermediate, int64_t{1} << 22);
  at_most("vocab_size", vocab, int64_t{1} << 26);
  at_most("max_position_embeddings", max_positions, int64_t{1} << 31);
  if (is_moe()) {
    at_most("num_experts", moe.experts, int64_t{1} << 14);
    at_most("moe_intermediate_size", moe.intermediate, int64_t{1} << 22);
    at_most("shared expert width", moe.shared_intermediate, int64_t{1} << 22);
    at_most("first_k_dense_replace", moe.first_dense, layers);
    if (moe.top_k < 1 || moe.top_k > moe.experts) {
      throw InputError(name + ": 'num_experts_per_tok' " + std::to_string(moe.top_k) +
                       " (valid: 1.." + std::to_string(moe.experts) + ")");
    }
  }
  if (is_mla()) {
    at_most("kv_lora_rank", mla.kv_lora_rank, int64_t{1} << 16);
    at_most("q_lora_rank", mla.q_lora_rank, int64_t{1} << 16);
    at_most("v_head_dim", mla.v_head_dim, int64_t{1} << 16);
  }
  at_most("sliding_window", sliding_window, int64_t{1} << 31);
  if (heads % kv_heads != 0) {
    throw InputError(name + ": num_attention_heads " + std::to_string(heads) +
                     " is not a multiple of num_key_value_heads " + std::to_string(kv_heads));
  }
}

std::vector<std::string> builtin_model_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(config_dir("models"), ec)) {
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

ModelConfig model_from_hf_config(const json& j, const std::string& src) {
  if (!j.is_object()) throw InputError(src + ": a model config must be a JSON object");
  ModelConfig c;
  c.name = src;
  c.model_type = string_field(j, {"model_type"});
  const std::string& type = c.model_type;

  // Architectures this model cannot shape are errors, never silently mis-shaped.
  const int64_t experts =
      int_field(j, {"num_local_experts", "num_experts", "n_routed_experts"}, src);
  const bool moe_type =
      one_of(type, {"mixtral", "qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3", "olmoe"});
  if ((experts > 1 && !moe_type) ||
      one_of(type, {"dbrx", "jamba", "switch_transformers", "gpt_oss", "llama4", "llama4_text"}) ||
      j.contains("moe_num_experts")) {
    throw InputError(src + ": mixture-of-experts model_type '" + type +
                     "' is not supported (field 'num_local_experts' / 'num_experts' / "
                     "'moe_num_experts'; supported: mixtral, qwen2_moe, qwen3_moe, deepseek_v2, "
                     "deepseek_v3, olmoe)");
  }
  if (bool_field(j, "is_encoder_decoder", false)) {
    throw InputError(src + ": encoder-decoder model '" + type +
                     "' is not supported (decoder-only)");
  }
  auto present = [&](const char* key) { return j.contains(key) && !j.at(key).is_null(); };
  if (present("text_config") || present("vision_config")) {
    throw InputError(src + ": a multimodal wrapper config (model_type '" + type +
                     "') is not supported: give the language model's own config (its "
                     "'text_config' object as a config.json)");
  }
  if (present("cross_attention_layers")) {
    throw InputError(src + ": cross-attention layers (model_type '" + type +
                     "') are not supported: the layer graph has self-attention only");
  }
  if (one_of(type, {"mamba", "mamba2", "rwkv", "falcon_mamba", "recurrent_gemma"})) {
    throw InputError(src + ": '" + type + "' is not a transformer decoder (not supported)");
  }

  c.hidden = int_field(j, {"hidden_size", "n_embd", "d_model"}, src);
  c.layers = int_field(j, {"num_hidden_layers", "n_layer", "num_layers"}, src);
  c.heads = int_field(j, {"num_attention_heads", "n_head", "num_heads"}, src);
  c.kv_heads = int_field(j, {"num_key_value_heads", "num_kv_heads", "n_head_kv"}, src);
  if (c.kv_heads == 0) {
    c.kv_heads = bool_field(j, "multi_query", false) ? 1 : c.heads;
    c.defaulted.push_back(bool_field(j, "multi_query", false)
                              ? "num_key_value_heads = 1 (multi_query)"
                              : "num_key_value_heads = num_attention_heads (no GQA)");
  }
  c.head_dim = int_field(j, {"head_dim"}, src);
  if (c.head_dim == 0 && c.heads > 0) {
    if (c.hidden % c.heads != 0) {
      throw InputError(src + ": hidden_size " + std::to_string(c.hidden) +
                       " is not divisible by num_attention_heads and no head_dim is given");
    }
    c.head_dim = c.hidden / c.heads;
    c.defaulted.push_back("head_dim = hidden_size / num_attention_heads");
  }
  c.intermediate =
      int_field(j, {"intermediate_size", "ffn_dim", "n_inner", "ffn_hidden_size"}, src);
  if (c.intermediate == 0) {
    c.intermediate = 4 * c.hidden;  // GPT-2 / BLOOM / Falcon convention
    c.ffn_implicit = true;
    c.defaulted.push_back("intermediate_size = 4 x hidden_size");
  }
  c.vocab = int_field(j, {"vocab_size"}, src);
  c.max_positions = int_field(j, {"max_position_embeddings", "n_positions", "seq_length"}, src);
  if (c.max_positions == 0) c.defaulted.push_back("max_position_embeddings unknown (no limit)");
  c.tied_embeddings = bool_field(j, "tie_word_embeddings", false);
  if (!present("tie_word_embeddings")) c.defaulted.push_back("tie_word_embeddings = false");

  std::string act = string_field(j, {"hidden_act", "activation_function", "hidden_activation"});
  const bool llama_like =
      one_of(type, {"llama",     "mistral",     "mixtral",     "qwen2",     "qwen2_moe", "qwen3",
                    "qwen3_moe", "deepseek_v2", "deepseek_v3", "olmoe",     "minicpm3",  "gemma",
                    "gemma2",    "bitnet",      "phi3",        "internlm2", "yi",        "baichuan",
                    "olmo",      "olmo2",       "granite",     "cohere",    "starcoder2"});
  const bool plain_like = one_of(type, {"opt", "bloom", "gpt2", "gpt_neox", "gptj", "falcon",
                                        "gpt_bigcode", "phi", "codegen"});
  if (type == "starcoder2") {
    c.ffn = FfnKind::kPlain;
  } else if (llama_like) {
    c.ffn = FfnKind::kGated;
  } else if (plain_like) {
    c.ffn = FfnKind::kPlain;
  } else {
    // Unknown architecture: SwiGLU-style activations imply a gated FFN.
    c.ffn = (act.empty() || act == "silu" || act == "swiglu") ? FfnKind::kGated : FfnKind::kPlain;
    c.warnings.push_back("unknown model_type '" + type + "': assuming a pre-norm decoder with a " +
                         (c.ffn == FfnKind::kGated ? "gated" : "plain") + " FFN and RoPE");
  }
  if (act.empty()) act = type == "bloom" ? "gelu" : (c.ffn == FfnKind::kGated ? "silu" : "gelu");
  c.activation = act;

  if (llama_like || (!plain_like)) {
    c.norm = NormKind::kRmsNorm;
    c.position = PositionKind::kRope;
    c.qkv_bias = type == "qwen2" || type == "qwen2_moe" || bool_field(j, "attention_bias", false);
    if (bool_field(j, "mlp_bias", false)) c.linear_bias = true;
  } else {
    c.norm = NormKind::kLayerNorm;
    c.position = PositionKind::kRope;  // gpt_neox, gptj, falcon, phi, codegen
    c.linear_bias = true;
  }
  // Parallel attention + MLP (one residual add of both branches), per architecture's flag.
  if (type == "phi" || type == "gptj") {
    c.parallel_attention = true;
  } else if (type == "gpt_neox") {
    c.parallel_attention = bool_field(j, "use_parallel_residual", true);
  } else if (type == "falcon") {
    const bool new_arch = bool_field(j, "new_decoder_architecture", false);
    c.parallel_attention = new_arch || bool_field(j, "parallel_attn", true);
    if (new_arch) c.parallel_norms = int_field(j, {"num_ln_in_parallel_attn"}, src) == 1 ? 1 : 2;
    c.linear_bias = bool_field(j, "bias", false);
  }
  if (type == "gemma2" || type == "gemma3_text") c.post_norms = true;
  // Architectures whose Hugging Face config class ties the LM head to the embedding by default.
  if ((type == "falcon" || type == "gemma" || type == "gemma2") &&
      !j.contains("tie_word_embeddings")) {
    c.tied_embeddings = true;
  }
  if (type == "opt") {
    c.position = PositionKind::kLearned;
    c.learned_positions = c.max_positions + 2;  // OPT's learned positions are offset by 2
    c.linear_bias = bool_field(j, "enable_bias", true);
    if (!c.tied_embeddings && !j.contains("tie_word_embeddings")) c.tied_embeddings = true;
    const int64_t proj = int_field(j, {"word_embed_proj_dim"}, src);
    if (proj != 0 && proj != c.hidden) {
      c.warnings.push_back(src + ": word_embed_proj_dim " + std::to_string(proj) +
                           " != hidden_size: the project_in/project_out layers are ignored");
    }
    if (!bool_field(j, "do_layer_norm_before", true)) {
      c.warnings.push_back(src +
                           ": post-norm OPT (do_layer_norm_before false) is modelled as "
                           "pre-norm; shapes and costs are the same");
    }
  } else if (type == "gpt2" || type == "gpt_bigcode") {
    c.position = PositionKind::kLearned;
    c.learned_positions = c.max_positions;
    if (!j.contains("tie_word_embeddings")) c.tied_embeddings = true;
  } else if (type == "bloom") {
    c.position = PositionKind::kAlibi;
    c.embedding_norm = true;
    if (!j.contains("tie_word_embeddings")) c.tied_embeddings = true;
  }
  if (type == "falcon" && bool_field(j, "alibi", false)) c.position = PositionKind::kAlibi;
  if (c.position == PositionKind::kRope && c.head_dim > 0) {
    // Partial rotary: Phi's partial_rotary_factor, GPT-NeoX's rotary_pct, GPT-J's rotary_dim.
    c.rotary_dim = c.head_dim;
    double fraction = 1;
    for (const char* key : {"partial_rotary_factor", "rotary_pct"}) {
      if (j.contains(key) && j[key].is_number()) fraction = j[key].get<double>();
    }
    if (!(fraction > 0 && fraction <= 1)) {
      throw InputError(src + ": field 'partial_rotary_factor' / 'rotary_pct' must be in (0, 1]");
    }
    c.rotary_dim = int64_t(double(c.head_dim) * fraction);
    if (const int64_t rd = int_field(j, {"rotary_dim"}, src); rd > 0) c.rotary_dim = rd;
    if (c.rotary_dim < 1 || c.rotary_dim > c.head_dim) {
      throw InputError(src + ": rotary dims " + std::to_string(c.rotary_dim) +
                       " must be in 1..head_dim " + std::to_string(c.head_dim));
    }
  }
  read_moe(j, src, c);
  read_mla(j, src, c);
  read_sliding_window(j, src, c);
  if (j.contains("rope_scaling") && !j["rope_scaling"].is_null()) {
    c.warnings.push_back(src + ": rope_scaling is ignored (it changes no shape)");
  }
  c.validate();
  return c;
}

ModelConfig load_model(std::string_view name_or_path) {
  const std::string arg(name_or_path);
  std::string path = arg;
  bool builtin = false;
  if (!fs::exists(path)) {
    path = config_dir("models") + "/" + arg + ".json";
    builtin = true;
    if (arg.find('/') != std::string::npos || !fs::exists(path)) {
      std::string names;
      for (const auto& n : builtin_model_names()) names += (names.empty() ? "" : ", ") + n;
      throw InputError("--model: '" + arg + "' is neither a built-in model (" + names +
                       ") nor a readable config.json");
    }
  }
  std::string text;
  try {
    text = read_input_file(path);
  } catch (const InputError& e) {
    throw InputError(std::string("--model: ") + e.what());
  }
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(path + ": not valid JSON (byte " + std::to_string(e.byte) + ")");
  } catch (const json::exception& e) {
    throw InputError(path + ": " + plain_json_error(e));
  }
  ModelConfig c = model_from_hf_config(j, path);
  c.name = builtin ? arg : path;
  return c;
}

}  // namespace ltc::llm
