// `ltc list gpus|models|designs|commands`: the built-in names a flag takes, and every command, so
// a new user need not learn them from error messages.
#include "cli/command.h"
#include "cli/options.h"
#include "model/hw/gpu.h"
#include "model/hw/tensor_core.h"
#include "model/llm/model_config.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ltc::cli {
namespace {

void collect_commands(const CLI::App* app, const std::string& prefix,
                      std::vector<std::string>& out) {
  for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; })) {
    const std::string path = prefix.empty() ? sub->get_name() : prefix + " " + sub->get_name();
    if (sub->get_subcommands([](const CLI::App*) { return true; }).empty()) {
      out.push_back(path);
    } else {
      collect_commands(sub, path, out);
    }
  }
}

struct ListFlags {
  std::string what;
  bool json = false;
};

CommandRegistrar reg{
    95, [](CLI::App& app) {
      auto o = std::make_shared<ListFlags>();
      CLI::App* sub =
          app.add_subcommand("list", "Built-in GPUs, models, designs, or every command");
      sub->add_option("what", o->what, "gpus, models, designs or commands")
          ->required()
          ->check(CLI::IsMember({"gpus", "models", "designs", "commands"}));
      sub->add_flag("--json", o->json,
                    "print one JSON object {\"<what>\": [...], \"descriptions\": {name: text}} "
                    "(descriptions for gpus and models)");
      set_examples(sub, {"ltc list gpus", "ltc list models --json"});
      const CLI::App* root = &app;
      sub->callback([o, root] {
        std::vector<std::string> names;
        std::vector<std::string> details;
        if (o->what == "gpus") {
          for (const auto& n : hw::builtin_gpu_names()) {
            names.push_back(n);
            details.push_back(hw::load_gpu(n).description);
          }
        } else if (o->what == "models") {
          names = llm::builtin_model_names();
          for (const auto& n : names) {
            const llm::ModelConfig m = llm::load_model(n);
            details.push_back(
                fmt::format("{}, {} layers, hidden {}, {:.3g} B parameters (ltc "
                            "show model {})",
                            m.model_type, m.layers, m.hidden, double(m.parameters()) / 1e9, n));
          }
        } else if (o->what == "designs") {
          for (auto d : {hw::TensorCoreDesign::kLut, hw::TensorCoreDesign::kLutNaive,
                         hw::TensorCoreDesign::kMac, hw::TensorCoreDesign::kAdd}) {
            names.emplace_back(hw::design_name(d));
          }
        } else {
          collect_commands(root, "", names);
          for (auto& n : names) n = "ltc " + n;
        }
        if (o->json) {
          nlohmann::json j{{o->what, names}};
          if (!details.empty()) {
            nlohmann::json d = nlohmann::json::object();
            for (size_t i = 0; i < names.size(); ++i) d[names[i]] = details[i];
            j["descriptions"] = d;
          }
          fmt::print("{}\n", j.dump());
          return;
        }
        for (size_t i = 0; i < names.size(); ++i) {
          if (i < details.size()) {
            fmt::print("{:<18} {}\n", names[i], details[i]);
          } else {
            fmt::print("{}\n", names[i]);
          }
        }
      });
    }};

}  // namespace
}  // namespace ltc::cli
