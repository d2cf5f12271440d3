// A whole model step lowered to a trace describes the same step as the step graph the roofline
// costs: every graph op has its kernels ("<prefix>.<op>" or "<prefix>.<op>.<part>"), and the
// kernels of an op move the op's bytes (unique bytes touched per tensor, the DRAM traffic of a
// kernel whose re-reads hit L2) and do its work. Attention: split-KV decode fills the GPU, causal
// prefill runs exactly the key tiles on or below the diagonal. Every access stays inside its
// tensor and no two warps store the same bytes.
#include "compiler/model_lowering.h"
#include "common/error.h"
#include "model/hw/gpu.h"
#include "model/llm/graph.h"
#include "model/llm/model_config.h"
#include "model/roofline/cost.h"
#include "traces/trace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace ltc::compiler {
namespace {

using traces::Kernel;
using traces::Opcode;
using traces::Trace;

const std::string kTiny = std::string(LTC_SOURCE_DIR) + "/traces/examples/tiny-llama.config.json";
const std::string kTinyMoe = std::string(LTC_SOURCE_DIR) + "/traces/examples/tiny-moe.config.json";

struct Step {
  llm::ModelConfig model;
  llm::StepConfig step;
  hw::GpuConfig gpu;
};

Step make(const std::string& model, bool decode, int64_t batch, int64_t len, const std::string& gpu,
          const char* weights = "fp16", golden::DType acts = golden::DType::kFp16) {
  Step s{llm::load_model(model),
         decode ? llm::StepConfig::decode(batch, len) : llm::StepConfig::prefill(batch, len),
         hw::load_gpu(gpu)};
  s.step.weights = llm::parse_weight_format(weights);
  s.step.acts = acts;
  return s;
}

// The step graph compile_model lowers (same precompute choice).
llm::StepGraph graph_of(const Step& s) {
  llm::StepConfig step = s.step;
  const bool lut = s.gpu.has_lut_tensor() && step.weights.is_low_bit();
  step.precompute = lut ? llm::PrecomputeMode::kFused : llm::PrecomputeMode::kNone;
  if (lut) step.lut_k = s.gpu.lut_tensor->core.shape.k;
  return llm::build_step_graph(s.model, step);
}

// The op a kernel belongs to: "L3.attention.combine" -> ("L3", "attention").
std::pair<std::string, std::string> op_of(const std::string& kernel, const llm::StepGraph& g) {
  const size_t dot = kernel.find('.');
  const std::string prefix = kernel.substr(0, dot);
  std::string rest = kernel.substr(dot + 1);
  while (!g.find(rest) && rest.find('.') != std::string::npos)
    rest = rest.substr(0, rest.rfind('.'));
  return {prefix, rest};
}

struct Interval {
  uint64_t lo, hi;
  int64_t warp;
};

// Split-KV partials are written and read back at once (a few hundred KB, L2-resident): not DRAM
// traffic, counted apart.
struct KernelTraffic {
  uint64_t read = 0, written = 0;  // unique bytes, summed over tensors
  uint64_t partials = 0;           // of which through the "partials" tensor
  uint64_t mmas = 0, cuda_ops = 0;
  std::vector<std::string> errors;
};

uint64_t union_bytes(std::vector<Interval>& v) {
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.lo < b.lo; });
  uint64_t total = 0, lo = 0, hi = 0;
  bool open = false;
  for (const auto& i : v) {
    if (open && i.lo <= hi) {
      hi = std::max(hi, i.hi);
      continue;
    }
    if (open) total += hi - lo;
    lo = i.lo;
    hi = i.hi;
    open = true;
  }
  if (open) total += hi - lo;
  return total;
}

// Expands every warp: unique bytes read and written, bounds and store-overlap errors.
KernelTraffic traffic(const Kernel& k) {
  KernelTraffic t;
  std::map<uint32_t, std::vector<Interval>> reads, writes;
  int64_t warp_id = 0;
  for (int64_t b = 0; b < k.blocks(); ++b) {
    const int64_t bx = b % k.grid_x, by = b / k.grid_x % k.grid_y, bz = b / (k.grid_x * k.grid_y);
    {
      for (int64_t wy = 0; wy < k.warps_y; ++wy) {
        for (int64_t wx = 0; wx < k.warps_x; ++wx, ++warp_id) {
          traces::expand_warp(k, bx, by, bz, wx, wy, [&](const traces::Instr& in, const auto& pt) {
            if (in.op == Opcode::kMma) ++t.mmas;
            t.cuda_ops += in.cuda_ops();
            const bool load = in.op == Opcode::kLdGlobal || in.op == Opcode::kLdGlobalAsync;
            const bool store = in.op == Opcode::kStGlobal;
            if (!load && !store) return;
            const int64_t a = in.addr.eval(pt);
            const auto* decl = [&]() -> const traces::TensorDecl* {
              for (const auto& d : k.tensors) {
                if (d.id == in.tensor) return &d;
              }
              return nullptr;
            }();
            if (!decl || a < 0 || uint64_t(a) + in.bytes > decl->bytes) {
              if (t.errors.size() < 5) {
                t.errors.push_back(k.name + ": " + in.str() + " at " + std::to_string(a) +
                                   " outside tensor of " + std::to_string(decl ? decl->bytes : 0) +
                                   " bytes");
              }
              return;
            }
            (store ? writes : reads)[in.tensor].push_back(
                {uint64_t(a), uint64_t(a) + in.bytes, warp_id});
          });
        }
      }
    }
  }
  auto is_partials = [&](uint32_t id) {
    const traces::TensorDecl* d = nullptr;
    for (const auto& x : k.tensors) {
      if (x.id == id) d = &x;
    }
    return d && d->name == "partials";
  };
  for (auto& [id, v] : reads) {
    const uint64_t b = union_bytes(v);
    t.read += b;
    if (is_partials(id)) t.partials += b;
  }
  for (auto& [id, v] : writes) {
    // After sorting by start: a store beginning before the furthest end so far overlaps it.
    std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.lo < b.lo; });
    uint64_t far = 0;
    int64_t far_warp = -1;
    for (const auto& i : v) {
      if (far_warp >= 0 && i.lo < far && i.warp != far_warp && t.errors.size() < 5) {
        t.errors.push_back(k.name + ": stores of warps " + std::to_string(far_warp) + " and " +
                           std::to_string(i.warp) + " overlap at byte " + std::to_string(i.lo) +
                           " of tensor " + std::to_string(id));
      }
      if (i.hi > far) {
        far = i.hi;
        far_warp = i.warp;
      }
    }
    const uint64_t b = union_bytes(v);
    t.written += b;
    if (is_partials(id)) t.partials += b;
  }
  return t;
}

struct OpTraffic {
  uint64_t bytes = 0, partials = 0, mmas = 0, cuda_ops = 0;
  int kernels = 0;
};

// Per op of layer 0 (and the embedding and head): the traffic of its kernels.
std::map<std::string, OpTraffic> op_traffic(const Trace& t, const llm::StepGraph& g,
                                            std::vector<std::string>* errors) {
  std::map<std::string, OpTraffic> ops;
  for (const auto& k : t.kernels) {
    const auto [prefix, op] = op_of(k.name, g);
    if (prefix != "L0" && prefix != "embedding" && prefix != "head") continue;
    const KernelTraffic kt = traffic(k);
    OpTraffic& o = ops[prefix == "L0" ? op : prefix + "." + op];
    o.bytes += kt.read + kt.written - kt.partials;
    o.partials += kt.partials;
    o.mmas += kt.mmas;
    o.cuda_ops += kt.cuda_ops;
    ++o.kernels;
    if (errors) errors->insert(errors->end(), kt.errors.begin(), kt.errors.end());
  }
  return ops;
}

// The graph op of a key of op_traffic: layer 0's ops (its own kind: DeepSeek's first layer is
// dense), else the embedding's and the head's.
const llm::Op& graph_op(const llm::StepGraph& g, const std::string& key) {
  const size_t dot = key.find('.');
  const std::string name = dot == std::string::npos ? key : key.substr(dot + 1);
  const llm::Op* op = nullptr;
  if (dot == std::string::npos) {
    for (const auto& x : g.ops_of_layer(0)) {
      if (x.name == name) op = &x;
    }
  } else {
    op = g.find(name);
  }
  EXPECT_NE(op, nullptr) << key;
  return *op;
}

// The graph's bytes of an op's kernels: its own, plus the tables of a precompute fused into it
// (the graph books them on the precompute op, the trace's producer kernel stores them).
double graph_bytes(const llm::StepGraph& g, const llm::Op& op) {
  double b = op.bytes();
  for (const auto* list : {&g.embedding, &g.ops_of_layer(0), &g.head}) {
    for (const auto& x : *list) {
      if (x.fused_into == op.name) b += x.bytes();
    }
  }
  return b;
}

bool cuda_core_op(const llm::Op& op) {
  return op.kind == llm::OpKind::kNorm || op.kind == llm::OpKind::kResidual ||
         op.kind == llm::OpKind::kActivation || op.kind == llm::OpKind::kRope ||
         op.kind == llm::OpKind::kEmbedding;
}

TEST(ModelLowering, KernelNamesAreGraphOpsWithOptionalParts) {
  for (const Step& s : {make(kTiny, true, 2, 100, "a100-lut4x", "int2", golden::DType::kInt8),
                        make(kTiny, false, 1, 64, "a100"), make(kTiny, true, 3, 40, "h200")}) {
    const llm::StepGraph g = graph_of(s);
    const Trace t = compile_model(s.model, s.step, s.gpu);
    std::map<std::string, int> seen;
    for (const auto& k : t.kernels) {
      const auto [prefix, op] = op_of(k.name, g);
      ASSERT_NE(g.find(op), nullptr) << k.name << " names no graph op";
      if (prefix == "L0") ++seen[op];
    }
    for (const auto& op : g.layer) {
      // A launch group's members run in its first op's GEMM (llm::Op::launch_with).
      if (op.fused_into.empty() && op.launch_with.empty()) {
        EXPECT_GT(seen[op.name], 0) << op.name << " has no kernel";
      }
      if (!op.launch_with.empty()) {
        EXPECT_EQ(seen[op.name], 0) << op.name << " runs alone";
      }
    }
  }
}

// The graph's kernel list under the compiled plan (llm::KernelPlan) is what the compiler
// emits: per op of a layer, as many kernels as Op::launches, on LUT and MAC GPUs, decode and
// prefill.
TEST(ModelLowering, KernelsPerOpAreTheCompiledPlansLaunches) {
  for (const Step& s :
       {make(kTiny, true, 2, 100, "a100-lut4x", "int2", golden::DType::kInt8),
        make(kTiny, false, 1, 64, "a100"), make("llama2-7b", true, 3, 40, "h200"),
        make("llama2-7b", false, 1, 128, "a100-lut4x", "int2", golden::DType::kInt8),
        make("deepseek-v2-lite", true, 2, 500, "h200"),
        make("deepseek-v2-lite", false, 1, 128, "a100-lut4x", "int2", golden::DType::kInt8)}) {
    llm::StepGraph g = graph_of(s);
    const Trace t = compile_model(s.model, s.step, s.gpu);
    llm::StepConfig compiled = g.step;
    compiled.kernels = llm::KernelPlan::kCompiled;
    g = llm::build_step_graph(s.model, compiled);
    std::map<std::string, int> kernels;
    for (const auto& k : t.kernels) {
      const auto [prefix, op] = op_of(k.name, g);
      if (prefix == "L0") ++kernels[op];
    }
    bool combine = false;  // a split-KV decode's combine, which the graph leaves to the split
    for (const auto& k : t.kernels) combine = combine || k.name == "L0.attention.combine";
    for (const auto& op : g.ops_of_layer(0)) {
      const int extra = op.kind == llm::OpKind::kAttention && combine ? 1 : 0;
      EXPECT_EQ(kernels[op.name], op.launches + extra)
          << s.model.name << " " << llm::phase_name(s.step.phase) << " " << op.name;
    }
  }
}

// The compiler launches what the roofline costs as one launch (the graph's one kernel list):
// QKV and gate+up are one GEMM each, N concatenated.
TEST(ModelLowering, LaunchGroupsAreOneGemmWithTheirMembersN) {
  const Step s = make(kTiny, true, 2, 100, "a100-lut4x", "int2", golden::DType::kInt8);
  const llm::StepGraph g = graph_of(s);
  const Trace t = compile_model(s.model, s.step, s.gpu);
  int groups = 0;
  for (const auto& op : g.layer) {
    if (op.kind != llm::OpKind::kLinear || !op.launch_with.empty()) continue;
    int64_t n = op.gemm.n;
    for (const auto& o : g.layer) n += o.launch_with == op.name ? o.gemm.n : 0;
    groups += n > op.gemm.n ? 1 : 0;
    bool found = false;
    for (const auto& k : t.kernels) {
      if (k.gemm.m > 0 && op_of(k.name, g).second == op.name && k.name.rfind("L0.", 0) == 0) {
        EXPECT_EQ(k.gemm.n, n) << k.name;
        EXPECT_EQ(k.gemm.k, op.gemm.k) << k.name;
        found = true;
      }
    }
    EXPECT_TRUE(found) << op.name;
  }
  EXPECT_EQ(groups, 2);  // QKV, gate+up
}

// One cost per kernel: the roofline costs each GEMM of the compiled plan as the kernel the
// compiler emits for it (model/roofline/cost.cpp): the same block tile and grid, on every path
// (LUT, dequantize-then-MAC, dense MMA; the LUT GPU's dense LM head), decode and prefill, and
// the grouped expert GEMMs of MoE steps (one kernel, the experts its grid z; LUT or MMA).
TEST(ModelLowering, RooflineCostsTheCompiledGemmKernels) {
  for (const Step& s :
       {make("llama2-7b", true, 1, 128, "a100", "int4"), make("llama2-7b", true, 16, 128, "a100"),
        make("llama2-7b", false, 1, 256, "h200"),
        make("llama2-7b", true, 1, 128, "a100-lut4x", "int2", golden::DType::kInt8),
        make("llama2-7b", false, 1, 256, "a100-lut4x", "int1"),
        make("qwen3-30b-a3b", false, 2, 256, "h200"), make("mixtral-8x7b", true, 16, 512, "h200"),
        make(kTinyMoe, false, 2, 64, "a100", "int4"),
        make("mixtral-8x7b", true, 16, 512, "a100-lut4x", "int2", golden::DType::kInt8),
        make(kTinyMoe, false, 2, 64, "a100-lut8x", "int4", golden::DType::kFp16)}) {
    llm::StepConfig step = graph_of(s).step;
    step.kernels = llm::KernelPlan::kCompiled;
    const llm::StepGraph g = llm::build_step_graph(s.model, step);
    const roofline::StepEstimate e = roofline::estimate_step(roofline::Machine(s.gpu), g);
    const Trace t = compile_model(s.model, s.step, s.gpu);
    int gemms = 0, grouped = 0;
    for (const auto& k : t.kernels) {
      if (k.gemm.m == 0) continue;
      const auto [prefix, op] = op_of(k.name, g);
      const std::vector<roofline::OpCost>* costs = prefix == "L0"     ? &e.layer
                                                   : prefix == "head" ? &e.head
                                                                      : nullptr;
      if (costs == nullptr) continue;
      const std::string what =
          s.gpu.name + " " + std::string(llm::phase_name(s.step.phase)) + " " + k.name;
      const roofline::OpCost* c = nullptr;
      for (const auto& x : *costs) c = x.name == op ? &x : c;
      ASSERT_NE(c, nullptr) << what;
      EXPECT_EQ(c->tile.tm, k.tiles.block[0]) << what;
      EXPECT_EQ(c->tile.tn, k.tiles.block[1]) << what;
      EXPECT_EQ(c->tile.tiles, k.blocks()) << what;
      EXPECT_EQ(c->kernels, 1) << what;
      if (k.gemm.batch > 1) {
        EXPECT_EQ(k.grid_z, k.gemm.batch) << what;
        ++grouped;
      }
      ++gemms;
    }
    EXPECT_GE(gemms, 4) << s.gpu.name;  // QKV, o_proj, gate+up, down_proj (+ the LM head)
    EXPECT_EQ(grouped, s.model.is_moe() ? 2 : 0) << s.model.name;  // the experts' gate+up, down
  }
}

// Decode and prefill, tiny and llama2-7b, LUT and MAC GPUs: the CUDA-core ops and attention move
// the graph's bytes within 1% (prefill attention: its padding to whole tiles, none at S = 512)
// and do its CUDA-core work (alu, sfu, table precompute) within 6% (the norms' block reductions
// are extra).
TEST(ModelLowering, EveryOpMovesTheGraphsBytes) {
  const std::vector<Step> steps = {
      make(kTiny, true, 2, 100, "a100-lut4x", "int2", golden::DType::kInt8),
      make(kTiny, false, 2, 128, "a100"), make("llama2-7b", true, 1, 4096, "h200"),
      make("llama2-7b", false, 1, 512, "h200"),
      make("llama2-70b", true, 4, 1000, "a100-lut4x", "int2", golden::DType::kInt8),
      // (Long contexts: the split-KV combine reads q again, from L2; MLA's q rows are as wide as
      // a cache row.)
      make("deepseek-v2-lite", true, 2, 4000, "h200"),
      make("deepseek-v2-lite", false, 1, 256, "h200"),
      make("deepseek-v2-lite", true, 1, 4000, "a100-lut4x", "int2", golden::DType::kInt8)};
  for (const Step& s : steps) {
    const llm::StepGraph g = graph_of(s);
    const Trace t = compile_model(s.model, s.step, s.gpu);
    std::vector<std::string> errors;
    for (const auto& [key, o] : op_traffic(t, g, &errors)) {
      const llm::Op& op = graph_op(g, key);
      if (!cuda_core_op(op) && op.kind != llm::OpKind::kAttention) continue;
      const std::string what =
          s.model.name + " " + std::string(llm::phase_name(s.step.phase)) + " " + key;
      // Latent attention's cache append is a copy of each new latent row: the graph books its
      // write, the trace's kernel also reads the row.
      const double append_read =
          op.kind == llm::OpKind::kAttention && s.model.is_mla()
              ? double(s.step.rows()) * double(s.model.mla.kv_lora_rank + s.model.mla.qk_rope_dim) *
                    2
              : 0.0;
      EXPECT_NEAR(double(o.bytes) / (graph_bytes(g, op) + append_read), 1.0, 0.01)
          << what << ": " << o.bytes << " vs " << graph_bytes(g, op) + append_read;
      // (A norm's block reduction is a fixed cost per row: 9% of a 2048-wide row's work, 19% of
      // a 256-wide one's.)
      if (cuda_core_op(op) && op.flops > 0 && s.model.hidden >= 4096) {
        double flops = op.flops;  // + a fused precompute's table entries (one add each)
        for (const auto& x : g.ops_of_layer(0)) {
          if (x.fused_into == op.name) flops += x.flops;
        }
        EXPECT_NEAR(double(o.cuda_ops) / flops, 1.0, 0.06) << what;
      }
    }
    EXPECT_TRUE(errors.empty()) << errors.front();
  }
}

// Decode attention: MMAs over every cached key for 16-row tiles of the folded query rows (the
// roofline's padded decode work), keys padded to whole 64-key tiles (the last tile masked).
TEST(ModelLowering, DecodeAttentionDoesThePaddedRooflineWork) {
  for (const Step& s :
       {make("llama2-7b", true, 1, 4096, "h200"),
        make("llama2-70b", true, 2, 777, "a100-lut4x", "int2", golden::DType::kInt8)}) {
    const llm::StepGraph g = graph_of(s);
    const Trace t = compile_model(s.model, s.step, s.gpu);
    const auto& a = g.find("attention")->attention;
    const auto ops = op_traffic(t, g, nullptr);
    const int64_t units = a.batch * a.kv_heads;
    const int64_t rows16 = 16 * ((a.heads / a.kv_heads + 15) / 16);
    const double keys = 64.0 * ((a.kv_len + 63) / 64);
    EXPECT_DOUBLE_EQ(ops.at("attention").mmas * 4096.0, 4.0 * units * rows16 * keys * a.head_dim)
        << s.model.name;
  }
}

TEST(ModelLowering, SplitKvDecodeFillsTheGpu) {
  for (const char* gpu : {"h200", "a100-lut4x"}) {
    const Step s = make("llama2-7b", true, 1, 4096, gpu);
    const Trace t = compile_model(s.model, s.step, s.gpu);
    int64_t blocks = 0;
    bool combine = false;
    for (const auto& k : t.kernels) {
      if (k.name == "L0.attention") blocks = k.blocks();
      combine = combine || k.name == "L0.attention.combine";
    }
    EXPECT_GE(blocks, s.gpu.sms) << gpu;
    EXPECT_LE(blocks, 2 * s.gpu.sms + 64) << gpu;  // one wave at two blocks per SM
    EXPECT_TRUE(combine) << gpu;
  }
}

// Causal prefill: exactly the key tiles on or below the diagonal, T (T + 1) / 2 per head, each
// (16-row x tile) x (tile keys) of QK^T and PV in m16n8k16 MMAs.
TEST(ModelLowering, CausalPrefillSkipsTheMaskedTiles) {
  struct Case {
    std::string model;
    int64_t batch, seq, tile;
  };
  for (const Case& c : {Case{"llama2-7b", 1, 512, 64}, Case{"llama2-70b", 2, 256, 64},
                        Case{kTiny, 3, 100, 64}, Case{kTiny, 1, 5, 16}}) {
    const Step s = make(c.model, false, c.batch, c.seq, "h200");
    const llm::StepGraph g = graph_of(s);
    const Trace t = compile_model(s.model, s.step, s.gpu);
    const auto& a = g.find("attention")->attention;
    int64_t tiles = (c.seq + c.tile - 1) / c.tile;
    if (tiles > 1 && tiles % 2) ++tiles;
    const uint64_t pairs = uint64_t(a.batch * a.heads * tiles * (tiles + 1) / 2);
    const uint64_t per_pair = uint64_t(
        (c.tile / 16) * ((c.tile / 8) * (a.head_dim / 16) + (a.head_dim / 8) * (c.tile / 16)));
    for (const auto& k : t.kernels) {
      if (k.name != "L0.attention") continue;
      EXPECT_EQ(traffic(k).mmas, pairs * per_pair) << c.model << " S=" << c.seq;
      EXPECT_EQ(k.blocks(), a.batch * a.heads * std::max<int64_t>(tiles / 2, 1));
    }
  }
}

// Prefill attention at head dim 128, 64-row tiles (4 warps of 255 registers: two blocks fill
// the register file): Q's two tiles (32 KB) beside two K/V stages (64 KB) leave an A100 SM (164
// KB) one block, so there the stages reuse Q's buffer once Q is in registers, and two blocks
// fit; an H200 SM (228 KB) holds two blocks either way and keeps Q's load beside the first K/V
// tile's.
TEST(ModelLowering, PrefillAttentionSharesQsBufferOnlyWhereThatFitsMoreBlocks) {
  for (const auto& [gpu, smem, first_kv_after_q] :
       {std::tuple{"a100", 65536u, true}, std::tuple{"a100-lut4x", 65536u, true},
        std::tuple{"h200", 98304u, false}}) {
    const Step s = make("llama2-7b", false, 1, 1024, gpu);
    const Trace t = compile_model(s.model, s.step, s.gpu);
    const auto k = std::find_if(t.kernels.begin(), t.kernels.end(),
                                [](const Kernel& x) { return x.name == "L0.attention"; });
    ASSERT_NE(k, t.kernels.end());
    EXPECT_EQ(k->smem_bytes, smem) << gpu;
    EXPECT_EQ(
        hw::block_occupancy(s.gpu, k->warps_per_block(), k->regs_per_thread, int64_t(k->smem_bytes))
            .blocks_per_sm,
        2)
        << gpu;
    // Program order: the first K/V tile's ldgsts (tensor 1) comes after Q's lds into registers
    // exactly where the buffer is shared.
    bool q_read = false, kv_after_q = false;
    for (const auto& in : k->program) {
      if (in.op == Opcode::kLdShared) q_read = true;
      if (in.op == Opcode::kLdGlobalAsync && in.tensor == 1) {
        kv_after_q = q_read;
        break;
      }
    }
    EXPECT_EQ(kv_after_q, first_kv_after_q) << gpu;
  }
}

// The acceptance configurations of the address check: traces::check_addresses on the whole
// step (global and shared bounds, cross-warp store overlap), and the same rules by expansion
// here for every kernel of layer 0, the embedding and the head.
TEST(ModelLowering, AccessesStayInsideTheirTensorsAndStoresNeverOverlap) {
  const std::vector<Step> steps = {
      make("llama2-7b", true, 1, 4096, "a100-lut4x", "int2", golden::DType::kInt8),
      make("llama2-7b", false, 1, 512, "a100-lut4x", "int2", golden::DType::kInt8),
      make("llama2-7b", true, 1, 4096, "h200"),
      make("llama2-7b", false, 1, 512, "h200"),
      make(kTiny, true, 2, 100, "a100-lut4x", "int2", golden::DType::kInt8),
      make(kTiny, false, 1, 64, "a100-lut4x", "int4", golden::DType::kFp16),
      make("deepseek-v2-lite", true, 2, 300, "h200"),
      // 40 latent heads, one block; the combine (61 keys left) in chunks of 10 rows.
      make(std::string(LTC_SOURCE_DIR) + "/configs/calibration/profile-models/minicpm3-4b.json",
           true, 3, 700, "a100"),
      make("deepseek-v2-lite", false, 1, 200, "a100-lut4x", "int2", golden::DType::kInt8),
      make(kTinyMoe, false, 2, 500, "a100-lut4x", "int2", golden::DType::kInt8)};  // banded
  for (const Step& s : steps) {
    const Trace t = compile_model(s.model, s.step, s.gpu);
    std::vector<std::string> errors;
    op_traffic(t, graph_of(s), &errors);
    EXPECT_TRUE(errors.empty()) << s.model.name << " on " << s.gpu.name << ": " << errors.front();
    try {
      const traces::AddressCheck c = traces::check_addresses(t, s.model.name);
      EXPECT_GT(c.accesses, 0u);
    } catch (const InputError& e) {
      ADD_FAILURE() << s.gpu.name << ": " << e.what();
    }
  }
}

// Prints the comparison the simulator will make (not an assertion beyond the bytes test above):
// per op of llama2-7b on h200, bytes in the trace, in the step graph and as the roofline costs
// them, and the kernels.
TEST(ModelLowering, PrintsPerOpBytesAgainstTheRoofline) {
  for (const Step& s :
       {make("llama2-7b", true, 1, 4096, "h200"), make("llama2-7b", false, 1, 512, "h200")}) {
    const llm::StepGraph g = graph_of(s);
    const Trace t = compile_model(s.model, s.step, s.gpu);
    const roofline::Machine m(s.gpu);
    const roofline::StepEstimate e = roofline::estimate_step(m, g);
    std::map<std::string, const roofline::OpCost*> costs;
    for (const auto* list : {&e.embedding, &e.layer, &e.head}) {
      for (const auto& c : *list) costs[c.name] = &c;
    }
    std::printf("%s %s B%lld %lld on %s\n%-18s %8s %12s %12s %12s %8s\n", s.model.name.c_str(),
                std::string(llm::phase_name(s.step.phase)).c_str(), (long long)s.step.batch,
                (long long)(s.step.phase == llm::Phase::kDecode ? s.step.context : s.step.seq),
                s.gpu.name.c_str(), "op", "kernels", "trace MB", "graph MB", "roofline MB",
                "mma/fl");
    std::printf("(trace MB: unique bytes touched; split-KV partials, L2-resident, apart)\n");
    for (const auto& [key, o] : op_traffic(t, g, nullptr)) {
      const llm::Op& op = graph_op(g, key);
      const auto* c = costs.count(op.name) ? costs[op.name] : nullptr;
      std::printf("%-18s %8d %12.4f %12.4f %12.4f %8.3f", key.c_str(), o.kernels, o.bytes / 1e6,
                  graph_bytes(g, op) / 1e6, c ? c->bytes / 1e6 : 0.0,
                  op.flops > 0 ? o.mmas * 4096.0 / op.flops : 0.0);
      if (o.partials) std::printf("  + partials %.4f MB", o.partials / 1e6);
      std::printf("\n");
    }
  }
}

// ---- MoE and sliding-window layers (tiny-moe: layer 0 full attention, layer 1 a 64-key window)

// Every layer's kernels are its group's graph ops with the compiled plan's launches: a grouped
// expert GEMM is one grouped kernel (grid z), LUT or MMA, but one LUT mpGEMM per active expert
// (".e<i>") for multi-basis binary weights.
TEST(ModelLowering, MoeLayersEmitTheirGroupsLaunches) {
  for (const Step& s : {make(kTinyMoe, true, 4, 100, "a100-lut4x", "int2", golden::DType::kInt8),
                        make(kTinyMoe, true, 3, 100, "a100"),
                        make(kTinyMoe, false, 1, 64, "a100-lut4x", "int4", golden::DType::kFp16),
                        make(kTinyMoe, true, 4, 100, "a100-lut4x", "binary:kb=2,g=128,s=8",
                             golden::DType::kFp16)}) {
    llm::StepConfig compiled = graph_of(s).step;
    compiled.kernels = llm::KernelPlan::kCompiled;
    const llm::StepGraph g = llm::build_step_graph(s.model, compiled);
    ASSERT_EQ(g.all_layers(), 2);
    const Trace t = compile_model(s.model, s.step, s.gpu);
    std::map<std::pair<std::string, std::string>, int> kernels;
    bool combine[2] = {false, false};
    for (const auto& k : t.kernels) {
      const auto [prefix, op] = op_of(k.name, g);
      ++kernels[{prefix, op}];
      if (k.name == "L0.attention.combine") combine[0] = true;
      if (k.name == "L1.attention.combine") combine[1] = true;
    }
    for (int64_t l = 0; l < 2; ++l) {
      const std::string prefix = "L" + std::to_string(l);
      for (const auto& op : g.ops_of_layer(l)) {
        const int extra = op.kind == llm::OpKind::kAttention && combine[l] ? 1 : 0;
        EXPECT_EQ((kernels[{prefix, op.name}]), op.launches + extra)
            << llm::phase_name(s.step.phase) << " " << prefix << "." << op.name;
      }
    }
    // Layer 1 reads its window only: 64 keys at context 100.
    EXPECT_EQ(g.ops_of_layer(1)[0].name, "attn_norm");
    for (const auto& op : g.ops_of_layer(s.step.phase == llm::Phase::kDecode ? 1 : 0)) {
      if (op.kind == llm::OpKind::kAttention && s.step.phase == llm::Phase::kDecode) {
        EXPECT_EQ(op.attention.kv_len, 64);
      }
    }
  }
}

// The routing kernels move the graph's bytes (the dispatch's and combine's token rows; the
// top-k kernel's int32 ids are the graph's, the row kernel stores a row of scores).
TEST(ModelLowering, MoeRoutingKernelsMoveTheGraphsBytes) {
  const Step s = make(kTinyMoe, true, 4, 100, "a100", "fp16");
  const llm::StepGraph g = graph_of(s);
  const Trace t = compile_model(s.model, s.step, s.gpu);
  std::vector<std::string> errors;
  int checked = 0;
  for (const auto& [key, o] : op_traffic(t, g, &errors)) {
    const llm::Op& op = graph_op(g, key);
    if (op.kind != llm::OpKind::kRouting && op.name != "expert_act" && op.name != "shared_act") {
      continue;
    }
    if (op.name == "router_topk") continue;
    EXPECT_NEAR(double(o.bytes) / graph_bytes(g, op), 1.0, 0.01)
        << key << ": " << o.bytes << " vs " << graph_bytes(g, op);
    ++checked;
  }
  EXPECT_EQ(checked, 4);  // dispatch, expert_act, shared_act, combine
  EXPECT_TRUE(errors.empty()) << errors.front();
}

// Latent attention (MLA) decode, absorbed: one unit per sequence (one latent KV head), the 16
// query heads folded into one 16-row tile, QK^T over kv_lora + rope and PV over kv_lora columns,
// keys padded to 64-key tiles; the latent cache read once (values are the key rows).
TEST(ModelLowering, LatentDecodeAttentionReadsTheLatentCacheOnce) {
  const Step s = make("deepseek-v2-lite", true, 2, 1000, "h200");
  const llm::StepGraph g = graph_of(s);
  const Trace t = compile_model(s.model, s.step, s.gpu);
  const auto& a = g.find("attention")->attention;
  ASSERT_TRUE(a.latent);
  const auto ops = op_traffic(t, g, nullptr);
  const double keys = 64.0 * ((a.kv_len + 63) / 64);
  // m16n8k16: 16 x 8 x 16 MACs each; QK^T over head_dim, PV over v_dim.
  EXPECT_DOUBLE_EQ(ops.at("attention").mmas * 2048.0,
                   a.batch * 16.0 * keys * double(a.head_dim + a.v_dim()));
  int64_t latent_reads = 0;
  for (const auto& k : t.kernels) {
    if (k.name.rfind("L0.attention", 0) != 0) continue;
    for (const auto& d : k.tensors) {
      EXPECT_NE(d.name, "v_cache") << k.name;
      if (d.name == "latent_cache" && k.name != "L0.attention.kv_append") ++latent_reads;
    }
  }
  EXPECT_GE(latent_reads, 1);
}

// DeepSeek-V2's absorbed decode: 128 heads over its one latent row are more rows than a block
// holds (tiling/decode_attention.h), so each sequence's rows run as two blocks of 64, adjacent in
// launch order (x), with the splits along z. Every kernel fits the H200's block limits; the MMAs
// are the padded work (128 rows x 9 key tiles of 64 x (576 + 512) per sequence); the combine
// reads back exactly the partial rows the splits wrote, and every access stays inside its tensor.
// Its prefill (no folding) compiles too.
TEST(ModelLowering, AKvGroupTooLargeForOneBlockIsSplitOverRowBlocks) {
  const std::string v2 =
      std::string(LTC_SOURCE_DIR) + "/configs/calibration/profile-models/deepseek-v2.json";
  const Step s = make(v2, true, 2, 512, "h200");
  const llm::StepGraph g = graph_of(s);
  const auto& a = g.find("attention")->attention;
  ASSERT_EQ(a.heads, 128);
  ASSERT_EQ(a.kv_len, 513);
  const Trace t = compile_model(s.model, s.step, s.gpu);
  const Kernel* main = nullptr;
  const Kernel* combine = nullptr;
  for (const auto& k : t.kernels) {
    EXPECT_EQ(hw::block_limits_error(s.gpu, k.warps_per_block(), k.regs_per_thread,
                                     int64_t(k.smem_bytes)),
              "")
        << k.name;
    if (k.name == "L0.attention") main = &k;
    if (k.name == "L0.attention.combine") combine = &k;
  }
  ASSERT_NE(main, nullptr);
  ASSERT_NE(combine, nullptr);
  EXPECT_EQ(main->grid_x, 2);  // row blocks
  EXPECT_EQ(main->grid_y, 2);  // sequences
  EXPECT_GT(main->grid_z, 1);  // splits
  EXPECT_EQ(main->warps_per_block(), 8);
  std::vector<std::string> errors;
  const auto ops = op_traffic(t, g, &errors);
  EXPECT_TRUE(errors.empty()) << errors.front();
  EXPECT_DOUBLE_EQ(ops.at("attention").mmas * 2048.0, 2.0 * 128 * (9 * 64) * (576 + 512));
  const KernelTraffic m = traffic(*main), c = traffic(*combine);
  const uint64_t row = 576 * 2;
  const uint64_t partials = 2 * uint64_t(main->grid_z) * 128 * (512 + 2) * 4;
  EXPECT_EQ(m.partials, partials);  // written
  EXPECT_EQ(c.partials, partials);  // read
  // Unique bytes read: the splits' whole tiles of each sequence's cache (the combine takes the
  // last key; both row blocks read the same tiles) and q.
  const uint64_t split_keys = uint64_t(main->grid_z) * ((513 / 64) / main->grid_z) * 64;
  EXPECT_EQ(m.read, 2 * split_keys * row + 2 * 128 * row);
  const Step p = make(v2, false, 1, 128, "h200");
  const Trace pt = compile_model(p.model, p.step, p.gpu);
  for (const auto& k : pt.kernels) {
    EXPECT_EQ(hw::block_limits_error(p.gpu, k.warps_per_block(), k.regs_per_thread,
                                     int64_t(k.smem_bytes)),
              "")
        << k.name;
  }
}

// A prefill past its sliding window (the tiny MoE model: 64 keys, one 64-key tile before a query
// tile's own): the band kernel runs every query tile past the causal head over window_tiles + 1
// key tiles, the head kernel the causal triangle of the first head tiles, and nothing else.
TEST(ModelLowering, BandedPrefillRunsEachTilesWindow) {
  for (const int64_t seq : {512, 500}) {
    // (A LUT GPU: its experts are one mpGEMM each.)
    const Step s = make(kTinyMoe, false, 2, seq, "a100-lut4x", "int2", golden::DType::kInt8);
    llm::StepConfig compiled = graph_of(s).step;
    compiled.kernels = llm::KernelPlan::kCompiled;
    const llm::StepGraph g = llm::build_step_graph(s.model, compiled);
    const llm::Op* op = nullptr;  // layer 1's, the windowed one
    for (const auto& x : g.ops_of_layer(1)) {
      if (x.kind == llm::OpKind::kAttention) op = &x;
    }
    ASSERT_NE(op, nullptr);
    const auto& a = op->attention;
    ASSERT_TRUE(a.banded()) << seq;
    const int64_t tile = 64, tiles = (seq + tile - 1) / tile, wt = 1, head = 2;
    ASSERT_EQ(a.band_window_tiles(), wt);
    ASSERT_EQ(a.band_head_tiles(), head);
    const Trace t = compile_model(s.model, s.step, s.gpu);
    uint64_t key_tiles = 0;  // per (sequence, query head): each query tile's window
    for (int64_t r = 0; r < tiles; ++r) key_tiles += uint64_t(std::min(r, wt) + 1);
    const uint64_t per_tile =
        uint64_t((tile / 16) * ((tile / 8) * (a.head_dim / 16) + (a.head_dim / 8) * (tile / 16)));
    uint64_t mmas = 0, bytes = 0;
    int kernels = 0;
    for (const auto& k : t.kernels) {
      if (k.name.rfind("L1.attention", 0) != 0) continue;
      const KernelTraffic kt = traffic(k);
      EXPECT_TRUE(kt.errors.empty()) << kt.errors.front();
      bytes += kt.read + kt.written;
      ++kernels;
      if (k.name == "L1.attention.kv_append") continue;
      mmas += kt.mmas;
    }
    EXPECT_EQ(kernels, op->launches);  // the append, the band, the head
    EXPECT_EQ(mmas, uint64_t(a.batch * a.heads) * key_tiles * per_tile) << seq;
    // Bytes (whole tiles: a prompt of 500 moves its padded tile's rows too): the graph's, plus
    // the key tiles the head kernel reads again after the band (from L2), tiles head - wt ..
    // head - 1 of every (sequence, KV head).
    const double again =
        double(a.batch * a.kv_heads * wt * tile) * double(a.head_dim + a.v_dim()) * 2;
    if (seq % tile == 0) {
      EXPECT_NEAR(double(bytes) / (op->bytes() + again), 1.0, 0.01);
    }
  }
}

}  // namespace
}  // namespace ltc::compiler
