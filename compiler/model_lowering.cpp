#include "compiler/model_lowering.h"

#include "compiler/gemm_lowering.h"
#include "compiler/program_builder.h"
#include "model/golden/error.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>

namespace ltc::compiler {
namespace {

using golden::DType;
using llm::Op;
using llm::OpKind;
using traces::Instr;
using traces::Opcode;

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

Instr mem(Opcode op, uint32_t tensor, uint64_t bytes, const traces::Affine& addr) {
  Instr in;
  in.op = op;
  in.tensor = tensor;
  in.bytes = bytes;
  in.addr = addr;
  return in;
}
Instr count_op(Opcode op, uint64_t n) {
  Instr in;
  in.op = op;
  in.count = n;
  return in;
}

constexpr int64_t kWarps = 4;
constexpr int64_t kWarpChunk = 256;  // elements per warp per iteration (32 threads x 8)

// Tables a fused producer emits: the consumer's precompute parameters.
struct FusedTables {
  bool on = false;
  DType act = DType::kInt8;
  int k_group = 4;
  DType table = DType::kInt16;
  int64_t table_bytes = 0;  // per table
  int bases = 0;            // multi-basis binary: one table set per basis
};

// A CUDA-core kernel over `rows` x `cols` elements, one block per row: load the inputs, do the
// per-element work, (reduce across the block for norms), then store the result or, fused,
// build and store the tables of the next mpGEMM.
traces::Kernel elementwise_kernel(const std::string& name, int64_t rows, int64_t cols, int inputs,
                                  double alu_per_elem, double sfu_per_elem, bool reduce,
                                  int64_t elem_bytes, const FusedTables& fused) {
  // Up to kWarps warps per row, each kWarpChunk elements per iteration.
  const int64_t warps = std::min<int64_t>(kWarps, ceil_div(cols, kWarpChunk));
  traces::Kernel k;
  k.name = name;
  k.grid_y = rows;
  k.warps_x = warps;
  k.regs_per_thread = 40;
  k.tiles.core = -1;
  k.tiles.block = {1, warps * kWarpChunk, 0};
  k.tiles.warp = {1, kWarpChunk, 0};
  const int64_t lg_per_chunk = kWarpChunk / fused.k_group;
  k.tensors.push_back({0, "in", uint64_t(rows * cols * elem_bytes * inputs)});
  k.tensors.push_back({1, fused.on ? "tables" : "out",
                       uint64_t(fused.on ? std::max(fused.bases, 1) * rows *
                                               ceil_div(cols, fused.k_group) * fused.table_bytes
                                         : rows * cols * elem_bytes)});
  ProgramBuilder p;
  const int64_t chunks = ceil_div(cols, warps * kWarpChunk);
  const int64_t row_bytes = cols * elem_bytes;
  const uint64_t alu = uint64_t(alu_per_elem * kWarpChunk + 0.5);
  const uint64_t sfu = uint64_t(sfu_per_elem * kWarpChunk + 0.5);
  auto load_chunk = [&](ProgramBuilder::Var ic) {
    for (int in = 0; in < inputs; ++in) {
      p.emit(mem(Opcode::kLdGlobal, 0, uint64_t(kWarpChunk * elem_bytes),
                 affine(in * rows * row_bytes, {by(row_bytes), wx(kWarpChunk * elem_bytes),
                                                iv(ic, warps * kWarpChunk * elem_bytes)})));
    }
  };
  if (reduce) {
    // Pass 1: statistics (sum of squares / mean and variance), block reduction.
    const auto ic = p.loop(uint64_t(chunks));
    load_chunk(ic);
    p.emit(count_op(Opcode::kAlu, uint64_t(2 * kWarpChunk)));
    p.end(ic);
    p.emit(mem(Opcode::kStShared, 0, 8, affine(0, {wx(8)})));
    Instr bar;
    bar.op = Opcode::kBarrier;
    p.emit(bar);
    p.emit(mem(Opcode::kLdShared, 0, uint64_t(8 * warps), affine(0, {})));
    p.emit(count_op(Opcode::kSfu, 1));  // rsqrt
  }
  const auto ic = p.loop(uint64_t(chunks));
  if (!reduce) load_chunk(ic);
  if (alu) p.emit(count_op(Opcode::kAlu, alu));
  if (sfu) p.emit(count_op(Opcode::kSfu, sfu));
  if (fused.on) {
    const int64_t row_tables = ceil_div(cols, fused.k_group) * fused.table_bytes;
    for (int j = 0; j < std::max(fused.bases, 1); ++j) {
      Instr pre;
      pre.op = Opcode::kPrecompute;
      pre.k_group = fused.k_group;
      pre.act = fused.act;
      pre.table = fused.table;
      pre.m = affine(0, {by(1)});
      pre.k = affine(0, {wx(kWarpChunk), iv(ic, warps * kWarpChunk)});
      pre.rows = 1;
      pre.cols = uint32_t(kWarpChunk);
      pre.basis = uint32_t(j);
      p.emit(pre);
      p.emit(
          mem(Opcode::kStGlobal, 1, uint64_t(lg_per_chunk * fused.table_bytes),
              affine(j * rows * row_tables, {by(row_tables), wx(lg_per_chunk * fused.table_bytes),
                                             iv(ic, warps * lg_per_chunk * fused.table_bytes)})));
    }
  } else {
    p.emit(mem(Opcode::kStGlobal, 1, uint64_t(kWarpChunk * elem_bytes),
               affine(0, {by(row_bytes), wx(kWarpChunk * elem_bytes),
                          iv(ic, warps * kWarpChunk * elem_bytes)})));
  }
  p.end(ic);
  k.program = p.take();
  return k;
}

// Flash-style attention: one block per (sequence, KV head, tile of query rows); the query rows
// of all heads sharing a KV head are stacked (GQA), 16 per warp. Loops over 64-key tiles of the
// cache: QK^T and PV on the MMA tensor cores, online softmax on the CUDA cores. Causal prefill
// runs every key tile with masking (the trace does not skip the upper triangle).
traces::Kernel attention_kernel(const std::string& name, const llm::AttentionShape& a,
                                int64_t elem_bytes) {
  constexpr int64_t kKeyTile = 64, kRowsPerWarp = 16;
  const int64_t group = a.heads / a.kv_heads;
  const int64_t qrows = a.q_len * group;
  const int64_t warps = std::min<int64_t>(kWarps, ceil_div(qrows, kRowsPerWarp));
  const int64_t block_rows = warps * kRowsPerWarp;
  const int64_t hd = a.head_dim;
  traces::Kernel k;
  k.name = name;
  k.grid_x = ceil_div(qrows, block_rows);
  k.grid_y = a.batch * a.kv_heads;
  k.warps_y = warps;
  k.regs_per_thread = 128;
  k.smem_bytes = uint64_t(2 * kKeyTile * hd * elem_bytes * 2);
  k.tiles.core = -1;
  k.tiles.block = {block_rows, kKeyTile, hd};
  k.tiles.warp = {kRowsPerWarp, kKeyTile, hd};
  k.tiles.instr = {16, 8, 16};
  const int64_t kv_head_bytes = a.kv_len * hd * elem_bytes;  // [seq][kv head][L][hd]
  const int64_t q_bytes = a.batch * a.kv_heads * qrows * hd * elem_bytes;
  k.tensors = {{0, "q", uint64_t(q_bytes)},
               {1, "k_cache", uint64_t(a.batch * a.kv_heads * kv_head_bytes)},
               {2, "v_cache", uint64_t(a.batch * a.kv_heads * kv_head_bytes)},
               {3, "out", uint64_t(q_bytes)}};
  traces::MmaOp mma;  // fp16 x fp16 -> fp32, m16n8k16
  ProgramBuilder p;
  const int64_t q_row_bytes = hd * elem_bytes;
  const auto qr = p.loop(uint64_t(kRowsPerWarp));
  p.emit(mem(Opcode::kLdGlobal, 0, uint64_t(q_row_bytes),
             affine(0, {by(qrows * q_row_bytes), bx(block_rows * q_row_bytes),
                        wy(kRowsPerWarp * q_row_bytes), iv(qr, q_row_bytes)})));
  p.end(qr);
  const auto it = p.loop(uint64_t(ceil_div(a.kv_len, kKeyTile)));
  const int64_t tile_bytes = kKeyTile * hd * elem_bytes;
  const int64_t share = tile_bytes / warps;
  for (uint32_t t : {1u, 2u}) {
    p.emit(mem(Opcode::kLdGlobalAsync, t, uint64_t(share),
               affine(0, {by(kv_head_bytes), iv(it, tile_bytes), wy(share)})));
  }
  Instr bar;
  bar.op = Opcode::kBarrier;
  p.emit(bar);
  {
    // S = Q K^T: 16 rows x 64 keys, reduced over head_dim.
    const auto ik = p.loop(uint64_t(hd / 16));
    p.emit(mem(Opcode::kLdShared, 0, uint64_t((kRowsPerWarp + kKeyTile) * 16 * elem_bytes),
               affine(0, {iv(ik, 16 * elem_bytes)})));
    const auto in = p.loop(uint64_t(kKeyTile / 8));
    Instr s;
    s.op = Opcode::kMma;
    s.mma = mma;
    s.m = affine(0, {bx(block_rows), wy(kRowsPerWarp)});
    s.n = affine(0, {iv(it, kKeyTile), iv(in, 8)});
    s.k = affine(0, {iv(ik, 16)});
    p.emit(s);
    p.end(in);
    p.end(ik);
  }
  // Online softmax: running max, exp, row sums, rescale of the output accumulators.
  p.emit(count_op(Opcode::kAlu, uint64_t(kRowsPerWarp * kKeyTile * 4 + kRowsPerWarp * hd)));
  p.emit(count_op(Opcode::kSfu, uint64_t(kRowsPerWarp * kKeyTile)));
  {
    // O += P V: 16 rows x head_dim, reduced over the 64 keys.
    const auto ik = p.loop(uint64_t(kKeyTile / 16));
    p.emit(mem(Opcode::kLdShared, 0, uint64_t(16 * hd * elem_bytes),
               affine(tile_bytes, {iv(ik, 16 * hd * elem_bytes)})));
    const auto in = p.loop(uint64_t(hd / 8));
    Instr o;
    o.op = Opcode::kMma;
    o.mma = mma;
    o.m = affine(0, {bx(block_rows), wy(kRowsPerWarp)});
    o.n = affine(0, {iv(in, 8)});
    o.k = affine(0, {iv(it, kKeyTile), iv(ik, 16)});
    p.emit(o);
    p.end(in);
    p.end(ik);
  }
  p.emit(bar);
  p.end(it);
  p.emit(count_op(Opcode::kAlu, uint64_t(kRowsPerWarp * hd)));  // divide by the row sums
  const auto orow = p.loop(uint64_t(kRowsPerWarp));
  p.emit(mem(Opcode::kStGlobal, 3, uint64_t(q_row_bytes),
             affine(0, {by(qrows * q_row_bytes), bx(block_rows * q_row_bytes),
                        wy(kRowsPerWarp * q_row_bytes), iv(orow, q_row_bytes)})));
  p.end(orow);
  k.program = p.take();
  return k;
}

class ModelLowerer {
 public:
  ModelLowerer(const llm::StepGraph& g, const hw::GpuConfig& gpu, const ModelLoweringOptions& o)
      : g_(g), gpu_(gpu), o_(o) {
    lut_ = g.step.precompute != llm::PrecomputeMode::kNone;
    elem_bytes_ = golden::dtype_bits(g.step.hidden) / 8;
  }

  traces::Trace run() {
    traces::Trace t;
    t.gpu = gpu_.name;
    if (lut_) t.cores.push_back(lut_core_spec(gpu_));
    for (const Op& op : g_.embedding) lower(t, "embedding", op, g_.embedding);
    for (int64_t l = 0; l < g_.layers; ++l) {
      for (const Op& op : g_.layer) lower(t, "L" + std::to_string(l), op, g_.layer);
    }
    for (const Op& op : g_.head) lower(t, "head", op, g_.head);
    return t;
  }

 private:
  int multi_bases() const {
    return g_.step.weights.kind == llm::WeightFormatKind::kMultiBasisBinary ? g_.step.weights.bases
                                                                            : 0;
  }

  // The precompute op fused into `producer`, if any.
  const Op* fused_precompute(const std::string& producer, const std::vector<Op>& ops) const {
    for (const Op& op : ops) {
      if (op.kind == OpKind::kTablePrecompute && op.fused_into == producer) return &op;
    }
    return nullptr;
  }

  FusedTables tables_for(const Op* pre) const {
    FusedTables f;
    if (!pre) return f;
    f.on = true;
    f.act = g_.step.acts;
    f.k_group = gpu_.lut_tensor->core.shape.k;
    f.table = golden::is_int(f.act) ? DType::kInt16 : f.act;
    const DType stored = o_.quantize_tables ? DType::kInt8 : f.table;
    f.table_bytes = (int64_t(1) << (f.k_group - 1)) * golden::dtype_bits(stored) / 8 +
                    (o_.quantize_tables ? 4 : 0);
    f.bases = multi_bases();
    return f;
  }

  void lower(traces::Trace& t, const std::string& prefix, const Op& op,
             const std::vector<Op>& ops) {
    const std::string name = prefix + "." + op.name;
    const int64_t rows = g_.step.rows();
    const llm::ModelConfig& m = g_.model;
    switch (op.kind) {
      case OpKind::kEmbedding:
        t.kernels.push_back(elementwise_kernel(name, rows, m.hidden, 1, op.flops / op.elements, 0,
                                               false, elem_bytes_, {}));
        break;
      case OpKind::kNorm: {
        const int64_t nrows = op.elements / m.hidden;
        const double per = op.flops / double(op.elements);
        t.kernels.push_back(elementwise_kernel(name, nrows, m.hidden, 1, per, 0, true, elem_bytes_,
                                               tables_for(fused_precompute(op.name, ops))));
        break;
      }
      case OpKind::kRope:
      case OpKind::kResidual:
      case OpKind::kActivation: {
        const int64_t cols = op.elements / rows;
        const int inputs = op.kind == OpKind::kResidual                                      ? 2
                           : op.kind == OpKind::kActivation && m.ffn == llm::FfnKind::kGated ? 2
                                                                                             : 1;
        const double per = op.flops / double(op.elements);
        const double sfu =
            op.kind == OpKind::kActivation ? 1.0 : (op.kind == OpKind::kRope ? 1.0 : 0.0);
        t.kernels.push_back(elementwise_kernel(name, rows, cols, inputs, per, sfu, false,
                                               elem_bytes_,
                                               tables_for(fused_precompute(op.name, ops))));
        break;
      }
      case OpKind::kTablePrecompute:
        if (!op.fused_into.empty()) break;  // done by its producer
        {
          const int64_t cols = op.read_bytes > 0 ? int64_t(op.read_bytes / elem_bytes_ / rows) : 0;
          t.kernels.push_back(lower_precompute(name, rows, cols, g_.step.acts, o_.quantize_tables,
                                               gpu_, multi_bases()));
        }
        break;
      case OpKind::kLinear:
        if (op.low_bit && lut_) {
          GemmSpec s;
          s.name = name;
          s.m = op.gemm.m;
          s.n = op.gemm.n;
          s.k = op.gemm.k;
          s.weights = g_.step.weights;
          s.act = g_.step.acts;
          s.group_size = o_.group_size;
          s.quantize_tables = o_.quantize_tables;
          s.emit_precompute = false;
          append(t, cached_lut(s));
        } else {
          // Dense, or dequantize-then-MAC for low-bit weights on a GPU without LUT cores.
          const DType a = op.low_bit && golden::is_int(g_.step.acts) ? DType::kInt8 : DType::kFp16;
          const int wbits = op.low_bit ? int(std::ceil(g_.step.weights.bits_per_weight())) : 0;
          t.kernels.push_back(cached_mma(name, 1, op.gemm.m, op.gemm.n, op.gemm.k, a, wbits));
        }
        break;
      case OpKind::kAttention:
        t.kernels.push_back(attention_kernel(name, op.attention, elem_bytes_));
        break;
    }
  }

  void append(traces::Trace& t, std::vector<traces::Kernel> ks) {
    for (auto& k : ks) t.kernels.push_back(std::move(k));
  }

  // Tile choice is the expensive part; every layer repeats the same shapes.
  std::vector<traces::Kernel> cached_lut(const GemmSpec& s) {
    const auto key = std::make_tuple(s.m, s.n, s.k);
    auto it = lut_cache_.find(key);
    if (it == lut_cache_.end()) it = lut_cache_.emplace(key, lower_lut_gemm(s, gpu_, 0)).first;
    std::vector<traces::Kernel> ks = it->second;
    for (auto& k : ks) k.name = s.name + k.name.substr(k.name.find_last_of('.'));
    return ks;
  }
  traces::Kernel cached_mma(const std::string& name, int64_t batch, int64_t m, int64_t n, int64_t k,
                            DType a, int weight_bits) {
    const auto key = std::make_tuple(m, n, k, int(a) * 16 + weight_bits);
    auto it = mma_cache_.find(key);
    if (it == mma_cache_.end()) {
      it = mma_cache_
               .emplace(key, lower_mma_gemm(name, batch, m, n, k, a, a, gpu_, nullptr, weight_bits))
               .first;
    }
    traces::Kernel kr = it->second;
    kr.name = name;
    return kr;
  }

  const llm::StepGraph& g_;
  const hw::GpuConfig& gpu_;
  const ModelLoweringOptions& o_;
  bool lut_ = false;
  int64_t elem_bytes_ = 2;
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::vector<traces::Kernel>> lut_cache_;
  std::map<std::tuple<int64_t, int64_t, int64_t, int>, traces::Kernel> mma_cache_;
};

}  // namespace

traces::Trace compile_model(const llm::ModelConfig& model, llm::StepConfig step,
                            const hw::GpuConfig& gpu, const ModelLoweringOptions& options) {
  const bool lut = gpu.has_lut_tensor() && step.weights.is_low_bit();
  step.precompute = !lut ? llm::PrecomputeMode::kNone
                         : (options.fuse_precompute ? llm::PrecomputeMode::kFused
                                                    : llm::PrecomputeMode::kSeparate);
  if (lut) step.lut_k = gpu.lut_tensor->core.shape.k;
  step.quantize_tables = options.quantize_tables;
  const llm::StepGraph g = llm::build_step_graph(model, step);
  traces::Trace t = ModelLowerer(g, gpu, options).run();
  traces::validate(t, "compile_model");
  return t;
}

TraceSummary summarize(const traces::Trace& t) {
  TraceSummary s;
  s.kernels = t.kernels.size();
  for (const auto& k : t.kernels) {
    s.static_instructions += k.program.size();
    const uint64_t warps = uint64_t(k.blocks()) * uint64_t(k.warps_per_block());
    s.warp_instructions += traces::expanded_length(k.program) * warps;
    // LMMA / MMA counts of one warp (loop multipliers), times the warps.
    uint64_t mult[traces::kMaxLoopDepth + 1] = {1, 1, 1, 1, 1, 1, 1};
    int depth = 0;
    for (const auto& in : k.program) {
      if (in.op == Opcode::kLoop) {
        mult[depth + 1] = mult[depth] * in.count;
        ++depth;
      } else if (in.op == Opcode::kEndLoop) {
        --depth;
      } else if (in.op == Opcode::kLmma) {
        s.lmmas += mult[depth] * warps;
      } else if (in.op == Opcode::kMma) {
        s.mmas += mult[depth] * warps;
      }
    }
  }
  return s;
}

}  // namespace ltc::compiler
