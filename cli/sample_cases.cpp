#include "cli/sample_cases.h"

#include "cli/model_step.h"

#include "common/error.h"
#include "common/file_io.h"
#include "common/json_fields.h"
#include "compiler/gemm_lowering.h"
#include "compiler/model_lowering.h"
#include "model/golden/dtype.h"
#include "model/llm/model_config.h"
#include "model/llm/precision.h"

#include <nlohmann/json.hpp>

#include <set>
#include <stdexcept>

namespace ltc::cli {
namespace {

// Runs `check` and prefixes an InputError's message with where the value came from.
template <typename F>
void checked(const std::string& where, F&& check) {
  try {
    check();
  } catch (const InputError& e) {
    throw InputError(where + ": " + e.what());
  }
}

SampleCase read_case(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw InputError(where + ": must be an object (one GEMM or model step)");
  SampleCase c;
  FieldReader(j, where).req("name", c.name);
  const FieldReader g(j, where + " (\"" + c.name + "\")");  // names the case from here on
  g.req("name", c.name);
  if (c.name.empty()) g.fail("name", "must not be empty");
  std::string note;
  g.opt("note", note);  // why the case is in the set; not read otherwise
  g.req("gpu", c.gpu);
  g.req("weights", c.weights);
  g.req("acts", c.acts);
  const bool gemm = g.has("m") || g.has("n") || g.has("k"), step = g.has("model");
  if (gemm == step) {
    throw InputError(g.where() +
                     ": give either a GEMM (fields 'm', 'n', 'k') or a model step (fields "
                     "'model', 'phase', 'length')");
  }
  const auto positive = [&](const char* key, int64_t& v, bool required) {
    if (required) {
      g.req(key, v);
    } else {
      g.opt(key, v);
    }
    if (v < 1 || v > (int64_t(1) << 31)) {
      g.fail(key, "must be an integer in 1..2147483648 (got " + std::to_string(v) + ")");
    }
  };
  if (gemm) {
    positive("m", c.m, true);
    positive("n", c.n, true);
    positive("k", c.k, true);
    g.opt("path", c.path);
    if (!c.path.empty() && c.path != "lut" && c.path != "mac") {
      g.fail("path", "must be \"lut\" (LMMA kernels) or \"mac\" (MAC tensor cores) (got \"" +
                         c.path + "\")");
    }
  } else {
    g.req("model", c.model);
    g.req("phase", c.phase);
    if (c.phase != "decode" && c.phase != "prefill") {
      g.fail("phase", "must be \"decode\" or \"prefill\" (got \"" + c.phase + "\")");
    }
    positive("length", c.length, true);
    positive("batch", c.batch, false);
    checked(g.where(), [&] { llm::load_model(c.model); });
  }
  g.reject_unknown();
  checked(g.where(), [&] {
    hw::load_gpu(c.gpu);
    llm::parse_weight_format(c.weights, "field 'weights'");
    golden::parse_act_dtype(c.acts, "field 'acts'");
  });
  return c;
}

}  // namespace

std::vector<SampleCase> load_sample_cases(const std::string& path) {
  std::string text;
  try {
    text = read_input_file(path);
  } catch (const InputError& e) {
    throw InputError(std::string(e.what()) +
                     " (a JSON file of sampling-bench cases: configs/sampling/README.md)");
  }
  const nlohmann::json j = parse_json(text, path);
  if (!j.is_object()) {
    throw InputError(path + ": not a JSON object {\"cases\": [...]} (configs/sampling/README.md)");
  }
  const FieldReader f(j, path);
  std::string description;
  f.opt("description", description);
  const nlohmann::json& cases = f.array("cases", "cases (GEMMs or model steps)");
  f.reject_unknown();
  if (cases.empty()) f.fail("cases", "is empty");
  std::vector<SampleCase> out;
  std::set<std::string> names;
  for (size_t i = 0; i < cases.size(); ++i) {
    out.push_back(read_case(cases[i], path + ": case " + std::to_string(i)));
    if (!names.insert(out.back().name).second) {
      throw InputError(path + ": case " + std::to_string(i) + ": name \"" + out.back().name +
                       "\" is taken by an earlier case (names key the full runs' cache)");
    }
  }
  return out;
}

traces::Trace compile_case(const SampleCase& c, const hw::GpuConfig& gpu) {
  if (c.is_step()) {
    const llm::ModelConfig model = llm::load_model(c.model);
    return compiler::compile_model(
        model, step_from_flags(model, c.phase, c.batch, c.length, 0, c.weights, c.acts), gpu);
  }
  compiler::GemmSpec s;
  s.m = c.m;
  s.n = c.n;
  s.k = c.k;
  s.weights = llm::parse_weight_format(c.weights);
  s.act = golden::parse_act_dtype(c.acts, "acts");
  if (!c.path.empty()) s.path = c.path == "lut" ? traces::GemmPath::kLut : traces::GemmPath::kMma;
  return compiler::compile_gemm(s, gpu);
}

}  // namespace ltc::cli
