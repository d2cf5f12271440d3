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
  std::tm utc{};
  gmtime_r(&t, &utc);
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &utc);
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
    if (sweep == "ledger") continue;
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

  // Two lanes run side by side: the PPA sweeps (tool processes, -j of them at a time) and the
  // other sections (in-process models and simulations, mostly one thread). Alone, each leaves
  // one of two cores idle for part of its time. Each section writes into its own context; the
  // page, its summary and the file list come out in the order below whatever the timing.
  std::vector<SectionDef> defs = {numerics_section()};
  std::vector<bool> ppa_lane = {false};
  for (const std::string& sweep : opt.sweeps) {
    // The ledger runs in the other lane: the sweeps fill the PPA lane, and the other sections
    // leave a core idle for much of theirs.
    defs.push_back(sweep == "ledger" ? ppa_ledger_section() : ppa_sweep_section(sweep));
    ppa_lane.push_back(sweep != "ledger");
  }
  for (auto make : {gemm_calibration_section, step_validation_section, end_to_end_section,
                    operator_breakdown_section, table1_section, table3_section, fig16_section,
                    bitllm_section, moe_section, simulator_section, kernel_experiment_section}) {
    defs.push_back(make());
    ppa_lane.push_back(false);
  }

  struct Outcome {
    SectionContext ctx;
    std::string html;
    double seconds = 0;
  };
  std::vector<Outcome> outcomes;  // filled before the lanes start: no reallocation under them
  for (size_t i = 0; i < defs.size(); ++i)
    outcomes.push_back({SectionContext(opt, opt.out_dir), {}, 0});
  auto run_section = [&](size_t i) {
    const SectionDef& def = defs[i];
    Outcome& out = outcomes[i];
    const auto s0 = std::chrono::steady_clock::now();
    out.ctx.progress("section " + def.title);
    try {
      out.html = def.build(out.ctx);
    } catch (const std::exception& e) {
      ++out.ctx.failed_parts;
      out.html = "<p class=\"warn\">This part failed: " + escape(e.what()) + "</p>\n";
    }
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
    out.ctx.progress(fmt::format("section {} done in {:.1f} s", def.title, out.seconds));
  };
  auto run_lane = [&](bool ppa) {
    for (size_t i = 0; i < defs.size(); ++i) {
      if (ppa_lane[i] == ppa) run_section(i);
    }
  };
  const double cpu0 = cpu_seconds_used();
  {
    std::thread sweeps(run_lane, true);
    run_lane(false);
    sweeps.join();
  }

  SectionContext ctx(opt, opt.out_dir);
  std::vector<Section> sections;
  std::vector<std::pair<std::string, double>> seconds;
  std::vector<std::string> failed;
  for (size_t i = 0; i < defs.size(); ++i) {
    Outcome& out = outcomes[i];
    if (out.ctx.failed_parts > 0) failed.push_back(defs[i].id);
    ctx.failed_parts += out.ctx.failed_parts;
    for (Comparison& c : out.ctx.comparisons()) {
      c.section = defs[i].id;
      ctx.compare(std::move(c));
    }
    for (std::string& f : out.ctx.files()) ctx.files().push_back(std::move(f));
    seconds.push_back({defs[i].title, out.seconds});
    sections.push_back({defs[i].id, defs[i].title, std::move(out.html)});
  }
  ctx.progress(fmt::format("all sections done: CPU {:.1f} s (this process and its tools)",
                           cpu_seconds_used() - cpu0));
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
