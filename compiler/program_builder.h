// Emits warp programs: loops become `loop N ... endloop` (elided when N == 1) and each open loop's
// counter is an Affine variable i<depth>, so callers write addresses as sums of strides.
#pragma once

#include "traces/isa.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace ltc::compiler {

class ProgramBuilder {
 public:
  // A loop counter, or none (a loop of one iteration is not emitted; its counter is always 0).
  struct Var {
    int depth = -1;
  };

  // `trip` >= 1; callers skip a body that runs zero times.
  Var loop(uint64_t trip) {
    if (trip <= 1) return Var{};
    traces::Instr in;
    in.op = traces::Opcode::kLoop;
    in.count = trip;
    program_.push_back(in);
    return Var{depth_++};
  }
  void end(Var v) {
    if (v.depth < 0) return;
    traces::Instr in;
    in.op = traces::Opcode::kEndLoop;
    program_.push_back(in);
    --depth_;
  }
  void emit(const traces::Instr& in) { program_.push_back(in); }
  std::vector<traces::Instr> take() { return std::move(program_); }

 private:
  std::vector<traces::Instr> program_;
  int depth_ = 0;
};

// base + sum of (variable, stride) terms; loop variables that were elided contribute nothing.
struct AffineTerm {
  enum Kind { kBx, kBy, kWx, kWy, kLoop, kBz } kind;
  int64_t stride;
  ProgramBuilder::Var var{};
};
inline traces::Affine affine(int64_t base, std::initializer_list<AffineTerm> terms) {
  traces::Affine a;
  a.base = base;
  for (const AffineTerm& t : terms) {
    if (t.kind == AffineTerm::kLoop) {
      if (t.var.depth >= 0) a.coef[size_t(4 + t.var.depth)] += t.stride;
    } else if (t.kind == AffineTerm::kBz) {
      a.coef[size_t(traces::AffineVar::kBz)] += t.stride;
    } else {
      a.coef[size_t(t.kind)] += t.stride;
    }
  }
  return a;
}
// Affines are linear in their variables: sums and multiples stay affines.
inline traces::Affine plus(traces::Affine a, const traces::Affine& b) {
  a.base += b.base;
  for (size_t v = 0; v < a.coef.size(); ++v) a.coef[v] += b.coef[v];
  return a;
}
inline traces::Affine times(traces::Affine a, int64_t s) {
  a.base *= s;
  for (auto& c : a.coef) c *= s;
  return a;
}
inline traces::Affine constant(int64_t c) {
  traces::Affine a;
  a.base = c;
  return a;
}

inline AffineTerm bx(int64_t s) {
  return {AffineTerm::kBx, s};
}
inline AffineTerm by(int64_t s) {
  return {AffineTerm::kBy, s};
}
inline AffineTerm bz(int64_t s) {
  return {AffineTerm::kBz, s};
}
inline AffineTerm wx(int64_t s) {
  return {AffineTerm::kWx, s};
}
inline AffineTerm wy(int64_t s) {
  return {AffineTerm::kWy, s};
}
inline AffineTerm iv(ProgramBuilder::Var v, int64_t s) {
  return {AffineTerm::kLoop, s, v};
}

// Instructions both lowerings emit: a memory access of `bytes` at `addr` in tensor `tensor`, an
// instruction with only a count (alu and sfu ops, wait's groups), and the fixed ones.
inline traces::Instr mem(traces::Opcode op, uint32_t tensor, uint64_t bytes,
                         const traces::Affine& addr) {
  traces::Instr in;
  in.op = op;
  in.tensor = tensor;
  in.bytes = bytes;
  in.addr = addr;
  return in;
}
inline traces::Instr count_op(traces::Opcode op, uint64_t n = 0) {
  traces::Instr in;
  in.op = op;
  in.count = n;
  return in;
}
inline traces::Instr barrier() {
  return count_op(traces::Opcode::kBarrier);
}
inline traces::Instr commit() {
  return count_op(traces::Opcode::kCommit);
}
inline traces::Instr wait_groups(uint64_t n) {
  return count_op(traces::Opcode::kWait, n);
}

// The K steps of one shared-memory stage with register double buffering, as CUTLASS's warp-level
// mainloop does: step q's fragments go to buffer 1 + q % 2 and are loaded one step ahead, so
// the tensor core works on step q while step q + 1's lds are in flight. `frags(q, buf)` emits
// the loads of step q, `ops(q, buf)` its tensor-core instructions (q an affine of the loops).
inline void emit_k_steps(ProgramBuilder& p, int64_t steps,
                         const std::function<void(const traces::Affine&, uint32_t)>& frags,
                         const std::function<void(const traces::Affine&, uint32_t)>& ops) {
  frags(constant(0), 1);
  const int64_t pairs = (steps - 1) / 2;
  const auto ip = p.loop(uint64_t(pairs));
  if (pairs > 0) {
    frags(affine(1, {iv(ip, 2)}), 2);
    ops(affine(0, {iv(ip, 2)}), 1);
    frags(affine(2, {iv(ip, 2)}), 1);
    ops(affine(1, {iv(ip, 2)}), 2);
  }
  p.end(ip);
  const int64_t done = 2 * pairs;
  if (steps - done == 1) {
    ops(constant(done), 1);
  } else {
    frags(constant(done + 1), 2);
    ops(constant(done), 1);
    ops(constant(done + 1), 2);
  }
}

}  // namespace ltc::compiler
