// One verilated tile (class Vtile, any ltc_*_tile top) as a shared library with a C interface, so
// a process that cannot link the per-design-point model at build time (the cycle-level simulator,
// `ltc sim --tc rtl`) can load it with dlopen and clock it through its ports. Built on demand by
// rtl_runner.cpp (HarnessOptions::library); loaded by rtl/tile_library.h.
//
//   ltc_tile_words(w)      words of in_a_i, in_w_i, in_c_i, out_o (little-endian uint32 each)
//   ltc_tile_open()        a fresh tile, reset, inputs low
//   ltc_tile_cycle(...)    one clock cycle: drive the inputs, settle, sample the handshakes and
//                          (when out_valid_o & out_ready_i) out_o, then the rising edge
#include "Vtile.h"
#include "port_words.h"  // beside this file
#include "verilated.h"

#include <cstdint>
#include <memory>
#include <type_traits>

namespace {

using namespace ltc_harness;

struct Tile {
  std::unique_ptr<VerilatedContext> ctx{new VerilatedContext};
  std::unique_ptr<Vtile> top{new Vtile(ctx.get())};
  void edge() {
    top->clk_i = 1;
    top->eval();
    top->clk_i = 0;
    top->eval();
  }
};

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void ltc_tile_words(uint32_t* words) {
  VerilatedContext ctx;
  Vtile t(&ctx);
  words[0] = words_of(t.in_a_i);
  words[1] = words_of(t.in_w_i);
  words[2] = words_of(t.in_c_i);
  words[3] = words_of(t.out_o);
  t.final();
}

__attribute__((visibility("default"))) void* ltc_tile_open() {
  auto* t = new Tile;
  Vtile& v = *t->top;
  v.clk_i = 0;
  v.rst_ni = 1;
  v.in_valid_i = 0;
  v.out_ready_i = 0;
  v.eval();
  v.rst_ni = 0;  // asynchronous reset, held over one edge
  v.eval();
  t->edge();
  v.rst_ni = 1;
  v.eval();
  return t;
}

__attribute__((visibility("default"))) void ltc_tile_close(void* tile) {
  auto* t = static_cast<Tile*>(tile);
  t->top->final();
  delete t;
}

// a, w, c: null keeps the previous value of the port. Returns bit 0 in_ready_o, bit 1
// out_valid_o, bit 2 done_o, as settled before the edge.
__attribute__((visibility("default"))) uint32_t ltc_tile_cycle(void* tile, uint32_t in_valid,
                                                               uint32_t first, uint32_t last,
                                                               const uint32_t* a, const uint32_t* w,
                                                               const uint32_t* c,
                                                               uint32_t out_ready, uint32_t* out) {
  auto* t = static_cast<Tile*>(tile);
  Vtile& v = *t->top;
  v.in_valid_i = in_valid != 0;
  v.in_first_i = first != 0;
  v.in_last_i = last != 0;
  if (a) put(v.in_a_i, a);
  if (w) put(v.in_w_i, w);
  if (c) put(v.in_c_i, c);
  v.out_ready_i = out_ready != 0;
  v.eval();
  const uint32_t flags =
      uint32_t(v.in_ready_o) | uint32_t(v.out_valid_o) << 1 | uint32_t(v.done_o) << 2;
  if (v.out_valid_o && v.out_ready_i && out) get(v.out_o, out);
  t->edge();
  return flags;
}

}  // extern "C"
