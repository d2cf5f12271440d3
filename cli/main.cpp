#include "cli/command.h"
#include "cli/options.h"
#include "common/error.h"

#include <fmt/core.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
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
  set_examples(bench, {"ltc bench roofline", "ltc bench compile --json"});
  return *bench;
}

bool stderr_is_terminal() {
  return isatty(STDERR_FILENO) != 0;
}

bool progress_enabled(bool asked) {
  return asked || stderr_is_terminal();
}

}  // namespace ltc::cli

int main(int argc, char** argv) {
  using namespace ltc::cli;
  CLI::App app{
      "ltc: LUT tensor core toolkit (RTL, golden model, compiler, simulator, PPA, roofline)",
      "ltc"};
  app.set_version_flag("--version", std::string("ltc ") + LTC_VERSION);
  app.require_subcommand(1);
  set_examples(&app,
               {"ltc list commands",
                "ltc gemm --m 1 --n 4096 --k 4096 --gpu a100-lut4x --weights int2 --acts int8",
                "ltc decode --model llama2-7b --gpu a100 --context 1024", "ltc <command> --help"});
  auto& commands = registry();
  std::stable_sort(commands.begin(), commands.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [order, setup] : commands) setup(app);

  // A misspelled command is named as such (CLI11 would say "A subcommand is required").
  CLI::App* current = &app;
  std::string path = "ltc";
  for (int i = 1; i < argc && argv[i][0] != '-'; ++i) {
    const auto subs = current->get_subcommands([](const CLI::App*) { return true; });
    if (subs.empty()) break;
    std::vector<std::string> names;
    CLI::App* next = nullptr;
    for (CLI::App* s : subs) {
      names.push_back(s->get_name());
      if (s->get_name() == argv[i]) next = s;
    }
    if (next == nullptr) {
      std::string valid;
      for (const auto& n : names) valid += (valid.empty() ? "" : ", ") + n;
      fmt::print(stderr, "ltc: error: '{} {}' is not a command{} (valid: {}; see {} --help)\n",
                 path, argv[i], ltc::did_you_mean(argv[i], names), valid, path);
      return kExitBadInput;
    }
    current = next;
    path += " " + next->get_name();
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are CLI11's "errors" of exit code 0: it prints them.
    if (e.get_exit_code() == 0) return app.exit(e) == 0 ? kExitOk : kExitBadInput;
    // Every other parse failure is bad input, worded like the rest (docs/cli.md).
    fmt::print(stderr, "ltc: error: {} (see {} --help)\n", e.what(), path);
    return kExitBadInput;
  } catch (const ltc::InputError& e) {
    fmt::print(stderr, "ltc: error: {}\n", e.what());
    return kExitBadInput;
  } catch (const nlohmann::json::exception& e) {
    // JSON type errors come from a file the user gave (the loaders catch what they can name).
    fmt::print(stderr, "ltc: error: {}\n", ltc::plain_json_error(e));
    return kExitBadInput;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr,
               "ltc: failed: out of memory (the sizes given need more memory than this "
               "machine has)\n");
    return kExitFailed;
  } catch (const std::exception& e) {
    fmt::print(stderr, "ltc: failed: {}\n", e.what());
    return kExitFailed;
  }
  return g_exit_code;
}
