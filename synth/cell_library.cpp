#include "synth/cell_library.h"

#include "common/error.h"
#include "common/file_io.h"
#include "common/hash.h"
#include "synth/yosys_flow.h"

#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace ltc::synth {

namespace fs = std::filesystem;

namespace {

std::vector<CellLibrary> make_libraries() {
  CellLibrary osu;
  osu.name = "osu018";
  osu.description = "osu018 (OSU 0.18 um, qflow-tech-osu018, 1.8 V)";
  osu.liberty = kDefaultLiberty;
  osu.cell_models = kDefaultCellModels;
  osu.lef = kDefaultLef;
  osu.wire_layer = "metal2";
  osu.driving_cell = "BUFX2";
  osu.abc_load = 0.01;  // pF
  osu.assign_buffer = "BUFX2";
  osu.fanout_buffer = "BUFX4";
  osu.buffer_in = "A";
  osu.buffer_out = "Y";
  osu.node_nm = 180;
  osu.vdd = 1.8;

  CellLibrary ng;
  ng.name = "nangate45";
  ng.description = "nangate45 (NanGate 45 nm Open Cell Library, FreePDK45, typical 1.1 V 25 C)";
  ng.liberty =
      std::string(LTC_SOURCE_DIR) + "/synth/lib/nangate45/NangateOpenCellLibrary_typical.lib.gz";
  ng.driving_cell = "BUF_X2";
  ng.abc_load = 10;  // fF: the 0.01 pF of osu018's constraint
  ng.assign_buffer = "BUF_X2";
  ng.fanout_buffer = "BUF_X4";
  ng.buffer_in = "A";
  ng.buffer_out = "Z";
  ng.node_nm = 45;
  ng.vdd = 1.1;
  return {osu, ng};
}

const std::vector<CellLibrary>& libraries() {
  static const std::vector<CellLibrary> libs = make_libraries();
  return libs;
}

bool gzipped(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
}

}  // namespace

std::vector<std::string> cell_library_names() {
  std::vector<std::string> names;
  for (const auto& l : libraries()) names.push_back(l.name);
  return names;
}

const CellLibrary& cell_library(const std::string& name) {
  std::string valid;
  for (const auto& l : libraries()) {
    if (l.name == name) return l;
    valid += (valid.empty() ? "" : ", ") + l.name;
  }
  throw InputError("--lib: '" + name + "' is not a cell library (valid: " + valid + ")");
}

std::string read_liberty_text(const std::string& path) {
  if (!gzipped(path)) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read liberty file " + path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error("cannot read liberty file " + path);
  std::string text;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  int err = 0;
  const char* msg = gzerror(f, &err);
  const std::string what = n < 0 || err < 0 ? std::string(msg) : std::string();
  gzclose(f);
  if (!what.empty()) throw std::runtime_error("liberty file " + path + ": gzip: " + what);
  return text;
}

std::string plain_liberty(const std::string& path) {
  if (!gzipped(path)) return path;
  static std::mutex mu;
  const std::lock_guard<std::mutex> lock(mu);
  const std::string compressed = read_text(path);
  const fs::path dir = fs::temp_directory_path() / ("ltc-liberty-" + fnv1a_hex(compressed));
  const fs::path out = dir / fs::path(path).stem();
  std::error_code ec;
  if (fs::is_regular_file(out, ec) && fs::file_size(out, ec) > 0) return out.string();
  fs::create_directories(dir);
  write_text_atomic(out.string(), read_liberty_text(path));
  return out.string();
}

}  // namespace ltc::synth
