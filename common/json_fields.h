// Reading JSON config objects (the GPU configs, the sampling bench's cases) with errors that name
// the object, the field and what is valid.
#pragma once

#include "common/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace ltc {

// `text` parsed as JSON (J: nlohmann::json, or ordered_json to keep the keys' order); throws
// InputError "<origin>: not valid JSON: ..." where it is not (a syntax error, or a number past a
// double's range such as 1e999).
template <typename J = nlohmann::json>
J parse_json(std::string_view text, std::string_view origin) {
  try {
    return J::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(std::string(origin) + ": not valid JSON: " + plain_json_error(e));
  }
}

// Reads JSON fields with errors that name the field and what is valid. Every key a reader is
// asked about (req, opt, has, obj, array) is a valid key of its object, so reject_unknown() needs
// no second list: a key the parser never asks about is a misspelling or a field it ignores.
class FieldReader {
 public:
  FieldReader(const nlohmann::json& j, std::string where) : j_(j), where_(std::move(where)) {}

  template <typename T>
  void req(const char* key, T& out) const {
    known(key);
    if (!j_.contains(key)) fail(key, "is missing");
    get(key, out);
  }
  template <typename T>
  void opt(const char* key, T& out) const {
    known(key);
    if (j_.contains(key) && !j_.at(key).is_null()) get(key, out);
  }
  const nlohmann::json& obj(const char* key) const {
    known(key);
    if (!j_.contains(key) || !j_.at(key).is_object()) fail(key, "must be an object");
    return j_.at(key);
  }
  const nlohmann::json& array(const char* key, const char* of) const {
    known(key);
    if (!j_.contains(key) || !j_.at(key).is_array())
      fail(key, std::string("must be an array of ") + of);
    return j_.at(key);
  }
  bool has(const char* key) const {
    known(key);
    return j_.contains(key) && !j_.at(key).is_null();
  }
  [[noreturn]] void fail(const char* key, const std::string& what) const {
    throw InputError(where_ + ": field '" + key + "' " + what);
  }
  const std::string& where() const { return where_; }
  // Throws for the first key of the object no read above asked about, with the closest valid key.
  void reject_unknown() const {
    for (const auto& item : j_.items()) {
      if (std::find(known_.begin(), known_.end(), item.key()) != known_.end()) continue;
      std::string valid;
      for (const auto& k : known_) valid += (valid.empty() ? "" : ", ") + k;
      throw InputError(where_ + ": unknown field '" + item.key() + "'" +
                       did_you_mean(item.key(), known_) + " (valid: " + valid + ")");
    }
  }

 private:
  void known(const char* key) const {
    if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.emplace_back(key);
  }
  template <typename T>
  void get(const char* key, T& out) const {
    const nlohmann::json& v = j_.at(key);
    if constexpr (std::is_same_v<T, std::string>) {
      if (!v.is_string()) fail(key, "must be a string");
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean()) fail(key, "must be true or false");
    } else if constexpr (std::is_integral_v<T>) {
      if (!v.is_number_integer()) fail(key, "must be an integer");
      if (v.is_number_unsigned() ? v.get<uint64_t>() > uint64_t(std::numeric_limits<T>::max())
                                 : v.get<int64_t>() < int64_t(std::numeric_limits<T>::min()) ||
                                       v.get<int64_t>() > int64_t(std::numeric_limits<T>::max())) {
        fail(key, "is out of range (got " + v.dump() + ")");
      }
    } else {
      if (!v.is_number()) fail(key, "must be a number");
    }
    out = v.get<T>();
  }
  const nlohmann::json& j_;
  std::string where_;
  mutable std::vector<std::string> known_;
};

}  // namespace ltc
