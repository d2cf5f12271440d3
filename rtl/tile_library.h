// A verilated tile clocked in this process: the shared-library flavour of the harness
// (harness/tile_lib.cpp, built and cached by build_harness with HarnessOptions::library) loaded
// with dlopen. The simulator's RTL tensor core (`ltc sim --tc rtl`) streams every LMMA through one.
#pragma once

#include "model/hw/tensor_core.h"
#include "rtl/rtl_runner.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ltc::rtl {

// What a stream of back-to-back LMMAs took, counted from the cycle the first beat was offered.
struct TileStreamTiming {
  uint64_t beats_cycles = 0;   // through the last beat's handshake: when the next beat could enter
  uint64_t result_cycles = 0;  // through the last result's handshake (done_o)
  uint64_t stall_cycles = 0;   // cycles a beat was offered and in_ready_o was low
};

class VerilatedTile {
 public:
  // Builds (or finds in the cache) the library of `config` and opens one tile. Throws
  // std::runtime_error when the build or dlopen fails.
  explicit VerilatedTile(const hw::TensorCoreConfig& config, const HarnessOptions& options = {});
  ~VerilatedTile();
  VerilatedTile(const VerilatedTile&) = delete;
  VerilatedTile& operator=(const VerilatedTile&) = delete;

  const hw::TensorCoreConfig& config() const { return config_; }
  const std::string& library_path() const { return path_; }

  // Offers the LMMAs' beats back to back (one per cycle while in_ready_o, out_ready_i always
  // high) and takes every result; outputs (M*N out elements per LMMA) go to `outputs` when given.
  // The tile is idle before and after. Throws std::runtime_error when a result does not come.
  TileStreamTiming stream(const std::vector<TileLmma>& lmmas,
                          std::vector<std::vector<uint32_t>>* outputs);
  uint64_t cycles() const { return cycles_; }  // every cycle clocked so far

 private:
  struct Api;
  hw::TensorCoreConfig config_;
  std::string path_;
  std::unique_ptr<Api> api_;
  void* tile_ = nullptr;
  size_t aw_ = 0, ww_ = 0, cw_ = 0, ow_ = 0;
  uint64_t cycles_ = 0;
};

}  // namespace ltc::rtl
