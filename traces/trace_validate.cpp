// What a valid trace is: names, shapes, loops and their expanded length, affine addresses within
// the loop ranges, gemm records, every access inside its tensor or shared memory (validate);
// stores of different warps apart (check_addresses).
#include "common/error.h"
#include "traces/trace.h"
#include "traces/trace_detail.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace ltc::traces {

using detail::fail;
using golden::DType;

namespace {

bool valid_name(std::string_view s) {
  if (s.empty() || s.size() > 256) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-' || c == '/' || c == ':';
    if (!ok) return false;
  }
  return true;
}

uint64_t saturating_mul(uint64_t a, uint64_t b) {
  if (a != 0 && b > kMaxExpandedInstrs / a) return kMaxExpandedInstrs + 1;
  return a * b;
}

// Loop variables i<d> may only appear inside at least d+1 enclosing loops.
// Loop variables i<d> may only appear inside at least d+1 enclosing loops, and the expression
// must stay below 2^62 in magnitude for every block, warp and iteration (so eval() cannot
// overflow). `max_value` holds the largest value of each variable.
void check_affine(const Affine& a, int depth, const std::array<double, kAffineVars>& max_value,
                  const std::string& where, const char* field) {
  for (int d = depth; d < kMaxLoopDepth; ++d) {
    if (a.coef[4 + d] != 0) {
      fail(where, std::string(field) + " uses i" + std::to_string(d) + " outside " +
                      std::to_string(d + 1) + " enclosing loops");
    }
  }
  double bound = std::abs(double(a.base));
  for (int v = 0; v < kAffineVars; ++v) bound += std::abs(double(a.coef[v])) * max_value[v];
  if (bound >= 4.0e18) fail(where, std::string(field) + " overflows for the largest indices");
}

void validate_gemm_record(const GemmRecord& g, const std::string& where) {
  if (g.n < 1 || g.k < 1 || g.group < 1 || g.batch < 1) {
    fail(where, "gemm record needs n, k, group, batch >= 1");
  }
  if (g.path == GemmPath::kLut) {
    if (g.wbits < 1 || g.wbits > 8 || g.bases < 0 || g.bases > 8 || g.salient < 0 ||
        g.salient >= g.group || (g.bases > 0 && (g.wbits != 1 || g.batch != 1))) {
      fail(where,
           "lut gemm record needs wbits 1..8, bases 0..8 (with bases: wbits 1, batch 1), "
           "salient < group");
    }
    return;
  }
  const bool act_ok = g.act == DType::kInt8 || g.act == DType::kFp16 || g.act == DType::kBf16 ||
                      g.act == DType::kFp8E4M3 || g.act == DType::kFp8E5M2;
  if (g.wbits < 0 || g.wbits > 8 || g.bases != 0 || g.salient != 0 || !act_ok) {
    fail(where,
         "mma gemm record needs wbits 0 (dense) or 1..8 (dequantized codes), bases 0, salient 0, "
         "act int8, fp16, bf16, fp8e4m3 or fp8e5m2");
  }
}

// Every global access inside its declared tensor and every lds / sts inside the kernel's shared
// memory, by interval arithmetic on the affines over the grid, block and loop ranges (exact: each
// variable ranges over a box), so loops are never unrolled. Returns the accesses checked.
uint64_t check_extents(const Kernel& k, const std::string& kw) {
  uint64_t accesses = 0;
  // Largest value of each variable at each instruction (loop counters of the open loops).
  std::array<int64_t, kAffineVars> max_value{};
  max_value[0] = k.grid_x - 1;
  max_value[1] = k.grid_y - 1;
  max_value[2] = k.warps_x - 1;
  max_value[3] = k.warps_y - 1;
  max_value[size_t(AffineVar::kBz)] = k.grid_z - 1;
  int depth = 0;
  for (size_t i = 0; i < k.program.size(); ++i) {
    const Instr& in = k.program[i];
    if (in.op == Opcode::kLoop) {
      max_value[size_t(4 + depth++)] = int64_t(in.count) - 1;
      continue;
    }
    if (in.op == Opcode::kEndLoop) {
      max_value[size_t(4 + --depth)] = 0;
      continue;
    }
    const bool global =
        in.op == Opcode::kLdGlobal || in.op == Opcode::kLdGlobalAsync || in.op == Opcode::kStGlobal;
    const bool shared = in.op == Opcode::kLdShared || in.op == Opcode::kStShared;
    if ((!global && !shared) || in.bytes == 0) continue;
    // validate() bounds every affine below 2^62, so these sums cannot overflow.
    int64_t lo = in.addr.base, hi = in.addr.base;
    for (int v = 0; v < kAffineVars; ++v) {
      const int64_t term = in.addr.coef[size_t(v)] * max_value[size_t(v)];
      (term < 0 ? lo : hi) += term;
    }
    // A strided lds / sts: thread t moves bytes / 32 at addr + t * stride.
    const uint64_t extent = in.stride ? 31 * uint64_t(in.stride) + in.bytes / 32 : in.bytes;
    const uint64_t end = uint64_t(std::max<int64_t>(hi, 0)) + extent;
    std::string space;
    uint64_t size = 0;
    if (global) {
      const TensorDecl* td = nullptr;
      for (const auto& d : k.tensors) td = d.id == in.tensor ? &d : td;
      if (!td) fail(kw + ": instruction " + std::to_string(i), "tensor not declared");
      space = "tensor " + std::to_string(td->id) + " '" + td->name + "'";
      size = td->bytes;
    } else {
      space = "shared memory";
      size = k.smem_bytes;
    }
    if (lo < 0 || end > size) {
      fail(kw + ": instruction " + std::to_string(i),
           in.str() + " reaches bytes [" + std::to_string(lo) + ", " + std::to_string(end) +
               ") outside " + space + " of " + std::to_string(size) + " bytes");
    }
    ++accesses;
  }
  return accesses;
}

}  // namespace

std::string detail::supported_versions() {
  return std::to_string(kMinTraceVersion) + " .. " + std::to_string(kTraceVersion);
}

void detail::check_trace_version(int version, const std::string& where) {
  if (version < kMinTraceVersion || version > kTraceVersion) {
    fail(where, "trace version " + std::to_string(version) +
                    " is not supported (this reader: " + supported_versions() + ")");
  }
}

void detail::check_loop_count(int64_t count, const std::string& where) {
  if (count < 1) fail(where, "loop count must be >= 1 (got " + std::to_string(count) + ")");
}

uint64_t expanded_length(const std::vector<Instr>& program) {
  // Multiplier of each nesting level; loops validated to be matched.
  uint64_t mult[kMaxLoopDepth + 1] = {1, 1, 1, 1, 1, 1, 1};
  int depth = 0;
  uint64_t total = 0;
  for (const Instr& in : program) {
    if (in.op == Opcode::kLoop) {
      if (depth >= kMaxLoopDepth) return kMaxExpandedInstrs + 1;
      mult[depth + 1] = saturating_mul(mult[depth], in.count);
      ++depth;
    } else if (in.op == Opcode::kEndLoop) {
      if (depth == 0) return kMaxExpandedInstrs + 1;
      --depth;
    } else {
      total += mult[depth];
      if (total > kMaxExpandedInstrs) return kMaxExpandedInstrs + 1;
    }
  }
  return total;
}

double expanded_sum(const std::vector<Instr>& program,
                    const std::function<double(const Instr&)>& weight) {
  double mult[kMaxLoopDepth + 1] = {1, 1, 1, 1, 1, 1, 1};
  int depth = 0;
  double total = 0;
  for (const Instr& in : program) {
    if (in.op == Opcode::kLoop) {
      if (depth >= kMaxLoopDepth) break;  // validate() refuses it
      mult[depth + 1] = mult[depth] * double(in.count);
      ++depth;
    } else if (in.op == Opcode::kEndLoop) {
      depth = std::max(depth - 1, 0);
    } else {
      total += mult[depth] * weight(in);
    }
  }
  return total;
}

void validate(const Trace& t, const std::string& origin) {
  detail::check_trace_version(t.version, origin);
  // The GPU name: empty (written "-") or a name the text form can carry (fuzzer: spaces, NULs,
  // '#' and a literal "-" were accepted by the binary reader and did not round-trip).
  if (!t.gpu.empty() && (!valid_name(t.gpu) || t.gpu == "-")) {
    fail(origin, "gpu name '" + t.gpu + "' has bad characters (valid: letters, digits, _ . - / :)");
  }
  for (size_t c = 0; c < t.cores.size(); ++c) {
    try {
      t.cores[c].config.validate();
    } catch (const InputError& e) {
      fail(origin, "core " + std::to_string(c) + ": " + e.what());
    }
  }
  for (const Kernel& k : t.kernels) {
    const std::string kw = origin + ": kernel " + k.name;
    if (!valid_name(k.name))
      fail(origin, "kernel name '" + k.name + "' is empty or has bad characters");
    if (k.grid_x < 1 || k.grid_y < 1 || k.grid_z < 1 || k.grid_x > (int64_t(1) << 31) ||
        k.grid_y > (int64_t(1) << 16) || k.grid_z > (int64_t(1) << 16)) {
      fail(kw, "grid must be 1..2^31 x 1..65536 x 1..65536 blocks");
    }
    if (k.grid_z > 1 && t.version < 5) fail(kw, "a grid z needs trace version 5");
    if (k.cluster_x < 1 || k.cluster_x > 16) fail(kw, "cluster must be 1..16 blocks");
    if (k.cluster_x > 1 && t.version < 3) fail(kw, "a cluster needs trace version 3");
    if (k.warps_x < 1 || k.warps_y < 1 || k.warps_per_block() > 32) {
      fail(kw, "a block must have 1..32 warps");
    }
    if (k.tiles.core < -1 || k.tiles.core >= int(t.cores.size())) {
      fail(kw, "tiles core " + std::to_string(k.tiles.core) + " is not declared");
    }
    if (k.gemm.m > 0) {
      validate_gemm_record(k.gemm, kw);
      const int64_t bk = k.tiles.block[2], wk = k.tiles.warp[2];
      if (wk > 0 && wk < bk &&
          (bk % wk != 0 || k.warps_y != bk / wk || k.tiles.warp[0] != k.tiles.block[0])) {
        fail(kw, "sliced K (warp k " + std::to_string(wk) + " < block k " + std::to_string(bk) +
                     ") needs warp k to divide block k, block k / warp k = " +
                     std::to_string(bk / wk) + " warps along y (has " + std::to_string(k.warps_y) +
                     ") and a warp tile spanning the block's M");
      }
    }
    for (size_t a = 0; a < k.tensors.size(); ++a) {
      if (!valid_name(k.tensors[a].name)) fail(kw, "tensor name is empty or has bad characters");
      for (size_t b = 0; b < a; ++b) {
        if (k.tensors[a].id == k.tensors[b].id) {
          fail(kw, "tensor id " + std::to_string(k.tensors[a].id) + " declared twice");
        }
      }
    }
    int depth = 0;
    std::array<double, kAffineVars> max_value{};
    max_value[0] = double(k.grid_x - 1);
    max_value[1] = double(k.grid_y - 1);
    max_value[2] = double(k.warps_x - 1);
    max_value[3] = double(k.warps_y - 1);
    max_value[size_t(AffineVar::kBz)] = double(k.grid_z - 1);
    for (size_t i = 0; i < k.program.size(); ++i) {
      const Instr& in = k.program[i];
      const std::string w = kw + ": instruction " + std::to_string(i);
      if (t.version < 5) {
        for (const Affine* a : {&in.addr, &in.m, &in.n, &in.k, &in.g}) {
          if (a->coef[size_t(AffineVar::kBz)] != 0) fail(w, "bz needs trace version 5");
        }
      }
      if (in.op == Opcode::kAlu && in.int_ops > 0) {
        if (t.version < 4) fail(w, "an alu's int= needs trace version 4");
        if (in.int_ops > in.count) {
          fail(w, "alu int=" + std::to_string(in.int_ops) + " exceeds its count=" +
                      std::to_string(in.count) + " (int is the share of count on INT32 lanes)");
        }
      }
      switch (in.op) {
        case Opcode::kLoop:
          detail::check_loop_count(int64_t(in.count), w);
          if (++depth > kMaxLoopDepth) {
            fail(w, "loops nest deeper than " + std::to_string(kMaxLoopDepth));
          }
          max_value[size_t(4 + depth - 1)] = double(in.count - 1);
          continue;
        case Opcode::kEndLoop:
          if (--depth < 0) fail(w, "endloop without loop");
          continue;
        case Opcode::kLdGlobal:
        case Opcode::kLdGlobalAsync:
        case Opcode::kStGlobal: {
          bool declared = false;
          for (const auto& td : k.tensors) declared = declared || td.id == in.tensor;
          if (!declared) fail(w, "tensor " + std::to_string(in.tensor) + " is not declared");
          break;
        }
        case Opcode::kLmma:
          if (k.tiles.core < 0) fail(w, "lmma in a kernel compiled for no LUT tensor core");
          validate(in.lmma, t.cores[size_t(k.tiles.core)], w);
          break;
        case Opcode::kMma:
          validate(in.mma, w);
          break;
        case Opcode::kPrecompute:
          if (in.k_group < 1 || in.k_group > golden::kMaxK) fail(w, "precompute K must be 1..8");
          break;
        default:
          break;
      }
      if (in.frag > kMaxFragBuffers) {
        fail(w, "frag " + std::to_string(in.frag) + " (valid: 0 .. " +
                    std::to_string(kMaxFragBuffers) + ")");
      }
      if (in.stride > 0 && (in.bytes % 32 != 0 || in.bytes / 32 > 16 || in.bytes == 0 ||
                            ((in.bytes / 32) & (in.bytes / 32 - 1)) != 0)) {
        fail(w, "stride needs bytes = 32 threads x 1, 2, 4, 8 or 16 bytes (got " +
                    std::to_string(in.bytes) + ")");
      }
      check_affine(in.addr, depth, max_value, w, "addr");
      check_affine(in.m, depth, max_value, w, "m");
      check_affine(in.n, depth, max_value, w, "n");
      check_affine(in.k, depth, max_value, w, "k");
      check_affine(in.g, depth, max_value, w, "g");
    }
    if (depth != 0) fail(kw, "loop without endloop");
    if (expanded_length(k.program) > kMaxExpandedInstrs) {
      fail(kw, "loop counts overflow: the warp program expands to more than 2^40 instructions");
    }
    check_extents(k, kw);
  }
}

// ---- address checks ----------------------------------------------------------------------------
AddressCheck check_addresses(const Trace& t, const std::string& origin,
                             uint64_t max_expanded_warp_instrs) {
  AddressCheck r;
  for (const Kernel& k : t.kernels) {
    const std::string kw = origin + ": kernel " + k.name;
    r.accesses += check_extents(k, kw);
    // Stores of different warps must not overlap: expand every warp when the kernel is small.
    const double total =
        double(expanded_length(k.program)) * double(k.blocks()) * double(k.warps_per_block());
    bool stores = false;
    for (const Instr& in : k.program) stores = stores || in.op == Opcode::kStGlobal;
    if (!stores) continue;
    if (total > double(max_expanded_warp_instrs)) {
      ++r.overlap_skipped;
      continue;
    }
    ++r.overlap_kernels;
    struct Store {
      uint32_t tensor;
      int64_t begin, end, warp;
      size_t instr;
    };
    std::vector<Store> st;
    // Blocks in launch order: row = bz * grid_y + by.
    for (int64_t row = 0; row < k.grid_y * k.grid_z; ++row) {
      const int64_t by = row % k.grid_y, bz = row / k.grid_y;
      for (int64_t bx = 0; bx < k.grid_x; ++bx) {
        for (int64_t wy = 0; wy < k.warps_y; ++wy) {
          for (int64_t wx = 0; wx < k.warps_x; ++wx) {
            const int64_t warp = ((row * k.grid_x + bx) * k.warps_y + wy) * k.warps_x + wx;
            expand_warp(k, bx, by, bz, wx, wy, [&](const Instr& in, const Affine::Point& p) {
              if (in.op != Opcode::kStGlobal || in.bytes == 0) return;
              const int64_t a = in.addr.eval(p);
              st.push_back(
                  {in.tensor, a, a + int64_t(in.bytes), warp, size_t(&in - k.program.data())});
            });
          }
        }
      }
    }
    std::sort(st.begin(), st.end(), [](const Store& a, const Store& b) {
      return std::tie(a.tensor, a.begin) < std::tie(b.tensor, b.begin);
    });
    auto warp_name = [&](int64_t w) {
      const int64_t wx = w % k.warps_x, wy = w / k.warps_x % k.warps_y;
      const int64_t b = w / k.warps_per_block(), row = b / k.grid_x;
      return "block (" + std::to_string(b % k.grid_x) + "," + std::to_string(row % k.grid_y) +
             (k.grid_z > 1 ? "," + std::to_string(row / k.grid_y) : std::string()) + ") warp (" +
             std::to_string(wx) + "," + std::to_string(wy) + ")";
    };
    // Sweep: the store reaching furthest, and the furthest one of any other warp.
    const Store* far1 = nullptr;
    const Store* far2 = nullptr;
    for (size_t i = 0; i < st.size(); ++i) {
      const Store& s = st[i];
      if (far1 && far1->tensor != s.tensor) far1 = far2 = nullptr;
      const Store* clash = nullptr;
      if (far1 && far1->warp != s.warp && s.begin < far1->end) clash = far1;
      if (far2 && far1 && far1->warp == s.warp && s.begin < far2->end) clash = far2;
      if (clash) {
        fail(kw + ": instruction " + std::to_string(s.instr),
             "stores of " + warp_name(clash->warp) + " and " + warp_name(s.warp) +
                 " overlap at byte " + std::to_string(s.begin) + " of tensor " +
                 std::to_string(s.tensor));
      }
      if (!far1 || s.end > far1->end) {
        if (far1 && far1->warp != s.warp) far2 = far1;
        far1 = &s;
      } else if (s.warp != far1->warp && (!far2 || s.end > far2->end)) {
        far2 = &s;
      }
    }
  }
  return r;
}

}  // namespace ltc::traces
