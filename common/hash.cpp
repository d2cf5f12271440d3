#include "common/hash.h"

#include "common/file_io.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace ltc {

Fnv1a& Fnv1a::bytes(std::string_view data) {
  for (unsigned char c : data) {
    h_ ^= c;
    h_ *= 1099511628211ull;
  }
  return *this;
}

Fnv1a& Fnv1a::field(std::string_view data) {
  bytes(data);
  h_ ^= 0xff;
  h_ *= 1099511628211ull;
  return *this;
}

std::string Fnv1a::hex() const {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h_));
  return buf;
}

std::string fnv1a_hex(std::string_view data) {
  return Fnv1a().bytes(data).hex();
}

std::string files_fingerprint(std::vector<std::string> paths) {
  std::sort(paths.begin(), paths.end());
  Fnv1a h;
  for (const auto& path : paths) {
    h.field(std::filesystem::path(path).filename().string());
    h.field(read_text(path));
  }
  return h.hex();
}

std::string hdl_fingerprint(std::vector<std::string> sources,
                            const std::vector<std::string>& include_dirs) {
  for (const auto& dir : include_dirs) {
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      const auto ext = e.path().extension();
      if (ext == ".svh" || ext == ".vh") sources.push_back(e.path().string());
    }
  }
  return files_fingerprint(std::move(sources));
}

}  // namespace ltc
