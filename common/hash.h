// FNV-1a (64 bits): the one hash ltc uses for cache keys, store file names and source fingerprints.
// Not cryptographic; collisions only cost a cache miss or a rebuild. The offset basis is
// 1469598103934665603, the published 14695981039346656037 without its last digit, as ltc has always
// used: kept so that the file names of existing results stores and Slurm records stay valid.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ltc {

class Fnv1a {
 public:
  // Mixes the bytes of `data` as they are.
  Fnv1a& bytes(std::string_view data);
  // Mixes `data` then a 0xff separator, so that the fields ("ab", "c") and ("a", "bc") differ.
  Fnv1a& field(std::string_view data);
  uint64_t value() const { return h_; }
  std::string hex() const;  // 16 lower-case hex digits

 private:
  uint64_t h_ = 1469598103934665603ull;
};

// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, as zlib's crc32): the checksum of the binary
// trace form. Detects every single-bit and every burst error of up to 32 bits.
uint32_t crc32(std::string_view data);

// FNV-1a of `data` as 16 hex digits (file names from store keys, file fingerprints).
std::string fnv1a_hex(std::string_view data);

// The fingerprint of a set of source files, 16 hex digits: for each file in path order, its file
// name and its contents as fields. It changes whenever a file is added, removed, renamed or edited,
// and not with the order the files are listed in or the folder they are read from. Throws
// std::runtime_error naming a file that cannot be read.
std::string files_fingerprint(std::vector<std::string> paths);

// The fingerprint of a Verilog design: files_fingerprint of its sources and of every header (*.svh,
// *.vh) in its include folders. What keys the PPA results store and the verilated-model cache.
std::string hdl_fingerprint(std::vector<std::string> sources,
                            const std::vector<std::string>& include_dirs);

}  // namespace ltc
