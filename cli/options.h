// Option helpers every subcommand uses, so each class of first-use and bad-input behaviour is
// decided once: --gpu and --model list the built-in names in their help, numeric flags carry their
// valid range (and the error names the flag), output paths are checked before any work, every
// help ends with examples.
#pragma once

#include <CLI/CLI.hpp>

#include <initializer_list>
#include <string>

namespace ltc::cli {

// "built-in GPU name (a100, ...) or GPU JSON path".
CLI::Option* add_gpu_option(CLI::App* sub, std::string& gpu, const std::string& prefix = "");
// "built-in model (llama2-7b, ...) or Hugging Face config.json".
CLI::Option* add_model_option(CLI::App* sub, std::string& model, const std::string& prefix = "");

// A validator for a numeric flag: values outside [lo, hi] are bad input naming the flag and the
// range; the help shows only the type (the flag's description says the range in words).
CLI::Validator in_range(double lo, double hi);

// --m, --n, --k and --wbits of one tensor-core tile (1..4096, 1..4096, 1..8, 1..8), defaults
// shown; `wbits_help` says what the planes mean for the command.
CLI::Option* add_tile_options(CLI::App* sub, int& m, int& n, int& k, int& wbits,
                              const std::string& wbits_help);

// Ends the help of `sub` with "Examples:" and one command per line.
void set_examples(CLI::App* sub, std::initializer_list<const char*> commands);

// An output file the command will write: its directory must exist (InputError naming `flag`
// otherwise), checked before any work so nothing is half-done.
void check_output_path(const std::string& path, const std::string& flag);

}  // namespace ltc::cli
