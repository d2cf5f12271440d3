#include "traces/trace.h"

#include "common/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <tuple>

namespace ltc::traces {
namespace {

using golden::DType;

[[noreturn]] void fail(const std::string& where, const std::string& why) {
  throw InputError(where + ": " + why);
}

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
    if (g.batch != 1 || g.wbits < 1 || g.wbits > 8 || g.bases < 0 || g.bases > 8 || g.salient < 0 ||
        g.salient >= g.group || (g.bases > 0 && g.wbits != 1)) {
      fail(where,
           "lut gemm record needs batch 1, wbits 1..8 (1 with bases), bases 0..8, "
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

std::string triple(const std::array<int64_t, 3>& t) {
  return std::to_string(t[0]) + "," + std::to_string(t[1]) + "," + std::to_string(t[2]);
}

}  // namespace

std::string_view gemm_path_name(GemmPath p) {
  return p == GemmPath::kMma ? "mma" : "lut";
}

GemmPath parse_gemm_path(std::string_view s, const std::string& where) {
  if (s == "lut") return GemmPath::kLut;
  if (s == "mma") return GemmPath::kMma;
  fail(where, "unknown gemm path '" + std::string(s) + "' (valid: lut, mma)");
}

const TensorDecl* Kernel::tensor(std::string_view n) const {
  for (const auto& t : tensors) {
    if (t.name == n) return &t;
  }
  return nullptr;
}

bool Kernel::operator==(const Kernel& o) const {
  return name == o.name && grid_x == o.grid_x && grid_y == o.grid_y && warps_x == o.warps_x &&
         warps_y == o.warps_y && smem_bytes == o.smem_bytes &&
         regs_per_thread == o.regs_per_thread && tiles == o.tiles && gemm == o.gemm &&
         tensors == o.tensors && program == o.program;
}

bool Trace::operator==(const Trace& o) const {
  if (version != o.version || gpu != o.gpu || kernels != o.kernels) return false;
  if (cores.size() != o.cores.size()) return false;
  for (size_t i = 0; i < cores.size(); ++i) {
    if (cores[i].config.id() != o.cores[i].config.id() || cores[i].acts != o.cores[i].acts) {
      return false;
    }
  }
  return true;
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

void validate(const Trace& t, const std::string& origin) {
  if (t.version != kTraceVersion) {
    fail(origin, "trace version " + std::to_string(t.version) +
                     " is not supported (this reader: " + std::to_string(kTraceVersion) + ")");
  }
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
    if (k.grid_x < 1 || k.grid_y < 1 || k.grid_x > (int64_t(1) << 31) ||
        k.grid_y > (int64_t(1) << 16)) {
      fail(kw, "grid must be 1..2^31 x 1..65536 blocks");
    }
    if (k.warps_x < 1 || k.warps_y < 1 || k.warps_per_block() > 32) {
      fail(kw, "a block must have 1..32 warps");
    }
    if (k.tiles.core < -1 || k.tiles.core >= int(t.cores.size())) {
      fail(kw, "tiles core " + std::to_string(k.tiles.core) + " is not declared");
    }
    if (k.gemm.m > 0) validate_gemm_record(k.gemm, kw);
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
    for (size_t i = 0; i < k.program.size(); ++i) {
      const Instr& in = k.program[i];
      const std::string w = kw + ": instruction " + std::to_string(i);
      switch (in.op) {
        case Opcode::kLoop:
          if (in.count < 1) fail(w, "loop count must be >= 1");
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
  }
}

// ---- address checks ----------------------------------------------------------------------------
AddressCheck check_addresses(const Trace& t, const std::string& origin,
                             uint64_t max_expanded_warp_instrs) {
  AddressCheck r;
  for (const Kernel& k : t.kernels) {
    const std::string kw = origin + ": kernel " + k.name;
    // Largest value of each variable at each instruction (loop counters of the open loops).
    std::array<int64_t, kAffineVars> max_value{};
    max_value[0] = k.grid_x - 1;
    max_value[1] = k.grid_y - 1;
    max_value[2] = k.warps_x - 1;
    max_value[3] = k.warps_y - 1;
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
      const bool global = in.op == Opcode::kLdGlobal || in.op == Opcode::kLdGlobalAsync ||
                          in.op == Opcode::kStGlobal;
      const bool shared = in.op == Opcode::kLdShared || in.op == Opcode::kStShared;
      if ((!global && !shared) || in.bytes == 0) continue;
      // validate() bounds every affine below 2^62, so these sums cannot overflow.
      int64_t lo = in.addr.base, hi = in.addr.base;
      for (int v = 0; v < kAffineVars; ++v) {
        const int64_t term = in.addr.coef[size_t(v)] * max_value[size_t(v)];
        (term < 0 ? lo : hi) += term;
      }
      const uint64_t end = uint64_t(std::max<int64_t>(hi, 0)) + in.bytes;
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
      ++r.accesses;
    }
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
    for (int64_t by = 0; by < k.grid_y; ++by) {
      for (int64_t bx = 0; bx < k.grid_x; ++bx) {
        for (int64_t wy = 0; wy < k.warps_y; ++wy) {
          for (int64_t wx = 0; wx < k.warps_x; ++wx) {
            const int64_t warp = ((by * k.grid_x + bx) * k.warps_y + wy) * k.warps_x + wx;
            expand_warp(k, bx, by, wx, wy, [&](const Instr& in, const Affine::Point& p) {
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
      const int64_t b = w / k.warps_per_block();
      return "block (" + std::to_string(b % k.grid_x) + "," + std::to_string(b / k.grid_x) +
             ") warp (" + std::to_string(wx) + "," + std::to_string(wy) + ")";
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

// ---- text ------------------------------------------------------------------------------------
std::string write_text(const Trace& t) {
  std::ostringstream o;
  o << "ltc-trace " << t.version << "\n";
  o << "gpu " << (t.gpu.empty() ? "-" : t.gpu) << "\n";
  for (size_t c = 0; c < t.cores.size(); ++c) {
    nlohmann::json j = t.cores[c].config;
    o << "core " << c << " " << j.dump();
    if (!t.cores[c].acts.empty()) {
      o << " acts=";
      for (size_t a = 0; a < t.cores[c].acts.size(); ++a) {
        o << (a ? "," : "") << golden::dtype_name(t.cores[c].acts[a]);
      }
    }
    o << "\n";
  }
  for (const Kernel& k : t.kernels) {
    o << "kernel " << k.name << "\n";
    o << "  grid " << k.grid_x << " " << k.grid_y << "\n";
    o << "  block " << k.warps_x << " " << k.warps_y << "\n";
    o << "  resources smem=" << k.smem_bytes << " regs=" << k.regs_per_thread << "\n";
    o << "  tiles core=" << k.tiles.core << " block=" << triple(k.tiles.block)
      << " warp=" << triple(k.tiles.warp) << " instr=" << triple(k.tiles.instr) << "\n";
    if (k.gemm.m > 0) {
      o << "  gemm path=" << gemm_path_name(k.gemm.path) << " batch=" << k.gemm.batch
        << " m=" << k.gemm.m << " n=" << k.gemm.n << " k=" << k.gemm.k << " group=" << k.gemm.group
        << " wbits=" << k.gemm.wbits << " act=" << golden::dtype_name(k.gemm.act)
        << " bases=" << k.gemm.bases << " salient=" << k.gemm.salient << "\n";
    }
    for (const auto& td : k.tensors) {
      o << "  tensor " << td.id << " " << td.name << " bytes=" << td.bytes << "\n";
    }
    o << "  program\n";
    int depth = 0;
    for (const Instr& in : k.program) {
      if (in.op == Opcode::kEndLoop) --depth;
      o << std::string(size_t(4 + 2 * std::max(depth, 0)), ' ') << in.str() << "\n";
      if (in.op == Opcode::kLoop) ++depth;
    }
    o << "  end\n";
    o << "end\n";
  }
  return o.str();
}

namespace {

class TextReader {
 public:
  TextReader(std::string_view text, const std::string& origin) : text_(text), origin_(origin) {}

  Trace read() {
    Trace t;
    std::vector<std::string_view> tok;
    if (!next(tok) || tok.size() != 2 || tok[0] != "ltc-trace") {
      fail(where(), "not an ltc trace (expected 'ltc-trace " + std::to_string(kTraceVersion) +
                        "' on the first line)");
    }
    t.version = int(num(tok[1], "version"));
    if (t.version != kTraceVersion) {
      fail(where(), "trace version " + std::to_string(t.version) +
                        " is not supported (this reader: " + std::to_string(kTraceVersion) + ")");
    }
    Kernel* k = nullptr;
    bool in_program = false;
    while (next(tok)) {
      const std::string_view kw = tok[0];
      if (in_program) {
        if (kw == "end") {
          want(tok, 1);
          in_program = false;
          continue;
        }
        std::string line;
        for (size_t i = 0; i < tok.size(); ++i) line += (i ? " " : "") + std::string(tok[i]);
        k->program.push_back(parse_instr(line, where()));
        continue;
      }
      if (kw == "gpu" && !k) {
        want(tok, 2);
        t.gpu = tok[1] == "-" ? "" : std::string(tok[1]);
      } else if (kw == "core" && !k) {
        if (tok.size() < 3 || tok.size() > 4)
          fail(where(), "expected 'core <id> <json> [acts=..]'");
        if (num(tok[1], "core id") != int64_t(t.cores.size())) {
          fail(where(), "core ids must be 0, 1, ... in order");
        }
        CoreSpec c;
        try {
          c.config = nlohmann::json::parse(tok[2]).get<hw::TensorCoreConfig>();
        } catch (const InputError& e) {
          fail(where(), std::string("core: ") + e.what());
        } catch (const std::exception& e) {
          fail(where(), std::string("core: bad tensor-core JSON (") + e.what() + ")");
        }
        if (tok.size() == 4) {
          if (tok[3].substr(0, 5) != "acts=") fail(where(), "expected acts=<dtype,...>");
          std::string_view list = tok[3].substr(5);
          while (!list.empty()) {
            const auto comma = list.find(',');
            c.acts.push_back(golden::parse_dtype(list.substr(0, comma), where() + ": acts"));
            list = comma == std::string_view::npos ? "" : list.substr(comma + 1);
          }
        }
        t.cores.push_back(c);
      } else if (kw == "kernel") {
        if (k) fail(where(), "kernel inside kernel (missing 'end')");
        want(tok, 2);
        t.kernels.emplace_back();
        k = &t.kernels.back();
        k->name = std::string(tok[1]);
      } else if (k && kw == "grid") {
        want(tok, 3);
        k->grid_x = num(tok[1], "grid");
        k->grid_y = num(tok[2], "grid");
      } else if (k && kw == "block") {
        want(tok, 3);
        k->warps_x = num(tok[1], "block");
        k->warps_y = num(tok[2], "block");
      } else if (k && kw == "resources") {
        want(tok, 3);
        k->smem_bytes = uint64_t(num(value(tok[1], "smem"), "smem"));
        const int64_t regs = num(value(tok[2], "regs"), "regs");
        if (regs > 65535) fail(where(), "regs must be <= 65535");
        k->regs_per_thread = uint32_t(regs);
      } else if (k && kw == "tiles") {
        want(tok, 5);
        k->tiles.core = int(snum(value(tok[1], "core"), "core"));
        k->tiles.block = three(value(tok[2], "block"));
        k->tiles.warp = three(value(tok[3], "warp"));
        k->tiles.instr = three(value(tok[4], "instr"));
      } else if (k && kw == "gemm") {
        // Version-1 records lack path and batch: they are LUT GEMMs of batch 1.
        if (tok.size() != 9 && tok.size() != 11) {
          fail(where(),
               "'gemm' takes path= batch= m= n= k= group= wbits= act= bases= salient= fields");
        }
        size_t f = 1;
        if (tok.size() == 11) {
          k->gemm.path = parse_gemm_path(value(tok[f++], "path"), where());
          k->gemm.batch = num(value(tok[f++], "batch"), "batch");
        }
        k->gemm.m = num(value(tok[f++], "m"), "m");
        k->gemm.n = num(value(tok[f++], "n"), "n");
        k->gemm.k = num(value(tok[f++], "k"), "k");
        k->gemm.group = num(value(tok[f++], "group"), "group");
        k->gemm.wbits = int(small(value(tok[f++], "wbits"), "wbits"));
        k->gemm.act = golden::parse_dtype(value(tok[f++], "act"), where() + ": act");
        k->gemm.bases = int(small(value(tok[f++], "bases"), "bases"));
        k->gemm.salient = num(value(tok[f++], "salient"), "salient");
      } else if (k && kw == "tensor") {
        want(tok, 4);
        TensorDecl td;
        const int64_t id = num(tok[1], "tensor id");
        if (id > 0xffffffffLL) fail(where(), "tensor id too large");
        td.id = uint32_t(id);
        td.name = std::string(tok[2]);
        td.bytes = uint64_t(num(value(tok[3], "bytes"), "bytes"));
        k->tensors.push_back(td);
      } else if (k && kw == "program") {
        want(tok, 1);
        if (!k->program.empty()) fail(where(), "a kernel has one program");
        in_program = true;
      } else if (k && kw == "end") {
        want(tok, 1);
        k = nullptr;
      } else {
        fail(where(), "unexpected '" + std::string(kw) + "'");
      }
    }
    if (in_program || k) fail(where(), "unexpected end of file (missing 'end')");
    validate(t, origin_);
    return t;
  }

 private:
  std::string where() const { return origin_ + ":" + std::to_string(line_); }

  // Next non-empty line split into tokens; false at end of input.
  bool next(std::vector<std::string_view>& tok) {
    while (pos_ < text_.size()) {
      size_t end = text_.find('\n', pos_);
      if (end == std::string_view::npos) end = text_.size();
      std::string_view line = text_.substr(pos_, end - pos_);
      pos_ = end + 1;
      ++line_;
      if (const auto hash = line.find('#'); hash != std::string_view::npos)
        line = line.substr(0, hash);
      tok.clear();
      size_t i = 0;
      while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
        size_t j = i;
        while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
        if (j > i) tok.push_back(line.substr(i, j - i));
        i = j;
      }
      if (!tok.empty()) return true;
    }
    return false;
  }

  void want(const std::vector<std::string_view>& tok, size_t n) const {
    if (tok.size() != n) {
      fail(where(), "'" + std::string(tok[0]) + "' takes " + std::to_string(n - 1) + " field(s)");
    }
  }
  std::string_view value(std::string_view kv, std::string_view key) const {
    if (kv.size() <= key.size() || kv.substr(0, key.size()) != key || kv[key.size()] != '=') {
      fail(where(), "expected " + std::string(key) + "=..., got '" + std::string(kv) + "'");
    }
    return kv.substr(key.size() + 1);
  }
  int64_t snum(std::string_view s, std::string_view what) const {
    bool neg = !s.empty() && s[0] == '-';
    const int64_t v = num(neg ? s.substr(1) : s, what);
    return neg ? -v : v;
  }
  int64_t num(std::string_view s, std::string_view what) const {
    if (s.empty() || s.size() > 18)
      fail(where(), "bad " + std::string(what) + " '" + std::string(s) + "'");
    int64_t v = 0;
    for (char c : s) {
      if (c < '0' || c > '9')
        fail(where(), "bad " + std::string(what) + " '" + std::string(s) + "'");
      v = v * 10 + (c - '0');
    }
    return v;
  }
  int64_t small(std::string_view s, std::string_view what) const {
    const int64_t v = num(s, what);
    if (v > 64) fail(where(), std::string(what) + " is too large");
    return v;
  }
  std::array<int64_t, 3> three(std::string_view s) const {
    std::array<int64_t, 3> r{};
    for (int i = 0; i < 3; ++i) {
      const auto comma = s.find(',');
      if ((i < 2) == (comma == std::string_view::npos))
        fail(where(), "expected three numbers a,b,c");
      r[i] = num(s.substr(0, comma), "tile");
      s = comma == std::string_view::npos ? "" : s.substr(comma + 1);
    }
    return r;
  }

  std::string_view text_;
  std::string origin_;
  size_t pos_ = 0;
  int line_ = 0;
};

// ---- binary ----------------------------------------------------------------------------------
constexpr char kMagic[4] = {'L', 'T', 'C', 'T'};

class BinaryWriter {
 public:
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
      case Opcode::kAlu:
      case Opcode::kSfu:
      case Opcode::kWait:
        varint(in.count);
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
  std::string out_;
};

class BinaryReader {
 public:
  BinaryReader(std::string_view b, const std::string& origin) : b_(b), origin_(origin) {}

  Trace read() {
    if (b_.size() < 6 || b_.substr(0, 4) != std::string_view(kMagic, 4)) {
      fail(where(), "not a binary ltc trace (missing LTCT magic)");
    }
    pos_ = 4;
    Trace t;
    t.version = int(u8()) | (int(u8()) << 8);
    if (t.version != kTraceVersion) {
      fail(where(), "trace version " + std::to_string(t.version) +
                        " is not supported (this reader: " + std::to_string(kTraceVersion) + ")");
    }
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
    const uint64_t mask = bounded((uint64_t(1) << (kAffineVars + 1)) - 1);
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
        if (in.count < 1) fail(where(), "loop count must be >= 1");
        break;
      case Opcode::kQuantTable:
      case Opcode::kAlu:
      case Opcode::kSfu:
        in.count = bounded(uint64_t(1) << 48);
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
};

}  // namespace

Trace read_text(std::string_view text, const std::string& origin) {
  return TextReader(text, origin).read();
}

std::string write_binary(const Trace& t) {
  BinaryWriter w;
  w.out().append(kMagic, 4);
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
  return std::move(w.out());
}

Trace read_binary(std::string_view bytes, const std::string& origin) {
  return BinaryReader(bytes, origin).read();
}

Trace read_trace(std::string_view content, const std::string& origin) {
  if (content.size() >= 4 && content.substr(0, 4) == std::string_view(kMagic, 4)) {
    return read_binary(content, origin);
  }
  return read_text(content, origin);
}

Trace read_trace_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open trace file");
  std::ostringstream s;
  s << in.rdbuf();
  return read_trace(s.str(), path);
}

void write_trace_file(const Trace& t, const std::string& path) {
  const bool binary = path.size() >= 5 && path.substr(path.size() - 5) == ".ltcb";
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InputError(path + ": cannot write the trace (does its directory exist?)");
  const std::string data = binary ? write_binary(t) : write_text(t);
  out.write(data.data(), std::streamsize(data.size()));
  if (!out) throw std::runtime_error(path + ": write failed");
}

}  // namespace ltc::traces
