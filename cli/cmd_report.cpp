// `ltc report [--out DIR] [-j N]`: the DSE report on built-in defaults (cli/report/report.h).
#include "cli/command.h"
#include "cli/options.h"
#include "cli/report/report.h"

#include <fmt/core.h>

#include <memory>

namespace ltc::cli {
namespace {

CommandRegistrar reg{
    80, [](CLI::App& app) {
      auto opts = std::make_shared<report::ReportOptions>();
      CLI::App* sub = app.add_subcommand(
          "report",
          "The DSE report (one HTML page with plots, data beside it) on built-in defaults");
      sub->add_option("--out", opts->out_dir,
                      "output directory (reruns resume finished PPA points)");
      sub->add_option("-j,--jobs", opts->jobs, "parallel PPA design points")
          ->check(in_range(1, 1024));
      sub->add_option("--sweeps", opts->sweeps,
                      "PPA sweeps: built-in names (synth/sweeps/), spec files, or ledger (default: "
                      "dp4 dp-k dse-lut-fp16 ledger; also wbits-crossovers (+4 min); the full "
                      "wbits and dse: "
                      "~1 h on 2 cores, "
                      "resumable)");
      auto no_ppa = std::make_shared<bool>(false);
      sub->add_flag("--no-ppa", *no_ppa, "skip the PPA sweeps (Yosys/OpenSTA)");
      sub->add_flag("--quick", opts->quick,
                    "fewer cases per section (same sections): a first look, or a test");
      set_examples(sub, {"ltc report --out report", "ltc report --out report --no-ppa --quick",
                         "ltc report --out report --sweeps dp4 dp-k wbits dse -j 2"});
      sub->callback([opts, no_ppa, sub] {
        if (*no_ppa) opts->sweeps.clear();
        opts->progress = true;  // a long job: progress lines on stderr
        opts->command = "ltc report --out " + opts->out_dir;
        if (*no_ppa) {
          opts->command += " --no-ppa";
        } else if (sub->count("--sweeps")) {
          opts->command += " --sweeps";
          for (const auto& s : opts->sweeps) opts->command += " " + s;
        }
        if (opts->quick) opts->command += " --quick";
        opts->command += " -j " + std::to_string(opts->jobs);
        const report::ReportResult r = report::write_report(*opts);
        fmt::print(
            "report: {} ({} files){}\n", r.index_html, r.files.size(),
            r.failed_parts ? fmt::format(", {} part(s) failed: see the page", r.failed_parts) : "");
        if (r.failed_parts) set_exit_code(kExitFailed);
      });
    }};

}  // namespace
}  // namespace ltc::cli
