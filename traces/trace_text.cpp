// The text form of a trace (traces/trace.h): write_text and its reader.
#include "common/error.h"
#include "traces/trace.h"
#include "traces/trace_detail.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <tuple>

namespace ltc::traces {

using detail::fail;
using golden::DType;

using detail::triple;

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
    o << "  grid " << k.grid_x << " " << k.grid_y;
    if (k.grid_z > 1) o << " " << k.grid_z;
    o << "\n";
    o << "  block " << k.warps_x << " " << k.warps_y << "\n";
    o << "  resources smem=" << k.smem_bytes << " regs=" << k.regs_per_thread << "\n";
    if (k.cluster_x > 1) o << "  cluster " << k.cluster_x << "\n";
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
      fail(where(), "not an ltc trace (expected 'ltc-trace V' on the first line, V one of " +
                        detail::supported_versions() + ")");
    }
    t.version = int(num(tok[1], "version"));
    detail::check_trace_version(t.version, where());
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
        // `grid X Y`, or `grid X Y Z` from trace version 5 on.
        if (tok.size() != 3 && (tok.size() != 4 || t.version < 5)) {
          fail(where(), t.version < 5 ? "'grid' takes 2 field(s) (a grid z needs trace version 5)"
                                      : "'grid' takes 2 or 3 field(s)");
        }
        k->grid_x = num(tok[1], "grid");
        k->grid_y = num(tok[2], "grid");
        if (tok.size() == 4) k->grid_z = num(tok[3], "grid");
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
      } else if (k && kw == "cluster") {
        want(tok, 2);
        k->cluster_x = num(tok[1], "cluster");
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

}  // namespace

Trace read_text(std::string_view text, const std::string& origin) {
  return TextReader(text, origin).read();
}

}  // namespace ltc::traces
