#include "model/llm/routing.h"

#include "common/error.h"
#include "common/file_io.h"
#include "model/llm/model_config.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace ltc::llm {

ExpertLoad parse_expert_load(std::string_view spec, int64_t experts, std::string_view flag) {
  const std::string f(flag), s(spec);
  ExpertLoad load;
  load.name = s;
  if (s == "uniform") return load;
  if (s.rfind("zipf:", 0) == 0) {
    double z = -1;
    try {
      size_t used = 0;
      z = std::stod(s.substr(5), &used);
      if (used != s.size() - 5) z = -1;
    } catch (const std::exception&) {
      z = -1;
    }
    if (!(z >= 0 && z <= 8)) {
      throw InputError(f + ": '" + s + "' (valid: zipf:<s> with s in 0..8)");
    }
    double sum = 0;
    for (int64_t e = 0; e < experts; ++e) sum += std::pow(double(e + 1), -z);
    for (int64_t e = 0; e < experts; ++e) load.share.push_back(std::pow(double(e + 1), -z) / sum);
    return load;
  }
  std::string text;
  try {
    text = read_input_file(s);
  } catch (const InputError& e) {
    throw InputError(f + ": '" + s + "' is not uniform, zipf:<s> or a readable file (" + e.what() +
                     ")");
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    throw InputError(f + ": " + s + " is not valid JSON (valid: a list of per-expert loads)");
  }
  if (!j.is_array() || int64_t(j.size()) != experts) {
    throw InputError(f + ": " + s + " must be a JSON list of " + std::to_string(experts) +
                     " per-expert loads (one per routed expert of the model)");
  }
  double sum = 0;
  for (const auto& v : j) {
    if (!v.is_number() || !(v.get<double>() >= 0) || !std::isfinite(v.get<double>())) {
      throw InputError(f + ": " + s + ": every load must be a finite number >= 0");
    }
    sum += v.get<double>();
  }
  if (!(sum > 0)) throw InputError(f + ": " + s + ": the loads sum to 0");
  for (const auto& v : j) load.share.push_back(v.get<double>() / sum);
  return load;
}

ExpertLoad expert_load_for(const ModelConfig& model, std::string_view spec, std::string_view flag) {
  if (!model.is_moe() && spec != "uniform") {
    throw InputError(std::string(flag) + ": " + model.name +
                     " has no routed experts (the flag applies to mixture-of-experts models)");
  }
  return parse_expert_load(spec, model.moe.experts, flag);
}

RoutingStats routing_stats(int64_t tokens, int64_t experts, int64_t top_k, const ExpertLoad& load) {
  RoutingStats r;
  const double t = double(tokens), e_count = double(experts), k = double(top_k);
  r.assignments = t * k;
  if (load.share.empty()) {
    // Uniform: an expert is missed by one token with probability 1 - k/E, by two given experts
    // with (E-k)(E-k-1) / (E(E-1)); the untouched count's variance follows.
    const double p = std::pow(1.0 - k / e_count, t);
    const double q =
        experts > 1 ? std::pow((e_count - k) * (e_count - k - 1) / (e_count * (e_count - 1)), t)
                    : 0.0;
    r.active = e_count * (1.0 - p);
    const double var = e_count * p + e_count * (e_count - 1) * q - e_count * e_count * p * p;
    r.active_sd = std::sqrt(std::max(0.0, var));
    r.max_tokens = r.assignments / e_count;
    return r;
  }
  std::vector<double> miss(static_cast<size_t>(experts)), pick(static_cast<size_t>(experts));
  double var = 0;
  for (int64_t e = 0; e < experts; ++e) {
    pick[e] = std::min(1.0, k * load.share[e]);
    miss[e] = std::pow(1.0 - pick[e], t);
    r.active += 1.0 - miss[e];
    var += miss[e] * (1.0 - miss[e]);
    r.max_tokens = std::max(r.max_tokens, load.share[e] * r.assignments);
  }
  // Covariance of two experts' misses: a token misses both with probability 1 - p_e - p_f
  // (a token's picks are distinct experts).
  for (int64_t e = 0; e < experts; ++e) {
    for (int64_t f = e + 1; f < experts; ++f) {
      const double both = std::pow(std::max(0.0, 1.0 - pick[e] - pick[f]), t);
      var += 2.0 * (both - miss[e] * miss[f]);
    }
  }
  r.active_sd = std::sqrt(std::max(0.0, var));
  return r;
}

std::vector<double> expert_pick(int64_t experts, int64_t top_k, const ExpertLoad& load) {
  std::vector<double> pick(static_cast<size_t>(experts));
  for (int64_t e = 0; e < experts; ++e) {
    const double share = load.share.empty() ? 1.0 / double(experts) : load.share[e];
    pick[e] = std::min(1.0, double(top_k) * share);
  }
  return pick;
}

namespace {

// E[ceil(X / t)], X ~ Binomial(n, p): the pmf summed over twelve deviations either side of its
// mode (the mass beyond is below 1e-30), each term from its neighbour's.
double binomial_ceil_mean(int64_t n, double p, int64_t t) {
  if (n <= 0 || p <= 0) return 0;
  if (p >= 1) return double((n + t - 1) / t);
  const double mean = double(n) * p, sd = std::sqrt(mean * (1 - p));
  const int64_t lo = std::max<int64_t>(0, int64_t(std::floor(mean - 12 * sd)) - 1);
  const int64_t hi = std::min<int64_t>(n, int64_t(std::ceil(mean + 12 * sd)) + 1);
  const int64_t mode = std::clamp<int64_t>(int64_t(double(n + 1) * p), lo, hi);
  const double at_mode = std::exp(std::lgamma(double(n) + 1) - std::lgamma(double(mode) + 1) -
                                  std::lgamma(double(n - mode) + 1) + double(mode) * std::log(p) +
                                  double(n - mode) * std::log1p(-p));
  const double odds = p / (1 - p);
  auto tiles = [t](int64_t x) { return double((x + t - 1) / t); };
  double sum = at_mode * tiles(mode), pmf = at_mode;
  for (int64_t x = mode; x < hi; ++x) {  // pmf(x + 1) from pmf(x)
    pmf *= double(n - x) / double(x + 1) * odds;
    sum += pmf * tiles(x + 1);
  }
  pmf = at_mode;
  for (int64_t x = mode; x > lo; --x) {  // pmf(x - 1) from pmf(x)
    pmf *= double(x) / double(n - x + 1) / odds;
    sum += pmf * tiles(x - 1);
  }
  return sum;
}

}  // namespace

double group_row_tiles(int64_t tokens, const std::vector<double>& pick, int64_t tile_rows) {
  double tiles = 0;
  for (size_t e = 0; e < pick.size();) {
    size_t same = e + 1;
    while (same < pick.size() && pick[same] == pick[e]) ++same;
    tiles +=
        double(same - e) * binomial_ceil_mean(tokens, pick[e], std::max<int64_t>(1, tile_rows));
    e = same;
  }
  return tiles;
}

}  // namespace ltc::llm
