// Verilated tiles on demand: builds the standalone harness (harness/tile_harness.cpp) for a design
// point with Verilator, caches it by configuration and RTL hash, and drives it with operand beats.
//
// Cache: $LTC_CACHE_DIR, else $XDG_CACHE_HOME/ltc, else ~/.cache/ltc; models live in
// <cache>/rtl/<config id>-<hash>/tile_harness, built under an exclusive lock file so concurrent
// builds of the same model wait for each other.
//
// Harness files (little-endian uint32): stimulus = {magic "LTC1", a words, w words, c words,
// out words, LMMA count, stall seed, in-stall %, out-stall %} then per LMMA {abort_after, beats,
// C words, beats x (A words, W words)}; result = {magic "LTO1", results, cycles, done pulses}
// then out words per completed LMMA.
#pragma once

#include "model/hw/tensor_core.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ltc::rtl {

// What the verilated model is built into.
enum class HarnessKind {
  kRun,      // the verification harness (harness/tile_harness.cpp): stimulus file in, outputs out
  kBench,    // the speed flavour (harness/tile_bench.cpp, bench only)
  kSystemC,  // the SystemC flavour (harness/tile_harness_sc.cpp, bench only)
  // A shared library (harness/tile_lib.cpp, loaded by tile_library.h): the tile clocked in the
  // caller's process, e.g. as the simulator's tensor core (`ltc sim --tc rtl`).
  kLibrary,
};

struct HarnessOptions {
  HarnessKind kind = HarnessKind::kRun;
  bool trace = false;  // build with --trace so runs can write a VCD
  // kLibrary: compiled without C++ optimization like the verification runs (an M2N64K4 FP16
  // model: ~40 s instead of ~150 s on one core), or with -O2 when `optimized` (a faster model,
  // for benchmarks).
  bool optimized = false;
  std::string cache_dir;  // empty: default_cache_dir()
  int jobs = 2;           // parallel C++ compiles of the verilated model
};

std::string default_cache_dir();

// The configuration the harness is built for: `config` with WBits at its maximum (8), so one
// model serves every weight width (WBits only sizes the plane counter).
hw::TensorCoreConfig harness_config(const hw::TensorCoreConfig& config);

// Path of the harness executable (HarnessKind::kLibrary: shared library) for `config`, building it
// first if the cache lacks it. Throws
// std::runtime_error with the tail of the Verilator log when the build fails.
std::string build_harness(const hw::TensorCoreConfig& config, const HarnessOptions& options = {});

// One LMMA as the tile sees it: per beat the A-side elements (table entries or activations) and
// the weight-side elements (plane bits, element n*K+k, or weights for mac), plus C.
struct TileLmma {
  std::vector<uint32_t> c;
  std::vector<std::vector<uint32_t>> a_beats;
  std::vector<std::vector<uint32_t>> w_beats;
  uint32_t abort_after = 0;  // > 0: give only that many beats, then reset the tile mid-operation
};

struct StallOptions {
  uint32_t seed = 1;
  uint32_t in_stall_pct = 0;   // cycles without an offered beat
  uint32_t out_stall_pct = 0;  // cycles with out_ready low
  std::string vcd;             // write a VCD here (needs a harness built with trace)
};

struct TileRun {
  std::vector<std::vector<uint32_t>> outputs;  // per completed LMMA, M*N out elements
  uint64_t cycles = 0;  // every simulated cycle, including the reset cycle at the start
  uint64_t done_pulses = 0;
};

// Element widths of the A-side and weight-side operands and of C / O for `config`.
int a_element_bits(const hw::TensorCoreConfig& config);
int w_element_bits(const hw::TensorCoreConfig& config);
// Elements of the weight-side operand per beat: N*K, except the dequantizing mac
// (config.mac_dequant()), whose in_w_i is given bit by bit (element width 1): N*K codes of
// harness_config(config).wbits bits, N FP16 scales, N zero points of the same width.
size_t w_element_count(const hw::TensorCoreConfig& config);

// Packs `elems` (`bits` wide each, element i at bits [i*bits +: bits]) into `words` words appended
// to `out`, as the tile's packed ports hold them; unpack_elements reads `count` of them back.
void pack_elements(const std::vector<uint32_t>& elems, int bits, size_t words,
                   std::vector<uint32_t>& out);
std::vector<uint32_t> unpack_elements(const uint32_t* words, int bits, size_t count);

TileRun run_tile(const std::string& harness, const hw::TensorCoreConfig& config,
                 const std::vector<TileLmma>& lmmas, const StallOptions& stalls = {});

// Runs `tile_harness bench` for `cycles` cycles of back-to-back LMMAs of `planes` beats; returns
// simulated cycles per second.
double bench_harness(const std::string& harness, uint64_t cycles, int planes);

}  // namespace ltc::rtl
