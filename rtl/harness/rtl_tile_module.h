// A verilated tile (any ltc_*_tile top, Verilator prefix Vtile) as a SystemC module: on every
// rising edge of `clk` the driver callback sets the tile's inputs and samples its outputs, then the
// verilated model is clocked once. This is the wrapper `ltc bench rtl` measures "inside SystemC";
// the cycle-level SM model can instantiate the same module to run the RTL as its tensor core.
#pragma once

#include <systemc>

#include <cstdint>
#include <functional>
#include <utility>

namespace ltc::rtl {

template <class Tile>
class RtlTileModule : public sc_core::sc_module {
 public:
  sc_core::sc_in<bool> clk;
  // Called once per cycle before the edge: sample the outputs settled after the previous edge and
  // drive new inputs (a driver that must see in_ready_o under its new out_ready_i evaluates first).
  std::function<void(Tile&)> drive;

  RtlTileModule(sc_core::sc_module_name name, Tile& tile) : sc_core::sc_module(name), tile_(tile) {
    SC_HAS_PROCESS(RtlTileModule);
    SC_METHOD(on_posedge);
    sensitive << clk.pos();
    dont_initialize();
  }

  uint64_t cycles() const { return cycles_; }

 private:
  void on_posedge() {
    if (drive) drive(tile_);
    tile_.clk_i = 1;  // the edge evaluation settles the new inputs first
    tile_.eval();
    tile_.clk_i = 0;
    tile_.eval();
    ++cycles_;
  }

  Tile& tile_;
  uint64_t cycles_ = 0;
};

}  // namespace ltc::rtl
