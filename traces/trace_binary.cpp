// The binary form of a trace (traces/trace.h): "LTCT", u16 binary format (5), u16 trace version,
// then the text form's content as LEB128 varints (signed ones zig-zag), strings as length + bytes,
// affines as a presence mask + varints, and a CRC-32 of every byte before it.
#include "common/error.h"
#include "common/hash.h"
#include "traces/trace.h"
#include "traces/trace_detail.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

namespace ltc::traces {

using detail::fail;
using golden::DType;

using detail::kBinaryFormat;
using detail::kBinaryMagic;

namespace {

class BinaryWriter {
 public:
  explicit BinaryWriter(int version) : version_(version) {}
  void u8(uint32_t v) { out_.push_back(char(uint8_t(v))); }
  void varint(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(char(uint8_t(v) | 0x80));
      v >>= 7;
    }
    out_.push_back(char(uint8_t(v)));
  }
  void svarint(int64_t v) { varint((uint64_t(v) << 1) ^ uint64_t(v >> 63)); }
  void str(const std::string& s) {
    varint(s.size());
    out_ += s;
  }
  void affine(const Affine& a) {
    uint32_t mask = a.base != 0 ? 1 : 0;
    for (int v = 0; v < kAffineVars; ++v) mask |= (a.coef[v] != 0 ? 1u : 0u) << (v + 1);
    varint(mask);
    if (a.base) svarint(a.base);
    for (int v = 0; v < kAffineVars; ++v) {
      if (a.coef[v]) svarint(a.coef[v]);
    }
  }
  void shape(const golden::LmmaShape& s) {
    varint(uint64_t(s.m));
    varint(uint64_t(s.n));
    varint(uint64_t(s.k));
  }
  void instr(const Instr& in) {
    u8(uint32_t(in.op));
    switch (in.op) {
      case Opcode::kLdGlobal:
      case Opcode::kLdGlobalAsync:
      case Opcode::kStGlobal:
        varint(in.tensor);
        varint(in.bytes);
        affine(in.addr);
        varint(in.frag);
        break;
      case Opcode::kLdShared:
      case Opcode::kStShared:
        varint(in.bytes);
        affine(in.addr);
        varint(in.frag);
        varint(in.stride);
        break;
      case Opcode::kBarrier:
      case Opcode::kEndLoop:
      case Opcode::kCommit:
        break;
      case Opcode::kLoop:
      case Opcode::kQuantTable:
      case Opcode::kSfu:
      case Opcode::kWait:
        varint(in.count);
        break;
      case Opcode::kAlu:
        varint(in.count);
        if (version_ >= 4) varint(in.int_ops);
        break;
      case Opcode::kPrecompute:
        u8(uint32_t(in.k_group));
        u8(uint32_t(in.act));
        u8(uint32_t(in.table));
        affine(in.m);
        affine(in.k);
        varint(in.rows);
        varint(in.cols);
        varint(in.basis);
        break;
      case Opcode::kLmma:
        shape(in.lmma.shape);
        u8(uint32_t(in.lmma.act));
        u8(in.lmma.quantized_table ? 1 : 0);
        u8(uint32_t(in.lmma.wbits));
        u8(uint32_t(in.lmma.acc));
        u8(uint32_t(in.lmma.out));
        affine(in.m);
        affine(in.n);
        affine(in.k);
        varint(in.basis);
        varint(in.frag);
        break;
      case Opcode::kMma:
        shape(in.mma.shape);
        u8(uint32_t(in.mma.a));
        u8(uint32_t(in.mma.b));
        u8(uint32_t(in.mma.acc));
        u8(uint32_t(in.mma.out));
        affine(in.m);
        affine(in.n);
        affine(in.k);
        varint(in.frag);
        break;
      case Opcode::kDequant:
        affine(in.m);
        affine(in.n);
        affine(in.g);
        varint(in.rows);
        varint(in.cols);
        varint(in.basis);
        u8((in.row_scale ? 1u : 0u) | (in.salient ? 2u : 0u));
        break;
    }
  }
  std::string& out() { return out_; }

 private:
  int version_;  // the trace's format version (fields added later are written from theirs on)
  std::string out_;
};

class BinaryReader {
 public:
  BinaryReader(std::string_view b, const std::string& origin) : b_(b), origin_(origin) {}

  Trace read() {
    if (b_.size() < 6 || b_.substr(0, 4) != std::string_view(kBinaryMagic, 4)) {
      fail(where(), "not a binary ltc trace (missing LTCT magic)");
    }
    pos_ = 4;
    const int format = int(u8()) | (int(u8()) << 8);
    if (format >= kMinTraceVersion && format < kBinaryFormat) {
      pos_ = 4;
      fail(where(), "binary format " + std::to_string(format) +
                        " has no checksum and is no longer read (this reader: format " +
                        std::to_string(kBinaryFormat) +
                        "); compile the trace again, or convert its text form with ltc compile "
                        "convert IN.lmt OUT.ltcb");
    }
    if (format != kBinaryFormat) {
      pos_ = 4;
      fail(where(), "binary format " + std::to_string(format) +
                        " is not supported (this reader: " + std::to_string(kBinaryFormat) + ")");
    }
    // The checksum first: a damaged file is refused as damaged, not parsed into other numbers.
    if (b_.size() < pos_ + 2 + detail::kChecksumBytes) fail(where(), "truncated");
    const size_t body = b_.size() - detail::kChecksumBytes;
    uint32_t stored = 0;
    for (size_t i = 0; i < detail::kChecksumBytes; ++i) {
      stored |= uint32_t(uint8_t(b_[body + i])) << (8 * i);
    }
    const uint32_t computed = crc32(b_.substr(0, body));
    if (stored != computed) {
      pos_ = body;
      fail(where(), fmt_hex("checksum mismatch: the file is damaged or truncated (stored CRC-32 ",
                            stored, computed));
    }
    pos_ = 6;
    b_ = b_.substr(0, body);
    Trace t;
    t.version = int(u8()) | (int(u8()) << 8);
    version_ = t.version;
    detail::check_trace_version(t.version, where());
    t.gpu = str();
    const uint64_t ncores = count(2);
    for (uint64_t c = 0; c < ncores; ++c) {
      CoreSpec core;
      const std::string js = str();
      try {
        core.config = nlohmann::json::parse(js).get<hw::TensorCoreConfig>();
      } catch (const std::exception& e) {
        fail(where(), std::string("core: bad tensor-core JSON (") + e.what() + ")");
      }
      const uint64_t nacts = count(1);
      for (uint64_t a = 0; a < nacts; ++a) core.acts.push_back(dtype());
      t.cores.push_back(core);
    }
    const uint64_t nkernels = count(8);
    for (uint64_t i = 0; i < nkernels; ++i) {
      Kernel k;
      k.name = str();
      k.grid_x = int64_t(bounded(uint64_t(1) << 31));
      k.grid_y = int64_t(bounded(uint64_t(1) << 31));
      k.warps_x = int64_t(bounded(1024));
      k.warps_y = int64_t(bounded(1024));
      k.smem_bytes = bounded(uint64_t(1) << 40);
      k.regs_per_thread = uint32_t(bounded(65535));
      if (t.version >= 3) k.cluster_x = int64_t(bounded(16));
      if (t.version >= 5) k.grid_z = int64_t(bounded(uint64_t(1) << 31));
      k.tiles.core = int(svarint());
      if (k.tiles.core < -1 || k.tiles.core > 1 << 20) fail(where(), "bad core index");
      for (auto* tr : {&k.tiles.block, &k.tiles.warp, &k.tiles.instr}) {
        for (auto& v : *tr) v = int64_t(bounded(uint64_t(1) << 40));
      }
      k.gemm.m = int64_t(bounded(uint64_t(1) << 40));
      if (k.gemm.m > 0) {
        const uint32_t path = u8();
        if (path > uint32_t(GemmPath::kMma)) {
          --pos_;
          fail(where(), "bad gemm path code " + std::to_string(path) + " (valid: 0 lut, 1 mma)");
        }
        k.gemm.path = GemmPath(path);
        k.gemm.batch = int64_t(bounded(uint64_t(1) << 40));
        k.gemm.n = int64_t(bounded(uint64_t(1) << 40));
        k.gemm.k = int64_t(bounded(uint64_t(1) << 40));
        k.gemm.group = int64_t(bounded(uint64_t(1) << 40));
        k.gemm.wbits = int(bounded(64));
        k.gemm.act = dtype();
        k.gemm.bases = int(bounded(64));
        k.gemm.salient = int64_t(bounded(uint64_t(1) << 40));
      }
      const uint64_t ntensors = count(3);
      for (uint64_t j = 0; j < ntensors; ++j) {
        TensorDecl td;
        td.id = uint32_t(bounded(0xffffffffu));
        td.name = str();
        td.bytes = bounded(uint64_t(1) << 60);
        k.tensors.push_back(td);
      }
      const uint64_t ninstr = count(1);
      k.program.reserve(ninstr);
      for (uint64_t j = 0; j < ninstr; ++j) k.program.push_back(instr());
      t.kernels.push_back(std::move(k));
    }
    if (pos_ != b_.size()) fail(where(), "trailing bytes after the last kernel");
    validate(t, origin_);
    return t;
  }

 private:
  std::string where() const { return origin_ + ": byte " + std::to_string(pos_); }
  static std::string fmt_hex(const std::string& head, uint32_t stored, uint32_t computed) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%08x, computed %08x)", stored, computed);
    return head + buf;
  }
  uint32_t u8() {
    if (pos_ >= b_.size()) fail(where(), "truncated");
    return uint8_t(b_[pos_++]);
  }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const uint32_t byte = u8();
      v |= uint64_t(byte & 0x7f) << shift;
      if (!(byte & 0x80)) {
        if (shift == 63 && byte > 1) fail(where(), "varint overflows 64 bits");
        return v;
      }
    }
    fail(where(), "varint longer than 10 bytes");
  }
  int64_t svarint() {
    const uint64_t v = varint();
    return int64_t(v >> 1) ^ -int64_t(v & 1);
  }
  uint64_t bounded(uint64_t max) {
    const size_t at = pos_;
    const uint64_t v = varint();
    if (v > max) {
      pos_ = at;
      fail(where(),
           "value " + std::to_string(v) + " out of range (max " + std::to_string(max) + ")");
    }
    return v;
  }
  // An element count; each element takes at least `min_bytes`, so it cannot exceed what is left.
  uint64_t count(uint64_t min_bytes) {
    const size_t at = pos_;
    const uint64_t v = varint();
    if (v > (b_.size() - pos_) / min_bytes) {
      pos_ = at;
      fail(where(), "count " + std::to_string(v) + " exceeds the remaining input (truncated?)");
    }
    return v;
  }
  std::string str() {
    const uint64_t n = count(1);
    std::string s(b_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  DType dtype() {
    const uint32_t v = u8();
    if (v >= std::size(golden::kAllDTypes)) {
      --pos_;
      fail(where(), "bad dtype code " + std::to_string(v));
    }
    return DType(v);
  }
  Affine affine() {
    Affine a;
    // bz (the last variable) from trace version 5 on.
    const int vars = version_ >= 5 ? kAffineVars : kAffineVars - 1;
    const uint64_t mask = bounded((uint64_t(1) << (vars + 1)) - 1);
    if (mask & 1) a.base = svarint();
    for (int v = 0; v < kAffineVars; ++v) {
      if (mask & (uint64_t(1) << (v + 1))) a.coef[v] = svarint();
    }
    return a;
  }
  golden::LmmaShape shape() {
    golden::LmmaShape s;
    s.m = int(bounded(1 << 16));
    s.n = int(bounded(1 << 16));
    s.k = int(bounded(64));
    return s;
  }
  Instr instr() {
    Instr in;
    const size_t at = pos_;
    const uint32_t op = u8();
    if (op < 1 || op > uint32_t(kOpcodeCount)) {
      pos_ = at;
      fail(where(), "bad opcode " + std::to_string(op));
    }
    in.op = Opcode(op);
    switch (in.op) {
      case Opcode::kLdGlobal:
      case Opcode::kLdGlobalAsync:
      case Opcode::kStGlobal:
        in.tensor = uint32_t(bounded(0xffffffffu));
        in.bytes = bounded(uint64_t(1) << 48);
        in.addr = affine();
        in.frag = uint32_t(bounded(kMaxFragBuffers));
        break;
      case Opcode::kLdShared:
      case Opcode::kStShared:
        in.bytes = bounded(uint64_t(1) << 48);
        in.addr = affine();
        in.frag = uint32_t(bounded(kMaxFragBuffers));
        in.stride = uint32_t(bounded(0xffffffffu));
        break;
      case Opcode::kBarrier:
      case Opcode::kEndLoop:
      case Opcode::kCommit:
        break;
      case Opcode::kWait:
        in.count = bounded(uint64_t(1) << 16);
        break;
      case Opcode::kLoop:
        in.count = bounded(kMaxExpandedInstrs);
        detail::check_loop_count(int64_t(in.count), where());
        break;
      case Opcode::kQuantTable:
      case Opcode::kSfu:
        in.count = bounded(uint64_t(1) << 48);
        break;
      case Opcode::kAlu:
        in.count = bounded(uint64_t(1) << 48);
        if (version_ >= 4) in.int_ops = bounded(in.count);
        break;
      case Opcode::kPrecompute:
        in.k_group = int(u8());
        in.act = dtype();
        in.table = dtype();
        in.m = affine();
        in.k = affine();
        in.rows = uint32_t(bounded(0xffffffffu));
        in.cols = uint32_t(bounded(0xffffffffu));
        in.basis = uint32_t(bounded(255));
        break;
      case Opcode::kLmma:
        in.lmma.shape = shape();
        in.lmma.act = dtype();
        in.lmma.quantized_table = u8() != 0;
        in.lmma.wbits = int(u8());
        in.lmma.acc = dtype();
        in.lmma.out = dtype();
        in.m = affine();
        in.n = affine();
        in.k = affine();
        in.basis = uint32_t(bounded(255));
        in.frag = uint32_t(bounded(kMaxFragBuffers));
        try {
          golden::validate(in.lmma.shape, in.lmma.lmma_type());
        } catch (const InputError& e) {
          fail(where(), e.what());
        }
        break;
      case Opcode::kMma:
        in.mma.shape = shape();
        in.mma.a = dtype();
        in.mma.b = dtype();
        in.mma.acc = dtype();
        in.mma.out = dtype();
        in.m = affine();
        in.n = affine();
        in.k = affine();
        in.frag = uint32_t(bounded(kMaxFragBuffers));
        break;
      case Opcode::kDequant:
        in.m = affine();
        in.n = affine();
        in.g = affine();
        in.rows = uint32_t(bounded(0xffffffffu));
        in.cols = uint32_t(bounded(0xffffffffu));
        in.basis = uint32_t(bounded(255));
        {
          const uint32_t flags = u8();
          if (flags > 3) fail(where(), "bad dequant flags");
          in.row_scale = (flags & 1u) != 0;
          in.salient = (flags & 2u) != 0;
        }
        break;
    }
    return in;
  }

  std::string_view b_;
  std::string origin_;
  size_t pos_ = 0;
  int version_ = 0;
};

}  // namespace

void detail::seal_binary(std::string& bin) {
  if (bin.size() < kChecksumBytes) return;
  const size_t body = bin.size() - kChecksumBytes;
  const uint32_t c = crc32(std::string_view(bin).substr(0, body));
  for (size_t i = 0; i < kChecksumBytes; ++i) bin[body + i] = char(uint8_t(c >> (8 * i)));
}

std::string write_binary(const Trace& t) {
  BinaryWriter w(t.version);
  w.out().append(kBinaryMagic, 4);
  w.u8(uint32_t(kBinaryFormat) & 0xff);
  w.u8(uint32_t(kBinaryFormat) >> 8);
  w.u8(uint32_t(t.version) & 0xff);
  w.u8(uint32_t(t.version) >> 8);
  w.str(t.gpu);
  w.varint(t.cores.size());
  for (const auto& c : t.cores) {
    nlohmann::json j = c.config;
    w.str(j.dump());
    w.varint(c.acts.size());
    for (DType a : c.acts) w.u8(uint32_t(a));
  }
  w.varint(t.kernels.size());
  for (const Kernel& k : t.kernels) {
    w.str(k.name);
    w.varint(uint64_t(k.grid_x));
    w.varint(uint64_t(k.grid_y));
    w.varint(uint64_t(k.warps_x));
    w.varint(uint64_t(k.warps_y));
    w.varint(k.smem_bytes);
    w.varint(k.regs_per_thread);
    if (t.version >= 3) w.varint(uint64_t(k.cluster_x));
    if (t.version >= 5) w.varint(uint64_t(k.grid_z));
    w.svarint(k.tiles.core);
    for (const auto* tr : {&k.tiles.block, &k.tiles.warp, &k.tiles.instr}) {
      for (int64_t v : *tr) w.varint(uint64_t(v));
    }
    w.varint(uint64_t(k.gemm.m));
    if (k.gemm.m > 0) {
      w.u8(uint32_t(k.gemm.path));
      w.varint(uint64_t(k.gemm.batch));
      w.varint(uint64_t(k.gemm.n));
      w.varint(uint64_t(k.gemm.k));
      w.varint(uint64_t(k.gemm.group));
      w.varint(uint64_t(k.gemm.wbits));
      w.u8(uint32_t(k.gemm.act));
      w.varint(uint64_t(k.gemm.bases));
      w.varint(uint64_t(k.gemm.salient));
    }
    w.varint(k.tensors.size());
    for (const auto& td : k.tensors) {
      w.varint(td.id);
      w.str(td.name);
      w.varint(td.bytes);
    }
    w.varint(k.program.size());
    for (const Instr& in : k.program) w.instr(in);
  }
  w.out().append(detail::kChecksumBytes, '\0');
  detail::seal_binary(w.out());
  return std::move(w.out());
}

Trace read_binary(std::string_view bytes, const std::string& origin) {
  return BinaryReader(bytes, origin).read();
}

}  // namespace ltc::traces
