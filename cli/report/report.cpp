#include "cli/report/report.h"

#include "cli/report/html.h"
#include "cli/report/numerics.h"
#include "cli/report/ppa_section.h"
#include "cli/report/roofline_section.h"
#include "model/golden/error.h"
#include "synth/sweep.h"

#include <fmt/core.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>

namespace ltc::report {
namespace fs = std::filesystem;

namespace {

// Writes `text` to `path` through a temporary file and a rename: never a half-written file.
void write_atomic(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write " + tmp.string());
    f << text;
    if (!f.flush()) throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, path);
}

struct Context {
  const ReportOptions& opt;
  fs::path dir;
  std::vector<std::string> files;
  void progress(const std::string& line) const {
    if (opt.progress) fmt::print(stderr, "[report] {}\n", line);
  }
  void write(const std::string& name, const std::string& text) {
    write_atomic(dir / name, text);
    files.push_back((dir / name).string());
  }
};

std::string fmt_sci(double v) {
  return fmt::format("{:.2e}", v);
}

// ---- numerics ---------------------------------------------------------------------------------
std::string numerics_section(Context& ctx) {
  const char* acts[] = {"int8", "fp16", "bf16", "fp8e4m3", "fp8e5m2"};
  const char* weights[] = {"int2:g=128", "int4:g=128", "ternary", "binary:kb=2,g=128,s=8"};
  std::vector<std::vector<std::string>> rows;
  double fp16_rms[2] = {0, 0};  // mean rms error of FP16 activations without / with table quant
  int fp16_runs[2] = {0, 0};
  std::string csv =
      "acts,weights,quantize_table,max_rel_err,rms_rel_err,grouped_exact,outputs,command\n";
  for (const char* a : acts) {
    for (const char* w : weights) {
      for (bool quant : {false, true}) {
        NumericsOptions o;
        o.m = 2;
        o.n = 128;
        o.k = 1024;
        o.acts = a;
        o.weights = w;
        o.quantize_table = quant;
        ctx.progress("numerics " + o.command());
        const NumericsResult r = run_numerics(o);
        if (std::string(a) == "fp16") {
          fp16_rms[quant] += r.rms_rel;
          ++fp16_runs[quant];
        }
        const std::string exact =
            r.grouped_exact < 0 ? "-" : fmt::format("{}/{}", r.grouped_exact, r.total);
        rows.push_back({a, w, quant ? "int8" : "off", fmt_sci(r.max_rel), fmt_sci(r.rms_rel), exact,
                        o.command()});
        csv += fmt::format("{},\"{}\",{},{},{},{},{},\"{}\"\n", a, w, quant ? 1 : 0, r.max_rel,
                           r.rms_rel, r.grouped_exact, r.total, o.command());
      }
    }
  }
  ctx.write("numerics.csv", csv);
  std::string html = para(
      "Error of the LUT datapath (golden model: table precompute in the table format, optional "
      "INT8 table quantization, bit-serial accumulation in FP32/INT32) on a 2x128x1024 mpGEMM "
      "with LLM-like activations (N(0,1) with 2% outlier channels x20), relative to "
      "sum|a*w| per output. Compared with: the dense dequantize-then-GEMM in double; for INT8 "
      "activations also the grouped integer reference, which must match bit for bit. The paper "
      "reports no accuracy loss from table quantization on LLaMA-2-7B (WikiText-2 PPL 7.68 -> "
      "7.69). Measured here for FP16 activations, averaged over the weight formats: rms "
      "relative error " +
      fmt_sci(fp16_rms[0] / fp16_runs[0]) + " with FP16 tables and " +
      fmt_sci(fp16_rms[1] / fp16_runs[1]) +
      " with INT8-quantized tables. Multi-basis binary "
      "with INT8 activations re-quantizes a*alpha_c to INT8 (scale fusion), hence its error.");
  html += table({"acts", "weights", "table", "max rel. err", "rms rel. err",
                 "exact vs integer ref.", "reproduce"},
                rows);
  html += para("Table as CSV: numerics.csv.");
  return html;
}

// A section whose body also produces a CSV table, written beside the page.
std::function<std::string(Context&)> with_csv(const std::string& file,
                                              std::string (*body)(std::string*)) {
  return [file, body](Context& ctx) {
    std::string csv;
    std::string html = body(&csv);
    ctx.write(file, csv);
    return html + para("Table as CSV: " + file + ".");
  };
}

}  // namespace

ReportResult write_report(const ReportOptions& opt) {
  if (opt.out_dir.empty()) throw InputError("--out: the report directory must not be empty");
  if (opt.jobs < 1 || opt.jobs > 64) {
    throw InputError("-j: " + std::to_string(opt.jobs) + " is out of range (valid: 1..64)");
  }
  for (const std::string& sweep : opt.sweeps) {
    synth::SweepSpec::builtin_path(sweep);  // bad names are bad input, before any work
  }
  Context ctx{opt, fs::path(opt.out_dir), {}};
  std::error_code ec;
  fs::create_directories(ctx.dir, ec);
  if (ec) throw InputError("--out: cannot create directory " + opt.out_dir + ": " + ec.message());

  ReportResult result;
  std::vector<Section> sections;
  auto add = [&](const std::string& id, const std::string& title,
                 const std::function<std::string(Context&)>& body) {
    const auto t0 = std::chrono::steady_clock::now();
    ctx.progress("section " + title);
    std::string html;
    try {
      html = body(ctx);
    } catch (const std::exception& e) {
      ++result.failed_parts;
      html = "<p class=\"warn\">This part failed: " + escape(e.what()) + "</p>\n";
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ctx.progress(fmt::format("section {} done in {:.1f} s", title, s));
    sections.push_back({id, title, html});
  };
  add("numerics", "Numerics of the LUT datapath", numerics_section);
  for (const std::string& sweep : opt.sweeps) {
    add("ppa-" + sweep, "PPA sweep: " + sweep, [&](Context& c) {
      PpaSectionOptions po{(c.dir / "ppa" / sweep).string(), opt.jobs, opt.progress};
      int failed = 0;
      std::string html = ppa_sweep_html(sweep, po, &c.files, &failed);
      if (failed) ++result.failed_parts;
      return html;
    });
  }
  add("calibration", "Roofline calibration: H200 FP16 GEMMs",
      with_csv("calibration.csv", roofline_calibration_html));
  add("table1", "Table I: table precompute overhead, separate vs fused",
      with_csv("table1.csv", roofline_table1_html));
  add("table3", "Table III: LLaMA 3B on A100 vs BitNet b1.58 3B on A100-LUT",
      with_csv("table3.csv", roofline_table3_html));
  add("fig16", "Figure 16 trend: peak vs end-to-end gain",
      with_csv("fig16.csv", roofline_fig16_html));
  add("bitllm", "Low-bit decode falls short of the ideal speedup (BitLLM)",
      with_csv("bitllm.csv", roofline_bitllm_html));

  const std::string intro =
      para("Design-space exploration of LUT-based tensor cores, generated by `ltc report --out " +
           opt.out_dir + "` (ltc " + std::string(LTC_VERSION) +
           "). Each table names the command that reproduces it and what it is compared with.");
  ctx.write("index.html", page("ltc DSE report", intro, sections));
  result.index_html = (ctx.dir / "index.html").string();
  result.files = ctx.files;
  return result;
}

}  // namespace ltc::report
