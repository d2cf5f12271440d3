// `ltc decode`: tile-level estimate of one decode step (one new token per sequence, KV cache of
// --context tokens).
#include "cli/step_command.h"

namespace ltc::cli {
namespace {

CommandRegistrar reg{
    41, [](CLI::App& app) {
      auto opts = std::make_shared<StepOptions>();
      opts->req.phase = llm::Phase::kDecode;
      CLI::App* sub = app.add_subcommand("decode", "Tile-level estimate of one decode step");
      add_step_options(sub, opts, "--context", "tokens already in the KV cache (L)");
      sub->callback([opts] { run_step(*opts); });
    }};

}  // namespace
}  // namespace ltc::cli
