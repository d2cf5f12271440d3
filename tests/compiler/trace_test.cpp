// The LMMA ISA and the trace format: syntax round trips, validation against the tensor core,
// text <-> binary identity, and clear errors for malformed input.
#include "traces/trace.h"
#include "common/error.h"
#include "compiler/gemm_lowering.h"
#include "compiler/interpreter.h"
#include "compiler/model_lowering.h"
#include "model/hw/gpu.h"
#include "traces/isa.h"
#include "traces/trace_detail.h"

#include "tests/sim/sim_test_util.h"
#include "tests/test_seed.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ltc::traces {
namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

CoreSpec m2n64k4_int8() {
  CoreSpec c;
  c.config =
      hw::TensorCoreConfig::make(hw::TensorCoreDesign::kLut, {2, 64, 4}, golden::DType::kInt8, 2);
  c.acts = {golden::DType::kInt8, golden::DType::kFp16};
  return c;
}

TEST(Isa, LmmaMnemonicRoundTrips) {
  for (const char* s : {"lmma.m2n64k4.f16.i2.f32.f32", "lmma.m2n64k4.i8.i1.i32.i32",
                        "lmma.m4n32k4.q8f16.i4.i32.i32", "lmma.m2n64k5.bf16.i8.f32.f16",
                        "lmma.m1n1k8.e4m3.i3.f32.f32"}) {
    const LmmaOp op = LmmaOp::parse(s, "t");
    EXPECT_EQ(op.name(), s);
  }
  const LmmaOp op = LmmaOp::parse("lmma.m2n64k4.f16.i2.f32.f32", "t");
  EXPECT_EQ(op.shape, (golden::LmmaShape{2, 64, 4}));
  EXPECT_EQ(op.wbits, 2);
  EXPECT_EQ(op.table(), golden::DType::kFp16);
  EXPECT_EQ(LmmaOp::parse("lmma.m2n64k4.i8.i2.i32.i32", "t").table(), golden::DType::kInt16);
}

TEST(Isa, LmmaValidatedAgainstTheTensorCore) {
  const CoreSpec core = m2n64k4_int8();
  EXPECT_NO_THROW(validate(LmmaOp::parse("lmma.m2n64k4.i8.i2.i32.i32", "t"), core, "t"));
  EXPECT_NO_THROW(validate(LmmaOp::parse("lmma.m2n64k4.f16.i4.f32.f32", "t"), core, "t"));
  EXPECT_EQ(message_of([&] {
              validate(LmmaOp::parse("lmma.m3n64k4.i8.i2.i32.i32", "t"), core, "trace.lmt:120");
            }),
            "trace.lmt:120: lmma shape m3n64k4 is not supported by tensor core m2n64k4 (valid: m "
            "a multiple of 2, n a multiple of 64, k 4)");
  // Multi-tile instructions: a x b tiles of the core, K fixed.
  EXPECT_NO_THROW(validate(LmmaOp::parse("lmma.m4n256k4.i8.i2.i32.i32", "t"), core, "t"));
  EXPECT_NO_THROW(validate(LmmaOp::parse("lmma.m8n128k4.f16.i1.f32.f32", "t"), core, "t"));
  for (const char* bad :
       {"lmma.m2n96k4.i8.i2.i32.i32", "lmma.m2n64k8.i8.i2.i32.i32", "lmma.m6n64k2.i8.i2.i32.i32"}) {
    const std::string msg = message_of([&] { validate(LmmaOp::parse(bad, "t"), core, "x.lmt:3"); });
    EXPECT_NE(msg.find("is not supported by tensor core m2n64k4"), std::string::npos) << msg;
  }
  EXPECT_NE(message_of([&] {
              validate(LmmaOp::parse("lmma.m2n64k4.bf16.i2.f32.f32", "t"), core, "x");
            }).find("builds no tables from bf16"),
            std::string::npos);
  // Integer tables need an int32 accumulator (golden validation).
  EXPECT_THROW(LmmaOp::parse("lmma.m2n64k4.i8.i2.f32.f32", "t"), InputError);
  EXPECT_THROW(LmmaOp::parse("lmma.m2n64k4.f16.i9.f32.f32", "t"), InputError);
  EXPECT_THROW(LmmaOp::parse("lmma.m2n64.f16.i2.f32.f32", "t"), InputError);
}

TEST(Isa, AffineSyntaxRoundTrips) {
  for (const char* s : {"0", "bx*4096+i0*256+8", "-by*2+wx-3", "i5*7", "wy+i1*100"}) {
    EXPECT_EQ(Affine::parse(s, "t").str(), s);
  }
  EXPECT_EQ(Affine::parse("4*bx+1+bx", "t").str(), "bx*5+1");
  EXPECT_THROW(Affine::parse("q*3", "t"), InputError);
  EXPECT_THROW(Affine::parse("bx**3", "t"), InputError);
  EXPECT_THROW(Affine::parse("99999999999999999999", "t"), InputError);
  Affine::Point p;
  p.bx = 2;
  p.i[0] = 3;
  EXPECT_EQ(Affine::parse("bx*4096+i0*256+8", "t").eval(p), 2 * 4096 + 3 * 256 + 8);
}

TEST(Isa, EveryOpcodeRoundTripsThroughItsTextLine) {
  const char* lines[] = {
      "ldg t=1 bytes=2048 addr=bx*4096+i0*256",
      "ldgsts t=0 bytes=64 addr=by*2",
      "lds bytes=512 addr=wx*512",
      "sts bytes=8 addr=0",
      "stg t=3 bytes=128 addr=i0*200",
      "bar",
      "precompute.k4.i8.i16 m=by k=bx*512+wx*128 rows=1 cols=128",
      "qtable count=32",
      "lmma.m2n64k4.i8.i2.i32.i32 m=by*2 n=bx*64 k=i0*4",
      "mma.m16n8k16.f16.f16.f32.f32 m=wy*16 n=i1*8 k=i0*16",
      "dequant m=by*2 n=bx*64 g=i0 rows=2 cols=64",
      "dequant m=by*2 n=bx*64 g=i0 rows=2 cols=64 basis=1 rowscale=1",
      "dequant m=by*2 n=bx*64 g=0 rows=2 cols=64 salient=1",
      "alu count=512",
      "alu count=512 int=256",
      "sfu count=1",
      "loop 20",
      "endloop",
  };
  for (const char* line : lines) {
    const Instr in = parse_instr(line, "t");
    EXPECT_EQ(in.str(), line);
    EXPECT_EQ(parse_instr(in.str(), "t"), in);
  }
  EXPECT_NE(message_of([] {
              parse_instr("lmma.m2n64k4.i8.i2.i32.i32 m=0 q=1", "f.lmt:7");
            }).find("f.lmt:7: lmma has no field 'q'"),
            std::string::npos);
  EXPECT_THROW(parse_instr("frobnicate", "t"), InputError);
  EXPECT_THROW(parse_instr("loop 0", "t"), InputError);
  EXPECT_THROW(parse_instr("mma.m16n8k16.i8.f16.i32.i32 m=0 n=0 k=0", "t"), InputError);
}

Trace small_gemm_trace() {
  compiler::GemmSpec s;
  s.m = 3;
  s.n = 100;
  s.k = 70;
  s.weights = llm::parse_weight_format("int2");
  return compiler::compile_gemm(s, hw::load_gpu("a100-lut4x"));
}

Trace tiny_model_trace() {
  const llm::ModelConfig m =
      llm::load_model(std::string(LTC_SOURCE_DIR) + "/traces/examples/tiny-llama.config.json");
  llm::StepConfig step = llm::StepConfig::decode(2, 100);
  step.weights = llm::parse_weight_format("int2");
  step.acts = golden::DType::kInt8;
  return compiler::compile_model(m, step, hw::load_gpu("a100-lut4x"));
}

TEST(TraceFormat, TextBinaryTextIsIdentity) {
  for (const Trace& t : {small_gemm_trace(), tiny_model_trace()}) {
    const std::string text = write_text(t);
    const Trace from_text = read_text(text, "a.lmt");
    EXPECT_EQ(from_text, t);
    const std::string bin = write_binary(from_text);
    const Trace from_bin = read_binary(bin, "a.ltcb");
    EXPECT_EQ(from_bin, t);
    EXPECT_EQ(write_text(from_bin), text);
    EXPECT_EQ(write_binary(read_trace(text, "a")), bin);
    EXPECT_LT(bin.size(), text.size());
  }
}

TEST(TraceFormat, ExpandWarpMatchesExpandedLength) {
  const Trace t = tiny_model_trace();
  for (const Kernel& k : t.kernels) {
    uint64_t n = 0;
    expand_warp(k, k.grid_x - 1, k.grid_y - 1, k.warps_x - 1, k.warps_y - 1,
                [&](const Instr&, const Affine::Point&) { ++n; });
    EXPECT_EQ(n, expanded_length(k.program)) << k.name;
  }
}

TEST(TraceFormat, CheckedInExamplesReadRoundTripAndRun) {
  const std::string dir = std::string(LTC_SOURCE_DIR) + "/traces/examples";
  int seen = 0, gemms = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string ext = e.path().extension().string();
    if (ext != ".lmt" && ext != ".ltcb") continue;
    ++seen;
    const Trace t = read_trace_file(e.path().string());
    EXPECT_EQ(read_binary(write_binary(t), "x"), t) << e.path();
    bool gemm = false;
    for (const auto& k : t.kernels) gemm = gemm || k.gemm.m > 0;
    if (gemm && t.kernels.size() == 2) {
      ++gemms;
      const compiler::GemmCheck c =
          compiler::check_gemm_trace(t, uint32_t(ltc::test_support::test_seed(11)));
      EXPECT_EQ(c.mismatches, 0u) << e.path();
      EXPECT_GT(c.outputs, 0u);
    }
  }
  EXPECT_GE(seen, 4);
  EXPECT_GE(gemms, 2);
}

TEST(TraceFormat, GpuNamesTheTextFormCannotCarryAreInputErrors) {
  // Found by the fuzzer: the binary reader accepted GPU names with spaces, NULs or '#', and the
  // name "-" (the text form's "no GPU"); none of them round-tripped through text.
  for (const std::string& bad :
       {std::string(" 0({"), std::string("a\0b", 3), std::string("a1#0"), std::string("-")}) {
    Trace t = tiny_model_trace();
    t.gpu = bad;
    EXPECT_THROW(read_binary(write_binary(t), "bad.ltcb"), InputError) << bad;
  }
}

TEST(TraceFormat, CoreConfigWithAHugeOrFractionalNumberIsAnInputErrorOnItsLine) {
  // Found by the fuzzer: n = 6.47e42 was cast to int (undefined behaviour) inside nlohmann's
  // conversion; a fractional m was silently truncated.
  for (const std::string value : {"6477777777777777777777777777777777777777777", "2.5", "-2"}) {
    const std::string text =
        "ltc-trace 2\ngpu a100-lut4x\ncore 0 {\"acc\":\"int32\",\"act\":\"int8\","
        "\"design\":\"lut\",\"k\":4,\"m\":2,\"n\":" +
        value + ",\"wbits\":2} acts=int8\n";
    try {
      read_text(text, "huge.lmt");
      ADD_FAILURE() << "no error for n = " << value;
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("huge.lmt"), std::string::npos) << what;
      EXPECT_NE(what.find("'n' must be an integer"), std::string::npos) << what;
    }
  }
}

TEST(TraceFormat, EveryTruncationOfABinaryTraceIsAnInputError) {
  const std::string bin = write_binary(small_gemm_trace());
  for (size_t n = 0; n < bin.size(); ++n) {
    const std::string cut = bin.substr(0, n);
    EXPECT_THROW(read_binary(cut, "cut.ltcb"), InputError) << n;
    // The same cut with a checksum that matches it: the parser refuses it on its own (up to the
    // whole body, which sealed is the file itself).
    if (n + detail::kChecksumBytes >= bin.size()) continue;
    std::string sealed = bin.substr(0, n) + std::string(detail::kChecksumBytes, '\0');
    detail::seal_binary(sealed);
    EXPECT_THROW(read_binary(sealed, "cut.ltcb"), InputError) << n;
  }
  const std::string msg =
      message_of([&] { read_binary(bin.substr(0, bin.size() / 2), "cut.ltcb"); });
  EXPECT_NE(msg.find("cut.ltcb: byte "), std::string::npos) << msg;
}

TEST(TraceFormat, BadOpcodeByteNamesItsOffset) {
  // The first instruction of the first kernel: find a "bar" (opcode 6) and make it 99.
  Trace t;
  t.gpu = "x";
  Kernel k;
  k.name = "k";
  Instr bar;
  bar.op = Opcode::kBarrier;
  k.program = {bar};
  t.kernels = {k};
  std::string bin = write_binary(t);
  const size_t at = bin.size() - 1 - detail::kChecksumBytes;
  ASSERT_EQ(uint8_t(bin[at]), 6);
  bin[at] = char(99);
  detail::seal_binary(bin);  // a file written that way, not a damaged one
  const std::string msg = message_of([&] { read_binary(bin, "b.ltcb"); });
  EXPECT_NE(msg.find("b.ltcb: byte " + std::to_string(at) + ": bad opcode 99"), std::string::npos)
      << msg;
}

const char* kHeader =
    "ltc-trace 2\n"
    "gpu test\n"
    "core 0 {\"design\":\"lut\",\"m\":2,\"n\":64,\"k\":4,\"act\":\"int8\",\"wbits\":2}\n"
    "kernel k\n"
    "  grid 1 1\n"
    "  block 1 1\n"
    "  resources smem=0 regs=32\n"
    "  tiles core=0 block=2,64,4 warp=2,64,4 instr=2,64,4\n"
    "  program\n";

TEST(TraceFormat, ShapeTheCoreCannotRunIsRejectedWithFileAndLine) {
  const std::string text = std::string(kHeader) +
                           "    lmma.m3n64k4.i8.i2.i32.i32 m=0 n=0 k=0\n"
                           "  end\n"
                           "end\n";
  const std::string msg = message_of([&] { read_text(text, "bad.lmt"); });
  EXPECT_NE(msg.find("lmma shape m3n64k4 is not supported by tensor core m2n64k4"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("bad.lmt"), std::string::npos) << msg;
}

TEST(TraceFormat, OverflowingLoopCountsAreRejected) {
  std::string text = kHeader;
  for (int d = 0; d < 4; ++d) text += "    loop 4000000\n";
  text += "    bar\n";
  for (int d = 0; d < 4; ++d) text += "    endloop\n";
  text += "  end\nend\n";
  const std::string msg = message_of([&] { read_text(text, "big.lmt"); });
  EXPECT_NE(msg.find("loop counts overflow"), std::string::npos) << msg;
}

TEST(TraceFormat, StructuralErrorsNameTheLine) {
  EXPECT_NE(message_of([] { read_text("hello\n", "x.lmt"); }).find("x.lmt:1: not an ltc trace"),
            std::string::npos);
  const std::string unmatched = std::string(kHeader) + "    endloop\n  end\nend\n";
  EXPECT_NE(message_of([&] { read_text(unmatched, "u.lmt"); }).find("endloop without loop"),
            std::string::npos);
  const std::string bad_var = std::string(kHeader) + "    lds bytes=4 addr=i0\n  end\nend\n";
  EXPECT_NE(message_of([&] { read_text(bad_var, "v.lmt"); }).find("uses i0 outside"),
            std::string::npos);
  const std::string unterminated = std::string(kHeader) + "    bar\n";
  EXPECT_NE(message_of([&] { read_text(unterminated, "e.lmt"); }).find("unexpected end of file"),
            std::string::npos);
  EXPECT_NE(message_of([] { read_text("ltc-trace 9\n", "v9.lmt"); }).find("version 9"),
            std::string::npos);
}

// An alu's INT32 share (`int=`, version 4): the compiler writes it for a dequantize pass and the
// oldest version that holds it; both forms carry it; a version-2 file or a share over the count
// is refused naming the line.
TEST(TraceFormat, AluIntShareNeedsVersion4AndRoundTrips) {
  const Trace t =
      test_support::compiled_gemm(hw::load_gpu("a100"), 37, 200, 300, "int4", golden::DType::kFp16);
  EXPECT_EQ(t.version, 4);
  int with_int = 0;
  for (const Instr& in : t.kernels.at(0).program) {
    if (in.op == Opcode::kAlu && in.int_ops > 0) {
      ++with_int;
      EXPECT_EQ(in.count, 2 * in.int_ops);  // 4 thread instructions a code, 2 of them integer
    }
  }
  EXPECT_GE(with_int,
            1);  // one per K step's fragment where a skinny kernel dequantizes in registers
  const std::string text = write_text(t);
  EXPECT_EQ(text.rfind("ltc-trace 4\n", 0), 0u);
  EXPECT_EQ(read_text(text, "a.lmt"), t);
  EXPECT_EQ(read_binary(write_binary(t), "a.ltcb"), t);
  // A trace without an INT32 share stays at the version it had.
  EXPECT_EQ(small_gemm_trace().version, kMinTraceVersion);

  const std::string v4 = std::string(kHeader).replace(10, 1, "4");
  EXPECT_NO_THROW(read_text(v4 + "    alu count=8 int=8\n  end\nend\n", "ok.lmt"));
  EXPECT_NE(message_of([&] {
              read_text(std::string(kHeader) + "    alu count=8 int=4\n  end\nend\n", "v2.lmt");
            }).find("int= needs trace version 4"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              read_text(v4 + "    alu count=8 int=9\n  end\nend\n", "over.lmt");
            }).find("alu int=9 exceeds its count=8"),
            std::string::npos);
  EXPECT_NE(message_of([] {
              parse_instr("sfu count=1 int=1", "f.lmt:3");
            }).find("f.lmt:3: sfu has no field 'int'"),
            std::string::npos);
}

TEST(ModelTrace, LlamaDecodeHasOneLmmaKernelPerLinearAndFusedTables) {
  const Trace t = tiny_model_trace();
  int lmma_kernels = 0, precompute_kernels = 0;
  for (const auto& k : t.kernels) {
    lmma_kernels += k.name.size() > 5 && k.name.substr(k.name.size() - 5) == ".lmma";
    precompute_kernels += k.name.find("precompute") != std::string::npos;
  }
  EXPECT_EQ(lmma_kernels, 2 * 4);        // QKV, o, gate+up, down per layer (launch groups)
  EXPECT_EQ(precompute_kernels, 2 * 1);  // only o_proj's input is not fused
  const compiler::TraceSummary s = compiler::summarize(t);
  // Each linear: ceil(M/2) x ceil(N/64) x ceil(K/4) LMMAs with M = 2 rows.
  const uint64_t per_layer =
      256 / 64 * 64 + 128 / 64 * 64 * 2 + 256 / 64 * 64 + 512 / 64 * 64 * 2 + 256 / 64 * 128;
  EXPECT_EQ(s.lmmas, 2 * per_layer);
}

}  // namespace
}  // namespace ltc::traces

namespace ltc::traces {
namespace {

TEST(ModelTrace, Llama2_70bDecodeIsCompactAndRunsEveryWeightOnce) {
  const llm::ModelConfig m = llm::load_model("llama2-70b");
  llm::StepConfig step = llm::StepConfig::decode(1, 4096);
  step.weights = llm::parse_weight_format("int2");
  step.acts = golden::DType::kInt8;
  const Trace t = compiler::compile_model(m, step, hw::load_gpu("a100-lut4x"));
  const compiler::TraceSummary s = compiler::summarize(t);
  // One core tile covers 64 output channels x 4 input channels (M = 1 padded to the core's 2);
  // an instruction is (m / 2) x (n / 64) core tiles: every decoder weight exactly once.
  uint64_t core_tiles = 0, lmmas = 0;
  for (const Kernel& k : t.kernels) {
    uint64_t per_warp = 0;
    expand_warp(k, 0, 0, 0, 0, [&](const Instr& in, const Affine::Point&) {
      if (in.op == Opcode::kLmma) per_warp += uint64_t(in.lmma.shape.m / 2 * in.lmma.shape.n / 64);
      lmmas += in.op == Opcode::kLmma ? uint64_t(k.blocks() * k.warps_per_block()) : 0;
    });
    core_tiles += per_warp * uint64_t(k.blocks() * k.warps_per_block());
  }
  EXPECT_EQ(lmmas, s.lmmas);
  EXPECT_EQ(core_tiles * 64 * 4, uint64_t(m.linear_weight_parameters()));
  // embedding, 14 kernels per layer (attention.kv_append and attention.combine beside the 12
  // operators), final norm + head
  EXPECT_EQ(s.kernels, 1 + 80 * 14 + 2);
  EXPECT_LT(write_text(t).size(), 50u << 20);
  EXPECT_LT(write_binary(t).size(), 5u << 20);
}

TEST(ModelTrace, GpuWithoutLutCoresLowersEveryLinearToMma) {
  const llm::ModelConfig m =
      llm::load_model(std::string(LTC_SOURCE_DIR) + "/traces/examples/tiny-llama.config.json");
  llm::StepConfig step = llm::StepConfig::prefill(1, 32);
  step.weights = llm::parse_weight_format("fp16");
  step.acts = golden::DType::kFp16;
  const Trace t = compiler::compile_model(m, step, hw::load_gpu("a100"));
  const compiler::TraceSummary s = compiler::summarize(t);
  EXPECT_EQ(s.lmmas, 0u);
  EXPECT_TRUE(t.cores.empty());
  // Linear MMAs: per layer q,k,v,o,gate,up,down on 32 rows (2 x m16) + attention + head.
  EXPECT_GT(s.mmas, 0u);
  for (const auto& k : t.kernels) {
    for (const auto& in : k.program) EXPECT_NE(in.op, Opcode::kLmma) << k.name;
  }
}

}  // namespace
}  // namespace ltc::traces

namespace ltc::traces {
namespace {

TEST(ModelTrace, LowBitWeightsWithoutLutCoresDequantizeThenMac) {
  const llm::ModelConfig m =
      llm::load_model(std::string(LTC_SOURCE_DIR) + "/traces/examples/tiny-llama.config.json");
  llm::StepConfig step = llm::StepConfig::decode(1, 16);
  step.weights = llm::parse_weight_format("int4");
  step.acts = golden::DType::kFp16;
  const Trace t = compiler::compile_model(m, step, hw::load_gpu("a100"));
  const Kernel* q = nullptr;
  for (const auto& k : t.kernels) {
    if (k.name == "L0.q_proj") q = &k;
  }
  ASSERT_NE(q, nullptr);
  // The QKV launch group's N (q, k, v) x 256 int4 codes, and CUDA-core unpacking before the MMAs.
  EXPECT_EQ(q->tensor("b")->bytes, uint64_t(m.q_dim() + 2 * m.kv_dim()) * 256 / 2);
  bool alu = false, mma = false;
  for (const auto& in : q->program) {
    alu = alu || in.op == Opcode::kAlu;
    mma = mma || in.op == Opcode::kMma;
  }
  EXPECT_TRUE(alu && mma);
}

}  // namespace
}  // namespace ltc::traces

namespace ltc::traces {
namespace {

// Every distinct GEMM kernel of a model trace, run alone (LUT GEMMs with their tables from the
// fused producer), equals the golden GEMM bit for bit (INT and FluxBin weights, decode and
// prefill): the four LUT shapes and the dense FP16 LM head on the MAC tensor cores.
TEST(ModelTrace, EveryLutGemmKernelOfAModelStepRunsExactly) {
  const llm::ModelConfig m =
      llm::load_model(std::string(LTC_SOURCE_DIR) + "/traces/examples/tiny-llama.config.json");
  const hw::GpuConfig gpu = hw::load_gpu("a100-lut4x");
  struct Step {
    llm::StepConfig step;
    const char* weights;
    golden::DType acts;
  };
  const Step steps[] = {
      {llm::StepConfig::decode(3, 40), "int3", golden::DType::kInt8},
      {llm::StepConfig::prefill(1, 5), "binary:kb=2,g=64,s=4", golden::DType::kFp16}};
  for (const Step& s : steps) {
    llm::StepConfig step = s.step;
    step.weights = llm::parse_weight_format(s.weights);
    step.acts = s.acts;
    const Trace t = compiler::compile_model(m, step, gpu);
    const auto checks = compiler::check_trace_gemms(t, 5);
    EXPECT_EQ(checks.size(), 5u) << s.weights;  // q/o, k/v, gate/up, down shapes; lm_head
    for (const auto& c : checks) {
      EXPECT_FALSE(c.skipped) << c.kernel;
      EXPECT_GT(c.check.outputs, 0u) << c.kernel;
      EXPECT_EQ(c.check.mismatches, 0u) << s.weights << " " << c.kernel;
    }
  }
}

}  // namespace
}  // namespace ltc::traces

namespace ltc::traces {
namespace {

Trace gemm_record_trace(const GemmRecord& g) {
  Trace t;
  t.gpu = "a100";
  Kernel k;
  k.name = "g";
  k.gemm = g;
  Instr bar;
  bar.op = Opcode::kBarrier;
  k.program = {bar};
  t.kernels = {k};
  return t;
}

GemmRecord mma_record() {
  GemmRecord g;
  g.path = GemmPath::kMma;
  g.batch = 3;
  g.m = 5;
  g.n = 100;
  g.k = 70;
  g.group = 70;
  g.wbits = 0;
  g.act = golden::DType::kBf16;
  return g;
}

TEST(GemmRecord, PathAndBatchRoundTripThroughTextAndBinary) {
  GemmRecord lut;
  lut.m = 3;
  lut.n = 64;
  lut.k = 256;
  lut.group = 64;
  lut.wbits = 1;
  lut.act = golden::DType::kFp16;
  lut.bases = 2;
  lut.salient = 8;
  GemmRecord dequant = mma_record();
  dequant.wbits = 4;
  dequant.act = golden::DType::kFp8E4M3;
  GemmRecord grouped_lut = mma_record();  // a grouped LUT GEMM (MoE experts)
  grouped_lut.path = GemmPath::kLut;
  grouped_lut.wbits = 2;
  grouped_lut.act = golden::DType::kInt8;
  for (const GemmRecord& g : {lut, mma_record(), dequant, grouped_lut}) {
    const Trace t = gemm_record_trace(g);
    const std::string text = write_text(t);
    const std::string line = "gemm path=" + std::string(gemm_path_name(g.path)) +
                             " batch=" + std::to_string(g.batch) + " m=" + std::to_string(g.m);
    EXPECT_NE(text.find(line), std::string::npos) << text;
    EXPECT_EQ(read_text(text, "g.lmt").kernels[0].gemm, g);
    EXPECT_EQ(read_binary(write_binary(t), "g.ltcb").kernels[0].gemm, g);
    EXPECT_EQ(write_text(read_binary(write_binary(t), "g.ltcb")), text);
  }
}

TEST(GemmRecord, RecordWithoutPathAndBatchReadsAsLutBatchOne) {
  const std::string text =
      "ltc-trace 2\ngpu x\nkernel g\n  gemm m=2 n=64 k=8 group=8 wbits=2 act=int8 bases=0 "
      "salient=0\n  program\n    bar\n  end\nend\n";
  const GemmRecord g = read_text(text, "old.lmt").kernels[0].gemm;
  EXPECT_EQ(g.path, GemmPath::kLut);
  EXPECT_EQ(g.batch, 1);
  EXPECT_EQ(g.wbits, 2);
  EXPECT_EQ(g.n, 64);
}

TEST(GemmRecord, ValidationRulesPerPath) {
  auto error = [](const GemmRecord& g) {
    return message_of([&] { read_binary(write_binary(gemm_record_trace(g)), "r.ltcb"); });
  };
  EXPECT_EQ(error(mma_record()), "(no error)");
  GemmRecord g = mma_record();
  g.bases = 1;
  EXPECT_NE(error(g).find("mma gemm record needs"), std::string::npos) << error(g);
  g = mma_record();
  g.salient = 2;
  EXPECT_NE(error(g).find("salient 0"), std::string::npos);
  g = mma_record();
  g.wbits = 9;
  EXPECT_NE(error(g).find("wbits 0"), std::string::npos);
  g = mma_record();
  g.act = golden::DType::kInt32;
  EXPECT_NE(error(g).find("r.ltcb: kernel g"), std::string::npos);
  g = mma_record();
  g.batch = 0;
  EXPECT_NE(error(g).find("batch >= 1"), std::string::npos);
  g = mma_record();
  g.path = GemmPath::kLut;  // wbits 0 is not a LUT GEMM
  EXPECT_NE(error(g).find("lut gemm record needs wbits 1..8"), std::string::npos) << error(g);
  g.wbits = 1;
  g.bases = 2;  // multi-basis binary GEMMs are not batched
  EXPECT_NE(error(g).find("with bases: wbits 1, batch 1"), std::string::npos) << error(g);
  g.bases = 0;
  EXPECT_EQ(error(g), "(no error)");  // a grouped LUT GEMM
  const std::string bad_path =
      "ltc-trace 2\ngpu x\nkernel g\n  gemm path=add batch=1 m=2 n=64 k=8 group=8 wbits=2 "
      "act=int8 bases=0 salient=0\n  program\n    bar\n  end\nend\n";
  EXPECT_NE(message_of([&] {
              read_text(bad_path, "p.lmt");
            }).find("p.lmt:4: unknown gemm path 'add' (valid: lut, mma)"),
            std::string::npos);
  // A bad path byte in the binary form names its offset.
  std::string bin = write_binary(gemm_record_trace(mma_record()));
  const size_t at = bin.find(std::string("\x05\x01\x03\x64", 4));  // m=5 path=mma batch=3 n=100
  ASSERT_NE(at, std::string::npos);
  bin[at + 1] = char(7);
  detail::seal_binary(bin);
  EXPECT_NE(message_of([&] {
              read_binary(bin, "p.ltcb");
            }).find("p.ltcb: byte " + std::to_string(at + 1) + ": bad gemm path code 7"),
            std::string::npos);
}

}  // namespace
}  // namespace ltc::traces

namespace ltc::traces {
namespace {

Trace address_trace(const std::vector<std::string>& program, uint64_t smem = 256) {
  std::string text = "ltc-trace 2\ngpu x\nkernel k\n  grid 2 1\n  block 2 1\n  resources smem=" +
                     std::to_string(smem) +
                     " regs=32\n  tiles core=-1 block=0,0,0 warp=0,0,0 instr=0,0,0\n"
                     "  tensor 0 a bytes=1024\n  tensor 1 out bytes=512\n  program\n";
  for (const auto& line : program) text += "    " + line + "\n";
  text += "  end\nend\n";
  return read_text(text, "addr.lmt");
}

TEST(AddressCheck, AccessesInsideTheirTensorsPass) {
  // 2 blocks x 2 warps x 4 iterations x 64 bytes = the whole 1024-byte tensor; stores disjoint.
  const Trace t =
      address_trace({"loop 4", "ldg t=0 bytes=64 addr=bx*512+wx*256+i0*64", "endloop",
                     "lds bytes=128 addr=wx*128", "stg t=1 bytes=128 addr=bx*256+wx*128"});
  const AddressCheck r = check_addresses(t, "addr.lmt");
  EXPECT_EQ(r.accesses, 3u);
  EXPECT_EQ(r.overlap_kernels, 1);
}

// validate() checks the extents, so the readers refuse such a trace (tests/traces has more).
TEST(AddressCheck, GlobalAccessPastItsTensorIsAnInputError) {
  const std::string msg = message_of([&] {
    address_trace({"loop 4", "ldg t=0 bytes=64 addr=bx*512+wx*256+i0*65", "endloop"});
  });
  EXPECT_NE(msg.find("addr.lmt: kernel k: instruction 1: ldg t=0 bytes=64 "
                     "addr=bx*512+wx*256+i0*65 reaches bytes [0, 1027) outside tensor 0 'a' of "
                     "1024 bytes"),
            std::string::npos)
      << msg;
  EXPECT_NE(message_of([&] { address_trace({"ldg t=0 bytes=4 addr=wx*8-4"}); }).find("[-4, "),
            std::string::npos);
}

TEST(AddressCheck, SharedAccessPastTheBlocksSharedMemoryIsAnInputError) {
  EXPECT_NE(message_of([&] {
              address_trace({"sts bytes=128 addr=wx*128+8"}, 256);
            }).find("outside shared memory of 256 bytes"),
            std::string::npos);
}

TEST(AddressCheck, OverlappingStoresOfTwoWarpsAreAnInputError) {
  // Warp (1,0) of block 0 writes bytes 120..247, overlapping warp (0,0)'s 0..127.
  const Trace t = address_trace({"stg t=1 bytes=128 addr=bx*256+wx*120"});
  const std::string msg = message_of([&] { check_addresses(t, "o.lmt"); });
  EXPECT_NE(msg.find("stores of block (0,0) warp (0,0) and block (0,0) warp (1,0) overlap at "
                     "byte 120 of tensor 1"),
            std::string::npos)
      << msg;
  // The same warp storing the same bytes twice is not an overlap; other warps far apart are.
  const Trace same = address_trace({"loop 2", "stg t=1 bytes=64 addr=bx*256+wx*128", "endloop",
                                    "stg t=1 bytes=8 addr=bx*256+wx*128+56"});
  EXPECT_EQ(check_addresses(same, "s.lmt").overlap_kernels, 1);
  // A store hidden behind a long store of another warp is found too.
  const Trace hidden =
      address_trace({"stg t=1 bytes=8 addr=wx*200+bx*8", "stg t=1 bytes=4 addr=210"});
  EXPECT_NE(message_of([&] { check_addresses(hidden, "h.lmt"); }).find("overlap"),
            std::string::npos);
  // Kernels above the expansion limit are counted as skipped.
  EXPECT_EQ(check_addresses(t, "o.lmt", 2).overlap_skipped, 1);
}

// A grid z (trace version 5): `grid X Y Z` and the affine variable bz round-trip through text
// and binary, every block (bx, by, bz) runs in launch order with its own coordinates, the extent
// check covers bz's range, and a version-4 trace refuses both.
TEST(TraceFormat, GridZNeedsVersion5AndIndexesItsBlocks) {
  const std::string head =
      "ltc-trace 5\ngpu x\nkernel k\n  grid 2 1 3\n  block 2 1\n  resources smem=0 regs=32\n"
      "  tiles core=-1 block=0,0,0 warp=0,0,0 instr=0,0,0\n  tensor 0 out bytes=";
  // Every warp of 2 x 1 x 3 blocks of 2 warps stores its own 8 bytes: 96 bytes.
  const std::string body = "\n  program\n    stg t=0 bytes=8 addr=bz*32+bx*16+wx*8\n  end\nend\n";
  const Trace t = read_text(head + "96" + body, "z.lmt");
  const Kernel& k = t.kernels.at(0);
  EXPECT_EQ(k.grid_z, 3);
  EXPECT_EQ(k.blocks(), 6);
  EXPECT_EQ(t.minimum_version(), 5);
  EXPECT_NE(write_text(t).find("  grid 2 1 3\n"), std::string::npos);
  EXPECT_NE(write_text(t).find("addr=bx*16+bz*32+wx*8"), std::string::npos);
  EXPECT_EQ(read_text(write_text(t), "z.lmt"), t);
  EXPECT_EQ(read_binary(write_binary(t), "z.ltcb"), t);
  // Expansion: block (1, 0, 2) warp 1 stores at 2*32 + 16 + 8.
  std::vector<int64_t> addrs;
  expand_warp(k, 1, 0, 2, 1, 0,
              [&](const Instr& in, const Affine::Point& p) { addrs.push_back(in.addr.eval(p)); });
  EXPECT_EQ(addrs, std::vector<int64_t>{88});
  const AddressCheck c = check_addresses(t, "z.lmt");
  EXPECT_EQ(c.overlap_kernels, 1);
  // bz's range (0..2) is checked: 95 bytes are one too few.
  EXPECT_NE(message_of([&] {
              read_text(head + "95" + body, "z.lmt");
            }).find("reaches bytes [0, 96) outside tensor 0 'out' of 95 bytes"),
            std::string::npos);
  // Two groups storing the same bytes (no bz term) overlap, named by their z.
  const Trace same =
      read_text(head + "96\n  program\n    stg t=0 bytes=8 addr=bx*16+wx*8\n  end\nend\n", "s.lmt");
  const std::string msg = message_of([&] { check_addresses(same, "s.lmt"); });
  EXPECT_NE(msg.find("block (0,0,1) warp (0,0)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("overlap at byte 0 of tensor 0"), std::string::npos) << msg;
  // Version 4 has neither a grid z nor bz.
  std::string v4 = head + "96" + body;
  v4.replace(10, 1, "4");
  EXPECT_NE(message_of([&] { read_text(v4, "v4.lmt"); }).find("a grid z needs trace version 5"),
            std::string::npos);
  std::string v4bz = v4;
  v4bz.replace(v4bz.find("grid 2 1 3"), 10, "grid 2 1");
  EXPECT_NE(message_of([&] { read_text(v4bz, "v4.lmt"); }).find("bz needs trace version 5"),
            std::string::npos);
  Trace old = t;
  old.version = 4;
  EXPECT_NE(message_of([&] { validate(old, "old"); }).find("a grid z needs trace version 5"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              read_text(head + "96\n  program\n    stg t=0 bytes=8 addr=bq*8\n  end\nend\n",
                        "q.lmt");
            }).find("unknown variable 'bq' (valid: bx, by, bz, wx, wy, i0..i5)"),
            std::string::npos);
}

TEST(AddressCheck, CompiledGemmOfTheReviewIsExact) {
  // `ltc compile gemm --m 3 --n 100 --k 70`: once wrote the 864-byte tables tensor up to byte
  // 2624 with overlapping stores.
  const Trace t = small_gemm_trace();
  const AddressCheck r = check_addresses(t, "review");
  EXPECT_EQ(r.overlap_kernels, 2);
  EXPECT_GT(r.accesses, 5u);
}

}  // namespace
}  // namespace ltc::traces
