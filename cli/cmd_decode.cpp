// `ltc decode`: tile-level estimate of one decode step (one new token per sequence, KV cache of
// --context tokens).
#include "cli/command.h"
#include "cli/step_command.h"

namespace ltc::cli {
namespace {

CommandRegistrar reg{
    41, [](CLI::App& app) {
      auto opts = std::make_shared<StepFlags>();
      opts->req.phase = llm::Phase::kDecode;
      CLI::App* sub = app.add_subcommand("decode", "Tile-level estimate of one decode step");
      add_step_options(sub, opts, "--context", "tokens already in the KV cache (L)");
      set_examples(sub,
                   {"ltc decode --model llama2-7b --gpu a100 --batch 1 --context 1024",
                    "ltc decode --model bitnet-b1.58-3b --gpu a100-lut4x --weights int2 --acts "
                    "int8 --batch 1,16,64 --json"});
      sub->callback([opts] { run_step(*opts); });
    }};

}  // namespace
}  // namespace ltc::cli
