#include "cli/options.h"

#include "common/error.h"
#include "model/hw/gpu.h"
#include "model/llm/model_config.h"

#include <cmath>
#include <filesystem>
#include <sstream>
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
  os << v;
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
  sub->add_option("--n", n, "tile columns N (output channels), 1..4096")
      ->capture_default_str()
      ->check(in_range(1, 4096));
  sub->add_option("--k", k, "activations per table K (dot-product width), 1..8")
      ->capture_default_str()
      ->check(in_range(1, 8));
  return sub->add_option("--wbits", wbits, wbits_help + ", 1..8")
      ->capture_default_str()
      ->check(in_range(1, 8));
}

void set_examples(CLI::App* sub, std::initializer_list<const char*> commands) {
  std::string text = "\nExamples:\n";
  for (const char* c : commands) text += std::string("  ") + c + "\n";
  sub->footer(text);
}

void check_output_path(const std::string& path, const std::string& flag) {
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
}

}  // namespace ltc::cli
