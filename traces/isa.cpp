#include "traces/isa.h"

#include "common/error.h"
#include "traces/trace_detail.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <string>

namespace ltc::traces {
namespace {

using golden::DType;

constexpr const char* kVarNames[kAffineVars] = {"bx", "by", "wx", "wy", "i0", "i1",
                                                "i2", "i3", "i4", "i5", "bz"};
constexpr int64_t kMaxMagnitude = int64_t(1) << 62;

using detail::fail;

// Decimal integer, optionally signed, |x| < 2^62.
int64_t parse_int(std::string_view s, const std::string& where, std::string_view what) {
  bool neg = false;
  size_t i = 0;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    i = 1;
  }
  if (i == s.size()) fail(where, "missing number in " + std::string(what));
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') {
      fail(where, "bad number '" + std::string(s) + "' in " + std::string(what));
    }
    if (v > (kMaxMagnitude - 1 - (s[i] - '0')) / 10) {
      fail(where, "number '" + std::string(s) + "' overflows");
    }
    v = v * 10 + (s[i] - '0');
  }
  return neg ? -v : v;
}

uint64_t parse_uint(std::string_view s, const std::string& where, std::string_view what) {
  const int64_t v = parse_int(s, where, what);
  if (v < 0) fail(where, std::string(what) + " must be >= 0");
  return uint64_t(v);
}

// Short dtype names of the mnemonics.
std::string_view short_dtype(DType t) {
  switch (t) {
    case DType::kInt8:
      return "i8";
    case DType::kInt16:
      return "i16";
    case DType::kInt32:
      return "i32";
    case DType::kFp16:
      return "f16";
    case DType::kBf16:
      return "bf16";
    case DType::kFp8E4M3:
      return "e4m3";
    case DType::kFp8E5M2:
      return "e5m2";
    case DType::kFp32:
      return "f32";
  }
  return "?";
}

DType parse_short_dtype(std::string_view s, const std::string& where, std::string_view what) {
  for (DType t : golden::kAllDTypes) {
    if (short_dtype(t) == s) return t;
  }
  fail(where, "unknown " + std::string(what) + " dtype '" + std::string(s) +
                  "' (valid: i8, i16, i32, f16, bf16, e4m3, e5m2, f32)");
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

// "m2n64k4" -> shape.
golden::LmmaShape parse_shape(std::string_view s, const std::string& where) {
  golden::LmmaShape shape;
  const char keys[3] = {'m', 'n', 'k'};
  int values[3] = {0, 0, 0};
  size_t pos = 0;
  for (int f = 0; f < 3; ++f) {
    if (pos >= s.size() || s[pos] != keys[f]) {
      fail(where, "bad shape '" + std::string(s) + "' (expected like m2n64k4)");
    }
    size_t end = ++pos;
    while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end]))) ++end;
    if (end == pos || end - pos > 6) fail(where, "bad shape '" + std::string(s) + "'");
    values[f] = int(parse_int(s.substr(pos, end - pos), where, "shape"));
    pos = end;
  }
  if (pos != s.size()) fail(where, "bad shape '" + std::string(s) + "'");
  shape.m = values[0];
  shape.n = values[1];
  shape.k = values[2];
  return shape;
}

}  // namespace

// ---- Affine -----------------------------------------------------------------------------------
bool Affine::is_zero() const {
  return base == 0 && std::all_of(coef.begin(), coef.end(), [](int64_t c) { return c == 0; });
}

std::string Affine::str() const {
  std::string s;
  auto term = [&](int64_t c, const char* var) {
    if (c == 0) return;
    if (c < 0) {
      s += '-';
    } else if (!s.empty()) {
      s += '+';
    }
    const uint64_t mag = c < 0 ? uint64_t(-(c + 1)) + 1 : uint64_t(c);
    if (var) {
      s += var;
      if (mag != 1) s += "*" + std::to_string(mag);
    } else {
      s += std::to_string(mag);
    }
  };
  // The block's coordinates first (bx, by, bz), then the warp's and the loop counters.
  static_assert(kAffineVars == 11 && int(AffineVar::kBz) == 10);
  constexpr int kOrder[kAffineVars] = {0, 1, 10, 2, 3, 4, 5, 6, 7, 8, 9};
  for (int v : kOrder) term(coef[v], kVarNames[v]);
  term(base, nullptr);
  return s.empty() ? "0" : s;
}

Affine Affine::parse(std::string_view s, const std::string& where) {
  Affine a;
  if (s.empty()) fail(where, "empty expression");
  size_t i = 0;
  while (i < s.size()) {
    bool neg = false;
    if (s[i] == '+' || s[i] == '-') {
      neg = s[i] == '-';
      ++i;
    } else if (i != 0) {
      fail(where, "bad expression '" + std::string(s) + "'");
    }
    size_t end = i;
    while (end < s.size() && s[end] != '+' && s[end] != '-') ++end;
    const std::string_view term = s.substr(i, end - i);
    if (term.empty()) fail(where, "bad expression '" + std::string(s) + "'");
    i = end;
    const auto star = term.find('*');
    std::string_view var = term, num = "";
    if (star != std::string_view::npos) {
      var = term.substr(0, star);
      num = term.substr(star + 1);
      if (!var.empty() && std::isdigit(static_cast<unsigned char>(var[0]))) std::swap(var, num);
    } else if (std::isdigit(static_cast<unsigned char>(term[0]))) {
      num = term;
      var = "";
    }
    int64_t value = num.empty() ? 1 : parse_int(num, where, "expression");
    if (neg) value = -value;
    if (var.empty()) {
      a.base += value;
      if (a.base >= kMaxMagnitude || a.base <= -kMaxMagnitude) fail(where, "expression overflows");
      continue;
    }
    int idx = -1;
    for (int v = 0; v < kAffineVars; ++v) {
      if (var == kVarNames[v]) idx = v;
    }
    if (idx < 0) {
      fail(where,
           "unknown variable '" + std::string(var) + "' (valid: bx, by, bz, wx, wy, i0..i5)");
    }
    a.coef[idx] += value;
    if (a.coef[idx] >= kMaxMagnitude || a.coef[idx] <= -kMaxMagnitude) {
      fail(where, "expression overflows");
    }
  }
  return a;
}

// ---- LMMA / MMA -------------------------------------------------------------------------------
DType LmmaOp::table() const {
  return golden::lut_table_dtype(act, quantized_table);
}

golden::LmmaType LmmaOp::lmma_type() const {
  return golden::LmmaType{table(), wbits, acc, out};
}

std::string LmmaOp::name() const {
  return "lmma." + shape.name() + "." + (quantized_table ? "q8" : "") +
         std::string(short_dtype(act)) + ".i" + std::to_string(wbits) + "." +
         std::string(short_dtype(acc)) + "." + std::string(short_dtype(out));
}

bool LmmaOp::operator==(const LmmaOp& o) const {
  return shape == o.shape && act == o.act && quantized_table == o.quantized_table &&
         wbits == o.wbits && acc == o.acc && out == o.out;
}

LmmaOp LmmaOp::parse(std::string_view mnemonic, const std::string& where) {
  const auto parts = split(mnemonic, '.');
  if (parts.size() != 6 || parts[0] != "lmma") {
    fail(where,
         "bad lmma mnemonic '" + std::string(mnemonic) +
             "' (expected lmma.{M}{N}{K}.{A}.{W}.{Acc}.{O}, e.g. lmma.m2n64k4.f16.i2.f32.f32)");
  }
  LmmaOp op;
  op.shape = parse_shape(parts[1], where);
  std::string_view a = parts[2];
  if (a.size() > 2 && a.substr(0, 2) == "q8") {
    op.quantized_table = true;
    a = a.substr(2);
  }
  op.act = parse_short_dtype(a, where, "activation");
  if (op.act == DType::kInt16 || op.act == DType::kInt32 || op.act == DType::kFp32) {
    fail(where,
         "lmma activation must be i8, f16, bf16, e4m3 or e5m2 (q8 prefix: int8 tables), not " +
             std::string(parts[2]));
  }
  if (parts[3].size() < 2 || parts[3][0] != 'i') {
    fail(where, "lmma weight field '" + std::string(parts[3]) + "' must be i1..i8");
  }
  op.wbits = int(parse_int(parts[3].substr(1), where, "weight bits"));
  op.acc = parse_short_dtype(parts[4], where, "accumulator");
  op.out = parse_short_dtype(parts[5], where, "output");
  golden::validate(op.shape, op.lmma_type());
  return op;
}

std::string MmaOp::name() const {
  return "mma." + shape.name() + "." + std::string(short_dtype(a)) + "." +
         std::string(short_dtype(b)) + "." + std::string(short_dtype(acc)) + "." +
         std::string(short_dtype(out));
}

bool MmaOp::operator==(const MmaOp& o) const {
  return shape == o.shape && a == o.a && b == o.b && acc == o.acc && out == o.out;
}

MmaOp MmaOp::parse(std::string_view mnemonic, const std::string& where) {
  const auto parts = split(mnemonic, '.');
  if (parts.size() != 6 || parts[0] != "mma") {
    fail(where,
         "bad mma mnemonic '" + std::string(mnemonic) +
             "' (expected mma.{M}{N}{K}.{A}.{B}.{Acc}.{O}, e.g. mma.m16n8k16.f16.f16.f32.f32)");
  }
  MmaOp op;
  op.shape = parse_shape(parts[1], where);
  op.a = parse_short_dtype(parts[2], where, "A");
  op.b = parse_short_dtype(parts[3], where, "B");
  op.acc = parse_short_dtype(parts[4], where, "accumulator");
  op.out = parse_short_dtype(parts[5], where, "output");
  validate(op, where);
  return op;
}

bool CoreSpec::supports_act(DType a) const {
  if (acts.empty()) return a == config.act;
  return std::find(acts.begin(), acts.end(), a) != acts.end();
}

void validate(const LmmaOp& op, const CoreSpec& core, const std::string& where) {
  const hw::TensorCoreConfig& c = core.config;
  if (c.design != hw::TensorCoreDesign::kLut && c.design != hw::TensorCoreDesign::kLutNaive) {
    fail(where, op.name() + " needs a LUT tensor core, but the core is " +
                    std::string(hw::design_name(c.design)));
  }
  // One instruction may span a x b tiles of the core (the tensor core runs its parallel tiles,
  // then further weight-plane cycles); K is the table width and cannot grow.
  if (op.shape.m < 1 || op.shape.n < 1 || op.shape.m % c.shape.m != 0 ||
      op.shape.n % c.shape.n != 0 || op.shape.k != c.shape.k) {
    fail(where, "lmma shape " + op.shape.name() + " is not supported by tensor core " +
                    c.shape.name() + " (valid: m a multiple of " + std::to_string(c.shape.m) +
                    ", n a multiple of " + std::to_string(c.shape.n) + ", k " +
                    std::to_string(c.shape.k) + ")");
  }
  if (!core.supports_act(op.act)) {
    std::string valid;
    for (DType a : core.acts.empty() ? std::vector<DType>{c.act} : core.acts) {
      valid += (valid.empty() ? "" : ", ") + std::string(short_dtype(a));
    }
    fail(where, op.name() + ": tensor core " + c.id() + " builds no tables from " +
                    std::string(short_dtype(op.act)) + " (valid: " + valid + ")");
  }
  try {
    golden::validate(op.shape, op.lmma_type());
  } catch (const InputError& e) {
    fail(where, op.name() + ": " + e.what());
  }
}

void validate(const MmaOp& op, const std::string& where) {
  const bool int8 = op.a == DType::kInt8 && op.b == DType::kInt8;
  const bool f16 = (op.a == DType::kFp16 || op.a == DType::kBf16) && op.b == op.a;
  const bool f8 = (op.a == DType::kFp8E4M3 || op.a == DType::kFp8E5M2) &&
                  (op.b == DType::kFp8E4M3 || op.b == DType::kFp8E5M2);
  const golden::LmmaShape s = op.shape;
  const bool shape_ok =
      s.m == 16 && s.n == 8 &&
      ((f16 && (s.k == 8 || s.k == 16)) || ((int8 || f8) && (s.k == 16 || s.k == 32)));
  if (!(int8 || f16 || f8) || !shape_ok) {
    fail(where, op.name() +
                    " is not a MAC tensor-core instruction (valid: mma.m16n8k{8,16}.f16.f16 / "
                    "bf16.bf16, mma.m16n8k{16,32}.i8.i8 / e4m3 / e5m2)");
  }
  if (int8 ? op.acc != DType::kInt32 : (op.acc != DType::kFp32 && op.acc != DType::kFp16)) {
    fail(where, op.name() + ": accumulator must be i32 for i8, f32 or f16 for floats");
  }
}

// ---- instructions -----------------------------------------------------------------------------
std::string_view opcode_name(Opcode op) {
  switch (op) {
    case Opcode::kLdGlobal:
      return "ldg";
    case Opcode::kLdGlobalAsync:
      return "ldgsts";
    case Opcode::kLdShared:
      return "lds";
    case Opcode::kStShared:
      return "sts";
    case Opcode::kStGlobal:
      return "stg";
    case Opcode::kBarrier:
      return "bar";
    case Opcode::kPrecompute:
      return "precompute";
    case Opcode::kQuantTable:
      return "qtable";
    case Opcode::kLmma:
      return "lmma";
    case Opcode::kMma:
      return "mma";
    case Opcode::kDequant:
      return "dequant";
    case Opcode::kAlu:
      return "alu";
    case Opcode::kSfu:
      return "sfu";
    case Opcode::kLoop:
      return "loop";
    case Opcode::kEndLoop:
      return "endloop";
    case Opcode::kCommit:
      return "commit";
    case Opcode::kWait:
      return "wait";
  }
  return "?";
}

uint64_t Instr::cuda_ops() const {
  switch (op) {
    case Opcode::kPrecompute:
      return uint64_t(rows) * ((cols + k_group - 1) / k_group) * (uint64_t(1) << (k_group - 1));
    case Opcode::kQuantTable:
      return count * 3 * 8;  // max, divide, round per entry
    case Opcode::kDequant:
      return uint64_t(rows) * cols * 4;  // scale, bias fma, convert, add
    case Opcode::kAlu:
    case Opcode::kSfu:
      return count;
    default:
      return 0;
  }
}

bool Instr::operator==(const Instr& o) const {
  return op == o.op && tensor == o.tensor && bytes == o.bytes && addr == o.addr && m == o.m &&
         n == o.n && k == o.k && g == o.g && rows == o.rows && cols == o.cols && basis == o.basis &&
         row_scale == o.row_scale && salient == o.salient && lmma == o.lmma && mma == o.mma &&
         k_group == o.k_group && act == o.act && table == o.table && count == o.count &&
         int_ops == o.int_ops && frag == o.frag && stride == o.stride;
}

std::string Instr::str() const {
  std::string s;
  auto field = [&](const char* key, const std::string& value) {
    s += ' ';
    s += key;
    s += '=';
    s += value;
  };
  switch (op) {
    case Opcode::kLdGlobal:
    case Opcode::kLdGlobalAsync:
    case Opcode::kStGlobal:
      s = std::string(opcode_name(op));
      field("t", std::to_string(tensor));
      field("bytes", std::to_string(bytes));
      field("addr", addr.str());
      if (frag) field("frag", std::to_string(frag));
      break;
    case Opcode::kLdShared:
    case Opcode::kStShared:
      s = std::string(opcode_name(op));
      field("bytes", std::to_string(bytes));
      field("addr", addr.str());
      if (frag) field("frag", std::to_string(frag));
      if (stride) field("stride", std::to_string(stride));
      break;
    case Opcode::kBarrier:
    case Opcode::kEndLoop:
    case Opcode::kCommit:
      s = std::string(opcode_name(op));
      break;
    case Opcode::kWait:
      s = "wait";
      field("n", std::to_string(count));
      break;
    case Opcode::kLoop:
      s = "loop " + std::to_string(count);
      break;
    case Opcode::kQuantTable:
    case Opcode::kAlu:
    case Opcode::kSfu:
      s = std::string(opcode_name(op));
      field("count", std::to_string(count));
      if (int_ops > 0) field("int", std::to_string(int_ops));
      break;
    case Opcode::kPrecompute:
      s = "precompute.k" + std::to_string(k_group) + "." + std::string(short_dtype(act)) + "." +
          std::string(short_dtype(table));
      field("m", m.str());
      field("k", k.str());
      field("rows", std::to_string(rows));
      field("cols", std::to_string(cols));
      if (basis) field("basis", std::to_string(basis));
      break;
    case Opcode::kLmma:
      s = lmma.name();
      field("m", m.str());
      field("n", n.str());
      field("k", k.str());
      if (basis) field("basis", std::to_string(basis));
      if (frag) field("frag", std::to_string(frag));
      break;
    case Opcode::kMma:
      s = mma.name();
      field("m", m.str());
      field("n", n.str());
      field("k", k.str());
      if (frag) field("frag", std::to_string(frag));
      break;
    case Opcode::kDequant:
      s = "dequant";
      field("m", m.str());
      field("n", n.str());
      field("g", g.str());
      field("rows", std::to_string(rows));
      field("cols", std::to_string(cols));
      if (basis) field("basis", std::to_string(basis));
      if (row_scale) field("rowscale", "1");
      if (salient) field("salient", "1");
      break;
  }
  return s;
}

Instr parse_instr(std::string_view line, const std::string& where) {
  Instr in;
  auto tokens = split(line, ' ');
  tokens.erase(std::remove(tokens.begin(), tokens.end(), std::string_view()), tokens.end());
  if (tokens.empty()) fail(where, "empty instruction");
  const std::string_view mn = tokens[0];
  const std::string_view stem = mn.substr(0, mn.find('.'));
  bool found = false;
  for (int i = 1; i <= kOpcodeCount; ++i) {
    if (opcode_name(Opcode(i)) == stem) {
      in.op = Opcode(i);
      found = true;
    }
  }
  if (!found) fail(where, "unknown opcode '" + std::string(mn) + "'");
  if (in.op != Opcode::kLmma && in.op != Opcode::kMma && in.op != Opcode::kPrecompute &&
      stem != mn) {
    fail(where, "unknown opcode '" + std::string(mn) + "'");
  }
  size_t first_field = 1;
  if (in.op == Opcode::kLmma) {
    in.lmma = LmmaOp::parse(mn, where);
  } else if (in.op == Opcode::kMma) {
    in.mma = MmaOp::parse(mn, where);
  } else if (in.op == Opcode::kPrecompute) {
    const auto parts = split(mn, '.');
    if (parts.size() != 4 || parts[1].size() < 2 || parts[1][0] != 'k') {
      fail(where, "bad precompute mnemonic '" + std::string(mn) +
                      "' (expected precompute.k{K}.{act}.{table}, e.g. precompute.k4.i8.i16)");
    }
    in.k_group = int(parse_int(parts[1].substr(1), where, "precompute K"));
    if (in.k_group < 1 || in.k_group > golden::kMaxK) fail(where, "precompute K must be 1..8");
    in.act = parse_short_dtype(parts[2], where, "activation");
    in.table = parse_short_dtype(parts[3], where, "table");
  } else if (in.op == Opcode::kLoop) {
    if (tokens.size() != 2) fail(where, "expected 'loop N'");
    const int64_t count = parse_int(tokens[1], where, "loop count");
    detail::check_loop_count(count, where);
    in.count = uint64_t(count);
    return in;
  }
  // Fields allowed per opcode.
  std::string allowed;
  switch (in.op) {
    case Opcode::kLdGlobal:
      allowed = " t bytes addr frag ";
      break;
    case Opcode::kLdGlobalAsync:
    case Opcode::kStGlobal:
      allowed = " t bytes addr ";
      break;
    case Opcode::kLdShared:
    case Opcode::kStShared:
      allowed = in.op == Opcode::kLdShared ? " bytes addr frag stride " : " bytes addr stride ";
      break;
    case Opcode::kQuantTable:
    case Opcode::kSfu:
      allowed = " count ";
      break;
    case Opcode::kAlu:
      allowed = " count int ";
      break;
    case Opcode::kPrecompute:
      allowed = " m k rows cols basis ";
      break;
    case Opcode::kLmma:
      allowed = " m n k basis frag ";
      break;
    case Opcode::kMma:
      allowed = " m n k frag ";
      break;
    case Opcode::kWait:
      allowed = " n ";
      break;
    case Opcode::kDequant:
      allowed = " m n g rows cols basis rowscale salient ";
      break;
    default:
      allowed = " ";
      break;
  }
  std::string seen = " ";
  for (size_t t = first_field; t < tokens.size(); ++t) {
    const auto eq = tokens[t].find('=');
    if (eq == std::string_view::npos) {
      fail(where, "expected key=value, got '" + std::string(tokens[t]) + "'");
    }
    const std::string key(tokens[t].substr(0, eq));
    const std::string_view value = tokens[t].substr(eq + 1);
    if (allowed.find(" " + key + " ") == std::string::npos) {
      fail(where, std::string(opcode_name(in.op)) + " has no field '" + key +
                      "' (fields:" + allowed + ")");
    }
    if (seen.find(" " + key + " ") != std::string::npos) {
      fail(where, "field '" + key + "' given twice");
    }
    seen += key + " ";
    auto u32 = [&](std::string_view what) {
      const uint64_t v = parse_uint(value, where, what);
      if (v > std::numeric_limits<uint32_t>::max()) fail(where, key + " is too large");
      return uint32_t(v);
    };
    if (key == "t")
      in.tensor = u32("t");
    else if (key == "bytes")
      in.bytes = parse_uint(value, where, "bytes");
    else if (key == "addr")
      in.addr = Affine::parse(value, where);
    else if (key == "count")
      in.count = parse_uint(value, where, "count");
    else if (key == "int")
      in.int_ops = parse_uint(value, where, "int");
    else if (key == "n" && in.op == Opcode::kWait)
      in.count = parse_uint(value, where, "n");
    else if (key == "m")
      in.m = Affine::parse(value, where);
    else if (key == "n")
      in.n = Affine::parse(value, where);
    else if (key == "k")
      in.k = Affine::parse(value, where);
    else if (key == "g")
      in.g = Affine::parse(value, where);
    else if (key == "rows")
      in.rows = u32("rows");
    else if (key == "cols")
      in.cols = u32("cols");
    else if (key == "basis")
      in.basis = u32("basis");
    else if (key == "rowscale")
      in.row_scale = u32("rowscale") != 0;
    else if (key == "salient")
      in.salient = u32("salient") != 0;
    else if (key == "frag")
      in.frag = u32("frag");
    else if (key == "stride")
      in.stride = u32("stride");
  }
  return in;
}

}  // namespace ltc::traces
