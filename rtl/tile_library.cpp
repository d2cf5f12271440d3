#include "rtl/tile_library.h"

#include "model/golden/dtype.h"

#include <dlfcn.h>

#include <stdexcept>

namespace ltc::rtl {

struct VerilatedTile::Api {
  void* handle = nullptr;
  void (*words)(uint32_t*) = nullptr;
  void* (*open)() = nullptr;
  void (*close)(void*) = nullptr;
  uint32_t (*cycle)(void*, uint32_t, uint32_t, uint32_t, const uint32_t*, const uint32_t*,
                    const uint32_t*, uint32_t, uint32_t*) = nullptr;
};

namespace {

template <class F>
void resolve(void* handle, const char* name, F& f, const std::string& path) {
  void* p = ::dlsym(handle, name);
  if (!p) throw std::runtime_error(path + ": no symbol " + name + " (rebuild the model)");
  f = reinterpret_cast<F>(p);
}

}  // namespace

VerilatedTile::VerilatedTile(const hw::TensorCoreConfig& config, const HarnessOptions& options)
    : config_(config), api_(std::make_unique<Api>()) {
  HarnessOptions o = options;
  o.kind = HarnessKind::kLibrary;
  o.trace = false;
  path_ = build_harness(config, o);
  // RTLD_LOCAL: every design point's model defines the same class Vtile.
  api_->handle = ::dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!api_->handle) throw std::runtime_error("cannot load " + path_ + ": " + ::dlerror());
  resolve(api_->handle, "ltc_tile_words", api_->words, path_);
  resolve(api_->handle, "ltc_tile_open", api_->open, path_);
  resolve(api_->handle, "ltc_tile_close", api_->close, path_);
  resolve(api_->handle, "ltc_tile_cycle", api_->cycle, path_);
  uint32_t w[4] = {};
  api_->words(w);
  aw_ = w[0];
  ww_ = w[1];
  cw_ = w[2];
  ow_ = w[3];
  tile_ = api_->open();
}

VerilatedTile::~VerilatedTile() {
  if (tile_) api_->close(tile_);
  if (api_->handle) ::dlclose(api_->handle);
}

TileStreamTiming VerilatedTile::stream(const std::vector<TileLmma>& lmmas,
                                       std::vector<std::vector<uint32_t>>* outputs) {
  const hw::TensorCoreConfig& c = config_;
  const int abits = a_element_bits(c), wbits = w_element_bits(c);
  const int cbits = golden::dtype_bits(c.acc), obits = golden::dtype_bits(c.out);
  const size_t mn = size_t(c.shape.m) * size_t(c.shape.n);
  // Every beat packed up front: the cycle loop only hands words to the ports.
  struct Beat {
    std::vector<uint32_t> a, w;
    const std::vector<uint32_t>* c;  // first beat of an LMMA: its C
    bool first, last;
  };
  std::vector<Beat> beats;
  std::vector<std::vector<uint32_t>> cs(lmmas.size());
  for (size_t i = 0; i < lmmas.size(); ++i) {
    const TileLmma& l = lmmas[i];
    if (l.a_beats.empty() || l.a_beats.size() != l.w_beats.size() || l.c.size() != mn) {
      throw std::runtime_error("VerilatedTile: LMMA " + std::to_string(i) +
                               " has inconsistent beats or C");
    }
    pack_elements(l.c, cbits, cw_, cs[i]);
    for (size_t b = 0; b < l.a_beats.size(); ++b) {
      Beat beat;
      pack_elements(l.a_beats[b], abits, aw_, beat.a);
      pack_elements(l.w_beats[b], wbits, ww_, beat.w);
      beat.c = b == 0 ? &cs[i] : nullptr;
      beat.first = b == 0;
      beat.last = b + 1 == l.a_beats.size();
      beats.push_back(std::move(beat));
    }
  }
  if (outputs) outputs->clear();
  std::vector<uint32_t> out(ow_);
  TileStreamTiming t;
  size_t next = 0, results = 0;
  const uint64_t limit = 64 + 4 * beats.size() + uint64_t(c.pipeline_stages) * 4;
  for (uint64_t cycle = 0; next < beats.size() || results < lmmas.size(); ++cycle) {
    if (cycle > limit) {
      throw std::runtime_error("VerilatedTile " + c.id() + ": no result after " +
                               std::to_string(cycle) + " cycles");
    }
    const bool offer = next < beats.size();
    const Beat* b = offer ? &beats[next] : nullptr;
    const uint32_t flags = api_->cycle(tile_, offer, offer && b->first, offer && b->last,
                                       offer ? b->a.data() : nullptr, offer ? b->w.data() : nullptr,
                                       offer && b->c ? b->c->data() : nullptr, 1, out.data());
    ++cycles_;
    if (flags & 2u) {  // out_valid_o with out_ready_i high: the result is taken
      if (outputs) outputs->push_back(unpack_elements(out.data(), obits, mn));
      ++results;
      t.result_cycles = cycle + 1;
    }
    if (offer) {
      if (flags & 1u) {
        ++next;
        t.beats_cycles = cycle + 1;
      } else {
        ++t.stall_cycles;
      }
    }
  }
  return t;
}

}  // namespace ltc::rtl
