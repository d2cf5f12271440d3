#include "cli/report/report.h"

#include "cli/report/html.h"
#include "cli/report/section.h"
#include "common/error.h"
#include "common/file_io.h"
#include "common/process.h"
#include "synth/sweep.h"

#include <fmt/core.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace ltc::report {
namespace fs = std::filesystem;

namespace {

// The files of the plotting library, inlined in this order.
constexpr const char* kLibraryFiles[] = {"vega/build/vega.min.js",
                                         "vega-lite/build/vega-lite.min.js",
                                         "vega-embed/build/vega-embed.min.js"};

// The plotting library and the code that draws every plot of the page (div.plot with its
// spec in the script element beside it). window.ltcReport counts what rendered, for the browser
// test and for anyone who opens the console.
std::string page_scripts(const std::string& library_dir) {
  std::string s;
  for (const char* file : kLibraryFiles) {
    std::string js = read_text((fs::path(library_dir) / file).string());
    for (size_t p = js.find("</script"); p != std::string::npos; p = js.find("</script", p + 2)) {
      js.replace(p, 2, "<\\/");
    }
    s += "<script>/* " + std::string(file) + " */\n" + js + "\n</script>\n";
  }
  s += R"(<script>
(function () {
  var state = window.ltcReport = {plots: 0, rendered: 0, failed: [], done: false};
  var divs = Array.prototype.slice.call(document.querySelectorAll('div.plot'));
  state.plots = divs.length;
  Promise.all(divs.map(function (div) {
    var spec = JSON.parse(document.getElementById(div.id + '-spec').textContent);
    return vegaEmbed(div, spec, {mode: 'vega-lite', actions: false, renderer: 'svg'})
      .then(function () { state.rendered++; div.setAttribute('data-rendered', 'yes'); })
      .catch(function (e) {
        state.failed.push(div.id);
        div.textContent = 'This plot failed to render: ' + e;
        console.error(div.id + ': ' + e);
      });
  })).then(function () { state.done = true; });
})();
</script>
)";
  return s;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
  return buf;
}

std::string machine() {
  std::string cpu = "unknown CPU";
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return fmt::format("{} ({}, {} hardware threads)", host, cpu,
                     std::thread::hardware_concurrency());
}

std::string verdict_cell(const Comparison& c) {
  return c.verdict == Comparison::Verdict::kMatch
             ? "<span class=\"ok\">&#10003; matches</span>"
             : "<span class=\"differs\">&#8800; differs</span>";
}

std::string summary_html(const ReportOptions& opt, const std::vector<Comparison>& comparisons,
                         const std::vector<std::pair<std::string, double>>& section_seconds,
                         double total_s, const std::vector<std::string>& failed) {
  std::string html = para(
      "Design-space exploration of LUT-based tensor cores (LUT Tensor Core, Mo et al., ISCA'25) "
      "with open tools: the paper's figures beside ltc's, then one section per study. Every "
      "number is computed by this run or read from a measurement file in the repository, and "
      "carries the ltc command that reproduces it (hover a point in a plot to see it).");
  const std::string command = opt.command.empty() ? "ltc report --out " + opt.out_dir : opt.command;
  html += "<p class=\"run\"><b>ltc " + escape(std::string(LTC_VERSION)) + "</b> &middot; " +
          escape(utc_now()) + " &middot; " + escape(machine()) + " &middot; " +
          escape(fmt::format("{:.0f} s", total_s)) +
          " (PPA points already in a results store "
          "are reused) &middot; <code>" +
          escape(command) + "</code>";
  if (!failed.empty()) {
    html += " &middot; <span class=\"warn\">failed:";
    for (const auto& id : failed) html += " <a href=\"#" + id + "\">" + escape(id) + "</a>";
    html += "</span>";
  }
  html += "</p>\n";
  int matches = 0;
  for (const auto& c : comparisons) matches += c.verdict == Comparison::Verdict::kMatch;
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : comparisons) {
    const bool ratio = c.paper_value != 0 && c.ours_value != 0;
    rows.push_back({"<a href=\"#" + c.section + "\">" + escape(c.figure) + "</a>", escape(c.paper),
                    escape(c.ours),
                    ratio ? fmt::format("{:.2f}", c.ours_value / c.paper_value) : "",
                    verdict_cell(c), escape(c.reason)});
  }
  html += "<h2 id=\"paper-vs-ltc\">Paper vs ltc</h2>\n";
  html +=
      para(fmt::format("{} figures: {} match, {} differ (the reason is in the last column; "
                       "each figure links to its section).",
                       comparisons.size(), matches, comparisons.size() - matches));
  html += "<div class=\"summary\">\n" +
          table({"figure", "paper", "ltc", "ltc / paper", "", "why"}, rows, true) + "</div>\n";
  std::vector<std::vector<std::string>> times;
  for (const auto& [title, s] : section_seconds) times.push_back({title, fixed(s, 1)});
  html += details("time per section", table({"section", "time (s)"}, times));
  return html;
}

}  // namespace

std::string plotting_library_dir() {
  if (const char* env = std::getenv("LTC_REPORT_JS_DIR"); env && *env) return env;
  return std::string(LTC_SOURCE_DIR) + "/cli/report/web/node_modules";
}

ReportResult write_report(const ReportOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  if (opt.out_dir.empty()) throw InputError("--out: the report directory must not be empty");
  if (opt.jobs < 1 || opt.jobs > 64) {
    throw InputError("-j: " + std::to_string(opt.jobs) + " is out of range (valid: 1..64)");
  }
  for (const std::string& sweep : opt.sweeps) {
    const std::string path = sweep_spec_path(sweep);
    if (!fs::exists(path)) {
      throw InputError("--sweeps: '" + sweep +
                       "' is neither a built-in sweep (synth/sweeps/*.json) nor a JSON file");
    }
  }
  const std::string library = plotting_library_dir();
  for (const char* file : kLibraryFiles) {
    if (!fs::exists(fs::path(library) / file)) {
      throw std::runtime_error(
          "the plotting library is not installed: " + (fs::path(library) / file).string() +
          " is missing; run scripts/setup (npm ci in cli/report/web)");
    }
  }
  std::error_code ec;
  fs::create_directories(opt.out_dir, ec);
  if (ec) throw InputError("--out: cannot create directory " + opt.out_dir + ": " + ec.message());

  std::vector<SectionDef> defs = {numerics_section()};
  for (const std::string& sweep : opt.sweeps) defs.push_back(ppa_sweep_section(sweep));
  for (auto make : {gemm_calibration_section, step_validation_section, end_to_end_section,
                    operator_breakdown_section, table1_section, table3_section, fig16_section,
                    bitllm_section, simulator_section, kernel_experiment_section}) {
    defs.push_back(make());
  }

  SectionContext ctx(opt, opt.out_dir);
  std::vector<Section> sections;
  std::vector<std::pair<std::string, double>> seconds;
  std::vector<std::string> failed;
  for (const SectionDef& def : defs) {
    const auto s0 = std::chrono::steady_clock::now();
    const double cpu0 = cpu_seconds_used();
    ctx.progress("section " + def.title);
    const size_t first_comparison = ctx.comparisons().size();
    const int failed_before = ctx.failed_parts;
    std::string html;
    try {
      html = def.build(ctx);
    } catch (const std::exception& e) {
      ++ctx.failed_parts;
      html = "<p class=\"warn\">This part failed: " + escape(e.what()) + "</p>\n";
    }
    if (ctx.failed_parts != failed_before) failed.push_back(def.id);
    for (size_t i = first_comparison; i < ctx.comparisons().size(); ++i) {
      ctx.comparisons()[i].section = def.id;
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
    ctx.progress(fmt::format("section {} done in {:.1f} s (CPU {:.1f} s)", def.title, s,
                             cpu_seconds_used() - cpu0));
    seconds.push_back({def.title, s});
    sections.push_back({def.id, def.title, html});
  }
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string head = summary_html(opt, ctx.comparisons(), seconds, total_s, failed);
  ctx.write("index.html", page("ltc DSE report", head, sections, page_scripts(library)));

  ReportResult result;
  result.index_html = (fs::path(opt.out_dir) / "index.html").string();
  result.files = ctx.files();
  result.failed_parts = ctx.failed_parts;
  return result;
}

}  // namespace ltc::report
