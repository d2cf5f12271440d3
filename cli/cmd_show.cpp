// `ltc show gpu|model`: what a --gpu (after its `base` files and --gpu-set) or a --model resolves
// to, so that an architect sees the machine and the shapes a run uses, and where each came from.
#include "cli/command.h"
#include "cli/model_step.h"
#include "cli/options.h"
#include "common/error.h"
#include "model/hw/gpu.h"
#include "model/llm/model_config.h"
#include "model/llm/precision.h"
#include "sim/energy.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace ltc::cli {
namespace {

using nlohmann::json;

struct ShowFlags {
  std::string name, gpu_set;
  int64_t context = kDefaultContext;
  bool json = false;
};

// Leaves of `j` by dotted path (arrays are one leaf each).
void flatten(const json& j, const std::string& prefix,
             std::vector<std::pair<std::string, json>>& out) {
  if (j.is_object() && !j.empty()) {
    for (const auto& [k, v] : j.items()) flatten(v, prefix.empty() ? k : prefix + "." + k, out);
    return;
  }
  out.emplace_back(prefix, j);
}

bool has_path(const json& j, const std::string& path) {
  const json* node = &j;
  std::stringstream ss(path);
  for (std::string key; std::getline(ss, key, '.');) {
    if (!node->is_object() || !node->contains(key)) return false;
    node = &(*node)[key];
  }
  return true;
}

void show_gpu(const ShowFlags& o) {
  const auto chain = hw::gpu_file_chain(o.name);
  hw::GpuConfig gpu = hw::load_gpu(o.name);
  std::vector<std::string> overridden;
  if (!o.gpu_set.empty()) {
    gpu = hw::with_overrides(gpu, o.gpu_set);
    std::stringstream ss(o.gpu_set);
    for (std::string item; std::getline(ss, item, ',');) {
      if (!item.empty()) overridden.push_back(item.substr(0, item.find('=')));
    }
  }
  std::vector<std::pair<std::string, json>> fields;
  flatten(json(gpu), "", fields);
  auto source_of = [&](const std::string& path) -> std::string {
    for (const auto& p : overridden) {
      if (p == path) return "--gpu-set";
    }
    for (const auto& [file, j] : chain) {
      if (has_path(j, path)) return std::filesystem::path(file).filename().string();
    }
    return "default";
  };
  const sim::EnergyCoefficients ec = sim::energy_coefficients(gpu);
  json derived = {{"tensor_cores", gpu.tensor_cores()},
                  {"fp32_lanes_per_sm", gpu.fp32_lanes_per_sm()},
                  {"int32_lanes_per_sm", gpu.int32_lanes_per_sm()},
                  {"mac_fp16_tops", gpu.mac_tops("fp16", "fp16")},
                  {"dram_sim_gbps", gpu.dram_sim_gbps()},
                  {"l2_sim_bytes_per_cycle", gpu.l2_sim_bytes_per_cycle()},
                  {"lmma_pj_per_plane_op", ec.lmma_pj_per_plane_op},
                  {"lmma_energy_source", ec.lmma_source}};
  if (gpu.has_lut_tensor()) derived["lut_w1_tops"] = gpu.lut_tensor->w1_tops;
  std::vector<std::string> files;
  for (const auto& [file, j] : chain) files.push_back(file);
  if (o.json) {
    json rows = json::array();
    for (const auto& [path, v] : fields) {
      rows.push_back({{"field", path}, {"value", v}, {"source", source_of(path)}});
    }
    fmt::print("{}\n", json{{"gpu", gpu.name},
                            {"files", files},
                            {"gpu_set", o.gpu_set},
                            {"fields", rows},
                            {"derived", derived}}
                           .dump());
    return;
  }
  fmt::print("gpu {}: {}\n", gpu.name, gpu.description);
  fmt::print(
      "files (each field from the first that sets it): {}{}\n",
      [&] {
        std::string s;
        for (const auto& f : files) s += (s.empty() ? "" : " <- base ") + f;
        return s;
      }(),
      o.gpu_set.empty() ? "" : "; overrides: --gpu-set " + o.gpu_set);
  size_t width = 0;
  for (const auto& [path, v] : fields) width = std::max(width, path.size());
  for (const auto& [path, v] : fields) {
    if (path == "description") continue;
    std::string value = v.is_string() ? v.get<std::string>() : v.dump();
    if (value.size() > 60) value = value.substr(0, 57) + "...";
    fmt::print("  {:<{}}  {:<60}  {}\n", path, width, value, source_of(path));
  }
  if (!gpu.energy.lut.empty()) {
    // One line per entry: the list above is cut to the column.
    fmt::print(
        "energy.lut (the PPA flow's pJ per op per LUT tile; ltc sim charges the entry of a "
        "trace's lmma precision):\n");
    for (const auto& e : gpu.energy.lut) {
      fmt::print("  {:<{}}  {:.6g} pJ/op  {}\n", e.tile, width, e.pj_per_op, e.source);
    }
  }
  fmt::print("derived:\n");
  for (const auto& [k, v] : derived.items()) {
    fmt::print("  {:<{}}  {}\n", k, width, v.is_string() ? v.get<std::string>() : v.dump());
  }
}

// Bytes of the model's parameters with the decoder layers' linear weights at `weights` and every
// other parameter (embeddings, norms, biases, an untied LM head) at FP16, as the roofline stores
// them.
double weight_bytes(const llm::ModelConfig& m, const std::string& weights) {
  const double linear = double(m.linear_weight_parameters());
  const double other = double(m.parameters()) - linear;
  return linear * llm::parse_weight_format(weights).bits_per_weight() / 8.0 + other * 2.0;
}

void show_model(const ShowFlags& o) {
  const llm::ModelConfig m = load_model_reporting(o.name);
  const char* ffn = m.ffn == llm::FfnKind::kGated ? "gated" : "plain";
  const char* norm = m.norm == llm::NormKind::kRmsNorm ? "rmsnorm" : "layernorm";
  const char* position = m.position == llm::PositionKind::kRope      ? "rope"
                         : m.position == llm::PositionKind::kLearned ? "learned"
                                                                     : "alibi";
  const std::vector<std::string> precisions = {"fp16", "int8", "int4", "int2", "int1"};
  // K and V (MLA: the latent and RoPE key) of every layer, FP16 (the KV cache's dtype in every
  // step ltc models); sliding-window layers keep at most their window.
  const int64_t kv_per_token = m.layers * m.kv_elements_per_token() * 2;
  const auto kv_per_sequence = static_cast<int64_t>(m.kv_cache_elements(o.context) * 2);
  json moe = nullptr, mla = nullptr, swa = nullptr;
  int64_t moe_layers = 0;
  for (int64_t l = 0; l < m.layers; ++l) moe_layers += m.layer_kind(l).moe ? 1 : 0;
  if (m.is_moe()) {
    moe = {{"experts", m.moe.experts},
           {"experts_per_token", m.moe.top_k},
           {"expert_intermediate", m.moe.intermediate},
           {"shared_intermediate", m.moe.shared_intermediate},
           {"shared_expert_gate", m.moe.shared_gate},
           {"norm_topk", m.moe.norm_topk},
           {"scoring", m.moe.scoring},
           {"moe_layers", moe_layers},
           {"dense_layers", m.layers - moe_layers},
           {"active_parameters_per_token", m.parameters() - moe_layers *
                                                                (m.moe.experts - m.moe.top_k) * 3 *
                                                                m.hidden * m.moe.intermediate}};
  }
  if (m.is_mla()) {
    mla = {{"kv_lora_rank", m.mla.kv_lora_rank},
           {"q_lora_rank", m.mla.q_lora_rank},
           {"qk_nope_head_dim", m.mla.qk_nope_dim},
           {"qk_rope_head_dim", m.mla.qk_rope_dim},
           {"v_head_dim", m.mla.v_head_dim},
           {"form", "absorbed in decode, naive in prefill; latent cached"}};
  }
  int64_t sliding = 0;
  for (int64_t l = 0; l < m.layers; ++l) sliding += m.layer_kind(l).window > 0 ? 1 : 0;
  if (m.sliding_window > 0) {
    swa = {{"window", m.sliding_window}, {"sliding_layers", sliding}, {"layers", m.layers}};
  }
  if (o.json) {
    json bytes = json::object();
    for (const auto& p : precisions) bytes[p] = weight_bytes(m, p);
    fmt::print("{}\n", json{{"model", m.name},
                            {"model_type", m.model_type},
                            {"shape",
                             {{"hidden", m.hidden},
                              {"layers", m.layers},
                              {"heads", m.heads},
                              {"kv_heads", m.kv_heads},
                              {"head_dim", m.head_dim},
                              {"intermediate", m.intermediate},
                              {"vocab", m.vocab},
                              {"max_positions", m.max_positions},
                              {"ffn", ffn},
                              {"activation", m.activation},
                              {"norm", norm},
                              {"position", position},
                              {"tied_embeddings", m.tied_embeddings}}},
                            {"parameters",
                             {{"total", m.parameters()},
                              {"embedding", m.embedding_parameters()},
                              {"per_layer", m.layer_parameters()},
                              {"head", m.head_parameters()},
                              {"linear_weights", m.linear_weight_parameters()}}},
                            {"weight_bytes", bytes},
                            {"kv_cache_bytes_per_token", kv_per_token},
                            {"kv_cache_context", o.context},
                            {"kv_cache_bytes_per_sequence", kv_per_sequence},
                            {"moe", moe},
                            {"mla", mla},
                            {"sliding_window", swa},
                            {"defaulted", m.defaulted},
                            {"warnings", m.warnings}}
                           .dump());
    return;
  }
  fmt::print("model {} ({}): {} layers\n", m.name, m.model_type, m.layers);
  fmt::print(
      "shape: hidden {}, heads {}, kv_heads {}, head_dim {}, intermediate {}, vocab {}, "
      "max_positions {}; FFN {} {}, {}, {} positions, embeddings {}\n",
      m.hidden, m.heads, m.kv_heads, m.head_dim, m.intermediate, m.vocab, m.max_positions, ffn,
      m.activation, norm, position, m.tied_embeddings ? "tied" : "untied");
  if (m.is_moe()) {
    fmt::print(
        "experts: {} routed of FFN {}, top-{} ({}, {}), shared FFN {}{}; {} MoE layers, {} dense; "
        "{} parameters active per token\n",
        m.moe.experts, m.moe.intermediate, m.moe.top_k, m.moe.scoring,
        m.moe.norm_topk ? "renormalized" : "not renormalized", m.moe.shared_intermediate,
        m.moe.shared_gate ? " (sigmoid-gated)" : "", moe_layers, m.layers - moe_layers,
        moe["active_parameters_per_token"].get<int64_t>());
  }
  if (m.is_mla()) {
    fmt::print(
        "latent attention: kv_lora_rank {}, q_lora_rank {}, qk nope {} + rope {}, v {}; {}\n",
        m.mla.kv_lora_rank, m.mla.q_lora_rank, m.mla.qk_nope_dim, m.mla.qk_rope_dim,
        m.mla.v_head_dim, mla["form"].get<std::string>());
  }
  if (m.sliding_window > 0) {
    fmt::print("sliding window: {} keys on {} of {} layers (the cache keeps the window)\n",
               m.sliding_window, sliding, m.layers);
  }
  fmt::print(
      "parameters: {} (embedding {}, per layer {}, head {}); linear weights of the layers {}\n",
      m.parameters(), m.embedding_parameters(), m.layer_parameters(), m.head_parameters(),
      m.linear_weight_parameters());
  fmt::print("weight bytes (the layers' linear weights at the precision, the rest at fp16):\n");
  for (const auto& p : precisions) {
    fmt::print("  {:<5} {:>16.0f} B  {:>8.3f} GB\n", p, weight_bytes(m, p),
               weight_bytes(m, p) / 1e9);
  }
  fmt::print(
      "KV cache (fp16): {} B per token and sequence ({}); {:.4g} GB per sequence at context {}{}\n",
      kv_per_token,
      m.is_mla() ? "layers x (kv_lora_rank + qk_rope_head_dim) x 2 B"
                 : "layers x 2 x kv_heads x head_dim x 2 B",
      double(kv_per_sequence) / 1e9, o.context,
      sliding > 0 ? " (sliding-window layers keep " + std::to_string(m.sliding_window) + ")" : "");
  for (const auto& d : m.defaulted) fmt::print("default: {}\n", d);
}

CommandRegistrar reg{
    94, [](CLI::App& app) {
      CLI::App* show = app.add_subcommand(
          "show", "What a --gpu or --model resolves to (fields, sources, shapes, bytes)");
      show->require_subcommand(1);
      set_examples(show, {"ltc show gpu a100-lut4x", "ltc show model llama2-7b"});
      {
        auto o = std::make_shared<ShowFlags>();
        CLI::App* sub = show->add_subcommand(
            "gpu", "The resolved GPU: every field with the file (or --gpu-set) that set it");
        sub->add_option(
               "gpu", o->name,
               "built-in GPU (" +
                   [] {
                     std::string s;
                     for (const auto& n : hw::builtin_gpu_names()) s += (s.empty() ? "" : ", ") + n;
                     return s;
                   }() +
                   ") or a GPU JSON path")
            ->required();
        sub->add_option("--gpu-set", o->gpu_set,
                        "change fields of the GPU: path=value[,path=value...] (as ltc sim)");
        sub->add_flag("--json", o->json, "print one JSON object {gpu, files, fields, derived}");
        set_examples(sub, {"ltc show gpu a100-lut4x",
                           "ltc show gpu a100 --gpu-set register_file_kb_per_sm=512 --json"});
        sub->callback([o] { show_gpu(*o); });
      }
      {
        auto o = std::make_shared<ShowFlags>();
        CLI::App* sub = show->add_subcommand(
            "model", "A model's shapes, parameters, weight and KV-cache bytes, and its defaults");
        sub->add_option("model", o->name,
                        "built-in model (`ltc list models`) or a Hugging Face config.json")
            ->required();
        sub->add_option("--context", o->context,
                        "tokens per sequence for the KV-cache bytes, 1..16777216")
            ->capture_default_str()
            ->check(in_range(1, 1 << 24));
        sub->add_flag("--json", o->json, "print one JSON object");
        set_examples(sub,
                     {"ltc show model llama2-7b", "ltc show model path/to/config.json --json"});
        sub->callback([o] { show_model(*o); });
      }
    }};

}  // namespace
}  // namespace ltc::cli
