// `ltc prefill`: tile-level estimate of a prefill (--seq new tokens per sequence, causal
// attention).
#include "cli/command.h"
#include "cli/step_command.h"

namespace ltc::cli {
namespace {

CommandRegistrar reg{42, [](CLI::App& app) {
                       auto opts = std::make_shared<StepFlags>();
                       opts->req.phase = llm::Phase::kPrefill;
                       CLI::App* sub =
                           app.add_subcommand("prefill", "Tile-level estimate of a prefill");
                       add_step_options(sub, opts, "--seq", "tokens per sequence (S)");
                       set_examples(sub, {"ltc prefill --model llama2-7b --gpu a100 --seq 2048",
                                          "ltc prefill --model opt-175b --gpu a100-lut4x --weights "
                                          "int2 --acts int8 --batch 1,8 --seq 512,2048"});
                       sub->callback([opts] { run_step(*opts); });
                     }};

}  // namespace
}  // namespace ltc::cli
