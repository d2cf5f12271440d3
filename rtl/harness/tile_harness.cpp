// Standalone driver of one verilated tile (class Vtile, any of the four tops: they share port
// names). Built on demand by rtl_runner.cpp with Verilator; not part of the CMake build.
//
//   tile_harness run STIM OUT [VCD]   drive the beats of STIM, write every result to OUT
//   tile_harness bench CYCLES PLANES  free-running back-to-back LMMAs, print cycles per second
//
// STIM and OUT are little-endian uint32 streams (format in rtl_runner.h).
#include "Vtile.h"
#include "port_words.h"  // beside this file
#include "verilated.h"
#if VM_TRACE
#include "verilated_vcd_c.h"
#endif

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using namespace ltc_harness;

constexpr uint32_t kStimMagic = 0x4c544331;  // "LTC1"
constexpr uint32_t kOutMagic = 0x4c544f31;   // "LTO1"

// xorshift: stall patterns must be reproducible from the stimulus seed.
struct Rng {
  uint64_t s;
  uint32_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return static_cast<uint32_t>(s >> 11);
  }
  bool percent(uint32_t p) { return next() % 100 < p; }
};

class Driver {
 public:
  explicit Driver(const char* vcd) : ctx_(new VerilatedContext), tile_(new Vtile(ctx_.get())) {
#if VM_TRACE
    if (vcd) {
      ctx_->traceEverOn(true);
      trace_.reset(new VerilatedVcdC);
      tile_->trace(trace_.get(), 99);
      trace_->open(vcd);
    }
#else
    if (vcd) std::fprintf(stderr, "tile_harness: built without --trace, ignoring %s\n", vcd);
#endif
    tile_->clk_i = 0;
    tile_->rst_ni = 1;
    tile_->in_valid_i = 0;
    tile_->out_ready_i = 0;
    tile_->eval();
    reset();
  }
  ~Driver() {
#if VM_TRACE
    if (trace_) trace_->close();
#endif
    tile_->final();
  }

  Vtile& tile() {
    return *tile_;
  }
  uint64_t cycles() const {
    return cycles_;
  }

  void reset() {
    tile_->rst_ni = 0;
    tile_->eval();
    dump();
    tick();
    tile_->rst_ni = 1;
    tile_->eval();
  }
  // Inputs are set; settle, let the caller sample the handshake, then clock.
  void settle() {
    tile_->eval();
  }
  void tick() {
    dump();
    tile_->clk_i = 1;
    tile_->eval();
    ++time_;
    dump();
    tile_->clk_i = 0;
    tile_->eval();
    ++time_;
    ++cycles_;
  }

 private:
  void dump() {
#if VM_TRACE
    if (trace_) trace_->dump(time_);
#endif
  }
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtile> tile_;
#if VM_TRACE
  std::unique_ptr<VerilatedVcdC> trace_;
#endif
  uint64_t cycles_ = 0;
  uint64_t time_ = 0;
};

std::vector<uint32_t> read_words(const char* path) {
  std::FILE* f = std::fopen(path, "rb");
  if (!f) {
    std::fprintf(stderr, "tile_harness: cannot open %s\n", path);
    std::exit(2);
  }
  std::vector<uint32_t> words;
  uint32_t buf[4096];
  size_t n;
  while ((n = std::fread(buf, 4, 4096, f)) > 0) words.insert(words.end(), buf, buf + n);
  std::fclose(f);
  return words;
}

struct Lmma {
  uint32_t abort_after;  // 0: run every beat; else stop after that many beats and reset the tile
  const uint32_t* c;
  std::vector<const uint32_t*> beats;  // a words then w words
};

int run(const char* stim_path, const char* out_path, const char* vcd) {
  const std::vector<uint32_t> s = read_words(stim_path);
  Driver d(vcd);
  Vtile& t = d.tile();
  const size_t aw = words_of(t.in_a_i), ww = words_of(t.in_w_i), cw = words_of(t.in_c_i),
               ow = words_of(t.out_o);
  if (s.size() < 9 || s[0] != kStimMagic || s[1] != aw || s[2] != ww || s[3] != cw || s[4] != ow) {
    std::fprintf(
        stderr, "tile_harness: stimulus does not match this tile (words a %zu w %zu c %zu o %zu)\n",
        aw, ww, cw, ow);
    return 2;
  }
  const uint32_t count = s[5];
  Rng rng{(uint64_t(s[6]) << 1) | 1};
  const uint32_t stall_in = s[7], stall_out = s[8];
  std::vector<Lmma> jobs;
  size_t pos = 9;
  for (uint32_t i = 0; i < count; ++i) {
    Lmma j;
    j.abort_after = s.at(pos++);
    const uint32_t beats = s.at(pos++);
    j.c = &s.at(pos);
    pos += cw;
    for (uint32_t b = 0; b < beats; ++b) {
      j.beats.push_back(&s.at(pos));
      pos += aw + ww;
    }
    jobs.push_back(std::move(j));
  }

  std::vector<uint32_t> out = {kOutMagic, 0, 0, 0};
  uint32_t results = 0;
  uint64_t done_pulses = 0;
  size_t job = 0, beat = 0;
  const uint64_t limit = 1000 + 64ull * (s.size() + 1);
  uint32_t expected = 0;
  for (const auto& j : jobs) expected += j.abort_after == 0;
  while (results < expected || job < jobs.size()) {
    if (d.cycles() > limit) {
      std::fprintf(stderr, "tile_harness: no progress after %llu cycles\n",
                   static_cast<unsigned long long>(d.cycles()));
      return 1;
    }
    // Abort: the beats given so far are in flight; reset drops them.
    if (job < jobs.size() && jobs[job].abort_after != 0 && beat == jobs[job].abort_after) {
      t.in_valid_i = 0;
      d.reset();
      ++job;
      beat = 0;
      continue;
    }
    const bool offer = job < jobs.size() && !rng.percent(stall_in);
    t.in_valid_i = offer;
    if (offer) {
      const Lmma& j = jobs[job];
      t.in_first_i = beat == 0;
      t.in_last_i = beat + 1 == j.beats.size();
      put(t.in_a_i, j.beats[beat]);
      put(t.in_w_i, j.beats[beat] + aw);
      put(t.in_c_i, j.c);
    }
    t.out_ready_i = !rng.percent(stall_out);
    d.settle();
    if (t.out_valid_o && t.out_ready_i) {
      const size_t at = out.size();
      out.resize(at + ow);
      get(t.out_o, &out[at]);
      ++results;
    }
    done_pulses += t.done_o;
    if (offer && t.in_ready_o) {
      if (++beat == jobs[job].beats.size()) {
        ++job;
        beat = 0;
      }
    }
    d.tick();
  }
  out[1] = results;
  out[2] = static_cast<uint32_t>(d.cycles());
  out[3] = static_cast<uint32_t>(done_pulses);
  std::FILE* f = std::fopen(out_path, "wb");
  if (!f || std::fwrite(out.data(), 4, out.size(), f) != out.size()) {
    std::fprintf(stderr, "tile_harness: cannot write %s\n", out_path);
    return 1;
  }
  std::fclose(f);
  return 0;
}

int bench(uint64_t cycles, uint32_t planes) {
  Driver d(nullptr);
  Vtile& t = d.tile();
  const size_t aw = words_of(t.in_a_i), ww = words_of(t.in_w_i), cw = words_of(t.in_c_i);
  // A few distinct operand sets so the datapath keeps toggling.
  Rng rng{0x9e3779b97f4a7c15ull};
  constexpr int kSets = 16;
  std::vector<uint32_t> data(kSets * (aw + ww + cw));
  for (auto& w : data) w = rng.next() & 0x3c3c3c3cu;  // mostly moderate exponents
  t.out_ready_i = 1;
  t.in_valid_i = 1;
  uint64_t plane = 0, results = 0;
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t c = 0; c < cycles; ++c) {
    const uint32_t* set = &data[(c % kSets) * (aw + ww + cw)];
    t.in_first_i = plane == 0;
    t.in_last_i = plane + 1 == planes;
    put(t.in_a_i, set);
    put(t.in_w_i, set + aw);
    put(t.in_c_i, set + aw + ww);
    d.settle();
    results += t.done_o;
    if (t.in_ready_o) plane = (plane + 1) % planes;
    d.tick();
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("{\"cycles\": %llu, \"seconds\": %.6f, \"cycles_per_s\": %.1f, \"lmmas\": %llu}\n",
              static_cast<unsigned long long>(cycles), s, cycles / s,
              static_cast<unsigned long long>(results));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 4 && std::strcmp(argv[1], "run") == 0) {
    return run(argv[2], argv[3], argc >= 5 ? argv[4] : nullptr);
  }
  if (argc >= 4 && std::strcmp(argv[1], "bench") == 0) {
    return bench(std::strtoull(argv[2], nullptr, 10),
                 static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 10)));
  }
  std::fprintf(stderr, "usage: tile_harness run STIM OUT [VCD] | bench CYCLES PLANES\n");
  return 2;
}
