// How a MoE layer's tokens spread over its routed experts: the input to the grouped expert GEMMs
// (model/llm/graph.h). Each of T tokens picks top_k distinct experts; expert e is picked by a
// token with probability min(1, top_k x share[e]) (share: the expert's fraction of all
// token-expert assignments). The uniform default (share 1/E) is routing independent across
// tokens and uniform over experts, for which the expected number of distinct experts a batch
// touches is E (1 - (1 - k/E)^T).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ltc::llm {

struct ExpertLoad {
  std::string name = "uniform";  // "uniform", "zipf:<s>", or the measured file's path
  std::vector<double> share;     // per expert, sums to 1; empty: uniform
};

// `spec`: "uniform", "zipf:<s>" (share of the i-th expert ~ 1 / i^s, s in 0..8), or a JSON file
// holding a list of `experts` non-negative per-expert loads (token counts or fractions, e.g.
// measured router statistics). Throws InputError naming `flag`.
ExpertLoad parse_expert_load(std::string_view spec, int64_t experts,
                             std::string_view flag = "--expert-load");

struct ModelConfig;
// parse_expert_load for `model`'s routed experts; a spec other than "uniform" on a model without
// experts is an InputError naming `flag` (the flag would change nothing).
ExpertLoad expert_load_for(const ModelConfig& model, std::string_view spec,
                           std::string_view flag = "--expert-load");

struct RoutingStats {
  double active = 0;       // expected distinct experts that receive at least one token
  double active_sd = 0;    // its standard deviation over routings
  double assignments = 0;  // token-expert pairs: tokens x top_k
  double max_tokens = 0;   // expected tokens of the most loaded expert (share x assignments)
};
RoutingStats routing_stats(int64_t tokens, int64_t experts, int64_t top_k, const ExpertLoad& load);

// Each routed expert's probability of being picked by one token: min(1, top_k x share).
std::vector<double> expert_pick(int64_t experts, int64_t top_k, const ExpertLoad& load);

// Row tiles of `tile_rows` rows the experts' groups of a grouped GEMM fill, expected over
// routings: the sum over experts of E[ceil(X / tile_rows)], X ~ Binomial(tokens, pick) the
// tokens routed to an expert. A tile taller than every group counts the active experts; shorter
// tiles add the padding of groups that the routing leaves uneven.
double group_row_tiles(int64_t tokens, const std::vector<double>& pick, int64_t tile_rows);

}  // namespace ltc::llm
