// `ltc numerics`: the LUT datapath's numerical error on one mpGEMM (see cli/report/numerics.h).
#include "cli/command.h"
#include "cli/options.h"
#include "cli/report/numerics.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <memory>

namespace ltc::cli {
namespace {

CommandRegistrar reg{
    90, [](CLI::App& app) {
      auto opts = std::make_shared<report::NumericsOptions>();
      auto json = std::make_shared<bool>(false);
      CLI::App* sub = app.add_subcommand(
          "numerics", "LUT mpGEMM error vs the dense double reference for one shape and format");
      sub->add_option("--m", opts->m, "rows of activations (tokens)");
      sub->add_option("--n", opts->n, "output channels");
      sub->add_option("--k", opts->k, "input channels");
      sub->add_option("--acts", opts->acts, "activation dtype: int8, fp16, bf16, fp8e4m3, fp8e5m2");
      sub->add_option("--weights", opts->weights,
                      "int1..int8[:g=G], ternary, binary, binary:kb=K,g=G,s=S");
      sub->add_option("--lut-k", opts->k_group, "activations per table (K of the LUT), 1..8");
      sub->add_flag("--quantize-tables", opts->quantize_table,
                    "INT8 tables with one fp32 scale each");
      // The spelling before the other commands' --quantize-tables; kept, not shown.
      sub->add_flag("--quantize-table", opts->quantize_table)->group("");
      sub->add_option("--seed", opts->seed, "random seed for weights and activations");
      sub->add_flag("--json", *json, "print one JSON object");
      set_examples(sub, {"ltc numerics --acts fp16 --weights int2",
                         "ltc numerics --m 1 --n 32 --k 256 --acts fp8e4m3 --weights "
                         "binary:kb=2,g=128,s=8 --quantize-tables --json"});
      sub->callback([opts, json] {
        const report::NumericsResult s = report::run_numerics(*opts);
        if (s.grouped_exact >= 0 && s.grouped_exact != s.total) set_exit_code(kExitFailed);
        if (*json) {
          nlohmann::json j{
              {"max_abs_err", s.max_abs},  {"max_rel_err", s.max_rel},
              {"rms_rel_err", s.rms_rel},  {"exact_outputs", s.exact},
              {"outputs", s.total},        {"reference", "dequantize-then-GEMM in double"},
              {"command", opts->command()}};
          if (s.grouped_exact >= 0) j["grouped_integer_exact_outputs"] = s.grouped_exact;
          fmt::print("{}\n", j.dump());
          return;
        }
        fmt::print(
            "{}\n  outputs {}, bit-exact {}, max |err| {:.3e}, max err/sum|a*w| {:.3e}, rms "
            "{:.3e}\n"
            "  reference: dequantize-then-GEMM in double (golden::dequant_gemm)\n",
            opts->command(), s.total, s.exact, s.max_abs, s.max_rel, s.rms_rel);
        if (s.grouped_exact >= 0) {
          fmt::print(
              "  integer activations: {} of {} outputs bit-identical to the grouped integer "
              "reference (golden::grouped_reference)\n",
              s.grouped_exact, s.total);
        }
      });
    }};

}  // namespace
}  // namespace ltc::cli
