#include "cli/options.h"

#include "common/error.h"
#include "common/file_io.h"
#include "model/hw/gpu.h"
#include "model/llm/model_config.h"
#include "sim/step_pool.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

namespace ltc::cli {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::string number_text(double v) {
  std::ostringstream os;
  os << std::setprecision(10) << v;  // integers up to 2^31 exactly, 9.2e+18 short
  return os.str();
}

}  // namespace

CLI::Option* add_gpu_option(CLI::App* sub, std::string& gpu, const std::string& prefix) {
  return sub->add_option("--gpu", gpu,
                         prefix + "built-in GPU (" + joined(hw::builtin_gpu_names()) +
                             "; `ltc list gpus`) or a GPU JSON path");
}

CLI::Option* add_model_option(CLI::App* sub, std::string& model, const std::string& prefix) {
  return sub->add_option("--model", model,
                         prefix + "built-in model (" + joined(llm::builtin_model_names()) +
                             "; `ltc list models`) or a Hugging Face config.json");
}

CLI::Validator in_range(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        double v = 0;
        size_t used = 0;
        try {
          v = std::stod(s, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != s.size() || !std::isfinite(v))
          return "'" + s + "' is not a number";
        if (v < lo || v > hi) {
          return "'" + s + "' is out of range (valid: " + number_text(lo) + " .. " +
                 number_text(hi) + ")";
        }
        return std::string();
      },
      "");
}

CLI::Option* add_tile_options(CLI::App* sub, int& m, int& n, int& k, int& wbits,
                              const std::string& wbits_help) {
  sub->add_option("--m", m, "tile rows M (activation rows), 1..4096")
      ->capture_default_str()
      ->check(in_range(1, 4096));
  sub->add_option("--n", n, "tile columns N (output channels), 1..4096, M * N at most 4096")
      ->capture_default_str()
      ->check(in_range(1, 4096));
  sub->add_option("--k", k, "activations per table K (dot-product width), 1..8")
      ->capture_default_str()
      ->check(in_range(1, 8));
  return sub->add_option("--wbits", wbits, wbits_help + ", 1..8")
      ->capture_default_str()
      ->check(in_range(1, 8));
}

void add_operand_options(CLI::App* sub, std::string* acts, std::string& weights, int wbits,
                         const std::string& acts_help) {
  // Listed apart rather than hidden: a hidden CLI11 option loses its name in error messages.
  const std::string older = "Older spellings (each the same as the flag it names)";
  sub->get_option("--wbits")->group(older);
  sub->add_option("--weights", weights,
                  "weight planes: int1 .. int8 or binary (default int" + std::to_string(wbits) +
                      "); a mac tile with a float --acts takes them as n-bit codes dequantized "
                      "in the tile, i.e. --weight int8");
  if (acts == nullptr) return;
  sub->add_option("--acts", *acts, acts_help + ": int8, fp16, bf16, fp8e4m3, fp8e5m2")
      ->capture_default_str();
  sub->add_option("--act", *acts, "--acts")->group(older);
}

int weight_planes(const std::string& weights, int wbits) {
  if (weights.empty()) return wbits;
  if (weights == "binary") return 1;
  if (weights.size() == 4 && weights.rfind("int", 0) == 0 && weights[3] >= '1' &&
      weights[3] <= '8') {
    return weights[3] - '0';
  }
  throw InputError("--weights: '" + weights +
                   "' is not a tile's weight format (valid: int1 .. int8, binary; a MAC tile's "
                   "weight dtype is --weight)");
}

void check_older_spellings(const CLI::App* sub) {
  for (const auto& [now, old] : {std::pair{"--acts", "--act"}, std::pair{"--weights", "--wbits"}}) {
    const CLI::Option* a = sub->get_option_no_throw(now);
    const CLI::Option* b = sub->get_option_no_throw(old);
    if (a != nullptr && b != nullptr && a->count() > 0 && b->count() > 0) {
      throw InputError(std::string(old) + ": the older spelling of " + now + "; give one of them");
    }
  }
}

void check_tile_units(int64_t m, int64_t n) {
  if (m * n > kMaxTileUnits) {
    throw InputError("--m/--n: a tile of " + std::to_string(m) + " x " + std::to_string(n) +
                     " is too large (valid: M * N at most " + std::to_string(kMaxTileUnits) +
                     "; the ports of larger tiles pass Yosys's 2^24-bit limit)");
  }
}

CLI::Option* add_gpu_set_option(CLI::App* sub, std::string& gpu_set, const std::string& result) {
  return sub->add_option("--gpu-set", gpu_set,
                         "change fields of the GPU: path=value[,path=value...] (ltc show gpu "
                         "lists them); each must change the " +
                             result);
}

hw::GpuConfig apply_gpu_set(const hw::GpuConfig& base, const std::string& gpu_set,
                            const std::function<nlohmann::json(const hw::GpuConfig&)>& result,
                            const std::string& what) {
  if (gpu_set.empty()) return base;
  const hw::GpuConfig all = hw::with_overrides(base, gpu_set);  // bad paths and values first
  const nlohmann::json before = result(base);
  std::stringstream ss(gpu_set);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item.empty()) continue;
    if (result(hw::with_overrides(base, item)) == before) {
      throw InputError("--gpu-set: field '" + item.substr(0, item.find('=')) +
                       "' changes nothing in this " + what +
                       "; ltc sim --gpu-set takes the simulator's fields)");
    }
  }
  return all;
}

nlohmann::json defaults_taken(const CLI::App* sub, const std::vector<std::string>& names) {
  nlohmann::json taken = nlohmann::json::object();
  for (const std::string& name : names) {
    const CLI::Option* opt = sub->get_option_no_throw(name);
    if (opt == nullptr) throw std::logic_error("defaults_taken: no flag " + name);
    if (opt->count() == 0 && !opt->get_default_str().empty()) taken[name] = opt->get_default_str();
  }
  return taken;
}

std::string defaults_line(const nlohmann::json& taken, const std::string& why) {
  std::string s;
  for (const auto& [name, value] : taken.items()) {
    s += (s.empty() ? "defaults: " : ", ") + name + " " + value.get<std::string>();
  }
  if (!s.empty() && !why.empty()) s += " (" + why + ")";
  return s.empty() ? s : s + "\n";
}

std::string gemm_precision_defaults(const hw::GpuConfig& gpu, std::string& weights,
                                    std::string& acts, nlohmann::json& taken) {
  std::string w = "fp16", a = "fp16", why;
  if (gpu.has_lut_tensor()) {
    const hw::TensorCoreConfig& core = gpu.lut_tensor->core;
    w = "int" + std::to_string(core.wbits);
    a = golden::dtype_name(core.act);
    why = "gpu " + gpu.name + "'s LUT tile precision, lut_tensor.core";
  } else {
    why = "gpu " + gpu.name + " has MAC tensor cores only: fp16";
  }
  if (!weights.empty() && !acts.empty()) return "";
  if (weights.empty()) {
    weights = w;
    taken["--weights"] = w;
  }
  if (acts.empty()) {
    acts = a;
    taken["--acts"] = a;
  }
  return why;
}

void set_examples(CLI::App* sub, std::initializer_list<const char*> commands) {
  std::string text = "\nExamples:\n";
  for (const char* c : commands) text += std::string("  ") + c + "\n";
  sub->footer(text);
}

void check_output_path(const std::string& path, const std::string& flag,
                       const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  if (path.empty()) throw InputError(flag + ": an output path is required");
  const fs::path parent = fs::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty() && !fs::is_directory(parent, ec)) {
    throw InputError(flag + ": directory '" + parent.string() + "' of '" + path +
                     "' does not exist (create it first)");
  }
  if (fs::is_directory(path, ec)) {
    throw InputError(flag + ": '" + path + "' is a directory (give a file name)");
  }
  check_not_an_input(path, flag, inputs);
}

FlagRules& FlagRules::flags(std::vector<std::string> names, std::string when, std::string why,
                            std::function<bool()> applies) {
  flag_rules_.push_back({std::move(names), std::move(when), std::move(why), std::move(applies)});
  return *this;
}

FlagRules& FlagRules::gpu_fields(std::vector<std::string> prefixes, std::string when,
                                 std::string why, std::function<bool()> applies) {
  field_rules_.push_back(
      {std::move(prefixes), std::move(when), std::move(why), std::move(applies)});
  return *this;
}

void FlagRules::check(const std::string& gpu_set) const {
  for (const Rule& r : flag_rules_) {
    for (const std::string& name : r.names) {
      const CLI::Option* opt = sub_->get_option_no_throw(name);
      if (opt == nullptr) throw std::logic_error("FlagRules: no flag " + name);
      if (opt->count() == 0 || r.applies()) continue;
      throw InputError(name + ": applies only " + r.when + "; " + r.why);
    }
  }
  if (gpu_set.empty()) return;
  std::stringstream ss(gpu_set);
  for (std::string item; std::getline(ss, item, ',');) {
    const std::string path = item.substr(0, item.find('='));
    for (const Rule& r : field_rules_) {
      for (const std::string& prefix : r.names) {
        const bool match = path == prefix || (prefix.back() == '.' && path.rfind(prefix, 0) == 0);
        if (!match || r.applies()) continue;
        throw InputError("--gpu-set: field '" + path + "' applies only " + r.when + "; " + r.why);
      }
    }
  }
}

void add_work_options(CLI::App* sub, WorkFlags& w) {
  sub->add_option("--budget-s", w.budget_s,
                  "refuse work estimated above this many seconds on this host (the estimate is "
                  "printed on stderr first), 1..1e9")
      ->capture_default_str()
      ->check(in_range(1, 1e9));
  sub->add_flag("--yes", w.yes, "run whatever the estimate (no --budget-s limit)");
  sub->add_flag("--progress", w.progress,
                "progress lines on stderr even when it is not a terminal (a log, a pipe)");
}

void check_work_budget(const WorkFlags& w, const std::string& what, const std::string& amount,
                       double estimate_s) {
  constexpr double kSayAboveS = 10;  // shorter work starts without a word
  if (estimate_s > w.budget_s && !w.yes) {
    throw InputError(fmt::format(
        "--budget-s: this {} is {}, about {:.3g} s on this host, above the budget of {:.3g} s "
        "(raise --budget-s, or --yes to run it anyway)",
        what, amount, estimate_s, w.budget_s));
  }
  if (estimate_s > kSayAboveS || w.progress) {
    fmt::print(stderr, "ltc: this {} is {}, about {:.3g} s on this host\n", what, amount,
               estimate_s);
  }
}

int parse_thread_count(const std::string& text, const std::string& what) {
  size_t used = 0;
  long n = 0;
  try {
    n = std::stol(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || n < 1 || n > 4096) {
    throw InputError(what + ": '" + text +
                     "' is not a number of threads (valid: a whole number 1 to 4096)");
  }
  return int(n);
}

int sim_threads(int64_t flag) {
  if (flag > 0) return int(flag);
  if (const char* env = std::getenv("LTC_THREADS"); env && *env) {
    return parse_thread_count(env, "LTC_THREADS");
  }
  return sim::hardware_threads();
}

int sim_threads_per_job(int jobs) {
  const char* env = std::getenv("LTC_THREADS");
  if (env && *env) return sim_threads(0);
  return std::max(1, sim::hardware_threads() / std::max(1, jobs));
}

}  // namespace ltc::cli
