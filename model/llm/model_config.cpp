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

bool one_of(const std::string& s, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return s == n; });
}

}  // namespace

int64_t ModelConfig::embedding_parameters() const {
  int64_t p = vocab * hidden + learned_positions * hidden;
  if (embedding_norm) p += 2 * hidden;
  return p;
}

int64_t ModelConfig::layer_parameters() const {
  const int64_t norm_params = norm == NormKind::kLayerNorm ? 2 * hidden : hidden;
  int64_t attn = hidden * q_dim() + 2 * hidden * kv_dim() + q_dim() * hidden;
  if (linear_bias) attn += q_dim() + 2 * kv_dim() + hidden;
  if (qkv_bias && !linear_bias) attn += q_dim() + 2 * kv_dim();
  const int64_t ffn_mats = ffn == FfnKind::kGated ? 3 : 2;
  int64_t mlp = ffn_mats * hidden * intermediate;
  if (linear_bias) mlp += (ffn_mats - 1) * intermediate + hidden;
  return layer_norms() * norm_params + attn + mlp;
}

int64_t ModelConfig::layer_norms() const {
  return (parallel_attention ? parallel_norms : 2) + (post_norms ? 2 : 0);
}

int64_t ModelConfig::head_parameters() const {
  const int64_t final_norm = norm == NormKind::kLayerNorm ? 2 * hidden : hidden;
  return final_norm + (tied_embeddings ? 0 : vocab * hidden);
}

int64_t ModelConfig::parameters() const {
  return embedding_parameters() + layers * layer_parameters() + head_parameters();
}

int64_t ModelConfig::linear_weight_parameters() const {
  const int64_t ffn_mats = ffn == FfnKind::kGated ? 3 : 2;
  return layers * (2 * hidden * q_dim() + 2 * hidden * kv_dim() + ffn_mats * hidden * intermediate);
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
  const int64_t experts = int_field(
      j, {"num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"}, src);
  if (experts > 1 || one_of(type, {"mixtral", "qwen2_moe", "deepseek_v2", "deepseek_v3", "dbrx",
                                   "jamba", "olmoe", "switch_transformers"})) {
    throw InputError(src + ": mixture-of-experts model (model_type '" + type +
                     "') is not supported: the layer graph has one dense FFN");
  }
  if (bool_field(j, "is_encoder_decoder", false)) {
    throw InputError(src + ": encoder-decoder model '" + type +
                     "' is not supported (decoder-only)");
  }
  auto present = [&](const char* key) { return j.contains(key) && !j.at(key).is_null(); };
  if (present("kv_lora_rank") || present("q_lora_rank") || one_of(type, {"minicpm3"})) {
    throw InputError(
        src + ": multi-head latent attention (kv_lora_rank / q_lora_rank, model_type '" + type +
        "') is not supported: attention is modelled as multi-head attention over a "
        "full K/V cache, which would misstate its weights, cache and FLOPs");
  }
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
  const bool llama_like = one_of(
      type, {"llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "bitnet", "phi3", "internlm2",
             "yi", "baichuan", "olmo", "olmo2", "granite", "cohere", "starcoder2"});
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
    c.qkv_bias = type == "qwen2" || bool_field(j, "attention_bias", false);
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
  if (j.contains("sliding_window") && !j["sliding_window"].is_null() &&
      !(j["sliding_window"].is_boolean() && !j["sliding_window"].get<bool>())) {
    c.warnings.push_back(src + ": sliding_window is ignored: attention reads the whole context");
  }
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
