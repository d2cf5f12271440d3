#include "common/hash.h"

#include "common/file_io.h"

#include <algorithm>
#include <array>
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

uint32_t crc32(std::string_view data) {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int b = 0; b < 8; ++b) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : data) c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
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
