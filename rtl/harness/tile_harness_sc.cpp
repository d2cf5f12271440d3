// The SystemC flavour of tile_harness: the verilated tile inside ltc::rtl::RtlTileModule, clocked
// by an sc_clock. Built on demand by rtl_runner.cpp (Verilator --exe, linked with libsystemc).
//
//   tile_harness bench CYCLES PLANES   back-to-back LMMAs, print simulated cycles per second
#include "Vtile.h"
#include "port_words.h"  // beside this file
#include "rtl/harness/rtl_tile_module.h"
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

int sc_main(int argc, char** argv) {
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
  tile->eval();

  const size_t aw = words_of(tile->in_a_i), ww = words_of(tile->in_w_i),
               cw = words_of(tile->in_c_i);
  constexpr int kSets = 16;
  std::vector<uint32_t> data(kSets * (aw + ww + cw));
  uint64_t s = 0x9e3779b97f4a7c15ull;  // same xorshift stream as the plain harness
  for (auto& w : data) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    w = static_cast<uint32_t>(s >> 11) & 0x3c3c3c3cu;
  }

  sc_core::sc_clock clk("clk", sc_core::sc_time(1, sc_core::SC_NS));
  ltc::rtl::RtlTileModule<Vtile> mod("tile", *tile);
  mod.clk(clk);
  uint64_t cycle = 0, plane = 0, results = 0;
  mod.drive = [&](Vtile& t) {
    const uint32_t* set = &data[(cycle % kSets) * (aw + ww + cw)];
    t.in_valid_i = 1;
    t.out_ready_i = 1;
    t.in_first_i = plane == 0;
    t.in_last_i = plane + 1 == planes;
    put(t.in_a_i, set);
    put(t.in_w_i, set + aw);
    put(t.in_c_i, set + aw + ww);
    results += t.done_o;
    plane = (plane + 1) % planes;
    ++cycle;
  };
  const auto start = std::chrono::steady_clock::now();
  sc_core::sc_start(sc_core::sc_time(static_cast<double>(cycles), sc_core::SC_NS));
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("{\"cycles\": %llu, \"seconds\": %.6f, \"cycles_per_s\": %.1f, \"lmmas\": %llu}\n",
              static_cast<unsigned long long>(mod.cycles()), secs, mod.cycles() / secs,
              static_cast<unsigned long long>(results));
  tile->final();
  return 0;
}
