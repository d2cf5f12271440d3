// Option helpers every subcommand uses, so each class of first-use and bad-input behaviour is
// decided once: --gpu and --model list the built-in names in their help, numeric flags carry their
// valid range (and the error names the flag), output paths are checked before any work, every
// help ends with examples.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace ltc::hw {
struct GpuConfig;
}

namespace ltc::cli {

// "built-in GPU name (a100, ...) or GPU JSON path".
CLI::Option* add_gpu_option(CLI::App* sub, std::string& gpu, const std::string& prefix = "");
// "built-in model (llama2-7b, ...) or Hugging Face config.json".
CLI::Option* add_model_option(CLI::App* sub, std::string& model, const std::string& prefix = "");

// A validator for a numeric flag: values outside [lo, hi] are bad input naming the flag and the
// range; the help shows only the type (the flag's description says the range in words).
CLI::Validator in_range(double lo, double hi);

// --m, --n, --k and --wbits of one tensor-core tile (1..4096, 1..4096, 1..8, 1..8; M * N at
// most kMaxTileUnits, which the command checks with check_tile_units), defaults shown; `wbits_help`
// says what the planes mean for the command.
CLI::Option* add_tile_options(CLI::App* sub, int& m, int& n, int& k, int& wbits,
                              const std::string& wbits_help);

// The spellings every command that takes a tile's operands shares (docs/cli.md#values): --acts
// (when `acts` is given; the older --act beside it) and --weights intN|binary for the weight
// planes (the older --wbits N, which add_tile_options adds). The older spellings stay, listed
// apart in the help under "Older spellings". Call after add_tile_options.
void add_operand_options(CLI::App* sub, std::string* acts, std::string& weights, int wbits,
                         const std::string& acts_help = "activation dtype");
// The weight planes --weights names (int1 .. int8, binary), else `wbits` (InputError naming
// --weights).
int weight_planes(const std::string& weights, int wbits);
// Refuses an older spelling given beside the one that replaced it (--act with --acts, --wbits
// with --weights): InputError naming both.
void check_older_spellings(const CLI::App* sub);

// The largest tile the RTL flows take: M * N at most kMaxTileUnits. A 4096 x 4096 tile's output
// port alone is M*N*32 = 2^29 bits, past Yosys's 2^24-bit expression limit; the built-in sweeps'
// largest tile is 8 x 256. check_tile_units refuses a larger one (InputError naming --m/--n).
inline constexpr int64_t kMaxTileUnits = 4096;
void check_tile_units(int64_t m, int64_t n);

// --gpu-set on a command whose result `result` computes from a GPU (an estimate as JSON): `base`
// with the overrides applied, each of which must change the result, else InputError naming the
// field ("changes nothing in this estimate"): no field is silently ignored, whatever reads it.
// --gpu-set on a command that checks it with apply_gpu_set; `result` names what each field must
// change ("estimate", "trace").
CLI::Option* add_gpu_set_option(CLI::App* sub, std::string& gpu_set, const std::string& result);
// `what` names the result in the error ("estimate", "trace") and says what reads the GPU.
hw::GpuConfig apply_gpu_set(const hw::GpuConfig& base, const std::string& gpu_set,
                            const std::function<nlohmann::json(const hw::GpuConfig&)>& result,
                            const std::string& what =
                                "estimate (the roofline does not read it "
                                "for this step");

// The one rule for a single GEMM's operand defaults (`ltc gemm`, `ltc compile gemm`;
// docs/cli.md#defaults): the precision the GPU's tensor cores are built for, its LUT tile's
// (lut_tensor.core: a100-lut4x int2 weights x int8 activations) on a GPU with LUT tensor cores,
// else fp16 x fp16. Fills `weights` and `acts` where the command line left them empty and adds
// those to `taken` ({"--weights": "int2"}); returns where they come from ("" when none was
// taken).
std::string gemm_precision_defaults(const hw::GpuConfig& gpu, std::string& weights,
                                    std::string& acts, nlohmann::json& taken);
// The help text of --weights / --acts under that rule.
inline constexpr const char* kGemmPrecisionHelp =
    "default: the GPU's tensor precision, its LUT tile's (a100-lut4x: --weights int2 --acts "
    "int8) on a GPU with LUT tensor cores, else fp16";

// The flags among `names` that the command line left out and that have a default, with it
// ({"--weights": "fp16", ...}): every command states the defaults it took, in its text
// ("defaults: ...") and its JSON ("defaults"), docs/cli.md#defaults.
nlohmann::json defaults_taken(const CLI::App* sub, const std::vector<std::string>& names);
// "defaults: --weights fp16, --acts fp16\n", or "" when none was taken; `why` (where they come
// from) in parentheses when given.
std::string defaults_line(const nlohmann::json& taken, const std::string& why = "");

// Ends the help of `sub` with "Examples:" and one command per line.
void set_examples(CLI::App* sub, std::initializer_list<const char*> commands);

// An output file the command will write: its directory must exist and it must not be one of the
// command's input files `inputs` (InputError naming `flag` otherwise), checked before any work so
// nothing is half-done and no input is overwritten.
void check_output_path(const std::string& path, const std::string& flag,
                       const std::vector<std::string>& inputs = {});

// Which of a command's flags, and which GPU fields of its --gpu-set, apply to what it was given:
// the one mechanism by which no flag or field is silently ignored. Each rule names flags (as on
// the command line; "file" for a positional) or GPU field paths (a prefix: "achievable." covers
// the section), the case they apply in (words for the error: "with --model"), and a predicate
// that says whether the case holds, evaluated by check() once the inputs are loaded. check()
// refuses the first flag on the command line whose rule does not hold (in the order the rules
// were stated), then the first such --gpu-set path: InputError "<flag>: applies only <when>;
// <why>".
class FlagRules {
 public:
  explicit FlagRules(const CLI::App* sub) : sub_(sub) {}
  FlagRules& flags(std::vector<std::string> names, std::string when, std::string why,
                   std::function<bool()> applies);
  FlagRules& gpu_fields(std::vector<std::string> prefixes, std::string when, std::string why,
                        std::function<bool()> applies);
  // `gpu_set`: the --gpu-set text (path=value[,path=value...]).
  void check(const std::string& gpu_set = "") const;

 private:
  struct Rule {
    std::vector<std::string> names;
    std::string when, why;
    std::function<bool()> applies;
  };
  const CLI::App* sub_;
  std::vector<Rule> flag_rules_, field_rules_;
};

// Long work, estimated before it starts: --yes, --budget-s and --progress on the command that
// adds them (add_work_options), checked by check_work_budget.
struct WorkFlags {
  double budget_s = 600;  // refuse work estimated above this (seconds) unless --yes
  bool yes = false;
  bool progress = false;  // progress lines on stderr even when it is not a terminal
};
void add_work_options(CLI::App* sub, WorkFlags& w);

// Host threads for a simulation (sim::SimOptions::threads): `flag` when given (> 0), else the
// environment's LTC_THREADS (InputError when it is not a whole number >= 1), else the hardware's.
int sim_threads(int64_t flag);
// `text` as a thread count 1..4096; InputError naming `what` otherwise.
int parse_thread_count(const std::string& text, const std::string& what);
// Host threads per simulation when `jobs` run at once on this host (ltc sweep -j): LTC_THREADS
// when set, else max(1, hardware threads / jobs).
int sim_threads_per_job(int jobs);
// Prints the estimate on stderr when it is above a few seconds or --progress was given ("ltc:
// this <what> is <amount>, about N s on this host") and refuses it (InputError naming --budget-s
// and --yes) when it is above the budget.
void check_work_budget(const WorkFlags& w, const std::string& what, const std::string& amount,
                       double estimate_s);

}  // namespace ltc::cli
