// Moving 32-bit words in and out of a verilated port, whatever Verilator made of it (a VlWide
// array for ports over 64 bits, an integer otherwise); shared by every tile harness.
#pragma once

#include "verilated.h"

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace ltc_harness {

template <std::size_t W>
constexpr uint32_t words_of(const VlWide<W>&) {
  return uint32_t(W);
}
template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
constexpr uint32_t words_of(const T&) {
  return sizeof(T) > 4 ? 2 : 1;
}

template <std::size_t W>
void put(VlWide<W>& port, const uint32_t* words) {
  for (std::size_t i = 0; i < W; ++i) port[i] = words[i];
}
template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
void put(T& port, const uint32_t* words) {
  uint64_t v = words[0];
  if (sizeof(T) > 4) v |= uint64_t(words[1]) << 32;
  port = static_cast<T>(v);
}

template <std::size_t W>
void get(const VlWide<W>& port, uint32_t* words) {
  for (std::size_t i = 0; i < W; ++i) words[i] = port[i];
}
template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
void get(const T& port, uint32_t* words) {
  const uint64_t v = port;
  words[0] = static_cast<uint32_t>(v);
  if (sizeof(T) > 4) words[1] = static_cast<uint32_t>(v >> 32);
}

}  // namespace ltc_harness
