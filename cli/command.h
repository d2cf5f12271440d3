// Subcommand registry for the `ltc` binary. Each cli/cmd_*.cpp registers its subcommands with a
// static CommandRegistrar, so adding a command never touches main.cpp. docs/cli.md is the contract:
// exit 0 on success, 2 on bad input (message names the flag/file/line and what is valid), 1 on a
// failed run; `--json` prints exactly one JSON object on stdout. A command's flags are one struct
// named after it, <Command>Flags (VerifyFlags, PpaFlags, GemmFlags), apart from the libraries'
// *Options that the command fills from them.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace ltc::cli {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitBadInput = 2;

using CommandSetup = std::function<void(CLI::App& app)>;

// Registers `setup`, called with the top-level app at start-up; `order` sorts `ltc --help`.
struct CommandRegistrar {
  CommandRegistrar(int order, CommandSetup setup);
};

// A subcommand's callback sets this to kExitFailed when the run itself failed (e.g. mismatches
// found); bad input is reported by throwing ltc::InputError instead.
void set_exit_code(int code);

// `ltc bench` is shared by several components: each adds its own `ltc bench <part>` under it.
CLI::App& bench_command(CLI::App& app);

// True when stderr is a terminal or `asked` (a command's --progress): progress output goes to
// stderr only then (docs/cli.md#output).
bool progress_enabled(bool asked = false);
// True when stderr is a terminal (progress may redraw one line with \r).
bool stderr_is_terminal();

}  // namespace ltc::cli
