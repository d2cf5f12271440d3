// The trace types and reading or writing a trace file in either form (traces/trace.h). The forms
// are trace_text.cpp and trace_binary.cpp; what a valid trace is, trace_validate.cpp.
#include "traces/trace.h"

#include "common/error.h"
#include "common/file_io.h"
#include "traces/trace_detail.h"

#include <algorithm>
#include <tuple>

namespace ltc::traces {

using detail::fail;
using detail::kBinaryMagic;
using golden::DType;

std::string_view gemm_path_name(GemmPath p) {
  return p == GemmPath::kMma ? "mma" : "lut";
}

GemmPath parse_gemm_path(std::string_view s, const std::string& where) {
  if (s == "lut") return GemmPath::kLut;
  if (s == "mma") return GemmPath::kMma;
  fail(where, "unknown gemm path '" + std::string(s) + "' (valid: lut, mma)");
}

golden::KSlices kernel_k_slices(const Kernel& k) {
  const int64_t bk = k.tiles.block[2], wk = k.tiles.warp[2];
  if (k.gemm.m <= 0 || wk <= 0 || wk >= bk || bk % wk != 0) return {};
  return {wk, int(bk / wk)};
}

const TensorDecl* Kernel::tensor(std::string_view n) const {
  for (const auto& t : tensors) {
    if (t.name == n) return &t;
  }
  return nullptr;
}

bool Kernel::operator==(const Kernel& o) const {
  return name == o.name && grid_x == o.grid_x && grid_y == o.grid_y && grid_z == o.grid_z &&
         warps_x == o.warps_x && warps_y == o.warps_y && smem_bytes == o.smem_bytes &&
         regs_per_thread == o.regs_per_thread && cluster_x == o.cluster_x && tiles == o.tiles &&
         gemm == o.gemm && tensors == o.tensors && program == o.program;
}

namespace {
bool uses_bz(const Instr& in) {
  for (const Affine* a : {&in.addr, &in.m, &in.n, &in.k, &in.g}) {
    if (a->coef[size_t(AffineVar::kBz)] != 0) return true;
  }
  return false;
}
}  // namespace

int Trace::minimum_version() const {
  int v = kMinTraceVersion;
  for (const auto& k : kernels) {
    if (k.grid_z > 1) return 5;
    if (k.cluster_x > 1) v = std::max(v, 3);
    for (const auto& in : k.program) {
      if (uses_bz(in)) return 5;
      if (in.op == Opcode::kAlu && in.int_ops > 0) v = 4;
    }
  }
  return v;
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

Trace read_trace(std::string_view content, const std::string& origin) {
  if (content.size() >= 4 && content.substr(0, 4) == std::string_view(kBinaryMagic, 4)) {
    return read_binary(content, origin);
  }
  return read_text(content, origin);
}

Trace read_trace_file(const std::string& path) {
  return read_trace(read_input_file(path), path);
}

void write_trace_file(const Trace& t, const std::string& path) {
  const bool binary = path.size() >= 5 && path.substr(path.size() - 5) == ".ltcb";
  write_text_atomic(path, binary ? write_binary(t) : write_text(t));
}

}  // namespace ltc::traces
