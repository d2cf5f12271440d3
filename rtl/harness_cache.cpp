// The verilated-model cache: where models live, what keys them (the RTL's fingerprint and the
// build recipe), one build at a time per entry, and the verilator build itself.
#include "common/file_io.h"
#include "common/hash.h"
#include "common/process.h"
#include "rtl/bench_top.h"
#include "rtl/rtl_design.h"
#include "rtl/rtl_runner.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ltc::rtl {

namespace fs = std::filesystem;
using hw::TensorCoreDesign;

namespace {

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

}  // namespace

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
                             read_tail(log, 3000));
  }
  fs::rename(obj / output, exe);
  fs::remove_all(obj);
  std::ofstream(dir / "ok") << hc.id() << "\n";
  return exe.string();
}

}  // namespace ltc::rtl
