// What the trace readers refuse (issue #43): a damaged binary file (the checksum), a binary file of
// a format without one, an access outside its tensor or the shared memory (checked through the
// loops without unrolling them, against a brute-force expansion of every warp), and the one
// wording of each rule whatever the form.
#include "common/error.h"
#include "traces/trace.h"
#include "traces/trace_detail.h"

#include "tests/input_error.h"
#include "tests/test_seed.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace ltc::traces {
namespace {

using test_support::input_error_of;
using test_support::seed_note;
using test_support::test_seed;

Trace example() {
  return read_trace_file(std::string(LTC_SOURCE_DIR) +
                         "/traces/examples/gemm-m3n100k70-int2-int8.lmt");
}

TEST(BinaryChecksum, EverySingleBitFlipIsRefused) {
  const std::string bin = write_binary(example());
  ASSERT_EQ(read_binary(bin, "ok.ltcb"), example());
  size_t refused = 0, as_damaged = 0;
  for (size_t bit = 0; bit < bin.size() * 8; ++bit) {
    std::string bad = bin;
    bad[bit / 8] = char(uint8_t(bad[bit / 8]) ^ (1u << (bit % 8)));
    const std::string msg = input_error_of([&] { read_binary(bad, "flip.ltcb"); });
    refused += msg != "(no InputError)";
    as_damaged += msg.find("checksum mismatch: the file is damaged") != std::string::npos;
  }
  EXPECT_EQ(refused, bin.size() * 8);
  // Flips in the magic or the format field are named as such, all others as damage.
  EXPECT_GE(as_damaged, bin.size() * 8 - 6 * 8);
  std::printf("%zu single-bit flips of a %zu-byte trace: %zu refused, %zu as damaged\n",
              bin.size() * 8, bin.size(), refused, as_damaged);
}

TEST(BinaryChecksum, RandomBurstsAndMultiBitDamageAreRefused) {
  const uint64_t seed = test_seed(43);
  std::mt19937_64 rng(seed);
  const std::string bin = write_binary(example());
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bad = bin;
    const int flips = 1 + int(rng() % 8);
    for (int f = 0; f < flips; ++f) {
      const size_t at = 6 + size_t(rng() % (bin.size() - 6));  // past the magic and format
      bad[at] = char(uint8_t(bad[at]) ^ uint8_t(1 + rng() % 255));
    }
    if (bad == bin) continue;
    EXPECT_NE(input_error_of([&] { read_binary(bad, "d.ltcb"); }).find("checksum mismatch"),
              std::string::npos)
        << "trial " << trial << ", " << seed_note(seed);
  }
  std::printf("2000 random damages, %s\n", seed_note(seed).c_str());
}

TEST(BinaryChecksum, FormatsWithoutAChecksumAreRefusedWithWhatToDo) {
  std::string bin = write_binary(example());
  for (int old : {2, 3, 4}) {
    std::string legacy = bin;
    legacy[4] = char(old);
    legacy[5] = 0;
    const std::string msg = input_error_of([&] { read_binary(legacy, "old.ltcb"); });
    EXPECT_NE(
        msg.find("old.ltcb: byte 4: binary format " + std::to_string(old) + " has no checksum"),
        std::string::npos)
        << msg;
    EXPECT_NE(msg.find("ltc compile convert"), std::string::npos) << msg;
  }
  std::string future = bin;
  future[4] = 9;
  EXPECT_NE(input_error_of([&] {
              read_binary(future, "new.ltcb");
            }).find("binary format 9 is not supported (this reader: 5)"),
            std::string::npos);
}

// ---- extents -------------------------------------------------------------------------------

std::string kernel_text(const std::string& tensor, const std::vector<std::string>& program,
                        int64_t smem = 256) {
  std::string text = "ltc-trace 2\ngpu x\nkernel k\n  grid 4 2\n  block 2 1\n  resources smem=" +
                     std::to_string(smem) +
                     " regs=32\n  tiles core=-1 block=0,0,0 warp=0,0,0 instr=0,0,0\n  " + tensor +
                     "\n  program\n";
  for (const auto& line : program) text += "    " + line + "\n";
  return text + "  end\nend\n";
}

TEST(Extents, TheIssuesAccessesAreRefusedOnLoad) {
  // A negative offset, and a stride that reaches 6.5 GB into a 4 MB tensor.
  const std::string t4mb = "tensor 0 w bytes=4194304";
  EXPECT_NE(input_error_of([&] {
              read_text(kernel_text(t4mb, {"ldg t=0 bytes=16 addr=bx*16-32"}), "neg.lmt");
            })
                .find("neg.lmt: kernel k: instruction 0: ldg t=0 bytes=16 addr=bx*16-32 reaches "
                      "bytes [-32, 32) outside tensor 0 'w' of 4194304 bytes"),
            std::string::npos);
  const std::string far =
      kernel_text(t4mb, {"loop 100", "ldg t=0 bytes=16 addr=bx*1024+i0*65536000", "endloop"});
  EXPECT_NE(
      input_error_of([&] { read_text(far, "far.lmt"); }).find("reaches bytes [0, 6488067088)"),
      std::string::npos);
  // The binary form is validated the same way.
  Trace t = read_text(kernel_text(t4mb, {"ldg t=0 bytes=16 addr=bx*16"}), "ok.lmt");
  t.kernels[0].program[0].addr.base = -32;
  EXPECT_NE(input_error_of([&] { read_binary(write_binary(t), "neg.ltcb"); }).find("[-32, 32)"),
            std::string::npos);
}

TEST(Extents, TheLastByteIsInsideAndOnePastIsNot) {
  // 4 x 2 blocks, 2 warps, 8 iterations of 16 bytes: the largest address is 3*512+1*256+1*128+
  // 7*16 = 2032, so bytes [0, 2048) are touched.
  const std::vector<std::string> prog = {"loop 8",
                                         "ldg t=0 bytes=16 addr=bx*512+by*256+wx*128+i0*16",
                                         "endloop", "sts bytes=16 addr=wx*16"};
  EXPECT_NO_THROW(read_text(kernel_text("tensor 0 a bytes=2048", prog, 32), "edge.lmt"));
  EXPECT_NE(input_error_of([&] {
              read_text(kernel_text("tensor 0 a bytes=2047", prog, 32), "e.lmt");
            }).find("reaches bytes [0, 2048) outside tensor 0 'a' of 2047 bytes"),
            std::string::npos);
  EXPECT_NE(input_error_of([&] {
              read_text(kernel_text("tensor 0 a bytes=2048", prog, 31), "e.lmt");
            }).find("outside shared memory of 31 bytes"),
            std::string::npos);
  // A strided lds: thread 31 reads 4 bytes at 31 * 128.
  const std::vector<std::string> strided = {"lds bytes=128 addr=0 stride=128"};
  EXPECT_NO_THROW(read_text(kernel_text("tensor 0 a bytes=16", strided, 3972), "s.lmt"));
  EXPECT_NE(input_error_of([&] {
              read_text(kernel_text("tensor 0 a bytes=16", strided, 3971), "s.lmt");
            }).find("reaches bytes [0, 3972) outside shared memory of 3971 bytes"),
            std::string::npos);
}

TEST(Extents, LoopsAreNeverUnrolled) {
  // 2^39 iterations per warp in two nested loops: checked by interval arithmetic in well under a
  // second (an expansion would take hours).
  const std::string text = kernel_text(
      "tensor 0 a bytes=1099511627776",
      {"loop 524288", "loop 1048576", "ldg t=0 bytes=1 addr=i0*1048576+i1", "endloop", "endloop"});
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NO_THROW(read_text(text, "big.lmt"));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
}

// The interval check against an independent one: every warp expanded, every address compared.
TEST(Extents, IntervalCheckMatchesEveryWarpExpanded) {
  const uint64_t seed = test_seed(4343);
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(hi - lo + 1)); };
  int refused = 0, accepted = 0;
  for (int trial = 0; trial < 400; ++trial) {
    Kernel k;
    k.name = "r";
    k.grid_x = pick(1, 3);
    k.grid_y = pick(1, 2);
    k.warps_x = pick(1, 2);
    k.smem_bytes = uint64_t(pick(0, 96));
    k.tensors = {{0, "a", uint64_t(pick(1, 160))}};
    const int depth = int(pick(0, 2));
    for (int d = 0; d < depth; ++d) {
      Instr l;
      l.op = Opcode::kLoop;
      l.count = uint64_t(pick(1, 4));
      k.program.push_back(l);
    }
    Instr in;
    in.op = rng() % 2 ? Opcode::kLdGlobal : Opcode::kLdShared;
    in.tensor = 0;
    in.bytes = uint64_t(pick(1, 16));
    in.addr.base = pick(-8, 40);
    for (int v : {0, 1, 2}) in.addr.coef[size_t(v)] = pick(-8, 24);
    for (int d = 0; d < depth; ++d) in.addr.coef[size_t(4 + d)] = pick(-6, 12);
    k.program.push_back(in);
    for (int d = 0; d < depth; ++d) {
      Instr e;
      e.op = Opcode::kEndLoop;
      k.program.push_back(e);
    }
    const uint64_t size = in.op == Opcode::kLdGlobal ? k.tensors[0].bytes : k.smem_bytes;
    bool outside = false;
    for (int64_t by = 0; by < k.grid_y; ++by) {
      for (int64_t bx = 0; bx < k.grid_x; ++bx) {
        for (int64_t wx = 0; wx < k.warps_x; ++wx) {
          expand_warp(k, bx, by, wx, 0, [&](const Instr& i, const Affine::Point& p) {
            const int64_t a = i.addr.eval(p);
            outside = outside || a < 0 || uint64_t(a) + i.bytes > size;
          });
        }
      }
    }
    Trace t;
    t.gpu = "x";
    t.kernels = {k};
    const std::string msg = input_error_of([&] { validate(t, "rand"); });
    const bool was_refused = msg.find("outside") != std::string::npos;
    EXPECT_EQ(was_refused, outside)
        << "trial " << trial << ": " << in.str() << " " << msg << ", " << seed_note(seed);
    EXPECT_TRUE(was_refused || msg == "(no InputError)") << msg;
    (was_refused ? refused : accepted) += 1;
  }
  EXPECT_GT(refused, 50);
  EXPECT_GT(accepted, 50);
  std::printf("400 random kernels: %d refused, %d accepted, as the expansion says; %s\n", refused,
              accepted, seed_note(seed).c_str());
}

// ---- one wording per rule ------------------------------------------------------------------

TEST(Wording, LoopCountIsOneRuleInEveryForm) {
  const std::string t = "tensor 0 a bytes=16";
  for (const char* count : {"0", "-3"}) {
    const std::string msg = input_error_of([&] {
      read_text(kernel_text(t, {std::string("loop ") + count, "endloop"}), "l.lmt");
    });
    EXPECT_NE(msg.find(std::string("loop count must be >= 1 (got ") + count + ")"),
              std::string::npos)
        << msg;
  }
  Trace tr = read_text(kernel_text(t, {"loop 2", "endloop"}), "l.lmt");
  tr.kernels[0].program[0].count = 0;
  EXPECT_NE(input_error_of([&] { validate(tr, "m"); }).find("loop count must be >= 1 (got 0)"),
            std::string::npos);
}

TEST(Wording, AFileThatIsNoTraceNamesEveryVersionRead) {
  const std::string range =
      std::to_string(kMinTraceVersion) + " .. " + std::to_string(kTraceVersion);
  for (const std::string text : {"", "hello\n"}) {
    const std::string msg = input_error_of([&] { read_text(text, "e.lmt"); });
    EXPECT_NE(msg.find("expected 'ltc-trace V' on the first line, V one of " + range),
              std::string::npos)
        << msg;
  }
  EXPECT_NE(input_error_of([] { read_text("ltc-trace 1\n", "v.lmt"); })
                .find("trace version 1 is not supported (this reader: " +
                      std::to_string(kMinTraceVersion) + " .. " + std::to_string(kTraceVersion)),
            std::string::npos);
}

}  // namespace
}  // namespace ltc::traces
