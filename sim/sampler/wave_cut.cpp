#include "sim/sampler/wave_cut.h"

#include <cmath>

namespace ltc::sim {

void WaveCut::begin_kernel(const traces::Kernel&, int64_t) {
  stopped_window_ = -1;
  windows_.fill(Window{});
}

const WaveCut::Window* WaveCut::window(int64_t j) const {
  if (j < 0) return nullptr;
  const Window& w = windows_[size_t(j % kWindows)];
  return w.index == j ? &w : nullptr;
}

bool WaveCut::steady_at(int64_t w) {
  // The last complete window: blocks retire about in launch order, so the one before the
  // blocks now running (w - 2) has mostly finished; else the one before it. A least-squares
  // line through the last n windows' mean residencies: its slope times n against their mean.
  const uint64_t c = uint64_t(p_.resident);
  const auto complete = [this, c](int64_t i) { return window(i) && window(i)->blocks == c; };
  const int64_t n = p_.windows;
  int64_t j = w - 2;
  if (!complete(j)) --j;
  if (n < 2 || n > kWindows / 2 || j - n + 1 < 1) return false;
  double sum = 0, sxy = 0, sxx = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!complete(j - n + 1 + i)) return false;
    const double x = double(i) - double(n - 1) / 2;
    const double y = double(window(j - n + 1 + i)->cycles) / double(c);
    sum += y;
    sxy += x * y;
    sxx += x * x;
  }
  const double mean = sum / double(n);
  if (mean <= 0 || std::abs(sxy / sxx * double(n)) > p_.steady * mean) return false;
  stopped_window_ = j;
  return true;
}

bool WaveCut::admit(int64_t id) {
  if (p_.resident <= 0 || id < p_.tail || (id - p_.tail) % p_.resident != 0) return true;
  const int64_t w = (id - p_.tail) / p_.resident;
  return !(w >= p_.min_waves && steady_at(w));
}

void WaveCut::retired(int64_t id, int64_t start, int64_t end) {
  if (p_.resident <= 0 || id < p_.tail) return;
  // A block of a window older than the ring holds (a straggler) is not counted: its window is
  // no longer checked.
  const int64_t j = (id - p_.tail) / p_.resident;
  Window& slot = windows_[size_t(j % kWindows)];
  if (slot.index < j) slot = Window{j, 0, 0};
  if (slot.index == j) {
    ++slot.blocks;
    slot.cycles += uint64_t(end - start);
  }
}

std::optional<std::pair<uint64_t, uint64_t>> WaveCut::timed_blocks() const {
  if (!stopped()) return {};
  std::pair<uint64_t, uint64_t> sum{0, 0};
  for (int64_t i = stopped_window_ - p_.windows + 1; i <= stopped_window_; ++i) {
    sum.first += window(i)->blocks;
    sum.second += window(i)->cycles;
  }
  return sum;
}

}  // namespace ltc::sim
