#include "sim/rtl_tensor_core.h"

#include "common/error.h"
#include "model/golden/lmma.h"

#include <algorithm>
#include <utility>

namespace ltc::sim {

RtlTensorCore::RtlTensorCore(const hw::GpuConfig& gpu, hw::TensorCoreDesign design,
                             std::string cache_dir, bool optimized)
    : gpu_(gpu), design_(design), cache_dir_(std::move(cache_dir)), optimized_(optimized) {
  if (design != hw::TensorCoreDesign::kLut && design != hw::TensorCoreDesign::kLutNaive) {
    throw InputError(
        "--tc: the RTL back end runs the lut or lut-naive tile (valid: rtl, rtl-naive)");
  }
}

std::string_view RtlTensorCore::name() const {
  return design_ == hw::TensorCoreDesign::kLut ? "rtl" : "rtl-naive";
}

hw::TensorOpTiming RtlTensorCore::mma(const traces::MmaOp& op) const {
  return gpu_.mma_timing(op.shape, golden::dtype_name(op.a), golden::dtype_name(op.b));
}

rtl::VerilatedTile& RtlTensorCore::tile_for(const traces::LmmaInstance& l) const {
  const auto key = std::make_tuple(int(l.act), int(l.type.table), int(l.type.acc), int(l.type.out));
  auto it = tiles_.find(key);
  if (it != tiles_.end()) return *it->second;
  const hw::TensorCoreConfig& core = gpu_.lut_tensor->core;
  hw::TensorCoreConfig c =
      hw::TensorCoreConfig::make(design_, core.shape, l.act, golden::kMaxWBits);
  c.table = l.type.table;
  c.acc = l.type.acc;
  c.out = l.type.out;
  c.pipeline_stages = core.pipeline_stages;
  c.validate();
  rtl::HarnessOptions o;
  o.cache_dir = cache_dir_;
  o.optimized = optimized_;
  auto tile = std::make_unique<rtl::VerilatedTile>(c, o);
  return *tiles_.emplace(key, std::move(tile)).first->second;
}

traces::LmmaInstance RtlTensorCore::zero_instance(const traces::LmmaOp& op) const {
  traces::LmmaInstance l;
  l.shape = op.shape;
  l.type = op.quantized_table ? golden::LmmaType{golden::DType::kInt8, op.wbits,
                                                 golden::DType::kInt32, golden::DType::kInt32}
                              : op.lmma_type();
  l.act = op.act;
  const size_t m = size_t(op.shape.m), n = size_t(op.shape.n);
  l.half_tables.assign(m * size_t(op.shape.half_table_size()), golden::encode(l.type.table, 0.0));
  l.acts.assign(m * size_t(op.shape.k), golden::encode(op.act, 0.0));
  l.planes.assign(size_t(op.wbits) * n, 0);
  l.c.assign(m * n, golden::encode(l.type.acc, 0.0));
  return l;
}

RtlTensorCore::Run RtlTensorCore::run(const traces::LmmaInstance& l, bool want_outputs) const {
  if (!gpu_.lut_tensor) throw InputError("gpu '" + gpu_.name + "' has no LUT tensor core");
  // The shape checks and the fast formula's error messages in one place.
  (void)gpu_.lmma_timing(l.shape, l.type.wbits);
  const bool naive = design_ == hw::TensorCoreDesign::kLutNaive;
  if (naive && l.type.table == golden::DType::kInt8) {
    throw InputError(
        "--tc rtl-naive: quantized (q8) tables are built outside the tile; the naive "
        "tile builds its own table (valid: --tc rtl for q8 traces)");
  }
  rtl::VerilatedTile& tile = tile_for(l);
  const golden::LmmaShape& cs = gpu_.lut_tensor->core.shape;
  const int a = l.shape.m / cs.m, b = l.shape.n / cs.n, k = cs.k, half = cs.half_table_size();
  const int slots = std::max(gpu_.lut_tensor->tiles_per_tensor_core, 1);
  const int wbits = l.type.wbits;
  const size_t in_n = size_t(l.shape.n);
  // The tile LMMA of sub-block (ti, tj): its rows' tables (naive: activations), its columns'
  // plane bits (element n*K+k) per beat, its C.
  auto tile_lmma = [&](int ti, int tj) {
    rtl::TileLmma t;
    std::vector<uint32_t> a_side;
    for (int r = ti * cs.m; r < (ti + 1) * cs.m; ++r) {
      if (naive) {
        a_side.insert(a_side.end(), l.acts.begin() + ptrdiff_t(r) * k,
                      l.acts.begin() + ptrdiff_t(r + 1) * k);
      } else {
        a_side.insert(a_side.end(), l.half_tables.begin() + ptrdiff_t(r) * half,
                      l.half_tables.begin() + ptrdiff_t(r + 1) * half);
      }
    }
    for (int p = 0; p < wbits; ++p) {
      std::vector<uint32_t> bits(size_t(cs.n) * size_t(k));
      for (int col = 0; col < cs.n; ++col) {
        uint32_t pat = l.planes[size_t(p) * in_n + size_t(tj * cs.n + col)];
        if (naive) pat = golden::transform_pattern(pat, k);  // an involution: back to raw bits
        for (int kk = 0; kk < k; ++kk)
          bits[size_t(col) * size_t(k) + size_t(kk)] = (pat >> kk) & 1u;
      }
      t.a_beats.push_back(a_side);
      t.w_beats.push_back(std::move(bits));
    }
    t.c.resize(size_t(cs.m) * size_t(cs.n));
    for (int i = 0; i < cs.m; ++i) {
      for (int j = 0; j < cs.n; ++j) {
        t.c[size_t(i) * size_t(cs.n) + size_t(j)] =
            l.c[size_t(ti * cs.m + i) * in_n + size_t(tj * cs.n + j)];
      }
    }
    return t;
  };
  Run r;
  if (want_outputs) r.out.assign(size_t(l.shape.m) * in_n, 0u);
  const int tiles = a * b;
  uint64_t beats = 0, results = 0;
  for (int s = 0; s < std::min(slots, tiles); ++s) {
    std::vector<rtl::TileLmma> lmmas;
    std::vector<int> which;
    for (int i = s; i < tiles; i += slots) {
      lmmas.push_back(tile_lmma(i / b, i % b));
      which.push_back(i);
    }
    std::vector<std::vector<uint32_t>> outs;
    const rtl::TileStreamTiming t = tile.stream(lmmas, want_outputs ? &outs : nullptr);
    tile_lmmas_ += lmmas.size();
    beats = std::max(beats, t.beats_cycles);
    results = std::max(results, t.result_cycles);
    if (!want_outputs) continue;
    for (size_t x = 0; x < which.size(); ++x) {
      const int ti = which[x] / b, tj = which[x] % b;
      for (int i = 0; i < cs.m; ++i) {
        for (int j = 0; j < cs.n; ++j) {
          r.out[size_t(ti * cs.m + i) * in_n + size_t(tj * cs.n + j)] =
              outs[x][size_t(i) * size_t(cs.n) + size_t(j)];
        }
      }
    }
  }
  r.timing.issue_cycles = int64_t(beats);
  r.timing.latency_cycles = int64_t(results) + gpu_.sm.lmma_latency_cycles;
  return r;
}

hw::TensorOpTiming RtlTensorCore::lmma(const traces::LmmaOp& op) const {
  return run(zero_instance(op), false).timing;
}

hw::TensorOpTiming RtlTensorCore::issue_lmma(const traces::LmmaOp& op) const {
  if (streamed_) {
    const hw::TensorOpTiming t = *streamed_;
    streamed_.reset();
    return t;
  }
  return run(zero_instance(op), false).timing;
}

std::vector<uint32_t> RtlTensorCore::lmma(const traces::LmmaInstance& l) {
  Run r = run(l, true);
  streamed_ = r.timing;
  ++computed_lmmas_;
  return std::move(r.out);
}

uint64_t RtlTensorCore::tile_cycles() const {
  uint64_t c = 0;
  for (const auto& [key, tile] : tiles_) c += tile->cycles();
  return c;
}

}  // namespace ltc::sim
