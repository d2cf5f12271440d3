#include "cli/command.h"
#include "model/golden/error.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <utility>
#include <vector>

namespace ltc::cli {
namespace {

std::vector<std::pair<int, CommandSetup>>& registry() {
  static std::vector<std::pair<int, CommandSetup>> commands;
  return commands;
}

int g_exit_code = kExitOk;

}  // namespace

CommandRegistrar::CommandRegistrar(int order, CommandSetup setup) {
  registry().emplace_back(order, std::move(setup));
}

void set_exit_code(int code) {
  g_exit_code = std::max(g_exit_code, code);
}

CLI::App& bench_command(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App* s) { return s->get_name() == "bench"; })) {
    return *sub;
  }
  CLI::App* bench = app.add_subcommand("bench", "Print speed figures of one part (see its help)");
  bench->require_subcommand(1);
  return *bench;
}

bool progress_enabled() {
  return isatty(STDERR_FILENO) != 0;
}

}  // namespace ltc::cli

int main(int argc, char** argv) {
  using namespace ltc::cli;
  CLI::App app{
      "ltc: LUT tensor core toolkit (RTL, golden model, compiler, simulator, PPA, roofline)",
      "ltc"};
  app.set_version_flag("--version", std::string("ltc ") + LTC_VERSION);
  app.require_subcommand(1);
  auto& commands = registry();
  std::stable_sort(commands.begin(), commands.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [order, setup] : commands) setup(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    // CLI11 returns 0 for --help/--version; every other parse failure is bad input.
    return rc == 0 ? kExitOk : kExitBadInput;
  } catch (const ltc::InputError& e) {
    fmt::print(stderr, "ltc: error: {}\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    fmt::print(stderr, "ltc: failed: {}\n", e.what());
    return kExitFailed;
  }
  return g_exit_code;
}
