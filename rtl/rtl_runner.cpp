#include "rtl/rtl_runner.h"

#include "common/error.h"
#include "common/file_io.h"
#include "common/hash.h"
#include "common/process.h"
#include "rtl/rtl_design.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace ltc::rtl {

namespace fs = std::filesystem;
using golden::DType;
using hw::TensorCoreDesign;

namespace {

constexpr uint32_t kStimMagic = 0x4c544331;
constexpr uint32_t kOutMagic = 0x4c544f31;
// Part of the cache key: bump when the build recipe changes.
constexpr const char* kRunRecipe = "verilator-O3-xfast-optfast-O0-assert-v2";
constexpr const char* kSpeedRecipe = "verilator-O3-xfast-optfast-O2-v2-regin";
constexpr const char* kLibraryRecipe = "verilator-O3-xfast-optfast-O0-v1-shared";
constexpr const char* kOptimizedLibraryRecipe = "verilator-O3-xfast-optfast-O2-v1-shared";

// Verification runs are short, so their models compile without C++ optimization (about half the
// build time); the speed flavours are optimized.
const char* cxx_opt(const HarnessOptions& o) {
  return (o.kind == HarnessKind::kBench || o.kind == HarnessKind::kSystemC ||
          (o.kind == HarnessKind::kLibrary && o.optimized))
             ? "OPT_FAST=-O2 OPT_GLOBAL=-O2"
             : "OPT_FAST=-O0 OPT_GLOBAL=-O0 OPT_SLOW=-O0";
}

std::string harness_source(const HarnessOptions& o) {
  switch (o.kind) {
    case HarnessKind::kLibrary:
      return rtl_source_dir() + "/harness/tile_lib.cpp";
    case HarnessKind::kSystemC:
      return rtl_source_dir() + "/harness/tile_harness_sc.cpp";
    case HarnessKind::kBench:
      return rtl_source_dir() + "/harness/tile_bench.cpp";
    case HarnessKind::kRun:
      break;
  }
  return rtl_source_dir() + "/harness/tile_harness.cpp";
}

std::string tail_of(const std::string& path, size_t max_chars) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > max_chars ? s.substr(s.size() - max_chars) : s;
}

size_t words_for_bits(uint64_t bits) {
  return static_cast<size_t>((bits + 31) / 32);
}

std::string temp_path(const std::string& stem) {
  std::string tmpl = (fs::temp_directory_path() / (stem + "-XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0)
    throw std::runtime_error("cannot create a temporary file in " +
                             fs::temp_directory_path().string());
  ::close(fd);
  return tmpl;
}

}  // namespace

void pack_elements(const std::vector<uint32_t>& elems, int bits, size_t words,
                   std::vector<uint32_t>& out) {
  const size_t at = out.size();
  out.resize(at + words, 0);
  const uint32_t mask = bits == 32 ? 0xffffffffu : ((1u << bits) - 1u);
  for (size_t i = 0; i < elems.size(); ++i) {
    const uint64_t bit = uint64_t(i) * bits;
    const uint64_t v = uint64_t(elems[i] & mask) << (bit % 32);
    out[at + bit / 32] |= static_cast<uint32_t>(v);
    if ((bit % 32) + bits > 32) out[at + bit / 32 + 1] |= static_cast<uint32_t>(v >> 32);
  }
}

std::vector<uint32_t> unpack_elements(const uint32_t* words, int bits, size_t count) {
  std::vector<uint32_t> elems(count);
  const uint32_t mask = bits == 32 ? 0xffffffffu : ((1u << bits) - 1u);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t bit = uint64_t(i) * bits;
    uint64_t v = words[bit / 32] >> (bit % 32);
    if ((bit % 32) + bits > 32) v |= uint64_t(words[bit / 32 + 1]) << (32 - bit % 32);
    elems[i] = static_cast<uint32_t>(v) & mask;
  }
  return elems;
}

std::string default_cache_dir() {
  if (const char* d = std::getenv("LTC_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/ltc";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/ltc";
  return (fs::temp_directory_path() / "ltc-cache").string();
}

hw::TensorCoreConfig harness_config(const hw::TensorCoreConfig& config) {
  hw::TensorCoreConfig c = config;
  if (c.design != TensorCoreDesign::kMac || c.mac_dequant()) c.wbits = golden::kMaxWBits;
  return c;
}

int a_element_bits(const hw::TensorCoreConfig& c) {
  return golden::dtype_bits(c.design == TensorCoreDesign::kLut ? c.table : c.act);
}

int w_element_bits(const hw::TensorCoreConfig& c) {
  return c.design == TensorCoreDesign::kMac && !c.mac_dequant() ? golden::dtype_bits(c.weight) : 1;
}

size_t w_element_count(const hw::TensorCoreConfig& c) {
  const size_t n = size_t(c.shape.n), k = size_t(c.shape.k);
  if (!c.mac_dequant()) return n * k;
  const size_t wb = size_t(harness_config(c).wbits);
  return n * k * wb + n * 16 + n * wb;  // codes, FP16 scales, zero points (bits)
}

namespace {

// Speed flavours drive the tile from registers, as a surrounding design would: the tile's
// datapath is then evaluated once per clock edge instead of on every evaluation call (a verilated
// model re-runs all logic fed directly by top-level inputs each time it is evaluated).
std::string registered_input_top(const hw::TensorCoreConfig& c, const RtlDesign& d) {
  const int m = c.shape.m, n = c.shape.n, k = c.shape.k;
  const uint64_t a_bits = uint64_t(m) *
                          (c.design == TensorCoreDesign::kLut ? (1u << (k - 1)) : unsigned(k)) *
                          a_element_bits(c);
  const uint64_t w_bits = uint64_t(w_element_count(c)) * w_element_bits(c);
  const uint64_t c_bits = uint64_t(m) * n * golden::dtype_bits(c.acc);
  const uint64_t o_bits = uint64_t(m) * n * golden::dtype_bits(c.out);
  std::string params;
  for (const auto& p : d.params) {
    params += (params.empty() ? "." : ", .") + p.name + "(" + std::to_string(p.value) + ")";
  }
  std::ostringstream v;
  v << "module ltc_bench_top (\n"
    << "  input logic clk_i, rst_ni, in_valid_i, in_first_i, in_last_i, out_ready_i,\n"
    << "  input logic [" << a_bits - 1 << ":0] in_a_i,\n"
    << "  input logic [" << w_bits - 1 << ":0] in_w_i,\n"
    << "  input logic [" << c_bits - 1 << ":0] in_c_i,\n"
    << "  output logic in_ready_o, out_valid_o, done_o,\n"
    << "  output logic [" << o_bits - 1 << ":0] out_o\n);\n"
    << "  logic valid_q, first_q, last_q, ready_q;\n"
    << "  logic [" << a_bits - 1 << ":0] a_q;\n"
    << "  logic [" << w_bits - 1 << ":0] w_q;\n"
    << "  logic [" << c_bits - 1 << ":0] c_q;\n"
    << "  always_ff @(posedge clk_i) begin\n"
    << "    valid_q <= in_valid_i; first_q <= in_first_i; last_q <= in_last_i;\n"
    << "    ready_q <= out_ready_i; a_q <= in_a_i; w_q <= in_w_i; c_q <= in_c_i;\n"
    << "  end\n"
    << "  " << d.top << " #(" << params << ") u_tile (\n"
    << "    .clk_i, .rst_ni, .in_valid_i(valid_q), .in_ready_o, .in_first_i(first_q),\n"
    << "    .in_last_i(last_q), .in_a_i(a_q), .in_w_i(w_q), .in_c_i(c_q), .out_valid_o,\n"
    << "    .out_ready_i(ready_q), .out_o, .done_o);\n"
    << "endmodule\n";
  return v.str();
}

}  // namespace

std::string build_harness(const hw::TensorCoreConfig& config, const HarnessOptions& options) {
  const hw::TensorCoreConfig hc = harness_config(config);
  const RtlDesign design = rtl_design(hc);
  std::vector<std::string> hashed = design.sources;
  hashed.push_back(harness_source(options));
  hashed.push_back(std::string(LTC_SOURCE_DIR) + "/rtl/harness/port_words.h");
  const bool systemc = options.kind == HarnessKind::kSystemC;
  const bool library = options.kind == HarnessKind::kLibrary;
  // The speed flavours wrap the top in registered inputs (ltc_bench_top) and compile with -O2.
  const bool speed = options.kind == HarnessKind::kBench || systemc;
  if (systemc) hashed.push_back(std::string(LTC_SOURCE_DIR) + "/rtl/harness/rtl_tile_module.h");
  const std::string suffix = std::string(options.trace ? "-trace" : "") + (systemc ? "-sc" : "") +
                             (options.kind == HarnessKind::kBench ? "-bench" : "") +
                             (library ? (options.optimized ? "-libO2" : "-lib") : "");
  const char* recipe = library ? (options.optimized ? kOptimizedLibraryRecipe : kLibraryRecipe)
                       : speed ? kSpeedRecipe
                               : kRunRecipe;
  const std::string flavour = std::string(recipe) + suffix;
  // The recipe is part of the key: a changed build recipe rebuilds.
  const std::string key =
      Fnv1a().field(hdl_fingerprint(hashed, design.include_dirs)).field(flavour).hex();
  const fs::path root =
      fs::path(options.cache_dir.empty() ? default_cache_dir() : options.cache_dir) / "rtl";
  fs::create_directories(root);
  const std::string name = hc.id() + suffix + "-" + key;
  const fs::path dir = root / name;
  const std::string output = library ? "tile_lib.so" : "tile_harness";
  const fs::path exe = dir / output;
  FileLock lock((root / (name + ".lock")).string());
  if (fs::exists(dir / "ok") && fs::exists(exe)) return exe.string();

  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path obj = dir / "obj";
  const fs::path wrapper = dir / "ltc_bench_top.sv";
  if (speed) std::ofstream(wrapper) << registered_input_top(hc, design);
  std::vector<std::string> argv = {"verilator",    "--cc",
                                   "--exe",        "--build",
                                   "-j",           std::to_string(std::max(1, options.jobs)),
                                   "-O3",          "--x-assign",
                                   "fast",         "--x-initial",
                                   "fast",         "-Wno-fatal",
                                   "--prefix",     "Vtile",
                                   "--top-module", speed ? "ltc_bench_top" : design.top,
                                   "--Mdir",       obj.string(),
                                   "-o",           output,
                                   "-MAKEFLAGS",   cxx_opt(options)};
  if (options.trace) argv.push_back("--trace");
  // The verification models check the RTL's assertions (ltc_tile_ctrl's handshake properties).
  if (options.kind == HarnessKind::kRun) argv.push_back("--assert");
  if (library) {
    // Position-independent objects linked into a .so whose own symbols bind inside it, so
    // several design points' models (every one a class Vtile) load side by side.
    argv.insert(argv.end(),
                {"-CFLAGS", "-fPIC -fvisibility=hidden", "-LDFLAGS", "-shared -Wl,-Bsymbolic"});
  }
  if (systemc) {
    argv.insert(argv.end(),
                {"-CFLAGS", std::string("-I") + LTC_SOURCE_DIR, "-LDFLAGS", "-lsystemc"});
  }
  for (const auto& inc : design.include_dirs) argv.push_back("-I" + inc);
  if (!speed) {
    for (const auto& p : design.params) {
      argv.push_back("-G" + p.name + "=" + std::to_string(p.value));
    }
  }
  argv.insert(argv.end(), design.sources.begin(), design.sources.end());
  if (speed) argv.push_back(wrapper.string());
  argv.push_back(harness_source(options));
  const std::string log = (dir / "build.log").string();
  std::string cmd;
  for (const auto& a : argv) cmd += shell_quote(a) + " ";
  { std::ofstream(dir / "command.sh") << cmd << "> " << shell_quote(log) << " 2>&1\n"; }
  const ProcessResult built = run_process(argv, ".", log, 0);
  if (built.exit_code != 0 || !fs::exists(obj / output)) {
    throw std::runtime_error("verilator build of " + hc.id() + " failed (log " + log + "):\n" +
                             tail_of(log, 3000));
  }
  fs::rename(obj / output, exe);
  fs::remove_all(obj);
  std::ofstream(dir / "ok") << hc.id() << "\n";
  return exe.string();
}

TileRun run_tile(const std::string& harness, const hw::TensorCoreConfig& c,
                 const std::vector<TileLmma>& lmmas, const StallOptions& stalls) {
  const int m = c.shape.m, n = c.shape.n, k = c.shape.k;
  const int abits = a_element_bits(c), wbits = w_element_bits(c);
  const int cbits = golden::dtype_bits(c.acc), obits = golden::dtype_bits(c.out);
  const size_t a_count =
      size_t(m) * (c.design == TensorCoreDesign::kLut ? (size_t{1} << (k - 1)) : size_t(k));
  const size_t w_count = w_element_count(c);
  const size_t aw = words_for_bits(uint64_t(a_count) * abits);
  const size_t ww = words_for_bits(uint64_t(w_count) * wbits);
  const size_t cw = words_for_bits(uint64_t(m) * n * cbits);
  const size_t ow = words_for_bits(uint64_t(m) * n * obits);
  std::vector<uint32_t> s = {kStimMagic,   uint32_t(aw),        uint32_t(ww),
                             uint32_t(cw), uint32_t(ow),        uint32_t(lmmas.size()),
                             stalls.seed,  stalls.in_stall_pct, stalls.out_stall_pct};
  for (size_t i = 0; i < lmmas.size(); ++i) {
    const TileLmma& l = lmmas[i];
    if (l.a_beats.size() != l.w_beats.size() || l.a_beats.empty() || l.c.size() != size_t(m) * n) {
      throw InputError("run_tile: LMMA " + std::to_string(i) + " has inconsistent beats or C");
    }
    s.push_back(l.abort_after);
    s.push_back(uint32_t(l.a_beats.size()));
    pack_elements(l.c, cbits, cw, s);
    for (size_t b = 0; b < l.a_beats.size(); ++b) {
      if (l.a_beats[b].size() != a_count || l.w_beats[b].size() != w_count) {
        throw InputError("run_tile: LMMA " + std::to_string(i) + " beat " + std::to_string(b) +
                         " has " + std::to_string(l.a_beats[b].size()) + " A and " +
                         std::to_string(l.w_beats[b].size()) + " W elements (want " +
                         std::to_string(a_count) + " and " + std::to_string(w_count) + ")");
      }
      pack_elements(l.a_beats[b], abits, aw, s);
      pack_elements(l.w_beats[b], wbits, ww, s);
    }
  }
  const std::string stim = temp_path("ltc-stim"), out = temp_path("ltc-out");
  {
    std::ofstream f(stim, std::ios::binary);
    f.write(reinterpret_cast<const char*>(s.data()), std::streamsize(s.size() * 4));
  }
  std::vector<std::string> argv = {harness, "run", stim, out};
  if (!stalls.vcd.empty()) argv.push_back(stalls.vcd);
  // The harness's messages go to stderr: they must not mix with `--json` output on stdout.
  const int rc = run_process(argv, ".", "", 0).exit_code;
  std::vector<uint32_t> r;
  {
    std::ifstream f(out, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    r.resize(bytes.size() / 4);
    std::memcpy(r.data(), bytes.data(), r.size() * 4);
  }
  fs::remove(stim);
  fs::remove(out);
  if (rc != 0 || r.size() < 4 || r[0] != kOutMagic) {
    throw std::runtime_error("tile harness " + harness + " failed (exit " + std::to_string(rc) +
                             ")");
  }
  TileRun run;
  run.cycles = r[2];
  run.done_pulses = r[3];
  size_t pos = 4;
  for (uint32_t i = 0; i < r[1]; ++i) {
    if (pos + ow > r.size()) throw std::runtime_error("tile harness output is truncated");
    run.outputs.push_back(unpack_elements(&r[pos], obits, size_t(m) * n));
    pos += ow;
  }
  return run;
}

double bench_harness(const std::string& harness, uint64_t cycles, int planes) {
  const std::string out = temp_path("ltc-bench");
  const std::string cmd = "SC_COPYRIGHT_MESSAGE=DISABLE " + shell_quote(harness) + " bench " +
                          std::to_string(cycles) + " " + std::to_string(planes) + " > " +
                          shell_quote(out);
  const int rc = std::system(cmd.c_str());
  const std::string text = tail_of(out, 4096);
  fs::remove(out);
  if (rc != 0) throw std::runtime_error("tile harness bench failed: " + text);
  return nlohmann::json::parse(text).at("cycles_per_s").get<double>();
}

}  // namespace ltc::rtl
