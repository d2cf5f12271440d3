// Speed flavour of tile_harness for `ltc bench rtl`: back-to-back LMMAs with out_ready held high
// (so in_ready_o is 1 and no handshake needs sampling between edges) and two evaluations per
// cycle, the minimum for an edge-triggered Verilator model. Built on demand by rtl_runner.cpp.
//
//   tile_harness bench CYCLES PLANES   print simulated cycles per second (one JSON object)
#include "Vtile.h"
#include "port_words.h"  // beside this file
#include "verilated.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

namespace {

using namespace ltc_harness;

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || std::strcmp(argv[1], "bench") != 0) {
    std::fprintf(stderr, "usage: tile_harness bench CYCLES PLANES\n");
    return 2;
  }
  const uint64_t cycles = std::strtoull(argv[2], nullptr, 10);
  const uint64_t planes = std::strtoull(argv[3], nullptr, 10);
  auto ctx = std::make_unique<VerilatedContext>();
  auto tile = std::make_unique<Vtile>(ctx.get());
  tile->clk_i = 0;
  tile->rst_ni = 0;
  tile->eval();
  tile->rst_ni = 1;
  tile->in_valid_i = 1;
  tile->out_ready_i = 1;
  tile->eval();

  const size_t aw = words_of(tile->in_a_i), ww = words_of(tile->in_w_i),
               cw = words_of(tile->in_c_i);
  constexpr int kSets = 16;
  std::vector<uint32_t> data(kSets * (aw + ww + cw));
  uint64_t s = 0x9e3779b97f4a7c15ull;  // same operand stream as the SystemC flavour
  for (auto& w : data) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    w = static_cast<uint32_t>(s >> 11) & 0x3c3c3c3cu;  // moderate exponents
  }

  uint64_t plane = 0, results = 0;
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t c = 0; c < cycles; ++c) {
    const uint32_t* set = &data[(c % kSets) * (aw + ww + cw)];
    tile->in_first_i = plane == 0;
    tile->in_last_i = plane + 1 == planes;
    put(tile->in_a_i, set);
    put(tile->in_w_i, set + aw);
    put(tile->in_c_i, set + aw + ww);
    plane = (plane + 1) % planes;
    tile->clk_i = 1;
    tile->eval();
    results += tile->done_o;
    tile->clk_i = 0;
    tile->eval();
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("{\"cycles\": %llu, \"seconds\": %.6f, \"cycles_per_s\": %.1f, \"lmmas\": %llu}\n",
              static_cast<unsigned long long>(cycles), secs, cycles / secs,
              static_cast<unsigned long long>(results));
  tile->final();
  return 0;
}
