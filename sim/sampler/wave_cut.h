// The wave cut (sim/sampler/README.md, method `wave`): a dispatch policy (sim/dispatch_policy.h)
// that stops handing out a kernel's blocks once their residency is steady. With `resident` > 0 the
// blocks from id `tail` on fall into windows of `resident` (one wave each). Before handing out
// block w * resident + tail (w >= min_waves) it fits a least-squares line through the mean
// residencies of the last `windows` complete windows (window 0, whose blocks start together,
// left out); where the line moves less than `steady` of their mean across them, no more blocks
// are handed out, and the kernel reports those windows' blocks as its timed blocks. Never
// steady: the whole grid runs.
#pragma once

#include "sim/dispatch_policy.h"

#include <array>
#include <cstdint>
#include <optional>
#include <utility>

namespace ltc::sim {

class WaveCut final : public DispatchPolicy {
 public:
  struct Params {
    int64_t resident = 0, tail = 0, min_waves = 0, windows = 0;
    double steady = 0;
  };
  explicit WaveCut(const Params& p) : p_(p) {}

  void begin_kernel(const traces::Kernel& k, int64_t blocks) override;
  bool admit(int64_t id) override;
  void retired(int64_t id, int64_t start, int64_t end) override;
  // The windows the stopping fit used (none when the whole grid ran).
  std::optional<std::pair<uint64_t, uint64_t>> timed_blocks() const override;
  bool stopped() const { return stopped_window_ >= 0; }

 private:
  bool steady_at(int64_t w);  // the check before block w * resident + tail

  Params p_;
  // The last kWindows windows (window j in slot j % kWindows): the check looks back a few
  // windows only, so a grid of any size takes fixed memory.
  struct Window {
    int64_t index = -1;
    uint64_t blocks = 0, cycles = 0;
  };
  static constexpr int64_t kWindows = 64;
  std::array<Window, kWindows> windows_{};
  const Window* window(int64_t j) const;  // null unless the slot holds window j
  int64_t stopped_window_ = -1;
};

}  // namespace ltc::sim
