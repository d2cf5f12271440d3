// A cursor over one warp's loop-compressed program: the simulator pulls instructions one at a
// time (next()) and never expands a kernel into memory. It walks the same order as expand_warp()
// (traces/trace.h) and holds only the program counter, the loop stack and the coordinates.
#pragma once

#include "traces/trace.h"

#include <cstdint>

namespace ltc::traces {

class WarpStream {
 public:
  WarpStream() = default;
  // The program must have passed validate() (matched loops, depth <= kMaxLoopDepth).
  WarpStream(const std::vector<Instr>* program, int64_t bx, int64_t by, int64_t wx, int64_t wy,
             int64_t bz = 0)
      : prog_(program) {
    point_.bx = bx;
    point_.by = by;
    point_.bz = bz;
    point_.wx = wx;
    point_.wy = wy;
  }

  // The next executed instruction (loop markers consumed), or nullptr at the end. The point()
  // holds the loop counters of that instruction until the next call.
  const Instr* next() {
    const std::vector<Instr>& prog = *prog_;
    while (pc_ < prog.size()) {
      const Instr& in = prog[pc_];
      if (in.op == Opcode::kLoop) {
        trip_[depth_] = in.count;
        start_[depth_] = pc_;
        point_.i[size_t(depth_)] = 0;
        ++depth_;
        ++pc_;
      } else if (in.op == Opcode::kEndLoop) {
        const int d = depth_ - 1;
        if (uint64_t(++point_.i[size_t(d)]) < trip_[d]) {
          pc_ = start_[d] + 1;
        } else {
          point_.i[size_t(d)] = 0;
          --depth_;
          ++pc_;
        }
      } else {
        ++pc_;
        return &in;
      }
    }
    return nullptr;
  }
  const Affine::Point& point() const { return point_; }

 private:
  const std::vector<Instr>* prog_ = nullptr;
  Affine::Point point_;
  size_t pc_ = 0;
  int depth_ = 0;
  uint64_t trip_[kMaxLoopDepth] = {};
  size_t start_[kMaxLoopDepth] = {};
};

}  // namespace ltc::traces
