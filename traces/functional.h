// Functional semantics of trace instructions: what a GEMM kernel computes on real data when its
// warps execute their instruction streams. It lives in traces/ (beside the format it interprets)
// so that both the compiler's interpreter (program order, warp by warp between barriers) and the
// cycle-level simulator (`ltc sim --functional`: each warp instruction when it issues, warps
// interleaved) drive the same code and get the same bits.
//
// A GemmExecutor holds the memory state of one GEMM (a kernel with a GemmRecord, plus the table
// precompute kernels right before it: a LUT GEMM's, and of a batched LUT GEMM only those over the
// same batch, grid z; a fused producer that gathers rows into expert order, such as a MoE
// dispatch, counts as a producer outside the GEMM whose tables are built from the activations):
// half tables, packed weights, accumulators, outputs. Every
// executed instruction goes through step(); instructions that move data (loads, stores, barriers,
// alu, ...) are timing only and change no state here. What each computing instruction means:
//
//  LUT path (GemmRecord::path == kLut; golden::lut_gemm is the reference, bit for bit):
//   precompute  half tables of row m (of the stacked M, as the mma's below: a batch's GEMMs one
//               after another, each padded to the GEMM kernel's block M; padding rows are
//               skipped), columns [k, k + cols) (one per LUT group), built by
//               golden::precompute_half_table from the activations (multi-basis: column-scaled,
//               salient columns zero). A table may be built once, before any lmma reads it.
//   lmma        shape a*core.m x b*core.n x core.k at origin (m, n, k): the a*b core-tile LMMAs
//               on its sub-blocks. Each output element's accumulator gets the golden::lmma chain
//               of its row's table and its column's packed planes (traces/packing.h), planes
//               LSB first; successive lmmas of one output run its K groups ascending (per K
//               slice in a sliced-K kernel, trace.h: each slice's accumulators are its own). q8 ops
//               quantize the table (int8 LMMA from zero, then acc += fp32(i) * scale).
//               k >= K: predicated off (the K padding of the last tile). A batch (record batch >
//               1): rows stacked as the mma's below, GEMM b's weights the rows [b * N, (b + 1) *
//               N) of the weight matrix (batch*N x K); an instruction stays inside one GEMM.
//   dequant     after all columns of quantization group g: y += s_g * ((0.5 S + bias A_g) - z_g
//               A_g) (multi-basis: y += rowscale * S), accumulator reset; salient=1 adds the
//               FluxBin dense branch after every group of every basis. In a sliced-K kernel S
//               is every slice's accumulator added in slice order, and any one warp may run an
//               output's epilogue (the compiler shares the tile out among the slices).
//  MMA path (kMma; golden::mac_gemm is the reference, bit for bit):
//   mma         shape m16n8k16 (int8: m16n8k32) at origin (m, n, k): acc[m,n] = golden::mac_dot
//               of the K chunk [k, k + shape.k) with C = acc (operands converted exactly to the
//               instruction's A/B dtypes; the K tail zero-padded; k >= K predicated off).
//               A = acts; B = dense values, or (wbits > 0) codes dequantized to the act dtype on
//               the CUDA cores (golden::dequantize_weights: encode(act, scale * (q - zero))).
//               Batched GEMMs stack the batches along M, each padded to a multiple of the
//               kernel's block M (tiles.block[0]): trace row r is row r % Mp of batch r / Mp,
//               Mp = ceil(M / block_m) * block_m; rows >= M of a slice are padding.
//   output      convert(acc -> out): fp16 for float activations (the 2-byte stg of the
//               compiler's MMA kernels), int32 for int8 (acc int32, stored as is); a sliced-K
//               kernel first adds its slices' accumulators in slice order (golden/mac.h).
//
// Rules checked while stepping (std::runtime_error "interpreter: kernel K block (bx,by) warp
// (wx,wy): <instr>: <why>"): each table precomputed once and before it is read, each output
// element accumulated by one warp per K slice and its epilogue run by one warp, each K element
// consumed exactly once per output (and per basis), each quantization group dequantized once, after
// all its columns, groups ascending. result() checks that every output consumed all of K and had
// all its epilogues.
//
// Driving it (any order that keeps each warp's own program order and runs kernels in order):
//   GemmExecutor ex(trace, gemm_kernel, ops);
//   for (size_t k = ex.first_kernel(); k <= ex.gemm_kernel(); ++k) {
//     ex.begin_kernel(k);
//     for every warp instruction `in` as it executes, with `p` the point of its warp and loop
//     counters (expand_warp / WarpStream): ex.step(in, p, warp_id)   // warp_id unique per kernel
//   }
//   std::vector<double> y = ex.result();
#pragma once

#include "model/golden/dtype.h"
#include "model/golden/weights.h"
#include "traces/packing.h"
#include "traces/trace.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ltc::traces {

// The operands of one GEMM record.
struct GemmOperands {
  golden::DType act = golden::DType::kInt8;
  int64_t m = 0;               // rows of one GEMM (the record's m)
  int64_t batch = 1;           // independent GEMMs (the record's batch)
  std::vector<uint32_t> acts;  // batch*m x K raw activations in `act`, row-major (A)
  // kLut, INT formats (bases == 0): the batch*N x K weights. kMma, wbits > 0: batch*N x K unsigned
  // codes of wbits bits with per-(row, group) scales (fp16 values) and zero points.
  golden::QuantizedWeights weights;
  golden::MultiBasisBinaryWeights multi_basis;  // kLut, FluxBin (bases > 0)
  std::vector<uint32_t> b;                      // kMma, wbits == 0: batch*N x K raw values in act
};

struct ExecStats {
  uint64_t kernels = 0, warps = 0, instructions = 0;
  uint64_t lmmas = 0, mmas = 0, tables = 0, dequants = 0;
};

// The dtype an MMA GEMM's accumulators use (int32 for int8 activations, else fp32) and the dtype
// its outputs are stored in (int32 for int8, else fp16).
golden::DType mma_acc_dtype(golden::DType act);
golden::DType mma_out_dtype(golden::DType act);

// One LMMA instruction (a x b core tiles) as a tensor core sees it, for a unit that computes it in
// place of the golden model (`ltc sim --tc rtl`: the verilated tile). Rows past the GEMM's M are
// zero padding (their outputs are dropped).
struct LmmaInstance {
  golden::LmmaShape shape;  // the instruction's: a*core.m x b*core.n x core.k
  golden::LmmaType type;    // q8: int8 table, int32 acc and out (the scale is applied after)
  golden::DType act = golden::DType::kInt8;  // dtype of `acts`
  std::vector<uint32_t> half_tables;         // shape.m * 2^(K-1), row-major (table dtype)
  std::vector<uint32_t> acts;   // shape.m * K: the activations the tables were built from
  std::vector<uint8_t> planes;  // wbits * shape.n: transformed K-bit patterns, plane-major
  std::vector<uint32_t> c;      // shape.m * shape.n accumulators (acc dtype)
};

class LmmaUnit {
 public:
  virtual ~LmmaUnit() = default;
  // O (shape.m * shape.n, out dtype) of one LMMA instruction; must equal golden::lmma bit for bit
  // for the GEMM to check.
  virtual std::vector<uint32_t> lmma(const LmmaInstance& l) = 0;
};

class GemmExecutor {
 public:
  // `gemm_kernel` indexes a kernel of `trace` with a GemmRecord (m > 0); `trace` must outlive
  // the executor (it is read, not copied). Throws InputError when the operands do not match the
  // record or the kernel is not a GEMM.
  // `upstream_tables`: tables the GEMM reads without a precompute come from a producer outside
  // the executed kernels (a fused norm in a model trace) and are built from the activations.
  GemmExecutor(const Trace& trace, size_t gemm_kernel, GemmOperands ops,
               bool upstream_tables = false);
  ~GemmExecutor();
  GemmExecutor(GemmExecutor&&) noexcept;
  GemmExecutor& operator=(GemmExecutor&&) noexcept;

  // The kernels whose instructions belong to this GEMM: the kernels without a GemmRecord right
  // before gemm_kernel() that precompute tables (compile_gemm's <name>.precompute), then the GEMM.
  size_t first_kernel() const;
  size_t gemm_kernel() const;
  bool covers(size_t kernel) const { return kernel >= first_kernel() && kernel <= gemm_kernel(); }

  // Kernel `kernel` (covered) starts: the following steps are its warps' instructions.
  void begin_kernel(size_t kernel);
  // One executed instruction of warp `warp_id` (any id unique within the kernel) at point `p`
  // (block and warp coordinates, loop counters). Throws std::runtime_error on a broken rule.
  void step(const Instr& in, const Affine::Point& p, int64_t warp_id);
  // Y (batch*m x n, row-major) after every covered kernel ran; throws std::runtime_error naming
  // the first output that missed part of K or an epilogue.
  std::vector<double> result() const;

  const ExecStats& stats() const;
  ExecStats& stats();  // drivers add what only they see (warps)
  // LMMA instructions go to `unit` (not owned; null: golden::lmma) instead of the golden model.
  void set_lmma_unit(LmmaUnit* unit);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// The trace's kernels with a GemmRecord (m > 0), in order.
std::vector<size_t> gemm_kernels(const Trace& trace);

// Runs the covered kernels of `gemm_kernel` in program order, warp by warp (the interpreter).
std::vector<double> execute_gemm(const Trace& trace, size_t gemm_kernel, const GemmOperands& ops,
                                 ExecStats* stats = nullptr, bool upstream_tables = false);

// Random operands for a GEMM record: activations uniform over int8 or N(0,1) rounded to the float
// dtype; LUT weights N(0,1) quantized (binary for 1 bit, signed INTn otherwise, or multi-basis)
// with the record's group; MMA B dense N(0,1) in the act dtype, or (wbits > 0) unsigned codes
// with min-max scales rounded to fp16 and integer zero points.
GemmOperands random_gemm_operands(const GemmRecord& g, uint32_t seed);

// The golden reference of a GEMM record on these operands: golden::lut_gemm (LUT; `k_group` the
// core's K, `quantized_tables` for q8) or golden::mac_gemm of A and the (dequantized) B, one batch
// at a time, converted to mma_out_dtype (MMA; `k_group` is the mma's K).
// A sliced-K kernel's reference adds its slices' partial sums in slice order (kernel_k_slices).
std::vector<double> reference_gemm(const GemmRecord& g, const GemmOperands& ops, int k_group,
                                   bool quantized_tables, const golden::KSlices& slices = {});

struct GemmCheck {
  uint64_t outputs = 0;
  uint64_t mismatches = 0;  // outputs whose bits differ from the golden reference
  double max_abs_diff = 0;
  ExecStats stats;
};
// Compares y with the reference bit for bit.
GemmCheck compare_gemm(const std::vector<double>& y, const std::vector<double>& ref);

// Runs the trace's one GEMM kernel (with its precompute kernels) on random_gemm_operands(seed) and
// compares with reference_gemm. Tables come from the trace's precompute, or upstream if it has
// none. Throws InputError when the trace has no GEMM kernel or several.
GemmCheck check_gemm_trace(const Trace& trace, uint32_t seed);

struct KernelCheck {
  std::string kernel;
  bool skipped = false;
  GemmCheck check;
};

// What `ltc sim --functional` needs for a whole trace: every GEMM kernel executed on
// random_gemm_operands(seed) while the simulator runs it, and checked against the golden model
// when it ends. Kernels run in order, so one GemmExecutor lives at a time. Per kernel:
//   begin_kernel(k); step(in, p, warp_id) for each of its executed warp instructions, any order
//   that keeps each warp's program order; then finish() after the last kernel.
// GEMMs of more than `max_macs` batch*M*N*K (and kernels outside any GEMM) only cost a branch.
// A GEMM kernel begun without its precompute kernels (`ltc sim --kernel`) reads upstream tables.
class TraceExecutor {
 public:
  TraceExecutor(const Trace& trace, uint32_t seed, double max_macs = 5e7);
  ~TraceExecutor();
  // Every GEMM's LMMA instructions computed by `unit` (GemmExecutor::set_lmma_unit).
  void set_lmma_unit(LmmaUnit* unit) { unit_ = unit; }
  void begin_kernel(size_t kernel);
  void step(const Instr& in, const Affine::Point& p, int64_t warp_id) {
    if (active_) active_->step(in, p, warp_id);
  }
  // One entry per GEMM kernel, in trace order (skipped ones marked); throws like result().
  std::vector<KernelCheck> finish();

 private:
  void close();
  const Trace& trace_;
  uint32_t seed_;
  double max_macs_;
  std::unique_ptr<GemmExecutor> active_;
  LmmaUnit* unit_ = nullptr;
  GemmOperands active_ops_;
  std::vector<KernelCheck> checks_;
};

// Every distinct GEMM kernel of a (model) trace checked on its own, with upstream tables; kernels
// of more than `max_macs` batch*M*N*K are skipped. `progress`, when set, is called after each
// one with the check, its index and the number of distinct GEMMs.
using GemmProgress = std::function<void(const KernelCheck&, size_t index, size_t total)>;
std::vector<KernelCheck> check_trace_gemms(const Trace& trace, uint32_t seed, double max_macs = 5e7,
                                           const GemmProgress& progress = {});

}  // namespace ltc::traces
