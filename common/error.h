// The one error type for bad input anywhere in ltc: the message names the parameter, file or line
// and the valid range. The CLI maps it to exit code 2 (docs/cli.md#exit-codes-and-errors).
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ltc {

class InputError : public std::invalid_argument {
 public:
  explicit InputError(const std::string& what) : std::invalid_argument(what) {}
};

// The candidate closest to `name` by edit distance, or "" when none is close enough to be a
// plausible misspelling (more than a third of the longer name differs).
inline std::string closest_name(std::string_view name, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::string::npos;
  for (const auto& c : candidates) {
    std::vector<size_t> row(c.size() + 1);
    for (size_t j = 0; j <= c.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= name.size(); ++i) {
      size_t diag = row[0];
      row[0] = i;
      for (size_t j = 1; j <= c.size(); ++j) {
        const size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (name[i - 1] == c[j - 1] ? 0 : 1)});
        diag = up;
      }
    }
    if (row[c.size()] < best_d) {
      best_d = row[c.size()];
      best = c;
    }
  }
  const size_t longer = std::max(name.size(), best.size());
  return best_d != std::string::npos && 3 * best_d <= longer ? best : "";
}

// ", did you mean 'x'?" for the closest candidate, or "" when none is close.
inline std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  const std::string c = closest_name(name, candidates);
  return c.empty() ? "" : "; did you mean '" + c + "'?";
}

// nlohmann::json's exception text without its "[json.exception.type_error.302] " prefix, which
// names the library's internals rather than the user's input.
inline std::string plain_json_error(const std::exception& e) {
  std::string s = e.what();
  if (s.rfind("[json.exception.", 0) == 0) {
    const size_t close = s.find("] ");
    if (close != std::string::npos) s = s.substr(close + 2);
  }
  return s;
}

}  // namespace ltc
