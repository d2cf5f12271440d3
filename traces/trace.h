// LMMA traces: what the compiler emits and the simulator executes. Format version kTraceVersion.
//
// A trace holds the tensor cores it was compiled for and a list of kernels. A kernel holds its
// grid (blocks in x, y and z), its block (warps in x, y), its resources, the tiles the scheduler
// chose, the global tensors it reads and writes, and ONE warp program parameterised by the block
// and warp coordinates (traces/isa.h): every warp of the grid runs it with its own (bx, by, wx,
// wy). Repetition is `loop N ... endloop`, never unrolled, so a whole LLM step stays a few MB while
// expand_warp() still yields each warp's exact instruction stream.
//
// Text form (`#` starts a comment; indentation is free; the example's line breaks are the format,
// so clang-format leaves it alone):
// clang-format off
//   ltc-trace 2
//   gpu a100-lut4x
//   core 0 {"design":"lut","m":2,"n":64,"k":4,"act":"int8","wbits":2,...} acts=int8,fp16
//   kernel layer0.q_proj
//     grid 8 1
//     block 4 1
//     resources smem=69632 regs=93
//     tiles core=0 block=2,1024,256 warp=2,256,256 instr=2,64,4
//     gemm path=lut batch=1 m=1 n=8192 k=8192 group=8192 wbits=2 act=int8 bases=0 salient=0
//     tensor 0 tables bytes=131072          (optional gemm line: what the kernel computes)
//     program
//       loop 32
//         ldgsts t=1 bytes=65536 addr=bx*2097152+i0*65536
//         ...
//       endloop
//     end
//   end
// clang-format on
// Binary form: "LTCT", u16 binary format 5, u16 trace version, then the same content with LEB128
// varints (signed ones zig-zag), strings as length + bytes, affines as a presence mask + varints,
// then the CRC-32 (common/hash.h) of every byte before it, u32 little-endian: a damaged file is
// refused before it is parsed. Binary files without a checksum (2 .. 4 after the magic: the trace
// version) are refused with what to do. convert: text -> binary -> text is the identity on the
// canonical text that write_text prints.
#pragma once

#include "model/golden/k_slices.h"
#include "traces/isa.h"

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ltc::traces {

// The newest version this build reads and writes; files of kMinTraceVersion .. kTraceVersion
// load. 2: commit / wait; 3: a kernel's thread-block cluster (`cluster`); 4: an alu's share on
// the INT32 lanes (`int=`); 5: a grid z (`grid X Y Z`, the affine variable bz). A trace is
// written at the oldest version that holds it (Trace::minimum_version).
inline constexpr int kTraceVersion = 5;
inline constexpr int kMinTraceVersion = 2;
// Upper bound on the instructions one warp program may expand to (loop counts multiply);
// larger programs are rejected as overflowing.
inline constexpr uint64_t kMaxExpandedInstrs = uint64_t(1) << 40;

struct TensorDecl {
  uint32_t id = 0;
  std::string name;  // role: "acts", "tables", "weights", "scales", "out", "kv", ...
  uint64_t bytes = 0;
  bool operator==(const TensorDecl& o) const {
    return id == o.id && name == o.name && bytes == o.bytes;
  }
};

// The tiles the scheduler chose (recorded for the simulator and for reports).
struct TileRecord {
  int core = -1;  // index into Trace::cores; -1: no LUT core (MMA or CUDA-core kernel)
  std::array<int64_t, 3> block{}, warp{}, instr{};
  bool operator==(const TileRecord& o) const {
    return core == o.core && block == o.block && warp == o.warp && instr == o.instr;
  }
};

// How a GEMM kernel computes: LUT tensor cores (lmma), or MAC tensor cores (mma; dense, or
// dequantize-then-MAC when wbits > 0).
enum class GemmPath : uint8_t { kLut, kMma };
std::string_view gemm_path_name(GemmPath p);  // "lut", "mma"
GemmPath parse_gemm_path(std::string_view s, const std::string& where);

// What a GEMM kernel computes, for the functional interpreter and `ltc sim --functional`.
// m == 0: not a GEMM. kMma: act is the A and B operand dtype, wbits 0 for a dense B, else the
// bits of B's integer codes (dequantized to act on the CUDA cores); batch independent GEMMs (both
// paths: a grouped GEMM, the grid's z).
// Text: `gemm path=lut|mma batch=B m= n= k= group= wbits= act= bases= salient=` (a record
// without path and batch, as version 1 wrote it, reads as path=lut batch=1). Binary: m, and when
// m > 0: path (u8: 0 lut, 1 mma), batch, n, k, group, wbits, act (u8), bases, salient.
// validate(): n, k, group, batch >= 1; lut: wbits 1..8, bases 0..8 (with bases: wbits 1 and
// batch 1), salient < group; mma: wbits 0 or 1..8, bases 0, salient 0, act an MMA operand dtype.
struct GemmRecord {
  GemmPath path = GemmPath::kLut;
  int64_t batch = 1;
  int64_t m = 0, n = 0, k = 0;
  int64_t group = 0;  // quantization group (input columns per scale)
  int wbits = 0;
  golden::DType act = golden::DType::kInt8;
  int bases = 0;        // multi-basis binary (FluxBin): sign bases, each W = 1; 0 = INT formats
  int64_t salient = 0;  // multi-basis binary: dense salient columns per group
  bool operator==(const GemmRecord& o) const {
    return path == o.path && batch == o.batch && m == o.m && n == o.n && k == o.k &&
           group == o.group && wbits == o.wbits && act == o.act && bases == o.bases &&
           salient == o.salient;
  }
};

// Sliced K. A GEMM kernel whose warp tile is shorter in K than its block tile (tiles.warp[2] <
// tiles.block[2]) splits every K tile between block.k / warp.k warps, which are the block's
// warps along y (one warp tile spans the block's M): warp wy computes chunk wy of each K tile,
// K columns [t * block.k + wy * warp.k, + warp.k), into its own accumulators, and the block adds
// the warps' partial results in wy order (golden/k_slices.h defines the sums, bit for bit).
struct Kernel;
golden::KSlices kernel_k_slices(const Kernel& k);  // one slice unless the kernel slices K

struct Kernel {
  std::string name;
  // Blocks along x, y and z (version 5: z > 1, e.g. a grouped GEMM's groups, each block row of
  // group bz at by). Launch order: id = (bz * grid_y + by) * grid_x + bx.
  int64_t grid_x = 1, grid_y = 1, grid_z = 1;
  int64_t warps_x = 1, warps_y = 1;
  uint64_t smem_bytes = 0;
  uint32_t regs_per_thread = 0;
  // Blocks per thread-block cluster, adjacent along grid x (block ids by * grid_x + bx with bx in
  // [c * cluster_x, (c + 1) * cluster_x)); they run at once on `cluster_x` SMs, and an ldgsts
  // whose address has no bx term (the tile all of them load) is read from L2 once and multicast
  // (Hopper TMA, hw::SmConfig::cluster_size). 1: no cluster. Version 3.
  int64_t cluster_x = 1;
  TileRecord tiles;
  GemmRecord gemm;
  std::vector<TensorDecl> tensors;
  std::vector<Instr> program;

  int64_t blocks() const { return grid_x * grid_y * grid_z; }
  int64_t warps_per_block() const { return warps_x * warps_y; }
  const TensorDecl* tensor(std::string_view name) const;
  bool operator==(const Kernel& o) const;
};

struct Trace {
  int version = kMinTraceVersion;  // 3 with cluster_x > 1, 4 with an alu int=, 5 with grid_z > 1
  std::string gpu;                 // name of the GPU configuration it was compiled for
  std::vector<CoreSpec> cores;
  std::vector<Kernel> kernels;
  bool operator==(const Trace& o) const;
  // The oldest format version that holds these kernels: 5 when a kernel has a grid z (or an
  // affine uses bz), 4 when an alu has an INT32 share, 3 when a kernel has a cluster, else
  // kMinTraceVersion (what a compiler writes, so traces without them stay byte-identical).
  int minimum_version() const;
};

// Structure and ISA checks: matched loops (depth <= kMaxLoopDepth, trips >= 1), affines using only
// enclosing loop counters, lmma ops the referenced core runs, tensor ids declared, expanded size
// <= kMaxExpandedInstrs, and every global access of every warp inside its declared tensor and
// every lds / sts inside the kernel's shared memory (interval arithmetic on the affines over the
// whole grid, block and loop ranges: exact, since each variable ranges over a box, and loops are
// never unrolled). Throws InputError "<origin>: kernel <name>: instruction <i>: ...".
void validate(const Trace& t, const std::string& origin);

// Padding. A tensor's `bytes` is its allocation. Kernels whose tiles do not divide their
// operands (GEMMs) declare each tensor padded to whole tiles (compiler/gemm_lowering.h: rows to
// grid_y * block m, columns to grid_x * block n, K to whole K tiles) and address the padded
// layout, so every access of every warp lies inside its tensor; padding elements hold zeros
// (inputs) or are discarded (outputs), and an lmma / mma whose k origin is >= the GEMM's K (the
// padded tail of the last K tile) is predicated off: it issues and takes its cycles but adds
// nothing. Global and shared accesses cover the bytes [addr, addr + bytes); a strided lds / sts
// (stride S) the bytes [addr, addr + 31 * S + bytes / 32).
//
// Address checks: validate()'s extent checks (counted in `accesses`), and no two warps of a
// kernel storing (stg) the same global byte, by expanding every warp of kernels with at most
// `max_expanded_warp_instrs` instructions over the whole grid (larger kernels are counted as
// skipped). Throws InputError "<origin>: kernel <name>: instruction <i>: ..." for the first
// violation.
struct AddressCheck {
  uint64_t accesses = 0;    // memory instructions whose ranges were checked
  int overlap_kernels = 0;  // kernels whose stores were checked for overlap
  int overlap_skipped = 0;  // kernels too large to expand
};
AddressCheck check_addresses(const Trace& t, const std::string& origin,
                             uint64_t max_expanded_warp_instrs = uint64_t(1) << 24);

// Text and binary I/O. Readers throw InputError naming origin and line (text) or byte offset
// (binary) and the reason; they validate() what they read.
std::string write_text(const Trace& t);
Trace read_text(std::string_view text, const std::string& origin);
std::string write_binary(const Trace& t);
Trace read_binary(std::string_view bytes, const std::string& origin);
// By content: binary if it starts with "LTCT", else text.
Trace read_trace(std::string_view content, const std::string& origin);
// A regular file of at most kMaxInputFileBytes (common/file_io.h: read_input_file).
Trace read_trace_file(const std::string& path);
// Binary when the path ends in ".ltcb", else text; written atomically (a reader never sees half).
void write_trace_file(const Trace& t, const std::string& path);

// Instructions of one warp program after loop expansion (loops counted by their bodies).
uint64_t expanded_length(const std::vector<Instr>& program);
// The sum of `weight(instr)` over one warp's executed instructions, through the loops without
// expanding them; a double, so no count overflows (an estimate of work, e.g. LMMA beats).
double expanded_sum(const std::vector<Instr>& program,
                    const std::function<double(const Instr&)>& weight);

// One warp's exact instruction stream: calls `f(instr, point)` for every executed instruction in
// order, with the point holding bx, by, bz, wx, wy and the live loop counters (evaluate affines
// with it). Loop / endloop markers are not reported. The first form is block (bx, by, 0).
template <typename F>
void expand_warp(const Kernel& k, int64_t bx, int64_t by, int64_t wx, int64_t wy, F&& f);
template <typename F>
void expand_warp(const Kernel& k, int64_t bx, int64_t by, int64_t bz, int64_t wx, int64_t wy,
                 F&& f);

// ---- implementation of the template (the program must have passed validate()) -----------------
template <typename F>
void expand_warp(const Kernel& k, int64_t bx, int64_t by, int64_t wx, int64_t wy, F&& f) {
  expand_warp(k, bx, by, 0, wx, wy, std::forward<F>(f));
}

template <typename F>
void expand_warp(const Kernel& k, int64_t bx, int64_t by, int64_t bz, int64_t wx, int64_t wy,
                 F&& f) {
  const std::vector<Instr>& prog = k.program;
  Affine::Point p;
  p.bx = bx;
  p.by = by;
  p.bz = bz;
  p.wx = wx;
  p.wy = wy;
  struct Frame {
    size_t start;
    uint64_t trip;
  };
  Frame stack[kMaxLoopDepth];
  int depth = 0;
  size_t pc = 0;
  while (pc < prog.size()) {
    const Instr& in = prog[pc];
    if (in.op == Opcode::kLoop) {
      stack[depth] = {pc, in.count};
      p.i[depth] = 0;
      ++depth;
      ++pc;
    } else if (in.op == Opcode::kEndLoop) {
      Frame& fr = stack[depth - 1];
      if (uint64_t(++p.i[depth - 1]) < fr.trip) {
        pc = fr.start + 1;
      } else {
        p.i[depth - 1] = 0;
        --depth;
        ++pc;
      }
    } else {
      f(in, static_cast<const Affine::Point&>(p));
      ++pc;
    }
  }
}

}  // namespace ltc::traces
