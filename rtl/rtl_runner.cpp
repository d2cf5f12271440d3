// Running a built harness: the operand element layout, the stimulus and output file protocol
// (magic, sizes, packed words) and the bench run.
#include "rtl/rtl_runner.h"

#include "common/error.h"
#include "common/file_io.h"
#include "common/process.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace ltc::rtl {

namespace fs = std::filesystem;
using hw::TensorCoreDesign;

namespace {

constexpr uint32_t kStimMagic = 0x4c544331;
constexpr uint32_t kOutMagic = 0x4c544f31;

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
  const std::string text = read_tail(out, 4096);
  fs::remove(out);
  if (rc != 0) throw std::runtime_error("tile harness bench failed: " + text);
  return nlohmann::json::parse(text).at("cycles_per_s").get<double>();
}

}  // namespace ltc::rtl
