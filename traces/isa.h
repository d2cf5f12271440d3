// The LMMA instruction set at the level a cycle model schedules (docs/isa.md). It lives in traces/,
// the contract between compiler and simulator, so the simulator links it without the compiler.
//
// Every operand that varies between warps or iterations is an Affine expression of the block
// coordinates (bx, by, and bz in a kernel with a grid z: trace version 5), the warp coordinates in
// the block (wx, wy) and the counters of the enclosing loops (i0 outermost .. i5): the trace stays
// small and still says exactly which address or tile each warp touches in each iteration.
//
// Text syntax of one instruction (one line; fields key=value, absent fields are zero):
//   lmma.m2n64k4.i8.i2.i32.i32 m=by*32+wy*2 n=bx*1024+wx*64+i1*128 k=i0*256+i2*4
//   mma.m16n8k16.f16.f16.f32.f32 m=.. n=.. k=..
//   ldg t=1 bytes=2048 addr=bx*4096+i0*256     (global -> registers)
//   ldgsts t=1 bytes=2048 addr=...             (global -> shared, asynchronous)
//   lds bytes=512 addr=wx*512                  (shared -> registers)
//   lds bytes=512 addr=0 frag=2 stride=64      (into fragment buffer 2; threads 64 bytes apart)
//   sts bytes=512 addr=...                     (registers -> shared)
//   stg t=2 bytes=256 addr=...                 (registers -> global)
//   bar                                        (block barrier)
//   precompute.k4.i8.i16 m=.. k=.. rows=2 cols=256   (half tables on CUDA cores, t = tables out)
//   qtable count=N                             (quantize N tables to int8 + fp32 scale)
//   dequant m=.. n=.. g=.. rows=2 cols=64               (epilogue: scale, zero-point bias term)
//   dequant ... basis=1 rowscale=1                       (FluxBin: basis' row scale)
//   dequant m=.. n=.. rows=2 cols=64 salient=1          (FluxBin: the dense salient branch)
//   alu count=N / sfu count=N                  (CUDA-core FP ops / special-function ops)
//   commit                                     (close the open group of ldgsts)
//   wait n=1                                   (until <= 1 committed ldgsts group is in flight)
//   loop 20 ... endloop                        (repeat block; nests up to kMaxLoopDepth)
//
// Dependencies are implicit, through three classes of warp registers (what the simulator's
// scoreboard tracks):
//   fragments    written by ldg and lds; read by every instruction that is not a load, commit,
//                wait or bar (a load's data is consumed by the next instruction that computes or
//                stores). Loads may name a buffer (frag=F); an lmma / mma with frag=F waits only
//                for the loads into F (and unnamed ones), so fragments of the next K step can be
//                in flight while the tensor core works on the current ones.
//   accumulators one tile per (m, n) origin, read and written by lmma / mma: an lmma or mma waits
//                for an in-flight one of the same warp with the same (m, n); dequant reads all of
//                the warp's accumulators.
//   values       written by alu, sfu, precompute, qtable, dequant; read by those and by sts, stg.
// ldgsts writes shared memory asynchronously: only wait (and a bar after it) orders it; wait
// commits the open group first. bar waits for every warp of the block to arrive.
#pragma once

#include "model/golden/dtype.h"
#include "model/golden/lmma.h"
#include "model/hw/tensor_core.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ltc::traces {

inline constexpr int kMaxLoopDepth = 6;
inline constexpr uint32_t kMaxFragBuffers = 4;

// Variables an Affine may use, in this order in the binary encoding. bz (the block's grid z
// coordinate, trace version 5) comes last so that the encodings of versions 2 .. 4 stand.
enum class AffineVar : uint8_t { kBx, kBy, kWx, kWy, kI0, kI1, kI2, kI3, kI4, kI5, kBz };
inline constexpr int kAffineVars = 5 + kMaxLoopDepth;

struct Affine {
  int64_t base = 0;
  std::array<int64_t, kAffineVars> coef{};  // indexed by AffineVar

  struct Point {
    int64_t bx = 0, by = 0, wx = 0, wy = 0;
    std::array<int64_t, kMaxLoopDepth> i{};
    int64_t bz = 0;
  };
  // `depth`: only the first `depth` loop counters are read; the same value when the deeper
  // loops' coefficients are zero (loop_depth() gives the smallest such depth).
  int64_t eval(const Point& p, int depth = kMaxLoopDepth) const {
    int64_t v = base + coef[0] * p.bx + coef[1] * p.by + coef[2] * p.wx + coef[3] * p.wy +
                coef[size_t(AffineVar::kBz)] * p.bz;
    for (int d = 0; d < depth; ++d) v += coef[size_t(4 + d)] * p.i[size_t(d)];
    return v;
  }
  // 1 + the deepest loop whose counter it uses (0: none).
  int loop_depth() const {
    int n = 0;
    for (int d = 0; d < kMaxLoopDepth; ++d) {
      if (coef[size_t(4 + d)] != 0) n = d + 1;
    }
    return n;
  }
  bool is_zero() const;
  Affine& add(AffineVar v, int64_t c) {
    coef[size_t(v)] += c;
    return *this;
  }
  std::string str() const;  // "bx*4096+i0*256+8", "0" when zero
  // Parses str()'s syntax (terms var, var*c, c*var, c joined by + or -); throws InputError with
  // `where` prefixed.
  static Affine parse(std::string_view s, const std::string& where);
  bool operator==(const Affine& o) const { return base == o.base && coef == o.coef; }
};

// lmma.{M}{N}{K}.{A}{W}{Acc}{O}: A is the activation dtype the table is built from — i8 (exact
// int16 table), f16, bf16, e4m3, e5m2 (table in that dtype) — prefixed q8 when the table is
// quantized to int8 with an fp32 scale per table (q8f16: int8 LMMA, int32 accumulator);
// W is iN (N weight bit planes, one cycle each); Acc and O are i32, f32, f16 (O may be bf16).
struct LmmaOp {
  golden::LmmaShape shape{2, 64, 4};
  golden::DType act = golden::DType::kFp16;  // activation dtype the table was built from
  bool quantized_table = false;              // q8
  int wbits = 1;
  golden::DType acc = golden::DType::kFp32;
  golden::DType out = golden::DType::kFp32;

  golden::DType table() const;         // int8 (q8), int16 (i8), else act
  golden::LmmaType lmma_type() const;  // the golden model's view
  std::string name() const;            // "lmma.m2n64k4.f16.i2.f32.f32"
  static LmmaOp parse(std::string_view mnemonic, const std::string& where);
  bool operator==(const LmmaOp& o) const;
};

// mma.m16n8k16.{A}{B}{Acc}{O}: a dense MAC tensor-core instruction (attention, fp16 GEMMs).
struct MmaOp {
  golden::LmmaShape shape{16, 8, 16};
  golden::DType a = golden::DType::kFp16, b = golden::DType::kFp16;
  golden::DType acc = golden::DType::kFp32, out = golden::DType::kFp32;
  std::string name() const;
  static MmaOp parse(std::string_view mnemonic, const std::string& where);
  bool operator==(const MmaOp& o) const;
};

// A tensor core the trace was compiled for: the design point plus the activation dtypes its
// tables may come from (a LUT core builds tables from several formats).
struct CoreSpec {
  hw::TensorCoreConfig config;
  std::vector<golden::DType> acts;  // empty: only config.act
  bool supports_act(golden::DType a) const;
};

// An lmma shape is a x b tiles of the core: m = a * core.m, n = b * core.n (a, b >= 1),
// k = core.k. It issues to one tensor core and occupies it for
// wbits * ceil(a * b / tiles_per_tensor_core) cycles (hw::lmma_issue_cycles).
// Throws InputError "<where>: lmma shape m3n64k4 is not supported by tensor core m2n64k4 (valid:
// ...)" etc.
void validate(const LmmaOp& op, const CoreSpec& core, const std::string& where);
void validate(const MmaOp& op, const std::string& where);

enum class Opcode : uint8_t {
  kLdGlobal = 1,   // ldg
  kLdGlobalAsync,  // ldgsts
  kLdShared,       // lds
  kStShared,       // sts
  kStGlobal,       // stg
  kBarrier,        // bar
  kPrecompute,     // precompute.k{K}.{act}.{table}
  kQuantTable,     // qtable
  kLmma,           // lmma.*
  kMma,            // mma.*
  kDequant,        // dequant
  kAlu,            // alu
  kSfu,            // sfu
  kLoop,           // loop N
  kEndLoop,        // endloop
  kCommit,         // commit: close the warp's open group of ldgsts (cp.async.commit_group)
  kWait,           // wait n=N: until at most N committed ldgsts groups are in flight
};
inline constexpr int kOpcodeCount = 17;
std::string_view opcode_name(Opcode op);  // the mnemonic stem: "ldg", "lmma", ...

struct Instr {
  Opcode op = Opcode::kBarrier;
  // Memory: tensor id (global), bytes per warp, byte address (global: within the tensor).
  uint32_t tensor = 0;
  uint64_t bytes = 0;
  Affine addr;
  // Compute: tile origin in elements (lmma/mma: output row m, column n, reduction k;
  // precompute: activation row m, column k; dequant: m, n and quantization group g).
  Affine m, n, k, g;
  uint32_t rows = 0, cols = 0;  // precompute / dequant extents
  uint32_t basis = 0;           // multi-basis binary: which basis' table / signs
  bool row_scale = false;       // dequant: FluxBin row scales of basis `basis`
  bool salient = false;         // dequant: add the dense salient-column branch (FluxBin)
  LmmaOp lmma;
  MmaOp mma;
  int k_group = 4;                              // precompute: activations per table
  golden::DType act = golden::DType::kInt8;     // precompute: activation dtype
  golden::DType table = golden::DType::kInt16;  // precompute: table dtype
  uint64_t count = 0;  // alu/sfu ops, qtable tables, loop trip count, wait: groups left in flight
  // alu: how many of `count` run on the INT32 lanes (shifts, masks, integer adds), the rest on
  // the FP32 lanes (GpuConfig::cuda_core_cycles); trace version 4 (`int=`)
  uint64_t int_ops = 0;
  // Fragment buffer (1..kMaxFragBuffers) an ldg / lds writes or an lmma / mma reads; 0: none
  // named (a reader then waits for every outstanding load). Lets a kernel load the next K
  // step's fragments while computing on the current ones (register double buffering).
  uint32_t frag = 0;
  // lds / sts: bytes between consecutive threads' accesses (each thread moves bytes / 32);
  // 0: the warp's bytes are contiguous. Sets the bank conflicts of the access.
  uint32_t stride = 0;

  // CUDA-core operations this instruction costs per warp (precompute: one add per entry).
  uint64_t cuda_ops() const;
  std::string str() const;  // one text line, no indentation
  bool operator==(const Instr& o) const;
};

// Parses one text line (no comment, trimmed); `where` is "file:line" for errors.
Instr parse_instr(std::string_view line, const std::string& where);

}  // namespace ltc::traces
